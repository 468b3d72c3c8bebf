"""Run the public NKI kernel corpus through the aliases: numerics on a small shape, modelled latency on the
shapes the sources measured.

    git clone https://github.com/zhang677/AccelOpt
    git clone https://github.com/aws-neuron/nki-samples
    git clone https://github.com/aws-neuron/aws-neuron-sdk
    python benchmarks/nki_corpus.py --accelopt AccelOpt --nki-samples nki-samples --neuron-sdk aws-neuron-sdk

Full clones (not ``--depth 1``), so that the pinned commits below are in them; give any subset of the three.
Nothing is checked out in your clones and nothing goes to the network: the pinned commit's files are read
with ``git archive`` into a temporary directory, run from there unmodified (``neuronxcc.nki`` is this
project's simulator, ``resize_kernels.nki.install_aliases``), and nothing of them is copied into the project.

- NKIBench (AccelOpt at 47e29a7, NKIBench/): every baseline kernel (``kernels/*_0.py``, listed by
  ``summary.json``) with its numpy reference (``reference/*.py``) and its latency measured on trn1
  (``experiments/full_complete_local/profile_results.csv``: the mean of 10 runs, neuron-profile). Its shapes
  are written into the kernels, so numerics run on the kernel's own shape, with NKIBench's inputs (seed 42)
  and NKIBench's check (the error's L2 norm below 2e-5 of the reference's), when the kernel's HBM tensors fit
  ``--numerics-mib`` (default 256 MiB); larger ones are skipped and the row says how large they are.
  Only the seven baselines issue 38 calibrates on show their measurement; the others are the cost model's
  held-out validation set ("held out"; ``--held-out`` prints them, to judge the model, never to tune it).
- nki-samples at 0898a77, the last commit whose unit tests assert latencies (fc5c69f removed them): every
  kernel with a perf test. Numerics: the kernel's own numeric test function (its inputs, its reference, its
  tolerance), called with a small shape chosen here; the row is ``wrong`` when the test's own assertion fails.
  Latency: the kernel's own perf test function, on each of its parameter sets; the bound it asserts is the
  published column, as ``<= X`` (for adaptive_avg_pool2d those are measurements x 1.05; the two SD attention
  tests allow 5% more). quantized_double_row_matmul's tests run on trn2 only: its ``get_target_string`` is
  made to say trn2 and its bound is compared with the trn2 column.
- The NKI docs' tutorials (aws-neuron-sdk at tag v2.26.0, 49ee15c, the last release with all three under
  ``general/nki/examples``): LayerNorm v1 and v2, the four matrix multiplications, Mamba v1, v2 and v3, on the
  shapes their pages print latencies for (trn1), with references written here from the tutorials' math and
  the tutorials' tolerances.

Latency is ``nki.benchmark``'s, cost-only (trace and cost, no element computed): trn1 as it reports (trn2 for
a kernel marked ``platform_target="trn2"``), and the same Program costed on the other target ("n/a" where that
target lacks an instruction's mode: trn1 has no double_row matmul). Every latency this script computes is
modelled (machine/cost.py), not measured. A kernel that fails is a row saying how (``error:`` and the
exception's first line), never a crash; ``--only`` runs the kernels whose name contains a given text.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib.util
import itertools
import json
import math
import os
import sys
import tarfile
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

import ml_dtypes
import numpy as np

from resize_kernels import nki
from resize_kernels.machine.cost import TargetFeatureError, program_cost
from resize_kernels.nki import launch
from resize_kernels.nki.tensor import TensorSpec


@dataclass(frozen=True)
class Source:
    """A public repository at a pinned commit, read from the user's clone."""

    name: str
    url: str
    commit: str
    option: str
    tag: str = ""

    @property
    def label(self) -> str:
        return f"{self.name}@{self.tag or self.commit[:7]}"


ACCELOPT = Source("NKIBench", "https://github.com/zhang677/AccelOpt", "47e29a7c24704e3c3e534b5bcbf39cfac3f831e3",
                  "--accelopt")
SAMPLES = Source("nki-samples", "https://github.com/aws-neuron/nki-samples", "0898a771c302e2ed7003cb0a51fc158d28e4d9e1",
                 "--nki-samples")
