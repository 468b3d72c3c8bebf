"""resize-kernels inspect: --dtype, --grad, --convention and --kernel, and headers that say which."""

import json

import pytest

import resize_kernels as rk
from resize_kernels import cli, semantics
from resize_kernels.api import trace_resize_grad
from resize_kernels.machine.cost import program_cost

IN, OUT = "1x30x20x8", "59x38"
ONNX_CEIL = "onnx/half_pixel/round_prefer_ceil"


def run(argv, capsys):
    """(exit code, stdout, stderr) of ``resize-kernels inspect argv``."""
    try:
        code = cli.main(["inspect", *argv])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def first_instruction(program) -> str:
    return next(line for line in program.listing().splitlines() if line.lstrip().startswith("0  ")).split("#")[0]


def test_dtype_is_costed_listed_and_named_in_the_header(capsys):
    code, out, _ = run(["--in", IN, "--out", OUT, "--dtype", "bfloat16", "--listing", "3"], capsys)
    want = rk.cost((1, 30, 20, 8), (59, 38), dtype="bfloat16")
    head = out.splitlines()[0]
    assert code == 0 and head.startswith("cost of kernel ") and " -> 1x59x38x8 bfloat16: " in head
    assert f"modelled {want.modelled_us:,.1f} us" in head
    assert first_instruction(rk.trace_resize((1, 30, 20, 8), (59, 38), "bfloat16")) in out
    assert "float32" not in head


def test_the_default_dtype_is_float32(capsys):
    code, out, _ = run(["--in", IN, "--out", OUT, "--listing", "0"], capsys)
    assert code == 0 and " -> 1x59x38x8 float32: modelled " in out.splitlines()[0]


@pytest.mark.parametrize("kernel", [None, "rows", "padded", "general"])
def test_grad_inspects_the_gradient_kernel(kernel, capsys):
    argv = ["--in", IN, "--out", OUT, "--grad", "--listing", "2"] + (["--kernel", kernel] if kernel else [])
    code, out, _ = run(argv, capsys)
    program = trace_resize_grad((1, 59, 38, 8), (30, 20), "float32", kernel)
    want = program_cost(program, "trn1")
    head = out.splitlines()[0]
    assert code == 0 and head.startswith(f"cost of gradient kernel {program.selection.kernel}")
    assert "dy 1x59x38x8 -> dx 1x30x20x8 float32: " in head and f"modelled {want.modelled_us:,.1f} us" in head
    assert ("auto's pick" in head) == (kernel is None)
    assert first_instruction(program) in out and program.name in out


def test_grad_with_a_dtype_the_header_says_both(capsys):
    code, out, _ = run(["--in", "10x30x20x1280", "--out", "10x59x38x1280", "--dtype", "bfloat16", "--grad",
                        "--listing", "1"], capsys)
    head = out.splitlines()[0]
    assert code == 0 and head.startswith("cost of gradient kernel ")
    assert "dy 10x59x38x1280 -> dx 10x30x20x1280 bfloat16: modelled " in head


@pytest.mark.parametrize("kernel, message", [
    ("windows", "--kernel 'windows' is no gradient kernel; choose one of auto, rows, padded, general"),
    ("nope", "--kernel 'nope' is no gradient kernel; choose one of auto, rows, padded, general"),
])
def test_grad_takes_gradient_kernel_names_only(kernel, message, capsys):
    assert run(["--in", IN, "--out", OUT, "--grad", "--kernel", kernel], capsys)[::2] == (
        2, f"resize-kernels inspect: {message}\n")


@pytest.mark.parametrize("argv, message", [
    (["--grad", "--dtype", "int8"], "inspect --grad requires dtype float32, float16, bfloat16, got int8"),
    (["--dtype", "float64"], "inspect requires one of the dtypes float32, bfloat16, "),
    (["--convention", "all"], "inspect --convention requires one convention key, got 'all'; "),
    (["--convention", "onnx/nope"], "IndexConvention.from_key requires 'arithmetic/coordinate mode/nearest mode'"),
])
def test_bad_dtypes_and_conventions_are_one_line(argv, message, capsys):
    code, out, err = run(["--in", IN, "--out", OUT, *argv], capsys)
    assert (code, out) == (1, "") and err.startswith(f"resize-kernels inspect: {message}") and err.count("\n") == 1


@pytest.mark.parametrize("grad", [False, True])
def test_a_convention_is_costed_and_named_in_the_header(grad, capsys):
    argv = ["--in", IN, "--out", OUT, "--convention", ONNX_CEIL, "--listing", "0"] + ["--grad"] * grad
    code, out, _ = run(argv, capsys)
    convention = semantics.IndexConvention.from_key(ONNX_CEIL)
    if grad:
        want = program_cost(trace_resize_grad((1, 59, 38, 8), (30, 20), "float32", convention=convention), "trn1")
    else:
        want = rk.cost((1, 30, 20, 8), (59, 38), convention=convention)
    head = out.splitlines()[0]
    assert code == 0 and f"for {convention.describe()}" in head and f"modelled {want.modelled_us:,.1f} us" in head
    assert head.startswith("cost of gradient kernel ") == grad


def test_the_default_convention_is_not_named(capsys):
    _, plain, _ = run(["--in", IN, "--out", OUT, "--listing", "0"], capsys)
    code, named, _ = run(["--in", IN, "--out", OUT, "--listing", "0", "--convention", "torch/asymmetric/floor"], capsys)
    assert code == 0 and named.splitlines()[0] == plain.splitlines()[0] and " for " not in plain.splitlines()[0]


def test_a_convention_the_kernel_does_not_compute_is_one_line(capsys):
    code, _, err = run(["--in", IN, "--out", OUT, "--kernel", "seed", "--convention", ONNX_CEIL], capsys)
    assert code == 1 and "kernel 'seed' computes the compiler's map on chip" in err and err.count("\n") == 1


def test_grad_writes_its_schedule_as_a_chrome_trace(tmp_path, capsys):
    path = tmp_path / "grad.json"
    code, out, _ = run(["--in", IN, "--out", OUT, "--grad", "--kernel", "rows", "--trace", str(path)], capsys)
    events = json.loads(path.read_text())["traceEvents"]
    assert code == 0 and f"wrote {path}" in out and any(e.get("ph") == "X" for e in events)
