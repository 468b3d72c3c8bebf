"""inline_calls: every call replaced by renamed copies of its callee, unreferenced callees dropped; then the
resize inside a called function is lowered and the module runs."""

import numpy as np
import pytest

from resize_kernels import compile_hlo, semantics
from resize_kernels.compiler.frontend import parse_stablehlo
from resize_kernels.compiler.hlo import parse_hlo_module, print_hlo_module
from resize_kernels.compiler.hlo.lexer import IDENTIFIER
from resize_kernels.compiler.passes import ValidationError, inline_calls, validate_resize
from resize_kernels.compiler.pipeline import PASSES
from resize_kernels.runtime import Executor

from conftest import assert_bits_equal, bits
from hlo_texts import ROOT, ZERO_ZERO

DATA = ROOT / "tests" / "compiler" / "data_stablehlo"

DOUBLE = """double {
  a = f32[3] parameter(0)
  ROOT d = f32[3] add(a, a)
}

"""
TWICE_PLUS = """twice_plus {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  t = f32[3] call(x), to_apply=double
  ROOT s = f32[3] add(t, y)
}

"""


def inlined(text: str):
    module = parse_hlo_module("HloModule m\n\n" + text)
    inline_calls(module)
    return module


def check_names(module) -> None:
    """Every name valid and unique across the module, and the printed module parses back to the same text."""
    names = [inst.name for comp in module.computations for inst in comp.instructions]
    assert len(names) == len(set(names)) and all(IDENTIFIER.fullmatch(name) for name in names)
    printed = print_hlo_module(module)
    assert print_hlo_module(parse_hlo_module(printed)) == printed


def opcodes(module) -> list[str]:
    return [inst.opcode for comp in module.computations for inst in comp.instructions]


def run(module, *args):
    return Executor(module, {})(*args)


V = np.array([1.5, -2.0, 4.0], np.float32)
W = np.array([0.25, 8.0, -1.0], np.float32)


def test_nested_calls_are_inlined_callees_first_and_the_callees_dropped():
    text = DOUBLE + TWICE_PLUS + """ENTRY main {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  c = f32[3] call(p, q), to_apply=twice_plus
  ROOT r = f32[3] multiply(c, q)
}
"""
    module = inlined(text)
    assert [comp.name for comp in module.computations] == ["main"]
    assert [inst.name for inst in module.entry.instructions] == ["p", "q", "c.t", "c", "r"]
    assert [(i.opcode, [o.name for o in i.operands]) for i in module.entry.instructions[2:]] == [
        ("add", ["p", "p"]), ("add", ["c.t", "q"]), ("multiply", ["c", "q"])]
    check_names(module)
    assert_bits_equal(run(module, V, W), (V + V + W) * W)


def test_a_call_as_root_gives_the_root_to_the_copy_of_the_callee_root():
    module = inlined(DOUBLE + "ENTRY main {\n  p = f32[3] parameter(0)\n"
                              "  ROOT c = f32[3] call(p), to_apply=double\n}\n")
    root = module.entry.root
    assert (root.name, root.opcode, [o.name for o in root.operands]) == ("c", "add", ["p", "p"])
    assert_bits_equal(run(module, V), V + V)


def test_a_call_used_twice_and_a_computation_called_twice_get_distinct_copies():
    text = DOUBLE + """ENTRY main {
  p = f32[3] parameter(0)
  c1 = f32[3] call(p), to_apply=double
  c2 = f32[3] call(c1), to_apply=double
  u = f32[3] multiply(c1, c2)
  ROOT t = (f32[3], f32[3]) tuple(u, c1)
}
"""
    module = inlined(text)
    assert "call" not in opcodes(module) and [c.name for c in module.computations] == ["main"]
    c1, c2 = module.entry.instruction("c1"), module.entry.instruction("c2")
    assert c2.operands == [c1, c1] and module.entry.instruction("u").operands == [c1, c2]
    check_names(module)
    u, c = run(module, V)
    assert_bits_equal(u, (V + V) * (V + V + V + V))
    assert_bits_equal(c, V + V)