SDK = Source("aws-neuron-sdk", "https://github.com/aws-neuron/aws-neuron-sdk", "49ee15c58418d5f19b2407bc7057a7beb77ab24a",
             "--neuron-sdk", tag="v2.26.0")

#: NKIBench's correctness check (accelopt/eval_numpy.py): ||kernel - reference||_2 < 2e-5 ||reference||_2.
NKIBENCH_REL_TOL = 2e-5
#: NKIBench draws its inputs after np.random.seed(42) (accelopt/kernel_wrapper.py).
NKIBENCH_SEED = 42


class CorpusError(Exception):
    """A clone that cannot serve the pinned commit."""


@dataclass
class Row:
    """One line of the table: a kernel on one measured shape (its numerics on the kernel's first row)."""

    kernel: str
    source: str
    shape: str = ""
    numerics: str = ""
    trn1: float | None = None
    trn2: float | None = None
    published: str = ""
    published_us: float | None = None
    published_target: str = "trn1"
    bench: str = ""  # why there is no modelled latency
    seconds: float = 0.0
    first: bool = True  # the kernel's first row (the one whose numerics count)

    @property
    def benched(self) -> bool:
        """Whether a latency was modelled (on one target at least: the other may lack an instruction's mode)."""
        return self.trn1 is not None or self.trn2 is not None

    @property
    def modelled_us(self) -> float | None:
        """The modelled latency on the target the published figure is for."""
        return self.trn1 if self.published_target == "trn1" else self.trn2


@dataclass
class Kernel:
    """What the runner needs of one kernel: how to check it on a small shape, and its measured shapes."""

    name: str
    source: Source
    numerics: object  # () -> "ok" | "wrong: ..." | "skipped: ..." (raises on error)
    shapes: list = field(default_factory=list)  # [(label, () -> BenchmarkResult, published str, us, target)]
    state: dict = field(default_factory=dict)  # inputs and modules the callables share, dropped after the run


# -- reading the clones ------------------------------------------------------------------------------------------

def extract(clone: Path, source: Source, paths: list, dest: Path) -> Path:
    """The pinned commit's ``paths`` from ``clone``, written under ``dest`` by ``git archive`` (the clone is
    not touched)."""
    import subprocess

    def git(*argv):
        return subprocess.run(["git", "-C", str(clone), *argv], capture_output=True)

    if git("rev-parse", "--git-dir").returncode:
        raise CorpusError(f"{source.option} requires a git clone of {source.url}, got {str(clone)!r}; "
                          f"git clone {source.url}")
    if git("cat-file", "-e", f"{source.commit}^{{commit}}").returncode:
        raise CorpusError(f"{clone} has no commit {source.commit[:7]} of {source.url}; fetch it: "
                          f"git -C {clone} fetch origin (git -C {clone} fetch --unshallow for a shallow clone)")
    tar = git("archive", "--format=tar", source.commit, *paths)
    if tar.returncode:
        raise CorpusError(f"git archive {source.commit[:7]} {' '.join(paths)} in {clone} failed: "
                          f"{tar.stderr.decode().strip()}")
    with tarfile.open(fileobj=BytesIO(tar.stdout)) as archive:
        try:
            archive.extractall(dest, filter="data")
        except TypeError:  # Python without extraction filters (before 3.10.12)
            archive.extractall(dest)
    return dest


_loaded = itertools.count()


def load(path: Path, name: str | None = None):
    """Import the Python file ``path`` as a fresh module."""
    name = name or f"nki_corpus_{path.stem}_{next(_loaded)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses in the module look themselves up here
    spec.loader.exec_module(module)
    return module


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def spec(shape, dtype) -> TensorSpec:
    """A tensor argument without data (cost-only benchmarks need only its shape and dtype)."""
    return TensorSpec(tuple(shape), np.dtype(dtype))


def hbm_bytes(arrays, program=None) -> int:
    """Bytes of a kernel's HBM inputs (arrays) and, once traced, of its outputs."""
    total = sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))
    if program is not None:
        total += sum(t.size * np.dtype(t.dtype).itemsize for t in program.outputs)
    return total


