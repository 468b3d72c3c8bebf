"""Launching kernels as NKI does: SPMD grids with nl.program_id, shared and private HBM, baremetal,
simulate_kernel, benchmark (modelled latency), nl.static_cast, and the pytest plugin."""

import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

from resize_kernels import errors as nki_errors
from resize_kernels import nki
from resize_kernels.errors import InvalidTypeError, InvalidValueError
from resize_kernels.machine.cost import program_cost
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl


@nki.jit
def scale_rows_by_program_id(x):
    """Instance (i, j) of a (rows, 2) grid writes x[i, j-th half] * (i + 10 j) into the shared output."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    half = x.shape[1] // 2
    tile = nl.ndarray((1, half), dtype=x.dtype, name="row")
    nisa.dma_copy(dst=tile, src=x[i:i + 1, j * half:(j + 1) * half])
    nisa.tensor_scalar(tile, tile, op0=nl.multiply, operand0=i + 10 * j)
    nisa.dma_copy(dst=out[i:i + 1, j * half:(j + 1) * half], src=tile)
    return out


def test_spmd_instances_share_outputs_and_see_their_program_id():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    got = scale_rows_by_program_id[4, 2](x)
    want = x * np.array([[i + 10 * j for j in (0, 0, 0, 1, 1, 1)] for i in range(4)], np.float32)
    np.testing.assert_array_equal(got, want)
    program = scale_rows_by_program_id[4, 2].trace(x)
    assert len(program.outputs) == 1 and program.counts()["dma_copy"] == 2 * 8  # eight instances, one after another


def test_without_a_grid_program_id_is_zero_and_num_programs_one():
    seen = []

    @nki.jit
    def probe(x):
        seen.append((nl.program_id(0), nl.num_programs(), nl.program_ndim()))
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype)
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=out, src=t)
        return out

    x = np.ones((2, 2), np.float32)
    probe(x)
    probe[3](x)
    assert seen == [(0, 1, 0), (0, 3, 1), (1, 3, 1), (2, 3, 1)]


def test_private_hbm_is_per_instance():
    @nki.jit
    def scratch(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        tmp = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.private_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype)
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=tmp, src=t)
        nisa.dma_copy(dst=t, src=tmp)
        nisa.dma_copy(dst=out, src=t)
        return out

    program = scratch[3].trace(np.ones((2, 2), np.float32))
    assert len(program.internal) == 3 and len(program.outputs) == 1


@pytest.mark.parametrize("grid, message", [
    (0, "an SPMD launch requires a grid of positive integers"), ((2, -1), "grid of positive integers"),
    ((), "grid of positive integers"), (2.0, "grid of positive integers"),
])
def test_bad_grids_are_refused(grid, message):
    with pytest.raises(InvalidValueError, match=message):
        scale_rows_by_program_id[grid]


def test_program_id_outside_the_grid_is_an_error():
    @nki.jit
    def bad(x):
        nl.program_id(1)
        return x

    with pytest.raises(InvalidValueError, match=r"nl.program_id requires an axis of the launch grid \(2,\) \(0..0\), got 1"):
        bad[2](np.ones((2, 2), np.float32))


def test_instances_must_create_the_same_shared_tensors():
    @nki.jit
    def uneven(x):
        return nl.ndarray((nl.program_id(0) + 1, 2), dtype=x.dtype, buffer=nl.shared_hbm)

    with pytest.raises(InvalidValueError, match=r"SPMD instance \(1,\) creates shared_hbm tensor 0 as \(2, 2\)"):
        uneven[2].trace(np.ones((2, 2), np.float32))


def test_baremetal_and_simulate_kernel_run_on_the_simulator():
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    want = scale_rows_by_program_id[2, 2](x)
    np.testing.assert_array_equal(nki.baremetal(scale_rows_by_program_id)[2, 2](x), want)
    np.testing.assert_array_equal(nki.simulate_kernel(scale_rows_by_program_id[2, 2], x), want)
    alone = nki.simulate_kernel(scale_rows_by_program_id.func, x)  # no grid: instance (0, 0) only
    assert (alone[0, :3] == 0).all() and np.isnan(alone[0, 3:]).all() and np.isnan(alone[1]).all()  # unwritten
    with pytest.raises(InvalidTypeError, match="nki.simulate_kernel requires a kernel, got int"):
        nki.simulate_kernel(3, x)


def test_benchmark_reports_the_cost_models_latency_as_every_percentile():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    bench = nki.benchmark(warmup=5, iters=10, numerics=True)(scale_rows_by_program_id)
    launch = bench[4, 2]
    np.testing.assert_array_equal(launch(x), scale_rows_by_program_id[4, 2](x))
    latency = launch.benchmark_result.nc_latency
    modelled = program_cost(scale_rows_by_program_id[4, 2].trace(x), "trn1").benchmark_us
    assert latency.get_latency_percentile(50) == latency.get_latency_percentile(99) == modelled > 0
    assert bench.benchmark_result is launch.benchmark_result  # the kernel keeps its last launch's result
    assert "modelled latency" in repr(latency)
    with pytest.raises(InvalidValueError, match="get_latency_percentile requires a percentile in 0..100, got 101"):
        latency.get_latency_percentile(101)
    with pytest.raises(InvalidValueError, match="nki.benchmark requires iters to be a non-negative integer"):
        nki.benchmark(iters=-1)
    with pytest.raises(InvalidTypeError, match="nki.benchmark requires numerics to be True or False, got 1"):
        nki.benchmark(numerics=1)


def test_benchmark_is_cost_only_by_default(monkeypatch):
    """The default benchmark traces and costs but never runs the simulator; its outputs refuse to be used."""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    want = program_cost(scale_rows_by_program_id[4, 2].trace(x), "trn1").benchmark_us

    def no_simulation(*args, **kwargs):
        raise AssertionError("cost-only benchmark ran the simulator")

    monkeypatch.setattr("resize_kernels.nki.launch.run", no_simulation)
    launch = nki.benchmark(scale_rows_by_program_id)[4, 2]
    outs = launch(x)
    assert launch.benchmark_result.nc_latency.get_latency_percentile(50) == want
    assert "not computed" in repr(outs)
    with pytest.raises(InvalidValueError, match=r"the outputs of scale_rows_by_program_id were not computed: "
                                                r"nki.benchmark here is cost-only .* numerics=True"):
        np.asarray(outs)
    with pytest.raises(InvalidValueError, match="were not computed"):
        outs[0]
    with pytest.raises(InvalidValueError, match="were not computed"):
        outs.shape


def test_cost_only_benchmark_takes_shapes_without_data():
    """NKI's tutorials benchmark on ``nt.tensor[shape, dtype]`` arguments; TensorSpecs do the same."""
    from resize_kernels.nki import typing as nt
    from resize_kernels.nki.tensor import TensorSpec

    x = np.zeros((4, 6), np.float32)
    want = program_cost(scale_rows_by_program_id[4, 2].trace(x), "trn1").benchmark_us
    for arg in (nt.tensor[[4, 6], nl.float32], nt.tensor[(4, 6), np.float32], TensorSpec((4, 6), np.dtype(np.float32))):
        launch = nki.benchmark(scale_rows_by_program_id)[4, 2]
        launch(arg)
        assert launch.benchmark_result.nc_latency.get_latency_percentile(50) == want
    with pytest.raises(InvalidTypeError, match="requires numpy arrays as tensors, got TensorSpec"):
        nki.benchmark(scale_rows_by_program_id, numerics=True)[4, 2](nt.tensor[[4, 6], nl.float32])
    with pytest.raises(InvalidTypeError, match=r"nt.tensor\[shape, dtype\] requires a list or tuple of ints as "
                                               r"shape, got 4"):
        nki.benchmark(scale_rows_by_program_id)[4, 2](nt.tensor[4, nl.float32])