def test_a_computation_called_from_the_entry_and_from_another_callee():
    text = DOUBLE + TWICE_PLUS + """ENTRY main {
  p = f32[3] parameter(0)
  a = f32[3] call(p), to_apply=double
  b = f32[3] call(a, p), to_apply=twice_plus
  ROOT r = f32[3] subtract(b, a)
}
"""
    module = inlined(text)
    assert [c.name for c in module.computations] == ["main"]
    check_names(module)
    assert_bits_equal(run(module, V), (V + V + V + V + V) - (V + V))


def test_copied_names_that_are_taken_get_a_number():
    text = DOUBLE + TWICE_PLUS + """ENTRY main {
  p = f32[3] parameter(0)
  c.t = f32[3] negate(p)
  c = f32[3] call(c.t, p), to_apply=twice_plus
  ROOT r = f32[3] add(c, c.t)
}
"""
    module = inlined(text)
    assert [inst.name for inst in module.entry.instructions] == ["p", "c.t", "c.t.1", "c", "r"]
    check_names(module)
    assert_bits_equal(run(module, V), (-V + -V + V) + -V)


def test_reduction_bodies_used_inside_a_callee_stay_and_unreached_computations_are_left_alone():
    text = """add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

total {
  x = f32[3] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(x, zero), dimensions={0}, to_apply=add_f32
}

unused {
  ROOT k = f32[] constant(7)
}

ENTRY main {
  p = f32[3] parameter(0)
  ROOT c = f32[] call(p), to_apply=total
}
"""
    module = inlined(text)
    assert [c.name for c in module.computations] == ["add_f32", "unused", "main"]
    assert module.entry.root.opcode == "reduce" and module.entry.root.to_apply.name == "add_f32"
    assert_bits_equal(run(module, V), np.array(V[0] + V[1] + V[2], np.float32))


def test_a_callee_that_returns_a_parameter_makes_the_call_its_operand():
    text = """second {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  dead = f32[3] add(a, b)
  ROOT r = f32[3] copy(b)
  unused = f32[3] negate(r)
}

pick {
  a = f32[3] parameter(0)
  ROOT b = f32[3] parameter(1)
  c = f32[3] negate(a)
}

ENTRY main {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  x = f32[3] call(p, q), to_apply=pick
  y = f32[3] call(x, p), to_apply=second
  ROOT z = f32[3] call(y, x), to_apply=pick
}
"""
    module = inlined(text)
    entry = module.entry
    # The root of `second` is not its last instruction; `unused` uses the root (dead), `dead` does not (kept).
    assert [inst.name for inst in entry.instructions] == ["p", "q", "y.dead", "y"]
    assert entry.root is entry.instruction("q") and entry.instruction("y").operands[0].name == "p"
    check_names(module)
    assert_bits_equal(run(module, V, W), W)


def test_a_module_without_calls_is_unchanged():
    text = DOUBLE + "ENTRY main {\n  p = f32[3] parameter(0)\n  ROOT n = f32[3] negate(p)\n}\n"
    assert print_hlo_module(inlined(text)) == print_hlo_module(parse_hlo_module("HloModule m\n\n" + text))


@pytest.mark.parametrize("body, message", [
    ("f {\n  a = f32[3] parameter(0)\n  ROOT c = f32[3] call(a), to_apply=f\n}\n\n",
     "call 'c' in computation 'f' makes a recursive call (f -> f); HLO computations cannot recurse"),
    ("f {\n  a = f32[3] parameter(0)\n  ROOT c = f32[3] call(a), to_apply=g\n}\n\n"
     "g {\n  a = f32[3] parameter(0)\n  ROOT c = f32[3] call(a), to_apply=f\n}\n\n",
     "call 'c' in computation 'g' makes a recursive call (f -> g -> f); HLO computations cannot recurse"),
])
def test_recursion_is_refused(body, message):
    text = body + "ENTRY main {\n  p = f32[3] parameter(0)\n  ROOT c = f32[3] call(p), to_apply=f\n}\n"
    with pytest.raises(ValidationError) as info:
        inlined(text)
    assert str(info.value) == message


