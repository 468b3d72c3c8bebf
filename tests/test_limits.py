"""Limits: what the API refuses up front, and how (a ResizeKernelsError that says what it needs)."""

import re
import subprocess
import sys
import textwrap
import warnings

import ml_dtypes
import numpy as np
import pytest

import resize_kernels as rk
from resize_kernels import api, errors, semantics
from resize_kernels.machine import memory
from resize_kernels.nki import TensorSpec, trace
from resize_kernels.kernels.baselines.seed_lowered import resize_nearest_fixed_dma_kernel

from conftest import assert_bits_equal, random_data


def test_a_trace_stops_at_its_instruction_budget():
    with pytest.raises(errors.ResourceError, match="needs more than 100 instructions, the tracer's budget"):
        trace(resize_nearest_fixed_dma_kernel, TensorSpec((1, 30, 20, 8), np.dtype(np.float32)),
              out_shape=(1, 59, 38, 8), max_instructions=100)


def test_the_api_names_the_kernel_and_the_way_out(monkeypatch):
    monkeypatch.setattr("resize_kernels.nki.tracer.MAX_INSTRUCTIONS", 100)
    api._program.cache_clear()
    with pytest.raises(errors.ResourceError, match=r"resize_nearest kernel 'seed' for \(1, 30, 20, 8\) -> "
                                                   r"\(1, 59, 38, 8\): tracing .* the default kernel 'auto'"):
        api._program("resize_nearest", (1, 30, 20, 8), (1, 59, 38, 8), np.dtype(np.float32), "seed",)


@pytest.mark.parametrize("call", [
    lambda: rk.resize_nearest(np.zeros((1, 4, 4, 2), np.float32), (400, 400)),
    lambda: rk.resize_nearest_grad(np.zeros((1, 4, 4, 2), np.float32), (400, 400), kernel="general"),
    lambda: rk.index_map((4, 4), (400, 400)),
])
def test_beyond_host_memory_is_refused_up_front(call, monkeypatch):
    monkeypatch.setattr(memory, "host_memory_available", lambda: 1 << 20)  # a 1 MiB machine
    with pytest.raises(errors.ResourceError, match=r"needs about [\d.]+ MiB of host memory, but this machine can "
                                                   r"give 0.8 MiB"):
        call()