def test_a_cost_only_benchmark_has_a_larger_budget_than_a_simulation(monkeypatch):
    """A cost-only trace holds no data, so it may emit COST_ONLY_MAX_INSTRUCTIONS; a trace to simulate stops at
    MAX_INSTRUCTIONS. Either stops with an error saying what its budget bounds."""
    x = np.zeros((4, 6), np.float32)
    needed = len(scale_rows_by_program_id[4, 2].trace(x).instructions)  # 3 per instance
    monkeypatch.setattr("resize_kernels.nki.tracer.MAX_INSTRUCTIONS", needed - 1)
    monkeypatch.setattr("resize_kernels.nki.launch.COST_ONLY_MAX_INSTRUCTIONS", needed)
    with pytest.raises(nki_errors.InstructionBudgetError, match=f"needs more than {needed - 1} instructions"):
        scale_rows_by_program_id[4, 2](x)
    launch = nki.benchmark(scale_rows_by_program_id)[4, 2]
    launch(x)
    assert launch.benchmark_result.program.instructions
    monkeypatch.setattr("resize_kernels.nki.launch.COST_ONLY_MAX_INSTRUCTIONS", needed - 1)
    with pytest.raises(nki_errors.InstructionBudgetError, match=r"the tracer's budget \(tracing and costing that "
                                                                 r"many take up to about [\d,]+ s and [\d.]+ GB\)"):
        nki.benchmark(scale_rows_by_program_id)[4, 2](x)


