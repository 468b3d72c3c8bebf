"""Exported NKI 0.3.0 files: documented names only, the same Program the project costs, exact bits in a clean process."""

import ast
import importlib.util
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import resize_kernels as rk
from resize_kernels import export, nki
from resize_kernels.machine.cost import program_cost
from resize_kernels.nki import TensorSpec

PANEL = [((2, 30, 20, 1280), (59, 38), "bfloat16"), ((2, 15, 10, 1280), (30, 20), "bfloat16"),
         ((10, 30, 20, 1280), (59, 38), "float32"), ((1, 30, 20, 1280), (59, 38), "float16"),
         ((8, 192, 192, 256), (64, 64), "float32"), ((4, 100, 100, 128), (70, 70), "float16"),
         ((2, 37, 53, 96), (101, 97), "float32"), ((1, 300, 4, 64), (1000, 7), "float32"),
         ((1, 512, 512, 1), (1024, 768), "float32"), ((1, 256, 256, 3), (511, 383), "uint8"),
         ((4, 224, 224, 4), (448, 336), "uint8")]
DTYPES = ("float32", "bfloat16", "float16", "int32", "uint8", "int8", "float8_e4m3", "uint16")


def random_shapes(count, seed):
    rng = random.Random(seed)
    return [((rng.randint(1, 3), rng.randint(1, 40), rng.randint(1, 40), rng.choice((1, 2, 3, 4, 8, 64, 96))),
             (rng.randint(1, 80), rng.randint(1, 80)), rng.choice(DTYPES)) for _ in range(count)]


@pytest.fixture(scope="module")
def aliases():
    """``nki`` importable as this package's NKI 0.3.0 for the module's tests, removed afterwards."""
    names = nki.install_aliases()
    yield
    for name in names:
        sys.modules.pop(name, None)


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(tmp_path, in_shape, out_hw, dtype, **kwargs) -> Path:
    path = tmp_path / f"k_{'x'.join(map(str, in_shape))}_{out_hw[0]}x{out_hw[1]}_{dtype}.py"
    path.write_text(export.export_nki(in_shape, out_hw, dtype, **kwargs))
    return path


def assert_same_program(path, in_shape, out_hw, dtype, kernel=None, convention=None):
    program = rk.trace_resize(in_shape, out_hw, dtype, kernel=kernel, convention=convention)
    module = load(path)
    bench = nki.benchmark(getattr(module, program.name))
    bench(TensorSpec(in_shape, np.dtype(program.inputs[0].dtype)), *module.TABLES)  # tables: the constants
    again = bench.benchmark_result.program
    assert export.program_signature(again) == export.program_signature(program)
    for target in ("trn1", "trn2"):
        assert program_cost(again, target).modelled_us == program_cost(program, target).modelled_us


@pytest.mark.parametrize("in_shape, out_hw, dtype", PANEL + random_shapes(12, 0))
def test_an_exported_file_traces_to_the_program_the_project_costs(aliases, tmp_path, in_shape, out_hw, dtype):
    assert_same_program(write(tmp_path, in_shape, out_hw, dtype), in_shape, out_hw, dtype)


KERNELS = ("rows", "sourcerows", "rowreuse", "batched", "twopass", "strided", "windows", "exact", "seed")


@pytest.mark.parametrize("kernel", KERNELS)
def test_each_kernel_exports(aliases, tmp_path, kernel):
    shape, out_hw = (2, 8, 12, 3), (16, 6)  # integer ratios: strided takes them
    assert_same_program(write(tmp_path, shape, out_hw, "bfloat16", kernel=kernel), shape, out_hw, "bfloat16", kernel)


