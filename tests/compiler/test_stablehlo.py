"""StableHLO (MLIR) text in: the same HloModule, lowered module, kernels and output bits as the HLO XLA makes of it.

The fixtures are JAX's: examples/NAME.mlir and examples/NAME.hlo are one
function printed both ways (examples/make_jax_example.py), and
data_stablehlo/ holds more pairs and the generic and debug-info printings of
two examples (data_stablehlo/make.py). No test here needs jax, except the one
that checks make.py still writes the committed files.
"""

import hashlib
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from resize_kernels import compile_hlo
from resize_kernels.compiler.codegen import CodegenError
from resize_kernels.compiler.frontend import parse_module, parse_stablehlo
from resize_kernels.compiler.hlo import HloParseError, module_format, parse_hlo_module, print_hlo_module
from resize_kernels.compiler.hlo import stablehlo
from resize_kernels.compiler.hlo.stablehlo import StableHloParseError, UnsupportedOpError
from resize_kernels.compiler.passes import ValidationError
from resize_kernels.errors import ResourceError
from resize_kernels.runtime import random_arguments

from hlo_texts import ROOT, mutated

EXAMPLES = ROOT / "examples"
DATA = ROOT / "tests" / "compiler" / "data_stablehlo"
PAIRS = ["jax_resize_nearest", "jax_upsample_pool", "jax_odd_bf16", "jax_train_step"]
# data_stablehlo/ StableHLO files and the HLO text XLA made of the same function.
CONVERSIONS = [(DATA / f"{name}.mlir", DATA / f"{name}.hlo") for name in ("relu_call", "ops_mix", "two_results")] + [
    (DATA / f"{name}.{form}.mlir", EXAMPLES / f"{name}.hlo")
    for name in ("jax_upsample_pool", "jax_train_step") for form in ("generic", "debug")]
_DEFINITION = re.compile(r"^\s*(?:ROOT\s+|ENTRY\s+)?([A-Za-z_][A-Za-z0-9_.\-]*)\s*(?:=|\{)", re.M)
_WORD = re.compile(r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_.\-]*')


def canonical(module) -> str:
    """The printed module with computations and instructions renamed in order of appearance, and each constant's
    literal replaced by a digest of its value's bits (XLA and numpy print the same float differently)."""
    module = parse_hlo_module(print_hlo_module(module))
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode == "constant":
                value = np.ascontiguousarray(inst.literal)
                inst.payload = f"{value.dtype}:{hashlib.sha256(value.tobytes()).hexdigest()[:16]}"
    text = print_hlo_module(module)
    names = {}
    for match in _DEFINITION.finditer(text):
        names.setdefault(match.group(1), f"n{len(names)}")
    return _WORD.sub(lambda m: names.get(m.group(), m.group()), text)


def bits(value) -> list[bytes]:
    values = value if isinstance(value, tuple) else (value,)
    return [np.ascontiguousarray(v).view(np.uint8).tobytes() for v in values]


def module_text(body: str, signature: str = "(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32>") -> str:
    return f"module @m {{\n  func.func public @main{signature} {{\n{body}  }}\n}}\n"


# ----- the fixtures: JAX's StableHLO and XLA's HLO of it ---------------------------------------------

@pytest.mark.parametrize("name", PAIRS)
def test_stablehlo_and_hlo_of_one_function_compile_to_one_module_kernels_and_bits(name):
    from_mlir = compile_hlo((EXAMPLES / f"{name}.mlir").read_text())
    from_hlo = compile_hlo((EXAMPLES / f"{name}.hlo").read_text())
    assert canonical(from_mlir.module) == canonical(from_hlo.module)
    assert [p.listing() for p in from_mlir.programs.values()] == [p.listing() for p in from_hlo.programs.values()]
    assert from_mlir.programs
    arguments = random_arguments(from_mlir.module, seed=0)
    assert bits(tuple(arguments)) == bits(tuple(random_arguments(from_hlo.module, seed=0)))
    assert bits(from_mlir(*arguments)) == bits(from_hlo(*arguments))