@pytest.mark.parametrize("call, message", [
    ("call(p)", "call 'c' in computation 'main' requires to_apply=<the name of a computation of the module>: "
                "call 'c' has no to_apply="),
    ("call(p, p), to_apply=double", "call 'c' of double passes 2 operand(s), but double takes 1 parameter(s); "
                                    "pass one operand per parameter"),
    ("call(h), to_apply=double", "call 'c' of double passes f16[3] as operand 0, but parameter 0 (a) of double "
                                 "is f32[3]"),
])
def test_calls_that_do_not_fit_their_callee_are_refused(call, message):
    text = DOUBLE + (f"ENTRY main {{\n  p = f32[3] parameter(0)\n  h = f16[3] parameter(1)\n"
                     f"  ROOT c = f32[3] {call}\n}}\n")
    with pytest.raises(ValidationError) as info:
        inline_calls(parse_hlo_module("HloModule m\n\n" + text))
    assert str(info.value) == message


def test_a_call_of_a_computation_that_is_gone_is_refused():
    module = parse_hlo_module("HloModule m\n\n" + DOUBLE + "ENTRY main {\n  p = f32[3] parameter(0)\n"
                              "  ROOT c = f32[3] call(p), to_apply=double\n}\n")
    module.entry.root.attributes["to_apply"] = "nothing"  # the parser checks names; a pass may not
    with pytest.raises(ValidationError) as info:
        inline_calls(module)
    assert str(info.value) == ("call 'c' in computation 'main' requires to_apply=<the name of a computation of the "
                               "module>: module 'm' has no computation 'nothing' (known: double, main)")


def test_a_call_result_shape_must_be_the_callee_result_shape():
    text = DOUBLE + "ENTRY main {\n  p = f32[3] parameter(0)\n  ROOT c = f32[4] call(p), to_apply=double\n}\n"
    with pytest.raises(ValidationError) as info:
        inlined(text)
    assert str(info.value) == ("call 'c' of double declares f32[4], but double returns f32[3] (its root d); fix the "
                               "call's shape")


def test_inline_calls_runs_first():
    assert PASSES[0] is inline_calls and PASSES[1] is validate_resize


RESIZE_IN_CALL = f"""HloModule jit_nested

upsample {{
  x = f32[1,5,6,4] parameter(0)
  ROOT rn = f32[1,10,12,4] custom-call(x), custom_call_target="ResizeNearest", backend_config={ZERO_ZERO}
}}

outer {{
  x = f32[1,5,6,4] parameter(0)
  two = f32[] constant(2)
  twos = f32[1,5,6,4] broadcast(two), dimensions={{}}
  y = f32[1,5,6,4] multiply(x, twos)
  ROOT u = f32[1,10,12,4] call(y), to_apply=upsample
}}

ENTRY main {{
  p = f32[1,5,6,4] parameter(0)
  a = f32[1,10,12,4] call(p), to_apply=outer
  b = f32[1,10,12,4] call(p), to_apply=upsample
  ROOT t = (f32[1,10,12,4], f32[1,10,12,4]) tuple(a, b)
}}
"""


def test_a_resize_inside_a_called_function_is_lowered_and_runs_bit_exact(rng):
    compiled = compile_hlo(RESIZE_IN_CALL)
    kernels = [inst.name for inst in compiled.programs]
    assert kernels == ["a", "b"] and [c.name for c in compiled.module.computations] == ["main"]
    x = rng.standard_normal((1, 5, 6, 4), dtype=np.float32)
    a, b = compiled(x)
    assert_bits_equal(a, semantics.resize_nearest_reference(x * np.float32(2), (10, 12)))
    assert_bits_equal(b, semantics.resize_nearest_reference(x, (10, 12)))


def test_the_relu_call_fixture_runs_to_the_same_bits_from_hlo_and_stablehlo(rng):
    x = rng.standard_normal((1, 4, 6, 5), dtype=np.float32)
    x[0, 0, 0, :3] = [-0.0, np.nan, np.inf]
    outputs = [compile_hlo((DATA / f"relu_call.{form}").read_text())(x) for form in ("hlo", "mlir")]
    assert bits(outputs[0]).view(np.uint8).tobytes() == bits(outputs[1]).view(np.uint8).tobytes()
    # 2 * max(x, 0) upsampled: NCHW (1,4,6,5) -> (1,4,12,10) by the NHWC reference on (N, W, H, C).
    relu = np.where(np.isnan(x) | (x > 0), x, np.float32(0)) * np.float32(2)
    want = semantics.resize_nearest_reference(relu.transpose(0, 3, 2, 1), (10, 12)).transpose(0, 3, 2, 1)
    assert_bits_equal(outputs[0], want)