@pytest.mark.parametrize("mode, scales", [("nearest-exact", (None, None)), ("nearest", (2.1, 1.7))])
def test_other_maps_export_with_their_tables_as_inputs(aliases, tmp_path, mode, scales):
    from resize_kernels import semantics
    convention = semantics.IndexConvention(*semantics.TORCH_MODES[mode], "torch", scales)
    shape, out_hw = (2, 13, 9, 3), (27, 15)
    path = tmp_path / "k.py"
    path.write_text(export.export_nki(shape, out_hw, "float16", convention=convention))
    assert_same_program(path, shape, out_hw, "float16", convention=convention)
    done = subprocess.run([sys.executable, "-c", "from resize_kernels import nki; nki.install_aliases(); "
                           "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and ": exact (" in done.stdout, done.stderr[-2000:]


def test_exported_files_run_unmodified_and_exactly_in_a_clean_process(tmp_path):
    """Every dtype class on random shapes (random bits: NaN payloads, -0.0): each file's own __main__ check."""
    shapes = [((1, 3, 4, 2), (7, 9), dtype) for dtype in DTYPES] + random_shapes(6, 1) + [PANEL[1], PANEL[9]]
    paths = [str(write(tmp_path, *shape)) for shape in shapes]
    for kernel in KERNELS:
        (tmp_path / kernel).mkdir()
        paths.append(str(write(tmp_path / kernel, (2, 8, 12, 3), (16, 6), "float16", kernel=kernel)))
    script = ("import runpy, sys\nfrom resize_kernels import nki\nnki.install_aliases()\n"
              "for path in sys.argv[1:]:\n"
              "    try:\n        runpy.run_path(path, run_name='__main__')\n"
              "    except SystemExit as e:\n        assert e.code == 0, path\n")
    done = subprocess.run([sys.executable, "-c", script, *paths], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == len(paths) and all(": exact (" in line for line in lines), done.stdout


def test_exported_files_use_only_documented_nki_and_import_nothing_of_the_project(tmp_path):
    for in_shape, out_hw, dtype in [PANEL[0], PANEL[4], PANEL[9], *random_shapes(6, 2)]:
        tree = ast.parse(export.export_nki(in_shape, out_hw, dtype))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                    for alias in node.names} | {node.module for node in ast.walk(tree)
                                                if isinstance(node, ast.ImportFrom)}
        assert imported <= {"numpy", "nki", "nki.isa", "nki.language", "ml_dtypes"}, imported
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.value.id in ("nki", "nisa", "nl"):
                assert f"{node.value.id}.{node.attr}" in export.DOCUMENTED, node.attr
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("ap", "reshape"):
                assert f"NkiTensor.{node.func.attr}" in export.DOCUMENTED


def test_the_cli_writes_the_file_and_checks_it(tmp_path, capfd):
    from resize_kernels import cli
    out = tmp_path / "k.py"
    assert cli.main(["export", "--in", "1x5x6x3", "--out", "9x4", "--dtype", "uint8", "-o", str(out), "--check"]) == 0
    assert out.read_text() == export.export_nki((1, 5, 6, 3), (9, 4), "uint8")
    assert ": exact (" in capfd.readouterr().out
    assert cli.main(["export", "--in", "1x5x6x3", "--out", "9x4", "--check"]) == 2  # --check needs -o


GRAD = [((2, 30, 20, 1280), (59, 38), "bfloat16"), ((2, 15, 10, 1280), (30, 20), "bfloat16"),
        ((2, 59, 39, 640), (117, 78), "bfloat16"), ((1, 7, 9, 4), (15, 4), "float32"),
        ((2, 13, 11, 3), (5, 30), "float16"), ((3, 20, 6, 8), (33, 7), "float32")]


#: Shapes rows' gradient does not take (one dx pixel's dy pixels past its tile), which export writes with padded's.
PADDED = [((1, 1, 1, 1), (111, 111), "float32"), ((1, 1, 2, 2), (157, 314), "bfloat16")]


@pytest.mark.parametrize("in_shape, out_hw, dtype", GRAD + PADDED)
def test_gradient_kernels_export_as_the_program_the_project_costs(aliases, tmp_path, in_shape, out_hw, dtype):
    path = tmp_path / "g.py"
    path.write_text(export.export_nki(in_shape, out_hw, dtype, grad=True))
    kernel = "padded" if (in_shape, out_hw, dtype) in PADDED else "rows"
    program = rk.trace_resize_grad((in_shape[0], *out_hw, in_shape[3]), in_shape[1:3], dtype, kernel=kernel)
    module = load(path)
    bench = nki.benchmark(getattr(module, program.name))
    bench(TensorSpec(program.inputs[0].shape, np.dtype(program.inputs[0].dtype)), *module.TABLES)
    assert export.program_signature(bench.benchmark_result.program) == export.program_signature(program)


def test_gradient_files_run_exactly_in_a_clean_process(tmp_path):
    """Random bits as dy (NaN payloads, infinities, -0.0): the sums in float32, in order, bit for bit."""
    paths = []
    for k, (in_shape, out_hw, dtype) in enumerate(GRAD[3:] + [((1, 30, 20, 64), (59, 38), "bfloat16")] + PADDED):
        paths.append(tmp_path / f"g{k}.py")
        paths[-1].write_text(export.export_nki(in_shape, out_hw, dtype, grad=True))
    paths.append(tmp_path / "padded.py")  # padded by name on a downsample: dx rows without a k-th dy row
    paths[-1].write_text(export.export_nki((1, 37, 53, 4), (11, 13), "float16", grad=True, kernel="padded"))
    script = ("import runpy, sys\nfrom resize_kernels import nki\nnki.install_aliases()\n"
              "for path in sys.argv[1:]:\n    try:\n        runpy.run_path(path, run_name='__main__')\n"
              "    except SystemExit as e:\n        assert e.code == 0, path\n")
    done = subprocess.run([sys.executable, "-c", script, *map(str, paths)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and done.stdout.count(": exact (") == len(paths), done.stderr[-2000:]


def test_what_export_cannot_write_is_refused_clearly():
    with pytest.raises(export.ExportError, match=r"got 'divide', which NKI 0.3.0 does not document .*kernel="):
        export.export_nki((2, 8, 12, 3), (16, 6), "float16", kernel="public")  # the sample's nl.divide, nl.floor
    grad = rk.trace_resize_grad((1, 37, 53, 4), (11, 13), "float32", kernel="general")
    with pytest.raises(export.ExportError, match="export does not write dma_copy with dst_rmw_op"):
        export.source(grad, "", "trn2", np.zeros(37, int), np.zeros(53, int))
    with pytest.raises(export.ExportError, match="export does not write dma_copy with dst_rmw_op"):
        export.export_nki((1, 30, 20, 8), (59, 38), "float32", grad=True, kernel="general")


def test_a_models_resizes_export_as_a_folder_of_kernels(tmp_path):
    torch = pytest.importorskip("torch")
    from resize_kernels.frontends.torch import export_model_kernels

    class Decoder(torch.nn.Module):
        def forward(self, x):
            up = torch.nn.functional.interpolate(x, scale_factor=2.0, mode="nearest")
            odd = torch.nn.functional.interpolate(up, size=(59, 38), mode="nearest")
            again = torch.nn.functional.interpolate(up, size=(59, 38), mode="nearest")
            exact = torch.nn.functional.interpolate(up, size=(59, 38), mode="nearest-exact")
            return odd + again + exact

    index = export_model_kernels(Decoder(), torch.randn(2, 4, 15, 10), tmp_path)
    assert [(e["nhwc_in"], e["out_hw"], e["calls"]) for e in index] == [
        ([2, 15, 10, 4], [30, 20], 1), ([2, 30, 20, 4], [59, 38], 2), ([2, 30, 20, 4], [59, 38], 1)]
    assert len({e["file"] for e in index}) == 3 and (tmp_path / "index.json").is_file()
    (tmp_path / "grad").mkdir()
    grads = export_model_kernels(Decoder(), torch.randn(2, 4, 15, 10), tmp_path / "grad", grad=True)
    assert sorted((e["nhwc_in"], e["calls"]) for e in grads if e["direction"] == "grad") == [
        ([2, 15, 10, 4], 1), ([2, 30, 20, 4], 1), ([2, 30, 20, 4], 2)]  # nearest-exact's, and nearest's twice
    script = ("import runpy, sys\nfrom resize_kernels import nki\nnki.install_aliases()\n"
              "for path in sys.argv[1:]:\n    try:\n        runpy.run_path(path, run_name='__main__')\n"
              "    except SystemExit as e:\n        assert e.code == 0, path\n")
    done = subprocess.run([sys.executable, "-c", script, *(str(tmp_path / e["file"]) for e in index)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.count(": exact (") == 3, done.stderr[-2000:]
    with pytest.raises(ValueError, match="requires an existing directory"):
        export_model_kernels(Decoder(), torch.randn(2, 4, 15, 10), tmp_path / "missing")


@pytest.mark.parametrize("in_shape, out_shape, match", [
    ((30, 20, 8), (59, 38), "requires an NHWC in_shape"), ((1, 30, 20, 8), (59, 38, 8), "requires an NHWC in_shape"),
    ((1, 30, 20, 8), (0, 38), "resize_nearest"), ((1, 30, 20, 8), (59, 38), "dtype")])
def test_bad_shapes_and_dtypes_are_refused_with_what_to_change(in_shape, out_shape, match):
    dtype = "complex64" if match == "dtype" else "float32"
    with pytest.raises((ValueError, TypeError), match=match):
        export.export_nki(in_shape, out_shape, dtype)