def modelled(kernel, *args, grid: tuple = (), **kwargs):
    """``nki.benchmark`` (cost-only) of ``kernel`` on ``args``: its BenchmarkResult."""
    bench = nki.benchmark(kernel)
    (bench[grid] if grid else bench)(*args, **kwargs)
    return bench.benchmark_result


@contextlib.contextmanager
def counting_simulations():
    """Count the kernel simulations run inside the block (a numeric test that runs none proves nothing)."""
    count = [0]
    simulate = launch.simulate

    def counted(*args, **kwargs):
        count[0] += 1
        return simulate(*args, **kwargs)

    launch.simulate = counted
    try:
        yield count
    finally:
        launch.simulate = simulate


def failed_in(e: BaseException, path: Path) -> bool:
    """Whether ``e`` was raised by code in ``path`` (a test's own assertion, not the kernel's)."""
    frames = traceback.extract_tb(e.__traceback__)
    return bool(frames) and Path(frames[-1].filename).resolve() == path.resolve()


# -- NKIBench ----------------------------------------------------------------------------------------------------

#: The NKIBench baselines whose measurements the cost model may be calibrated on (issue 38's visible corpus); the
#: others are its held-out validation set, printed only with --held-out, to judge the model, never to tune it.
NKIBENCH_VISIBLE = ("silu_M4096_N7168_0", "adamw_M10944_N2048_0", "swiglu_M4096_N3072_K1024_0",
                    "rmsnorm_matmul_M4096_N2048_K1024_0", "matmul_M4096_N12288_K5120_0", "bmm_B16_M4096_K64_N4096_0",
                    "transpose_matmul_M4096_K2048_N10944_0")


def nkibench_kernels(clone: Path, tmp: Path, args) -> list:
    root = extract(clone, ACCELOPT, ["NKIBench", "experiments/full_complete_local/profile_results.csv"],
                   tmp / "accelopt") / "NKIBench"
    summary = json.loads((root / "summary.json").read_text())
    measured = {}
    with open(root.parent / "experiments/full_complete_local/profile_results.csv", newline="") as f:
        for record in csv.DictReader(f):
            measured[Path(record["kernel"]).name] = json.loads(record["profile"])["latency"] * 1000.0  # ms -> us
    kernels = []
    for problem, entry in summary.items():
        for case in entry["cases"].values():
            values = " ".join(f"{k}={v}" for k, v in case["values"].items())
            for impl in case["impls"]:
                kernels.append(nkibench_kernel(root / impl["kernel"], root / impl["task"], values,
                                               measured.get(Path(impl["kernel"]).name), args))
    return kernels


def nkibench_kernel(kernel_path: Path, reference_path: Path, values: str, measured_us, args) -> Kernel:
    """One NKIBench kernel: inputs drawn once (seed 42), benchmarked, then checked if they fit the budget."""
    state = {}

    def prepare():
        if "inputs" not in state:
            reference = load(reference_path)
            module = load(kernel_path)
            kernel = getattr(module, "kernel", None) or getattr(module, "optimized_kernel")
            np.random.seed(NKIBENCH_SEED)
            inputs = reference.get_inputs()
            state.update(reference=reference, kernel=kernel, inputs=inputs,
                         nki_inputs=reference.transform_to_nki_inputs(inputs))
        return state

    def bench():
        s = prepare()
        result = modelled(s["kernel"], *s["nki_inputs"])
        state["program"] = result.program
        return result

    def numerics() -> str:
        s = prepare()
        size = hbm_bytes(s["nki_inputs"], state.get("program"))
        if size > args.numerics_mib * 2**20:
            return (f"skipped: the kernel's own shape has {size / 2**20:,.0f} MiB of HBM tensors > "
                    f"--numerics-mib {args.numerics_mib:g}")
        out = nki.simulate_kernel(s["kernel"], *s["nki_inputs"])
        want = s["reference"].forward(*s["inputs"])
        got = s["reference"].transform_nki_outputs(out, want)
        wants = want if isinstance(want, tuple) else (want,)
        if len(got) != len(wants):
            return f"wrong: {len(got)} outputs, the reference has {len(wants)}"
        worst = 0.0
        for g, w in zip(got, wants):
            g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
            if g.shape != w.shape:
                return f"wrong: output shape {g.shape}, the reference's {w.shape}"
            worst = max(worst, np.linalg.norm(g - w) / max(np.linalg.norm(w), np.finfo(np.float64).tiny))
        if not worst < NKIBENCH_REL_TOL:  # NaN counts as wrong
            return f"wrong: L2 relative error {worst:.2g} >= {NKIBENCH_REL_TOL:g}"
        return "ok"

    if measured_us is not None and kernel_path.stem not in NKIBENCH_VISIBLE and not args.held_out:
        published, measured_us = "held out", None
    else:
        published = f"= {measured_us:,.0f}" if measured_us is not None else ""
    return Kernel(kernel_path.stem, ACCELOPT, numerics, [(values, bench, published, measured_us, "trn1")], state)