@pytest.mark.parametrize("name", PAIRS)
def test_the_parsed_module_is_xlas_up_to_names(name):
    """Layouts, instruction order, computation order and the entry layout included."""
    parsed = parse_stablehlo((EXAMPLES / f"{name}.mlir").read_text())
    assert canonical(parsed) == canonical(parse_hlo_module((EXAMPLES / f"{name}.hlo").read_text()))
    assert parsed.name == re.search(r"module @(\w+)", (EXAMPLES / f"{name}.mlir").read_text()).group(1)


@pytest.mark.parametrize("mlir, hlo", CONVERSIONS, ids=[m.name for m, _ in CONVERSIONS])
def test_more_of_jax_converts_as_xla_converts_it(mlir, hlo):
    """Calls of private functions, compare / select / clamp / slice / pad / iota / concatenate / reduce, a hex
    constant, a custom call of two results; the generic op form and the debug-info form with its locations."""
    assert canonical(parse_stablehlo(mlir.read_text())) == canonical(parse_hlo_module(hlo.read_text()))


def test_generic_and_debug_forms_run_to_the_same_bits():
    expected = compile_hlo((EXAMPLES / "jax_upsample_pool.hlo").read_text())
    arguments = random_arguments(expected.module, seed=1)
    for form in ("generic", "debug"):
        got = compile_hlo((DATA / f"jax_upsample_pool.{form}.mlir").read_text())
        assert bits(got(*arguments)) == bits(expected(*arguments))


def test_a_call_of_a_private_function_is_an_hlo_call_of_its_computation():
    module = parse_stablehlo((DATA / "relu_call.mlir").read_text())
    call = next(inst for inst in module.entry.instructions if inst.opcode == "call")
    relu = call.to_apply
    assert relu.name == "relu" and [c.name for c in module.computations] == ["relu", "main"]
    assert relu.root.opcode == "maximum" and [p.parameter_number for p in relu.parameters] == [0]
    assert compile_hlo((DATA / "relu_call.mlir").read_text()).programs  # its resize is lowered all the same


def test_a_custom_call_of_two_results_is_a_tuple_and_a_get_tuple_element_per_result():
    entry = parse_stablehlo((DATA / "two_results.mlir").read_text()).entry
    pair = next(inst for inst in entry.instructions
                if inst.opcode == "custom-call" and inst.custom_call_target == "Pair")
    elements = [inst for inst in entry.instructions if inst.opcode == "get-tuple-element"]
    assert str(pair.shape) == "(f32[2,3,4,5]{3,2,1,0}, f32[2]{0})"
    assert sorted(inst.tuple_index for inst in elements) == [0, 1]  # the unused one too, as XLA makes it


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.mlir")) + sorted(DATA.glob("*.mlir")),
                         ids=lambda p: p.name)
def test_the_parsed_module_prints_as_hlo_text_that_parses_back_to_the_same_text(path):
    printed = print_hlo_module(parse_stablehlo(path.read_text()))
    assert print_hlo_module(parse_hlo_module(printed)) == printed


def test_make_writes_the_committed_files(tmp_path):
    """In a subprocess: JAX starts threads, and other tests fork. jax is in the test extra (not a dependency)."""
    subprocess.run([sys.executable, str(DATA / "make.py"), "--out", str(tmp_path)], check=True, capture_output=True)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(p.name for p in DATA.iterdir() if p.suffix in (".mlir", ".hlo"))
    for name in written:
        assert (tmp_path / name).read_text() == (DATA / name).read_text(), name


# ----- forms and values ----------------------------------------------------------------------------

def test_parse_module_tells_stablehlo_by_content_as_text_or_bytes():
    text = (EXAMPLES / "jax_resize_nearest.mlir").read_text()
    assert module_format(text) == module_format(text.encode()) == "stablehlo"
    assert canonical(parse_module(text.encode())) == canonical(parse_module(text))


