"""The examples/ modules: each round-trips through the printer, compiles, runs and is checked against torch."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from resize_kernels.compiler.hlo import parse_hlo_module, print_hlo_module
from resize_kernels import compile_hlo

from conftest import assert_bits_equal
from hlo_texts import EXAMPLES, ROOT

F = torch.nn.functional
NAMES = [p.name for p in EXAMPLES]
SD2_UPSAMPLES = ["jax_resize_nearest.hlo", "sd2_upsample_torch_xla.hlo", "sd2_upsample_xla.hlo"]


def example(name: str) -> str:
    return (ROOT / "examples" / name).read_text()


def test_the_examples_are_there():
    assert set(SD2_UPSAMPLES + ["jax_upsample_pool.hlo", "unet_train_torch_xla.hlo"]) <= set(NAMES)
    assert (ROOT / "examples" / "README.md").exists()


@pytest.mark.parametrize("path", EXAMPLES, ids=NAMES)
def test_every_example_parses_prints_and_parses_back_to_the_same_text(path):
    text = path.read_text()
    printed = print_hlo_module(parse_hlo_module(text))
    assert print_hlo_module(parse_hlo_module(printed)) == printed
    if "%" not in text:  # new-style dumps are already canonical
        assert printed == text


@pytest.mark.parametrize("name", SD2_UPSAMPLES)
def test_sd2_examples_equal_torch_interpolate(name):
    x = np.random.default_rng(7).standard_normal((1, 1280, 30, 20), dtype=np.float32)
    out = compile_hlo(example(name))(x)
    y = out[0] if isinstance(out, tuple) else out
    assert_bits_equal(y, F.interpolate(torch.from_numpy(x), size=(59, 38), mode="nearest").numpy())


def test_jax_upsample_pool_equals_the_same_network_in_torch():
    """Integer-valued data: every sum is exact, so the comparison is bit for bit whatever the summation order."""
    rng = np.random.default_rng(3)
    x = rng.integers(-8, 9, size=(2, 8, 30, 20)).astype(np.float32)
    bias = rng.integers(-4, 5, size=8).astype(np.float32)
    average, maximum = compile_hlo(example("jax_upsample_pool.hlo"))(x, bias)

    upsampled = F.interpolate(torch.from_numpy(x), size=(59, 38), mode="nearest")
    y = F.relu(upsampled + torch.from_numpy(bias)[:, None, None])
    want_average = F.avg_pool2d(y, 2).to(torch.bfloat16).view(torch.int16).numpy().view(average.dtype)
    assert_bits_equal(average, want_average)
    assert_bits_equal(maximum, F.max_pool2d(y, 3, stride=2, padding=1).numpy())


def test_make_jax_example_writes_the_committed_files(tmp_path):
    """In a subprocess: JAX starts threads, and other tests fork. jax is in the test extra (not a dependency)."""
    subprocess.run([sys.executable, str(ROOT / "examples" / "make_jax_example.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    written = sorted(p.name for p in tmp_path.iterdir())
    names = ["jax_odd_bf16", "jax_resize_nearest", "jax_train_step", "jax_upsample_pool"]
    assert written == sorted(f"{name}.{kind}" for name in names for kind in ("hlo", "mlir", "pb"))
    for name in written:  # the same JAX writes the same bytes: the fixtures are what it made
        assert (tmp_path / name).read_bytes() == (ROOT / "examples" / name).read_bytes()