# -- nki-samples -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SampleTest:
    """A kernel of nki-samples and its unit tests (test/unit/<file>): the numeric test, called with ``small``,
    and the perf test, called with each of its own parameter sets."""

    kernel: str
    file: str
    cls: str
    numeric: str
    small: dict
    perf: str
    target: str = "trn1"  # the platform its tests measure on (its perf test runs with NEURON_PLATFORM_TARGET_OVERRIDE)


#: The kernels with a perf test at SAMPLES.commit. The small shapes meet each kernel's asserts (sequence
#: lengths multiples of 512, d_head 128 where required, select_and_scatter's 64 channels and even batch).
SAMPLE_TESTS = (
    SampleTest("fused_self_attn_for_SD_small_head_size", "test_SD_attention_small_head.py", "TestAttention",
               "test_attention_for_SD_numberic", dict(bs=1, seqlen=512, d=128, dtype=np.float32),
               "test_attention_for_SD_perf"),
    SampleTest("allocated_fused_self_attn_for_SD_small_head_size", "test_allocated_SD_attention_small_head.py",
               "TestAttention", "test_allocated_attention_for_SD_numberic",  # seqlen: a multiple of its 1024 reduction
               dict(bs=1, seqlen=1024, d=128, dtype=np.float32), "test_allocated_attention_for_SD_perf"),
    SampleTest("quantized_double_row_matmul", "test_double_row_matmul.py", "TestDoubleRowMatmul",
               "test_double_row_matmul_numerical",
               dict(M=256, K=2048, N=1024, dtype=ml_dtypes.bfloat16, TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=2,
                    TILES_IN_BLOCK_K=16), "test_double_row_matmul_perf", target="trn2"),
    SampleTest("flash_fwd", "test_flash_attn_fwd.py", "TestAttention", "test_flash_attn_fwd_numerical",
               dict(bs=1, nheads=1, seqlen_q=512, seqlen_k=512, d=64, dtype=np.float32, use_causal_mask=True,
                    sliding_window=-1, training=True, tile_size=512, kv_heads=None, should_transpose_v=False),
               "test_flash_attn_fwd_perf"),
    SampleTest("flash_attn_bwd", "test_flash_attn_bwd.py", "TestAttention", "test_flash_attn_bwd_numerical",
               dict(bs=1, nheads=1, nheads_kv=1, seqlen=512, d=64, dtype=np.float32, sliding_window=-1,
                    sinks=False), "test_flash_attn_bwd_perf"),
    SampleTest("resize_nearest_fixed_dma_kernel", "test_resize_nearest.py", "TestResizeNearest",
               "test_resize_nearest_for_numberic",
               dict(in_b=2, in_h=10, in_w=8, in_c=16, out_b=2, out_h=19, out_w=15, out_c=16, dtype=np.float32),
               "test_resize_nearest_for_perf"),
    SampleTest("allocated_fused_rms_norm_qkv", "test_rmsnorm_qkv.py", "TestRMSNormQKV",
               "test_allocated_rmsnorm_qkv_numeric",  # dim: a multiple of its 512-wide transposes, as its tests take
               dict(batch=1, seqlen=128, dim=512, d_head=128, dtype=np.float16),
               "test_allocated_rmsnorm_qkv_perf"),
    SampleTest("select_and_scatter_kernel", "test_select_and_scatter.py", "TestSelectAndScatter",
               "test_select_and_scatter_for_numeric",
               dict(n=2, c=64, operand_h=16, operand_w=16, source_h=8, source_w=8, dtype=np.float32),
               "test_select_and_scatter_for_perf"),
    SampleTest("adaptive_avg_pool2d_kernel", "test_adaptive_avg_pool2d.py", "TestAdaptiveAvgPool2D",
               "test_adaptive_avg_pool2d_numerical", dict(N=2, C=64, H=16, W=16, output_size=(4, 2), dtype=np.float32),
               "test_adaptive_avg_pool2d_perf"),
)