def test_backend_config_escapes_are_decoded():
    """MLIR writes '"' as \\22; the HLO text of the same call has backend_config="\\"00\\""."""
    entry = parse_stablehlo((EXAMPLES / "jax_resize_nearest.mlir").read_text()).entry
    call = next(inst for inst in entry.instructions if inst.opcode == "custom-call")
    assert call.backend_config == '"00"'
    assert str(call.attributes["backend_config"]) == r'"\"00\""'
    config = r'"a\0A\09b\\c\22\C3\A9\n\t"'  # a newline, a tab, a backslash, a quote, UTF-8, \n and \t
    text = module_text(f"    %0 = stablehlo.custom_call @f(%arg0) {{backend_config = {config}}} : "
                       "(tensor<2x3xf32>) -> tensor<2x3xf32>\n    return %0 : tensor<2x3xf32>\n")
    assert parse_stablehlo(text).entry.root.backend_config == 'a\n\tb\\c"é\n\t'


def test_constants_of_every_written_form_have_their_values_bits():
    body = """\
    %0 = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %1 = stablehlo.constant dense<[0x7FC00001, 1.500000e+00, -0.000000e+00, 0x7F800000]> : tensor<4xf32>
    %2 = stablehlo.constant dense<"0x0000803F000000C0"> : tensor<2xf32>
    %3 = stablehlo.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>
    %4 = stablehlo.constant dense<[255, 0]> : tensor<2xui8>
    %5 = stablehlo.constant dense<[-128, 127]> : tensor<2xi8>
    %6 = stablehlo.constant dense<0x7E01> : tensor<f16>
    %7 = stablehlo.constant dense<-7> : tensor<i32>
    %8 = stablehlo.constant dense<"0x0100"> : tensor<2xi1>
"""
    types = ("tensor<bf16>, tensor<4xf32>, tensor<2xf32>, tensor<2x2xi1>, tensor<2xui8>, tensor<2xi8>, tensor<f16>, "
             "tensor<i32>, tensor<2xi1>")
    body += f"    return %0, %1, %2, %3, %4, %5, %6, %7, %8 : {types}\n"
    signature = f"() -> ({types})"
    values = [inst.literal for inst in parse_stablehlo(module_text(body, signature)).entry.root.operands]
    assert values[0].dtype == ml_dtypes.bfloat16 and values[0].view(np.uint16) == 0xFF80
    assert values[1].view(np.uint32).tolist() == [0x7FC00001, 0x3FC00000, 0x80000000, 0x7F800000]
    assert values[2].tolist() == [1.0, -2.0]
    assert values[3].tolist() == [[True, False], [False, True]]
    assert values[4].dtype == np.uint8 and values[4].tolist() == [255, 0]
    assert values[5].dtype == np.int8 and values[5].tolist() == [-128, 127]
    assert values[6].dtype == np.float16 and values[6].view(np.uint16) == 0x7E01
    assert values[7].dtype == np.int32 and values[7] == -7
    assert values[8].tolist() == [True, False]


def test_a_splat_constant_is_a_scalar_and_a_broadcast_as_xla_exports_it():
    body = """\
    %0 = stablehlo.constant dense<2.500000e+00> : tensor<2x3xf32>
    %1 = stablehlo.constant dense<[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]> : tensor<2x3xf32>
    %2 = stablehlo.constant dense<3.0> : tensor<1x1xf32>
    %3 = stablehlo.add %0, %1 : tensor<2x3xf32>
    return %3, %2 : tensor<2x3xf32>, tensor<1x1xf32>
"""
    entry = parse_stablehlo(module_text(body, "() -> (tensor<2x3xf32>, tensor<1x1xf32>)")).entry
    lines = print_hlo_module(entry.module).splitlines()
    assert "  constant.1 = f32[] constant(2.5)" in lines
    assert "  broadcast.1 = f32[2,3]{1,0} broadcast(constant.1), dimensions={}" in lines
    assert "  constant.2 = f32[] constant(1)" in lines  # equal values are a splat whatever the text
    assert "  constant.3 = f32[1,1]{1,0} constant({ {3} })" in lines