def test_simulate_kernel_and_baremetal_compute_a_benchmark_kernels_outputs():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    bench = nki.benchmark(scale_rows_by_program_id)
    want = scale_rows_by_program_id[4, 2](x)
    np.testing.assert_array_equal(nki.simulate_kernel(bench[4, 2], x), want)
    np.testing.assert_array_equal(nki.baremetal(bench)[4, 2](x), want)


def test_static_cast_on_the_host_and_in_a_kernel():
    x = np.array([1.0, 1.00390625, -2.5, 3.5, 1e6], np.float32)
    np.testing.assert_array_equal(nl.static_cast(x, nl.bfloat16), x.astype(ml_dtypes.bfloat16))
    np.testing.assert_array_equal(nl.static_cast(x, nl.int8), np.array([1, 1, -2, 4, 127], np.int8))  # RNE, saturate

    @nki.jit
    def cast(t):
        out = nl.ndarray(t.shape, dtype=nl.float16, buffer=nl.shared_hbm)
        tile = nl.ndarray(t.shape, dtype=t.dtype)
        nisa.dma_copy(dst=tile, src=t)
        nisa.dma_copy(dst=out, src=nl.static_cast(tile, nl.float16))
        return out

    y = np.linspace(-3, 3, 8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(cast(y), y.astype(np.float16))
    with pytest.raises(InvalidTypeError, match="nl.static_cast requires a numpy array or a tile, got list"):
        nl.static_cast([1.0], nl.float32)


def test_the_pytest_plugin_runs_a_repositorys_tests_under_nkis_names(tmp_path):
    (tmp_path / "test_uses_nki.py").write_text(textwrap.dedent("""
        import numpy as np
        from neuronxcc import nki
        from neuronxcc.nki import baremetal, simulate_kernel
        import neuronxcc.nki.language as nl
        import neuronxcc.nki.isa as nisa

        @nki.jit
        def double(x):
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            t = nl.load(x[nl.arange(x.shape[0])[:, None], nl.arange(x.shape[1])[None, :]])
            nl.store(out[nl.arange(x.shape[0])[:, None], nl.arange(x.shape[1])[None, :]], value=t * 2)
            return out

        def test_double():
            x = np.arange(6, dtype=np.float32).reshape(2, 3)
            assert (simulate_kernel(baremetal(double)[1], x) == 2 * x).all()
    """))
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "resize_kernels.nki.pytest_plugin", "-q",
                           "-p", "no:cacheprovider", str(tmp_path)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_device_options_run_with_a_warning_and_unknown_options_are_refused():
    x = np.ones((2, 6), np.float32)
    with pytest.warns(UserWarning, match=r"nki.benchmark\(save_neff_name=...\): no device or compiler here"):
        bench = nki.benchmark(warmup=1, iters=1, save_neff_name="k.neff")(scale_rows_by_program_id)
    launch = bench[2, 2]
    launch(x)
    assert launch.benchmark_result.nc_latency.get_latency_percentile(50) > 0
    with pytest.raises(InvalidValueError, match="nki.baremetal has no option 'colour' here"):
        nki.baremetal(scale_rows_by_program_id, colour=1)


def test_jit_takes_nkis_mode_and_platform_target():
    """``@nki.jit(mode="trace")`` (a helper kernel inlined by its caller) and ``@nki.jit(platform_target="trn2")``
    (benchmarked on trn2's cost model, traced with trn2's SBUF) run as NKI code writes them."""
    @nki.jit(mode="trace")
    def helper(t):
        nisa.tensor_scalar(t, t, op0=nl.multiply, operand0=2.0)

    @nki.jit(platform_target="trn2")
    def caller(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype)
        nisa.dma_copy(dst=t, src=x)
        helper(t)
        nisa.dma_copy(dst=out, src=t)
        return out

    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    np.testing.assert_array_equal(caller(x), 2 * x)
    bench = nki.benchmark(caller)
    bench(x)
    program = bench.benchmark_result.program
    assert bench.benchmark_result.target == "trn2" and program.sbuf_partition_bytes == 224 * 1024
    assert bench.benchmark_result.nc_latency.get_latency_percentile(50) == program_cost(program, "trn2").benchmark_us
    with pytest.raises(InvalidValueError, match="nki.jit requires mode to be one of .*, got 'fast'"):
        nki.jit(mode="fast")
    with pytest.raises(InvalidValueError, match="nki.jit requires platform_target to be one of .*, got 'trn9'"):
        nki.jit(platform_target="trn9")
    trn3 = nki.benchmark(nki.jit(caller.func, platform_target="trn3"))
    with pytest.raises(InvalidValueError, match="for platform 'trn3' requires a cost model of it"):
        trn3(x)