def parameter_sets(function) -> list:
    """The parameter dicts of a pytest test function, from its ``parametrize`` marks (their product)."""
    marks = [m for m in getattr(function, "pytestmark", []) if m.name == "parametrize"]
    axes = []
    for mark in marks:
        names = mark.args[0]
        names = [n.strip() for n in (names.split(",") if isinstance(names, str) else names)]
        sets = []
        for value in mark.args[1]:
            value = getattr(value, "values", value)  # pytest.param(...)
            sets.append(dict(zip(names, value if len(names) > 1 else (value,))))
        axes.append(sets)
    return [dict(itertools.chain.from_iterable(d.items() for d in combo)) for combo in itertools.product(*axes)]


def describe(params: dict) -> str:
    def short(v):
        if isinstance(v, (type, np.dtype)):
            try:
                return np.dtype(v).name
            except TypeError:
                pass
        return str(v).replace(" ", "")
    return " ".join(f"{k}={short(v)}" for k, v in params.items())


@contextlib.contextmanager
def platform(target: str):
    """Run as on a ``target`` instance: NKI compiles for the platform NEURON_PLATFORM_TARGET_OVERRIDE names."""
    before = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE")
    os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = target
    try:
        yield
    finally:
        if before is None:
            del os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"]
        else:
            os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = before


def sample_kernels(clone: Path, tmp: Path, args) -> list:
    root = extract(clone, SAMPLES, ["src", "test/unit"], tmp / "nki-samples")
    sys.path.insert(0, str(root / "src"))  # the tests import nki_samples.reference.*
    return [sample_kernel(root / "test/unit" / t.file, t) for t in SAMPLE_TESTS]


def sample_kernel(test_file: Path, test: SampleTest) -> Kernel:
    state = {}

    def module():
        if "module" not in state:
            state["module"] = load(test_file)
            if test.target == "trn2" and hasattr(state["module"], "get_target_string"):
                state["module"].get_target_string = lambda: "trn2"  # its tests run on trn2 only
        return state["module"]

    def numerics() -> str:
        m = module()
        function = getattr(getattr(m, test.cls)(), test.numeric)
        np.random.seed(0)
        with counting_simulations() as count:
            try:
                function(simulation_only=True, **test.small)
            except AssertionError as e:
                if not failed_in(e, test_file):
                    raise  # the kernel's own assert (a shape it does not take): an error, not a wrong result
                return f"wrong ({describe(test.small)}): {first_line(e)}"
        if count[0] == 0:
            raise RuntimeError(f"{test.numeric} simulated no kernel, so it checked nothing")
        return f"ok ({describe(test.small)})"

    def bench_of(params: dict):
        def bench():
            m = module()
            function = getattr(getattr(m, test.cls)(), test.perf)
            m.bench_func.benchmark_result = None
            np.random.seed(0)
            try:
                with platform(test.target):
                    function(**params)
            except Exception:  # the test's own bound, or its trace-file check, after the benchmark: report it
                if m.bench_func.benchmark_result is None:
                    raise
            if m.bench_func.benchmark_result is None:
                raise RuntimeError(f"{test.perf} benchmarked nothing")
            return m.bench_func.benchmark_result
        return bench

    shapes = []
    try:
        perf = getattr(getattr(module(), test.cls), test.perf)
    except Exception as e:  # noqa: BLE001 - the test module does not import: one row saying why
        def fail(e=e):
            raise e
        return Kernel(test.kernel, SAMPLES, fail, [("", fail, "", None, test.target)])
    for params in parameter_sets(perf):
        bound_key = next(k for k in params if "latency" in k)
        bound = float(params[bound_key])
        label = describe({k: v for k, v in params.items() if k != bound_key})
        shapes.append((label, bench_of(params), f"<= {bound:,.0f}", bound, test.target))
    return Kernel(test.kernel, SAMPLES, numerics, shapes, state)


# -- the NKI docs' tutorials -------------------------------------------------------------------------------------