@pytest.mark.parametrize("value, type_", [
    ("dense<[]>", "tensor<0xf32>"), ("dense<>", "tensor<0xi32>"), ("dense<[[], []]>", "tensor<2x0xbf16>"),
])
def test_constants_of_no_elements(value, type_):
    text = module_text(f"    %0 = stablehlo.constant {value} : {type_}\n    return %0 : {type_}\n", f"() -> {type_}")
    root = parse_stablehlo(text).entry.root
    assert root.opcode == "constant" and root.literal.size == 0


def test_the_two_printed_forms_of_reduce_are_one_module():
    applies = module_text(
        "    %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "    %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [1] : "
        "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n    return %0 : tensor<2xf32>\n",
        "(%arg0: tensor<2x3xf32>) -> tensor<2xf32>")
    reducer = module_text(
        "    %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "    %0 = stablehlo.reduce(%arg0 init: %c) across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> "
        "tensor<2xf32>\n     reducer(%a: tensor<f32>, %b: tensor<f32>)  {\n"
        "      %s = stablehlo.add %a, %b : tensor<f32>\n      stablehlo.return %s : tensor<f32>\n    }\n"
        "    return %0 : tensor<2xf32>\n",
        "(%arg0: tensor<2x3xf32>) -> tensor<2xf32>")
    module = parse_stablehlo(applies)
    assert canonical(module) == canonical(parse_stablehlo(reducer))
    assert "reduce(Arg_0.1, constant.1), dimensions={1}, to_apply=region_0" in print_hlo_module(module)


def test_a_splat_of_any_size_costs_nothing():
    body = ("    %0 = stablehlo.constant dense<1.0> : tensor<100000x100000x100000xf32>\n"
            "    return %0 : tensor<100000x100000x100000xf32>\n")
    root = parse_stablehlo(module_text(body, "() -> tensor<100000x100000x100000xf32>")).entry.root
    assert root.opcode == "broadcast" and root.operands[0].literal == 1.0


def test_what_xla_rewrites_before_converting_is_rewritten_here():
    """MLIR's canonical forms: an op that changes nothing is no instruction, a broadcast_in_dim that only adds
    size-1 dimensions a reshape and one that permutes them a transpose, chains of transposes / reshapes /
    broadcasts one op, unused ops gone (not a custom call with effects), a constant right of a commutative op;
    then XlaBuilder's broadcast / reshape / broadcast for a size-1 dimension expanded. XLA's own conversion of
    this text is the same module up to names (names are made here, deterministically)."""
    body = """\
    %dead = stablehlo.multiply %arg0, %arg0 : tensor<2x3xf32>
    %effect = stablehlo.custom_call @Effect(%arg0) {has_side_effect = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %0 = stablehlo.transpose %arg0, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
    %3 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>
    %cst = stablehlo.constant dense<2.0> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %6 = stablehlo.multiply %5, %2 : tensor<2x3xf32>
    %7 = stablehlo.add %6, %4 : tensor<2x3xf32>
    %8 = stablehlo.convert %7 : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %8 : tensor<2x3xf32>
"""
    text = module_text(body, "(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>) -> tensor<2x3xf32>")
    assert print_hlo_module(parse_stablehlo(text)) == """\
HloModule m, entry_computation_layout={(f32[2,3]{1,0}, f32[3]{0})->f32[2,3]{1,0}}

ENTRY main {
  Arg_0.1 = f32[2,3]{1,0} parameter(0)
  custom-call.1 = f32[2,3]{1,0} custom-call(Arg_0.1), custom_call_target="Effect", custom_call_has_side_effect=true
  constant.2 = f32[] constant(2)
  broadcast.3 = f32[2,3]{1,0} broadcast(constant.2), dimensions={}
  multiply.2 = f32[2,3]{1,0} multiply(Arg_0.1, broadcast.3)
  Arg_1.1 = f32[3]{0} parameter(1)
  reshape.1 = f32[1,3]{1,0} reshape(Arg_1.1)
  broadcast.1 = f32[1,3]{1,0} broadcast(reshape.1), dimensions={0,1}
  reshape.2 = f32[3]{0} reshape(broadcast.1)
  broadcast.2 = f32[2,3]{1,0} broadcast(reshape.2), dimensions={1}
  ROOT add.1 = f32[2,3]{1,0} add(multiply.2, broadcast.2)
}
"""


