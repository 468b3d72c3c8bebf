"""Shared test helpers: bit comparison and the dtypes the machine supports."""

import contextlib
import importlib.util
import os
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

# Tests see what the code selects now, not plans an earlier run kept (tests/test_plan_cache.py turns it back on in
# a temporary directory); set before any test runs, so the CLI's subprocesses inherit it.
os.environ["RESIZE_KERNELS_PLAN_CACHE"] = "0"

DTYPES = [np.float32, ml_dtypes.bfloat16, np.float16, np.int32, np.int16, np.int8, np.uint8]


def bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of an array, so that comparisons see NaN payloads and -0.0."""
    return np.ascontiguousarray(a).view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def assert_bits_equal(got: np.ndarray, want: np.ndarray):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    diff = np.argwhere(bits(got) != bits(want))
    assert diff.size == 0, f"{len(diff)} elements differ, first at {diff[:5].tolist()}"


def random_data(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Random values with every bit pattern likely distinct (so a misplaced pixel shows)."""
    dtype = np.dtype(dtype)
    raw = rng.integers(0, 256, size=(*shape, dtype.itemsize), dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@contextlib.contextmanager
def benchmark_module(name: str):
    """A script of benchmarks/ imported as a module, with its folder on sys.path (the scripts import each other)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