def test_the_relu_call_of_stablehlo_inlines_into_one_computation():
    module = parse_stablehlo((DATA / "relu_call.mlir").read_text())
    inline_calls(module)
    assert [c.name for c in module.computations] == ["main"] and "call" not in opcodes(module)
    check_names(module)


# -- inlining is counted before it is done: nested calls multiply ------------------------------------------------

def doubling_hlo(depth: int) -> str:
    """Computation k calls computation k + 1 twice, ``depth`` levels: 2**depth copies of the innermost negate."""
    text = [f"HloModule chain\n\nc{depth} {{\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] negate(p)\n}}\n"]
    for k in range(depth - 1, -1, -1):
        text.append(f"c{k} {{\n  p = f32[2] parameter(0)\n  x = f32[2] call(p), to_apply=c{k + 1}\n"
                    f"  ROOT y = f32[2] call(x), to_apply=c{k + 1}\n}}\n")
    text.append("ENTRY main {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] call(p), to_apply=c0\n}\n")
    return "\n".join(text)


def doubling_stablehlo(depth: int) -> str:
    t = "tensor<2xf32>"
    funcs = [f"  func.func @main(%arg0: {t}) -> {t} {{\n    %0 = call @c0(%arg0) : ({t}) -> {t}\n"
             f"    return %0 : {t}\n  }}"]
    for k in range(depth):
        funcs.append(f"  func.func private @c{k}(%arg0: {t}) -> {t} {{\n"
                     f"    %0 = call @c{k + 1}(%arg0) : ({t}) -> {t}\n    %1 = call @c{k + 1}(%0) : ({t}) -> {t}\n"
                     f"    return %1 : {t}\n  }}")
    funcs.append(f"  func.func private @c{depth}(%arg0: {t}) -> {t} {{\n    %0 = stablehlo.negate %arg0 : {t}\n"
                 f"    return %0 : {t}\n  }}")
    return "module @chain {\n" + "\n".join(funcs) + "\n}\n"


def doubling_proto(depth: int) -> bytes:
    from test_hlo_proto import Computation, serialized, shape

    comps = [Computation(f"c{depth}", depth + 2)]
    comps[0].add("p", "parameter", shape("f32", (2,)))
    comps[0].add("a", "negate", shape("f32", (2,)), "p")
    for k in range(depth - 1, -1, -1):
        comp = Computation(f"c{k}", k + 2)
        comp.add("p", "parameter", shape("f32", (2,)))
        comp.add("x", "call", shape("f32", (2,)), "p", called_computation_ids=[k + 3])
        comp.add("y", "call", shape("f32", (2,)), "x", called_computation_ids=[k + 3])
        comps.append(comp)
    main = Computation("main", 1)
    main.add("p", "parameter", shape("f32", (2,)))
    main.add("r", "call", shape("f32", (2,)), "p", called_computation_ids=[2])
    return serialized(*comps, main)


@pytest.mark.parametrize("form", [doubling_hlo, doubling_stablehlo, doubling_proto])
def test_a_module_whose_calls_multiply_is_refused_before_inlining(form):
    """40 levels would be 2**40 instructions: refused at once, in every form the compiler takes."""
    with pytest.raises(ValidationError, match=r"inlining the calls of computation '\w+' would give it up to "
                                              r"[\d,]+ instructions .* more than the compiler takes \(250,000\)"):
        compile_hlo(form(40))


@pytest.mark.parametrize("form", [doubling_hlo, doubling_stablehlo, doubling_proto])
def test_a_module_whose_calls_multiply_within_the_budget_runs(form):
    module = compile_hlo(form(8))
    x = np.array([1.5, -2.0], np.float32)
    got = module(x)  # 2**8 negations
    assert len(module.module.entry.instructions) == 2 ** 8 + 1 and np.array_equal(got, x)