def layernorm_reference(x, epsilon, gamma, beta):
    """LayerNorm over each row (the tutorial's reference: biased variance, then gamma and beta)."""
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + epsilon) * gamma + beta


def mamba_reference(delta, u, A, B, C):
    """The Mamba selective-scan layer as the tutorial defines it: h_t = exp(delta_t A) h_{t-1} + delta_t B_t u_t
    per (batch, channel, state), and the output sum over states of C_t h_t."""
    delta, u, A, B, C = (a.astype(np.float64) for a in (delta, u, A, B, C))
    decay = np.exp(delta[:, :, None, :] * A[None, :, :, None])  # (batch, channels, states, seq)
    drive = delta[:, :, None, :] * B[:, None, :, :] * u[:, :, None, :]
    h = np.zeros(decay.shape[:-1])
    out = np.zeros(delta.shape)
    for t in range(delta.shape[-1]):
        h = decay[..., t] * h + drive[..., t]
        out[..., t] = (C[:, None, :, t] * h).sum(axis=2)
    return out


def close(got, want, rtol: float, atol: float) -> str:
    got = np.asarray(got, np.float64)
    if got.shape != want.shape:
        return f"wrong: output shape {got.shape}, the reference's {want.shape}"
    if np.allclose(got, want, rtol=rtol, atol=atol):
        return "ok"
    return f"wrong: max abs error {np.nanmax(np.abs(got - want)):.3g} (rtol {rtol:g}, atol {atol:g})"


def tutorial_kernels(clone: Path, tmp: Path, args) -> list:
    examples = extract(clone, SDK, ["general/nki/examples/layernorm", "general/nki/examples/matrix_multiplication",
                                    "general/nki/examples/fused_mamba"], tmp / "sdk") / "general/nki/examples"
    modules = {}

    def module(path):
        if path not in modules:
            modules[path] = load(examples / path)
        return modules[path]

    def kernel(path, name):
        return lambda: getattr(module(path), name)

    f32, bf16 = np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16)
    rng = np.random.default_rng(0)
    kernels = []

    # LayerNorm: its page prints p50 latencies on trn1 for a (300, 1000) float32 input; tolerance of layernorm_torch.py.
    for version, published in (("v1", 2311.0), ("v2", 1969.0)):
        get = kernel("layernorm/layernorm_nki_kernel.py", f"nki_layernorm_kernel_{version}")

        def numerics(get=get):
            x = rng.random((300, 1000), dtype=np.float32)
            gamma, beta = rng.random(1000, dtype=np.float32), rng.random(1000, dtype=np.float32)
            got = nki.simulate_kernel(get(), x, 1e-5, gamma, beta)
            return close(got, layernorm_reference(x, 1e-5, gamma, beta), rtol=1e-2, atol=1e-3) + " (300x1000)"

        def bench(get=get):
            return modelled(get(), spec((300, 1000), f32), 1e-5, spec((1000,), f32), spec((1000,), f32))
        kernels.append(Kernel(f"nki_layernorm_kernel_{version}", SDK, numerics,
                              [("300x1000 float32", bench, f"= {published:,.0f}", published, "trn1")]))

    # Matrix multiplication: the page's table, [4096, 8192] @ [8192, 8192] bfloat16 (lhsT is [K, M]) on trn1;
    # numerics on K=1024, M=2048, N=1024 (a multiple of the fully optimized kernel's blocks), its tolerance.
    for name, published_ms in (("nki_matmul_tiled_", 51.80), ("nki_matmul_hoist_load_", 42.96),
                               ("nki_matmul_block_free_dimension_", 22.07), ("nki_matmul_fully_optimized_", 6.97)):
        get = kernel("matrix_multiplication/matrix_multiplication_nki_kernels.py", name)

        def numerics(get=get):
            lhs_t = rng.random((1024, 2048), dtype=np.float32).astype(bf16)
            rhs = rng.random((1024, 1024), dtype=np.float32).astype(bf16)
            got = nki.simulate_kernel(get(), lhs_t, rhs)
            want = lhs_t.astype(np.float64).T @ rhs.astype(np.float64)
            return close(got, want, rtol=1e-2, atol=1e-4) + " (K=1024 M=2048 N=1024)"

        def bench(get=get):
            return modelled(get(), spec((8192, 4096), bf16), spec((8192, 8192), bf16))
        kernels.append(Kernel(name, SDK, numerics, [("K=8192 M=4096 N=8192 bfloat16", bench,
                                                    f"= {published_ms * 1000:,.0f}", published_ms * 1000, "trn1")]))

    # Mamba: the page's profiles (float32, state_size 16, batch 1) on trn1; numerics on its toy shape with
    # random inputs (A negative, as the tutorial advises), tolerance of mamba_torch.py.
    measured = {"v1": [(256, 512, 172.93), (4096, 512, 2340.0)],
                "v2": [(4096, 512, 1610.0), (4096, 2048, 8900.0), (4096, 8192, 52200.0)],
                "v3": [(4096, 512, 1600.0), (4096, 2048, 6600.0), (4096, 8192, 27800.0)]}
    for version, shapes in measured.items():
        get = kernel("fused_mamba/mamba_nki_kernels.py", f"mamba_{version}")

        def numerics(get=get):
            b, c, s, n = 1, 256, 512, 16
            delta = rng.random((b, c, s), dtype=np.float32)
            u = rng.random((b, c, s), dtype=np.float32)
            a = -rng.random((c, n), dtype=np.float32)
            bb, cc = rng.random((b, n, s), dtype=np.float32), rng.random((b, n, s), dtype=np.float32)
            got = nki.simulate_kernel(get(), delta, u, a, bb, cc)
            return close(got, mamba_reference(delta, u, a, bb, cc), rtol=1e-2, atol=1e-2) + " (256 ch, seq 512)"

        rows = []
        for channels, seq, published in shapes:
            def bench(get=get, c=channels, s=seq):
                return modelled(get(), spec((1, c, s), f32), spec((1, c, s), f32), spec((c, 16), f32),
                                spec((1, 16, s), f32), spec((1, 16, s), f32))
            rows.append((f"batch=1 channels={channels} seq={seq} state=16", bench, f"= {published:,.0f}",
                         published, "trn1"))
        kernels.append(Kernel(f"mamba_{version}", SDK, numerics, rows))
    return kernels