def test_an_address_space_limit_is_honoured_as_the_hosts_memory():
    """Issue 40.7: under ``ulimit -v`` (RLIMIT_AS) the host has memory the process cannot map; a request past the
    limit is the same clear ResourceError, not numpy's MemoryError."""
    script = textwrap.dedent("""
        import resource, numpy as np, resize_kernels as rk
        with open("/proc/self/status") as status:
            used = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (used + (512 << 20), resource.RLIM_INFINITY))
        try:
            rk.resize_nearest(np.zeros((1, 4, 4, 64), np.float32), (2048, 2048))  # a 1 GiB output
        except rk.errors.ResourceError as error:
            print(error)
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert re.search(r"needs about [\d.]+ GiB of host memory, but this machine can give", done.stdout), done


def test_program_caches_are_bounded_by_instructions():
    cache = api._InstructionBoundedCache(lambda n: rk.trace_resize((1, n, 4, 1), (2 * n + 1, 5), kernel="seed"),
                                         budget=1000)
    for n in range(20, 40):
        cache(n)
    kept = sum(len(p.instructions) for p, _ in cache.entries.values())
    assert kept <= 1000 and cache.cache_info().misses == 20


def test_big_endian_arrays_are_resized_by_value(rng):
    x = random_data(rng, (2, 3, 5, 2), np.float32)
    y = rk.resize_nearest(x.astype(">f4"), (7, 4))
    assert_bits_equal(y, semantics.resize_nearest_reference(x, (7, 4)))
    assert_bits_equal(rk.resize_nearest_grad(x.astype(">f4"), (2, 2)), semantics.resize_nearest_grad_reference(x, (2, 2)))


@pytest.mark.parametrize("call, exc, match", [
    (lambda: rk.index_map((0, 4), (3, 3)), errors.InvalidValueError, "^index_map requires positive sizes"),
    (lambda: rk.index_map((4, 4), (3.5, 3)), errors.InvalidTypeError, "^index_map requires integer sizes"),
    (lambda: rk.resize_nearest(np.zeros((1, 2, 2, 1), np.float32), (3, 3), kernel=["auto"]),
     errors.InvalidValueError, r"has no kernel \['auto'\]; choose one of"),
    (lambda: rk.trace_resize((1, 0, 5, 3), (4, 4)), errors.InvalidValueError, "positive sizes, got input size 0"),
    (lambda: rk.trace_resize((1, 5, 3), (4, 4)), errors.InvalidValueError, "in_shape as four positive integers"),
    (lambda: rk.trace_resize((1, 5, 5, 3), 8.0), errors.InvalidTypeError, "output size as a pair"),
    (lambda: rk.trace_resize((1, 4.5, 5, 3), (4, 4)), errors.InvalidTypeError, "integer sizes, got input size 4.5"),
    (lambda: rk.trace_resize((1, 4, 5, 3), (4, 4), dtype="float64"), errors.InvalidTypeError, "dtypes"),
])
def test_every_entry_point_validates_like_resize_nearest(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_gradients_of_inf_and_nan_warn_nothing():
    dy = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32).reshape(1, 2, 2, 1)
    with np.errstate(all="raise"):  # a leaked RuntimeWarning would raise here
        for kernel in ("general", "reduce_window"):
            dx = rk.resize_nearest_grad(dy, (1, 1), kernel=kernel)
            assert np.isnan(dx).all()


@pytest.mark.parametrize("argv", [["verify", "--in", "1x4x4x64", "--out", "600x600"],
                                  ["verify", "--in", "1x4x4x64", "--out", "600x600", "--dtype", "bfloat16"],
                                  ["verify", "--in", "1x600x600x64", "--out", "4x4", "--grad"],
                                  ["verify", "--in", "1x4x4x64", "--out", "600x600", "--grad"]])
def test_verify_refuses_past_host_memory_before_allocating(argv, monkeypatch, capsys):
    """Issue 40.15: the verifier's own arrays (index image, outputs, references) are counted before any exists."""
    from resize_kernels import cli
    monkeypatch.setattr(memory, "host_memory_available", lambda: 64 << 20)
    assert cli.main(argv) == 1
    assert re.search(r"^resize-kernels verify: verifying .* needs about [\d.]+ MiB of host memory, but this "
                     r"machine can give 48.0 MiB", capsys.readouterr().err)


def test_big_endian_arrays_run_through_a_compiled_module_by_value():
    """Issue 40.19: a '>f4' argument compares equal to float32, so a refusal would name two equal dtypes."""
    module = rk.compile_hlo("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                            "  ROOT r = f32[8] pad(p, z), padding=0_4\n}\n")
    got = module(np.arange(4, dtype=">f4"))
    assert_bits_equal(got, np.r_[np.arange(4), np.zeros(4)].astype(np.float32))


@pytest.mark.parametrize("kernel", [None, "rows", "padded", "general"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_the_gradient_of_infinities_and_nans_warns_nothing(kernel, dtype):
    """Issue 40.19: inf + -inf is NaN on the engines as in IEEE arithmetic, not a numpy RuntimeWarning."""
    dy = np.full((1, 8, 8, 2), np.inf, np.float32)
    dy[0, 0, 0, 0], dy[0, 1, 1, 1], dy[0, 2, 2, 0] = -np.inf, np.nan, 6e4
    dy = dy.astype(np.dtype(dtype) if dtype != "bfloat16" else ml_dtypes.bfloat16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rk.resize_nearest_grad(dy, (3, 3), kernel=kernel)
    assert_bits_equal(got, semantics.resize_nearest_grad_reference(dy, (3, 3)))
