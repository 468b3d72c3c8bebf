"""NKI's scheduling semantics in the cost model: affine_range overlaps, sequential loops and SPMD instances keep order."""

import numpy as np
import pytest

from resize_kernels import nki
from resize_kernels.machine.cost import program_cost
from resize_kernels.nki import language as nl
from resize_kernels.nki.tracer import trace

TILES = 8


def copy_kernel(x, loop):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in loop(TILES):
        t = nl.load(x[i * 128:(i + 1) * 128, :])  # declared in the body: rotating buffers under affine_range
        nl.store(out[i * 128:(i + 1) * 128, :], value=t)
    return out


X = np.zeros((128 * TILES, 1024), np.float32)  # 4 KiB per partition: each packet's bytes outlast its setup (D2b)


def makespan(program):
    report = program_cost(program)
    return report.modelled_us - report.params.launch_us, report


@pytest.mark.parametrize("loop", [nl.sequential_range, nl.static_range])
def test_affine_range_iterations_overlap_and_ordered_loops_do_not(loop):
    fast, _ = makespan(trace(copy_kernel, X, nl.affine_range))
    slow, report = makespan(trace(copy_kernel, X, loop))
    loads = [e for e in report.events if e.opcode == "dma_copy"][0::2]
    stores = [e for e in report.events if e.opcode == "dma_copy"][1::2]
    for load, prev_store in zip(loads[1:], stores):
        assert load.start_us >= prev_store.end_us  # one buffer: the next load waits for the store (WAR)
    assert fast < 0.9 * slow  # ordered loops pay every DMA latency in turn


def test_double_buffers_let_a_load_run_ahead_by_one_iteration_only():
    _, report = makespan(trace(copy_kernel, X, nl.affine_range))
    dmas = [e for e in report.events if e.opcode == "dma_copy"]
    loads, stores = dmas[0::2], dmas[1::2]
    assert loads[1].start_us < stores[0].end_us  # the second buffer: no wait for iteration 0
    for k in range(2, TILES):
        assert loads[k].start_us >= stores[k - 2].end_us  # two buffers: iteration k reuses k - 2's


def spmd_kernel(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    t = nl.load(x[i * 128:(i + 1) * 128, :])
    nl.store(out[i * 128:(i + 1) * 128, :], value=t)
    return out


def test_spmd_instances_run_one_after_another():
    one, _ = makespan(trace(spmd_kernel, X[:128], grid=(1,)))
    four, report = makespan(trace(spmd_kernel, X[:512], grid=(4,)))
    assert four == pytest.approx(4 * one)
    dmas = [e for e in report.events if e.engine == "dma"]
    assert all(b.start_us >= a.end_us for a, b in zip(dmas, dmas[1:]))


def test_benchmark_reports_the_modelled_latency():
    bench = nki.benchmark(warmup=1, iters=1)(copy_kernel)
    bench(X, nl.affine_range)
    program = trace(copy_kernel, X, nl.affine_range)
    assert bench.benchmark_result.nc_latency.get_latency_percentile(50) == pytest.approx(
        program_cost(program).benchmark_us)