# -- running and printing ----------------------------------------------------------------------------------------

def run_kernel(kernel: Kernel, args) -> list:
    """The rows of one kernel: numerics (once), then a modelled latency per measured shape."""
    rows = []
    for n, (label, bench, published, published_us, target) in enumerate(kernel.shapes or [("", None, "", None,
                                                                                             "trn1")]):
        row = Row(kernel.name, kernel.source.label, label, published=published, published_us=published_us,
                  published_target=target, first=n == 0)
        t0 = time.perf_counter()
        if bench is not None:
            try:
                result = bench()
                other = "trn2" if result.target == "trn1" else "trn1"
                costs = {result.target: result.nc_latency.get_latency_percentile(50), other: None}
                try:  # a Program of one target's features (trn2's double_row matmul) has no cost on the other
                    costs[other] = program_cost(result.program, other, events=False).modelled_us
                except TargetFeatureError as e:
                    report(e, args)
                row.trn1, row.trn2 = costs["trn1"], costs["trn2"]
                del result  # its Program: the next shape's trace need not share memory with it
            except Exception as e:  # noqa: BLE001 - a failing kernel is a row
                row.bench = f"error: {first_line(e)}"
                report(e, args)
        rows.append(row)
        row.seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    if args.no_numerics:
        rows[0].numerics = "skipped: --no-numerics"
    else:
        try:
            rows[0].numerics = kernel.numerics()
        except Exception as e:  # noqa: BLE001
            rows[0].numerics = f"error: {first_line(e)}"
            report(e, args)
    rows[0].seconds += time.perf_counter() - t0
    kernel.state.clear()
    return rows


