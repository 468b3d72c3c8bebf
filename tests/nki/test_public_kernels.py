"""Public NKI kernels run unmodified through the aliases (issue 37): the NKI docs' tutorial kernels, vendored
under tests/nki/public/ (see its README), on small shapes against numpy references written here from the
tutorials' math; and cost-only benchmarks of them on the engines they use.

benchmarks/nki_corpus.py runs the whole public corpus (NKIBench, nki-samples, the tutorials) on the shapes
the sources measured; these are the fixtures CI keeps.
"""

import importlib.util
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import resize_kernels.nki as rnki
from resize_kernels.errors import InvalidValueError
from resize_kernels.machine.cost import program_cost

PUBLIC = Path(__file__).parent / "public" / "aws_neuron_sdk"


@pytest.fixture(scope="module")
def tutorial():
    """The tutorial modules, imported as their pages show them (``import neuronxcc.nki as nki``) with the aliases
    installed; sys.modules is restored afterwards so the aliases do not leak into other tests."""
    saved = dict(sys.modules)
    rnki.install_aliases()
    modules = {}
    try:
        for path in sorted(PUBLIC.glob("*.py")):
            spec = importlib.util.spec_from_file_location(f"_public_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            modules[path.stem] = module
        yield modules
    finally:
        for name in set(sys.modules) - set(saved):
            del sys.modules[name]
        sys.modules.update(saved)


def layernorm_reference(x, epsilon, gamma, beta):
    """LayerNorm over each row: biased variance, then gamma and beta (the tutorial's layernorm_torch.py)."""
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + epsilon) * gamma + beta


def mamba_reference(delta, u, A, B, C):
    """The tutorial's selective scan: h_t = exp(delta_t A) h_{t-1} + delta_t B_t u_t per (batch, channel,
    state); the output is the sum over states of C_t h_t."""
    delta, u, A, B, C = (a.astype(np.float64) for a in (delta, u, A, B, C))
    decay = np.exp(delta[:, :, None, :] * A[None, :, :, None])
    drive = delta[:, :, None, :] * B[:, None, :, :] * u[:, :, None, :]
    h = np.zeros(decay.shape[:-1])
    out = np.zeros(delta.shape)
    for t in range(delta.shape[-1]):
        h = decay[..., t] * h + drive[..., t]
        out[..., t] = (C[:, None, :, t] * h).sum(axis=2)
    return out


@pytest.mark.parametrize("rows", [128, 300])  # 300: the last tile is masked
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_layernorm(tutorial, version, rows):
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 200), dtype=np.float32)
    gamma, beta = rng.random(200, dtype=np.float32), rng.random(200, dtype=np.float32)
    kernel = getattr(tutorial["layernorm_nki_kernel"], f"nki_layernorm_kernel_{version}")
    got = rnki.simulate_kernel(kernel, x, 1e-5, gamma, beta)
    np.testing.assert_allclose(got, layernorm_reference(x, 1e-5, gamma, beta), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("version", ["v1", "v2", "v3"])
def test_mamba(tutorial, version):
    rng = np.random.default_rng(3)
    b, c, s, n = 1, 256, 1024, 4  # two channel tiles, four states, two of v3's 512-step sequence tiles
    delta, u = rng.random((b, c, s), dtype=np.float32), rng.random((b, c, s), dtype=np.float32)
    a = -rng.random((c, n), dtype=np.float32)  # negative, as the tutorial's inputs are
    bb, cc = rng.random((b, n, s), dtype=np.float32), rng.random((b, n, s), dtype=np.float32)
    got = rnki.simulate_kernel(getattr(tutorial["mamba_nki_kernels"], f"mamba_{version}"), delta, u, a, bb, cc)
    np.testing.assert_allclose(got, mamba_reference(delta, u, a, bb, cc), rtol=1e-4, atol=1e-4)


MATMULS = ["nki_matmul_basic_", "nki_matmul_tiled_", "nki_matmul_hoist_load_", "nki_matmul_block_free_dimension_",
           "nki_matmul_fully_optimized_"]
#: (K, M, N) each kernel takes: the basic one is one tile; the fully optimized one works in blocks of
#: 2048 x 1024 x 1024 (its page's constraints).
MATMUL_SHAPES = {"nki_matmul_basic_": (128, 64, 512), "nki_matmul_fully_optimized_": (1024, 2048, 1024)}


@pytest.mark.parametrize("name", MATMULS)
def test_matmul(tutorial, name):
    k, m, n = MATMUL_SHAPES.get(name, (256, 256, 1024))
    rng = np.random.default_rng(len(name))
    lhs_t = rng.standard_normal((k, m), dtype=np.float32).astype(ml_dtypes.bfloat16)
    rhs = rng.standard_normal((k, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
    got = rnki.simulate_kernel(getattr(tutorial["matrix_multiplication_nki_kernels"], name), lhs_t, rhs)
    want = lhs_t.astype(np.float64).T @ rhs.astype(np.float64)
    # the tensor engine sums in float32 and the result is stored as bfloat16: 3 significant digits
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-2, atol=2e-2 * np.sqrt(k))


def test_matmul_benchmark_is_cost_only_and_uses_the_tensor_engine(tutorial):
    kernel = rnki.benchmark(tutorial["matrix_multiplication_nki_kernels"].nki_matmul_tiled_)
    spec = rnki.TensorSpec
    outputs = kernel(spec((2048, 1024), ml_dtypes.bfloat16), spec((2048, 2048), ml_dtypes.bfloat16))
    with pytest.raises(InvalidValueError, match="not computed"):
        np.asarray(outputs)
    result = kernel.benchmark_result
    latency = result.nc_latency.get_latency_percentile(50)
    report = program_cost(result.program, "trn1")
    assert latency == pytest.approx(report.benchmark_us)
    assert report.instructions["tensor"] > 0 and report.busy_us["tensor"] > 0