def test_the_other_forms_mlir_may_take():
    """A file of functions without a module; #loc definitions, loc(...) trailers and file metadata; a generic
    module whose attributes follow its region; a quoted call target; an op of several named results; an empty
    backend_config (XLA leaves it out); api_version and a dictionary backend_config of a typed-FFI call."""
    functions = """\
#loc1 = loc("x")
func.func @main(%arg0: tensor<2xf32> loc("x"), %arg1: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = call @both(%arg0, %arg1) : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) loc(#loc1)
  %1 = stablehlo.custom_call @"my.target"(%0#1) {backend_config = "", api_version = 4 : i32,
                                                  mhlo.frontend_attributes = {a = "b"}}
                                                  : (tensor<2xf32>) -> tensor<2xf32>
  %2 = stablehlo.custom_call @ffi(%1) {api_version = 4 : i32,
                                       backend_config = {n = 2 : i64,  s = "x  y"}} : (tensor<2xf32>) -> tensor<2xf32>
  return %0#0, %2 : tensor<2xf32>, tensor<2xf32> loc(#loc1)
} loc(#loc1)
func.func private @both(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = stablehlo.subtract %arg0, %arg1 : tensor<2xf32>
  return %0, %arg1 : tensor<2xf32>, tensor<2xf32>
}
#loc2 = loc(unknown)
{-#
  dialect_resources: { builtin: { blob: "0x04000000" } }
#-}
"""
    module = parse_stablehlo(functions)
    assert [c.name for c in module.computations] == ["both", "main"]
    entry = module.entry
    target = next(inst for inst in entry.instructions if inst.opcode == "custom-call" and inst.operands[0].opcode ==
                  "get-tuple-element")
    assert target.custom_call_target == "my.target" and "backend_config" not in target.attributes
    assert target.attributes["api_version"] == "API_VERSION_TYPED_FFI"
    assert entry.root.operands[1].backend_config == '{n = 2 : i64, s = "x  y"}'
    printed = print_hlo_module(module)
    assert print_hlo_module(parse_hlo_module(printed)) == printed
    assert str(module.computation("both").root.shape) == "(f32[2]{0}, f32[2]{0})"
    generic = """\
"builtin.module"() ({
  "func.func"() ({
  ^bb0(%a: tensor<f32>):
    %0 = "stablehlo.negate"(%a) : (tensor<f32>) -> tensor<f32>
    "func.return"(%0) : (tensor<f32>) -> ()
  }) {function_type = (tensor<f32>) -> tensor<f32>, sym_name = "main"} : () -> ()
}) {sym_name = "old_style"} : () -> ()
"""
    module = parse_stablehlo(generic)
    assert module.name == "old_style" and module.entry.root.opcode == "negate"


# ----- errors --------------------------------------------------------------------------------------