def report(e: BaseException, args) -> None:
    if args.traceback:
        traceback.print_exception(e, file=sys.stderr)


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def table(rows: list) -> str:
    header = ("kernel", "source", "numerics", "trn1 us (modelled)", "trn2 us (modelled)", "published us",
              "modelled/published", "s", "measured shape")
    lines = []
    for r in rows:
        ratio = ""
        modelled_us = r.modelled_us
        if modelled_us is not None and r.published_us:
            ratio = f"{modelled_us / r.published_us:.2f}" + ("" if r.published_target == "trn1" else " (trn2)")
        latency = tuple("n/a" if us is None else f"{us:,.1f}" for us in (r.trn1, r.trn2)) if r.benched else (
            clip(r.bench, 60), "")
        lines.append((r.kernel if r.first else "", r.source if r.first else "", clip(r.numerics, 70) if r.first
                      else "", *latency, r.published, ratio, f"{r.seconds:.1f}", r.shape))
    widths = [max(len(h), *(len(line[i]) for line in lines)) if lines else len(h) for i, h in enumerate(header)]
    right = {3, 4, 5, 6, 7}

    def fmt(cells):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, lines)])


def summary(rows: list) -> str:
    firsts = [r for r in rows if r.first]
    kinds = {"ok": 0, "wrong": 0, "skipped": 0, "error": 0}
    for r in firsts:
        kinds[r.numerics.split(":")[0].split(" ")[0] if r.numerics else "error"] += 1
    benched = [r for r in rows if r.benched]
    within = [r for r in benched if r.published_us and r.published.startswith("<=")
              and r.modelled_us is not None and r.modelled_us <= r.published_us]
    bounds = [r for r in benched if r.published.startswith("<=")]
    by_source = ", ".join(f"{s} {sum(r.source == s for r in firsts)}" for s in dict.fromkeys(r.source for r in firsts))
    return (f"{len(firsts)} kernels ({by_source}); numerics: {kinds['ok']} ok, {kinds['wrong']} wrong, "
            f"{kinds['skipped']} skipped, {kinds['error']} error; modelled latency: {len(benched)} of {len(rows)} "
            f"measured shapes ({len(within)} of {len(bounds)} within their test's bound), "
            f"{len(rows) - len(benched)} error")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(ACCELOPT.option, type=Path, metavar="CLONE", help=f"a clone of {ACCELOPT.url}")
    parser.add_argument(SAMPLES.option, type=Path, metavar="CLONE", help=f"a clone of {SAMPLES.url}")
    parser.add_argument(SDK.option, type=Path, metavar="CLONE", help=f"a clone of {SDK.url}")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="run only kernels whose name contains TEXT (repeatable)")
    parser.add_argument("--no-numerics", action="store_true", help="modelled latency only")
    parser.add_argument("--held-out", action="store_true",
                        help="also print the held-out NKIBench measurements (the cost model's validation set)")
    parser.add_argument("--traceback", action="store_true", help="print each error's traceback to stderr")
    parser.add_argument("--numerics-mib", type=float, default=256.0, metavar="MIB",
                        help="largest HBM footprint (inputs and outputs) NKIBench numerics run on (default 256)")
    args = parser.parse_args()
    sources = [(ACCELOPT, args.accelopt, nkibench_kernels), (SAMPLES, args.nki_samples, sample_kernels),
               (SDK, args.neuron_sdk, tutorial_kernels)]
    if not any(clone for _, clone, _ in sources):
        parser.error(f"give at least one clone: {', '.join(s.option for s, _, _ in sources)}")
    nki.install_aliases()  # the kernels import neuronxcc.nki
    warnings.simplefilter("ignore")  # device options (save_neff_name, ...) the simulator ignores, said once here
    print("device options in the sources (save_neff_name, save_trace_name, ...) do nothing here", file=sys.stderr)
    rows, t0 = [], time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="nki_corpus_") as tmp:
        for source, clone, collect in sources:
            if clone is None:
                print(f"{source.name}: not run (give {source.option} CLONE)", file=sys.stderr)
                continue
            try:
                kernels = collect(clone.resolve(), Path(tmp), args)
            except CorpusError as e:
                print(f"{source.name}: not run: {e}", file=sys.stderr)
                continue
            for kernel in kernels:
                if args.only and not any(text in kernel.name for text in args.only):
                    continue
                print(f"[{source.label}] {kernel.name} ...", file=sys.stderr, flush=True)
                rows.extend(run_kernel(kernel, args))
    print(table(rows))
    print()
    print(summary(rows))
    print(f"(every latency computed here is modelled by the cost model, not measured; published: = measured by "
          f"the source, <= the bound its test asserts; {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
