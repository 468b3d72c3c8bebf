"""A Program that only moves its input's bits runs, from its third run on, as one gather (machine/copy_plan.py):
the same bits as the instruction-by-instruction run, and only where no input value could change the map."""

import numpy as np
import pytest

import resize_kernels as rk
from resize_kernels import api
from resize_kernels.kernels import FORWARD, names
from resize_kernels.machine import copy_plan
from resize_kernels.machine.simulator import Executable, run
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.nki import trace

from conftest import assert_bits_equal, random_data


def runs_as_gather(program, inputs) -> list:
    """Five runs of one Executable (the last three through the gather, where it applies), and whether it did."""
    ex = Executable(program)
    return [ex.run([x])[0] for x in inputs], ex._as_gather is not None


def check_qualifies(kernel, x, moves: bool) -> None:
    """``kernel`` traced on ``x`` moves bits only (and so runs as a gather) exactly when ``moves``; every run keeps
    the plain run's bits either way."""
    program = trace(kernel, x)
    assert copy_plan.moves_bits_only(program) == moves
    outs, used = runs_as_gather(program, [x] * 5)
    assert used == moves
    for out in outs:
        assert_bits_equal(out, run(program, [x])[0])


@pytest.mark.parametrize("seed", range(4))
def test_every_forward_kernel_gives_the_plain_runs_bits(seed):
    rng, gathered = np.random.default_rng(seed), 0
    for _ in range(6):
        n, c = int(rng.integers(1, 3)), int(rng.choice([1, 3, 8, 64]))
        h, w, oh, ow = (int(v) for v in rng.integers(1, 40, 4))
        dtype = str(rng.choice(["float32", "bfloat16", "float16", "uint8", "int16"]))
        for kernel in names(FORWARD):
            try:
                program = rk.trace_resize((n, h, w, c), (oh, ow), dtype, kernel, cached=False, sources=False)
            except Exception:  # a kernel that does not take the shape
                continue
            inputs = [random_data(rng, (n, h, w, c), program.inputs[0].dtype) for _ in range(5)]
            outs, used = runs_as_gather(program, inputs)
            gathered += used
            for x, out in zip(inputs, outs):
                assert_bits_equal(out, run(program, [x])[0])
    assert gathered > 20


def test_the_default_runs_the_panel_shapes_as_gathers():
    for in_shape, out_hw, dtype in [((2, 30, 20, 1280), (59, 38), "bfloat16"), ((2, 37, 53, 96), (101, 97), "float32"),
                                    ((4, 100, 100, 128), (70, 70), "float16")]:
        program = rk.trace_resize(in_shape, out_hw, dtype)
        x = random_data(np.random.default_rng(0), in_shape, program.inputs[0].dtype)
        outs, used = runs_as_gather(program, [x] * 4)
        assert used, (in_shape, out_hw, dtype)
        assert_bits_equal(outs[-1], rk.semantics.resize_nearest_reference(x, out_hw))


def test_a_gradient_adds_so_it_is_no_gather():
    assert not copy_plan.moves_bits_only(api.trace_resize_grad((1, 9, 9, 4), (5, 5), "float32", cached=False))


def load(x):
    t = nl.ndarray(x.shape, dtype=x.dtype)
    nisa.dma_copy(dst=t, src=x)
    return t


def store(tile):
    out = nl.ndarray(tile.shape, dtype=tile.dtype, buffer=nl.shared_hbm, name="out")
    nisa.dma_copy(dst=out, src=tile)
    return out


def arithmetic(x):
    t = load(x)
    u = nl.ndarray(x.shape, dtype=x.dtype)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.add, operand0=1.0)
    return store(u)


def mixed(x):
    t = nl.ndarray((x.shape[0], 2 * x.shape[1]), dtype=x.dtype)
    nisa.memset(dst=t, value=3.0)
    nisa.dma_copy(dst=t[:, : x.shape[1]], src=x)  # half input bits, half a constant
    return store(t)


def constant_out(x):
    t = nl.ndarray(x.shape, dtype=x.dtype)
    nisa.memset(dst=t, value=0.0)
    return store(t)


def copies(x):
    t = load(x)
    u = nl.ndarray(x.shape, dtype=x.dtype)
    nisa.tensor_copy(dst=u, src=t)
    return store(u)


@pytest.mark.parametrize("kernel, moves", [(arithmetic, False), (mixed, False), (constant_out, False),
                                           (copies, True)])
def test_only_pure_copies_qualify_and_every_program_keeps_its_bits(kernel, moves):
    check_qualifies(kernel, random_data(np.random.default_rng(1), (16, 12), np.float32), moves)


def test_the_verifier_proves_on_the_instructions_not_on_a_gather(monkeypatch):
    """A narrow dtype's proof runs the Program once per 8 bits of the index (three runs here): the third must
    still run the instructions, or the proof would check a replay of the earlier runs."""
    from resize_kernels.machine import simulator
    from resize_kernels.verifier import verify

    monkeypatch.setattr(simulator._Gather, "of", classmethod(lambda cls, program: pytest.fail("gathered")))
    assert verify((1, 300, 300, 1), (1, 7, 9, 1), "rows", dtype="uint8").ok


@pytest.mark.parametrize("dtype, moves", [(np.uint8, True), (np.int16, True), (np.int32, False),
                                          (np.float16, False)])
def test_a_scalar_engine_copy_moves_bits_for_narrow_integers_only(dtype, moves):
    """activation(copy) goes through float32: exact for 8- and 16-bit integers, not for int32 (past 2**24) nor
    for floats (NaN payloads)."""
    def kernel(x):
        t = load(x)
        u = nl.ndarray(x.shape, dtype=x.dtype)
        nisa.activation(u, "copy", t)
        return store(u)

    check_qualifies(kernel, random_data(np.random.default_rng(2), (8, 6), dtype), moves)