RESIZE = (EXAMPLES / "jax_resize_nearest.mlir").read_text()
ERRORS = [
    # (what, text, line, column, expected in the message)
    ("an undefined value", RESIZE.replace("(%0)", "(%7)"), 4, 47, "a value defined earlier"),
    ("a bad string escape", RESIZE.replace(r"\2200\22", r"\2200\q2"), 4, 75, "string escape"),
    ("an unclosed string", RESIZE.replace(r'"\2200\22"', r'"\2200\22'), 4, 69, "closing \""),
    ("a transpose's wrong result type", RESIZE.replace("tensor<1x20x30x1280xf32>\n", "tensor<1x20x30x1281xf32>\n"),
     3, 89, "the transposed type tensor<1x20x30x1280xf32>"),
    ("a dynamic dimension", RESIZE.replace("(%arg0: tensor<1x1280", "(%arg0: tensor<?x1280"), 2, 40,
     "static dimension"),
    ("an unknown element type", RESIZE.replace("tensor<1x1280x30x20xf32>)", "tensor<1x1280x30x20xf33>)", 1), 2, 53,
     "an element type"),
    ("a missing return", RESIZE.replace("    return %2 : tensor<1x1280x59x38xf32>\n", ""), 6, 3,
     "a func.return op ending the region"),
    ("a value defined twice", RESIZE.replace("%1 = stablehlo.custom_call", "%0 = stablehlo.custom_call"), 4, 5,
     "a new value name"),
    ("a missing closing brace", RESIZE[: RESIZE.rindex("}")], 8, 1, "'}' closing the module"),
    ("a ragged constant", module_text("    %0 = stablehlo.constant dense<[[1.0, 2.0], [3.0]]> : tensor<2x2xf32>\n"
                                      "    return %0 : tensor<2x2xf32>\n", "() -> tensor<2x2xf32>"), 3, 52,
     "nested lists of the type's shape [2, 2]"),
    ("a constant out of range", module_text("    %0 = stablehlo.constant dense<[1, 300]> : tensor<2xi8>\n"
                                            "    return %0 : tensor<2xi8>\n", "() -> tensor<2xi8>"), 3, 39,
     "an integer in [-128, 127]"),
]


@pytest.mark.parametrize("what, text, line, column, expected", ERRORS, ids=[e[0] for e in ERRORS])
def test_malformed_stablehlo_is_a_parse_error_at_its_line_and_column(what, text, line, column, expected):
    with pytest.raises(HloParseError) as info:
        parse_module(text)
    error = info.value
    assert isinstance(error, StableHloParseError)
    assert (error.line, error.column) == (line, column), str(error)
    assert expected in error.expected, str(error)
    assert str(error).startswith(f"StableHLO parse error at line {line}, column {column}: expected ")


@pytest.mark.parametrize("text, op, line", [
    (RESIZE.replace("stablehlo.transpose %arg0", "stablehlo.dot %arg0"), "stablehlo.dot", 3),
    (RESIZE.replace("stablehlo.transpose %1", "chlo.erf %1"), "chlo.erf", 5),
    (RESIZE.replace('  func.func public', '  sdy.mesh @mesh = <["x"=1]>\n  func.func public'), "sdy.mesh", 2),
    ((DATA / "jax_upsample_pool.generic.mlir").read_text().replace('"stablehlo.maximum"', '"stablehlo.atan"', 1),
     "stablehlo.atan", None),
])
def test_an_unsupported_op_is_named_with_its_line_and_the_supported_ops(text, op, line):
    with pytest.raises(UnsupportedOpError) as info:
        compile_hlo(text)
    error = info.value
    line = line or next(n for n, source in enumerate(text.splitlines(), 1) if op in source)
    assert isinstance(error, HloParseError) and error.op == op and error.line == line
    assert str(error).startswith(f"StableHLO op {op} at line {line}, column {error.column} is not supported; "
                                 f"supported: func.call, func.return and stablehlo.{{abs, add, ")
    assert "reduce_window" in str(error) and "custom_call" in str(error)


# ----- bounds --------------------------------------------------------------------------------------

def test_text_beyond_the_limit_is_refused_before_parsing(monkeypatch):
    monkeypatch.setattr(stablehlo, "MAX_TEXT_CHARS", 100)
    with pytest.raises(ResourceError, match="at most 100 characters"):
        parse_stablehlo(RESIZE)


