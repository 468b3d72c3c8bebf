"""roofline_random.py's DMA bound is a lower bound: its run merging is optimal, and no kernel's modelled time is
below it (the bound is the argument that part of issue 41's goal is out of reach on the model)."""

import itertools
import math
import random

import numpy as np
import pytest

import resize_kernels as rk
from resize_kernels.machine.cost import target_params

from conftest import benchmark_module



@pytest.fixture(scope="module")
def bench():
    with benchmark_module("roofline_random") as module:
        yield module


def brute_read_ns(columns, pixel_bytes, params) -> float:
    """Every way to group the runs of ``columns`` into descriptors, the cheapest."""
    starts = np.flatnonzero(np.diff(columns, prepend=-2) != 1)
    first, last = columns[starts], columns[np.append(starts[1:], columns.size) - 1]
    best = math.inf
    for cuts in itertools.product((False, True), repeat=first.size - 1):
        bounds = [0, *[k + 1 for k, cut in enumerate(cuts) if cut], first.size]
        best = min(best, sum(max(params.descriptor_ns, (last[b - 1] - first[a] + 1) * pixel_bytes
                                 / params.dma_engine_gbps) for a, b in zip(bounds, bounds[1:])))
    return best


@pytest.mark.parametrize("target", ["trn1", "trn2"])
def test_read_ns_merges_runs_optimally(bench, target):
    params, rng = target_params(target), random.Random(7)
    for _ in range(200):
        width = rng.randint(1, 120)
        columns = np.array(sorted(rng.sample(range(width), rng.randint(1, min(width, 11)))))
        pixel_bytes = rng.choice((1, 2, 3, 8, 45, 400))
        assert bench.read_ns(columns, pixel_bytes, params) == pytest.approx(
            brute_read_ns(columns, pixel_bytes, params)), (columns, pixel_bytes)


@pytest.mark.parametrize("seed", range(3))
def test_no_kernel_is_below_the_bound(bench, seed):
    for i, o, dtype in bench.shapes(10, seed + 100):
        if math.prod(o) * bench.itemsize(dtype) > 2 << 20:  # keep the trace short
            continue
        for target in ("trn1", "trn2"):
            modelled = rk.cost(i, o, dtype=dtype, target=target).modelled_us
            assert bench.dma_bound_us(i, o, dtype, target) <= modelled, (i, o, dtype, target)