@pytest.mark.parametrize("text", [
    module_text("    return %arg0 : tensor<2x3xf32>\n",
                "(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {a = " + "[" * 100_000 + "]" * 100_000 + "}"),
    module_text("    return %arg0 : tensor<2x3xf32>\n",
                "(%arg0: " + "tuple<" * 100_000 + "tensor<f32>" + ">" * 100_000 + ") -> tensor<2x3xf32>"),
    module_text("    %0 = stablehlo.custom_call @f(%arg0) {a = #x<" + "(" * 100_000 + ")" * 100_000 + ">} : "
                "(tensor<2x3xf32>) -> tensor<2x3xf32>\n    return %0 : tensor<2x3xf32>\n"),
], ids=["attribute", "tuple type", "skipped attribute"])
def test_nesting_beyond_the_limit_is_a_parse_error_not_a_recursion_error(text):
    with pytest.raises(HloParseError, match="nesting"):
        parse_stablehlo(text)


def test_regions_nest_to_the_limit_and_no_deeper():
    def reduce(depth: int, limit: int) -> str:
        """A reduce whose body holds a reduce whose body ... `limit` deep (built inside out, no recursion)."""
        body = f"%c = stablehlo.add %x{limit}, %y{limit} : tensor<f32>\nstablehlo.return %c : tensor<f32>\n"
        for d in reversed(range(depth, limit)):
            body = (f'%r{d} = "stablehlo.reduce"(%x{d}, %y{d}) <{{dimensions = array<i64>}}> ({{\n'
                    f"^bb0(%x{d + 1}: tensor<f32>, %y{d + 1}: tensor<f32>):\n{body}}}) : (tensor<f32>, tensor<f32>) "
                    f"-> tensor<f32>\nstablehlo.return %r{d} : tensor<f32>\n")
        return body.replace("stablehlo.return %r0 ", "return %r0 ")

    def text(limit):
        return module_text(reduce(0, limit), "(%x0: tensor<f32>, %y0: tensor<f32>) -> tensor<f32>")

    assert len(parse_stablehlo(text(20)).computations) == 21
    with pytest.raises(HloParseError, match="nesting"):
        parse_stablehlo(text(10_000))


def test_errors_quote_long_values_cut_short():
    text = module_text('    %0 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: ' + "1, " * 100_000 + "0>}> : "
                       "(tensor<2x3xf32>) -> tensor<3x2xf32>\n    return %0 : tensor<3x2xf32>\n",
                       "(%arg0: tensor<2x3xf32>) -> tensor<3x2xf32>")
    with pytest.raises(HloParseError, match=r"a permutation of the operand's 2 dimensions") as info:
        parse_stablehlo(text)
    assert len(info.value.got) < 200 and "100001 entries" in info.value.got


def test_a_constant_of_more_dimensions_than_numpy_has_is_a_parse_error():
    dims = "x".join(["1"] * 100) + "x2"
    text = module_text(f"    %0 = stablehlo.constant dense<{'[' * 101}1.0, 2.0{']' * 101}> : tensor<{dims}xf32>\n"
                       f"    return %0 : tensor<{dims}xf32>\n", f"() -> tensor<{dims}xf32>")
    with pytest.raises(HloParseError, match="at most 32 dimensions"):
        parse_stablehlo(text)


# ----- fuzz ----------------------------------------------------------------------------------------

FUZZ_TEXTS = [p.read_text() for p in sorted(EXAMPLES.glob("*.mlir"))] + [
    p.read_text() for p in sorted(DATA.glob("*.mlir"))]
@settings(max_examples=300, deadline=10_000, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(FUZZ_TEXTS))
def test_mutations_of_stablehlo_compile_or_raise_a_documented_error(text):
    try:
        compiled = compile_hlo(text)
    except (HloParseError, ValidationError, CodegenError) as error:
        assert str(error)
        return
    assert str(compiled)
