"""The StableHLO conversion one step at a time: the parser's module (one instruction per op), then each pass of
frontend.STABLEHLO_TO_HLO alone on a tiny module. test_stablehlo.py checks the whole against XLA's HLO."""

import pytest

from resize_kernels.compiler import passes
from resize_kernels.compiler.passes.canonicalize_shape_ops import Folder
from resize_kernels.compiler.frontend import STABLEHLO_TO_HLO, parse_stablehlo
from resize_kernels.compiler.hlo import Shape, constant, print_hlo_module
from resize_kernels.compiler.hlo.stablehlo import StableHloParseError, parse_stablehlo_ops


def module_text(body: str, signature: str = "(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32>", more: str = "") -> str:
    return f"module @m {{\n  func.func public @main{signature} {{\n{body}  }}\n{more}}}\n"


def after(text: str, *hlo_passes) -> str:
    """The module parsed from `text`, after `hlo_passes`, printed."""
    module = parse_stablehlo_ops(text)
    for hlo_pass in hlo_passes:
        hlo_pass(module)
    return print_hlo_module(module)


REDUCE = module_text("""\
    %c = stablehlo.constant dense<2.0> : tensor<f32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %z) across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %s = stablehlo.add %a, %b : tensor<f32>
      %t = stablehlo.multiply %c, %s : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
    %1 = stablehlo.negate %0 : tensor<2xf32>
    return %1 : tensor<2xf32>
""", "(%arg0: tensor<2x3xf32>) -> tensor<2xf32>")


def test_the_parser_makes_one_instruction_per_op_as_written():
    """Declared shapes without layouts, broadcast_in_dim's dimensions as written, a splat constant's one value, a
    no-op convert, an op of two results (marked, a get-tuple-element each), a region's stand-in for %c."""
    text = module_text("""\
    %0 = stablehlo.convert %arg0 : tensor<2x3xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [2, 0] : (tensor<2x3xf32>) -> tensor<3x1x2xf32>
    %c = stablehlo.constant dense<2.5> : tensor<3x1x2xf32>
    %2:2 = stablehlo.custom_call @Pair(%1, %c)
      : (tensor<3x1x2xf32>, tensor<3x1x2xf32>) -> (tensor<3x1x2xf32>, tensor<2xf32>)
    return %2#0 : tensor<3x1x2xf32>
""", "(%arg0: tensor<2x3xf32>) -> tensor<3x1x2xf32>")
    assert after(text) == """\
HloModule m

ENTRY main {
  Arg_0.1 = f32[2,3] parameter(0)
  convert.1 = f32[2,3] convert(Arg_0.1)
  broadcast.1 = f32[3,1,2] broadcast(convert.1), dimensions={2,0}
  constant.1 = f32[3,1,2] constant(2.5)
  custom-call.1 = (f32[3,1,2], f32[2]) custom-call(broadcast.1, constant.1), custom_call_target="Pair", results=2
  ROOT get-tuple-element.1 = f32[3,1,2] get-tuple-element(custom-call.1), index=0
  get-tuple-element.2 = f32[2] get-tuple-element(custom-call.1), index=1
}
"""
    assert "  constant.3 = f32[] constant(%c)\n" in after(REDUCE)  # in region_0, its operand main's %c


def test_canonicalize_shape_ops_folds_converts_transposes_reshapes_broadcasts_and_splats():
    """A no-op convert goes; a broadcast_in_dim that permutes is a transpose, which cancels the one before; one
    that adds a size-1 dimension is a reshape, which the next reshape takes in; shape ops of a splat are splats."""
    text = module_text("""\
    %0 = stablehlo.convert %arg0 : tensor<2x3xf32>
    %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
    %4 = stablehlo.reshape %3 : (tensor<1x2x3xf32>) -> tensor<6xf32>
    %c = stablehlo.constant dense<1.0> : tensor<3xf32>
    %5 = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %6 = stablehlo.reshape %5 : (tensor<2x3xf32>) -> tensor<6xf32>
    %7 = stablehlo.add %4, %6 : tensor<6xf32>
    return %7 : tensor<6xf32>
""", "(%arg0: tensor<2x3xf32>) -> tensor<6xf32>")
    assert after(text, passes.canonicalize_shape_ops) == """\
HloModule m

ENTRY main {
  Arg_0.1 = f32[2,3] parameter(0)
  transpose.1 = f32[3,2] transpose(Arg_0.1), dimensions={1,0}
  reshape.3 = f32[1,2,3] reshape(Arg_0.1)
  reshape.4 = f32[6] reshape(Arg_0.1)
  constant.1 = f32[3] constant(1)
  constant.2 = f32[2,3] constant(1)
  constant.3 = f32[6] constant(1)
  ROOT add.1 = f32[6] add(reshape.4, constant.3)
}
"""


def test_cse_constants_keeps_the_first_of_equal_constants():
    """Equal values written out or as a splat are one splat (MLIR's attribute); a splat and a written-out
    constant of one element stay two."""
    text = module_text("""\
    %a = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %b = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %c = stablehlo.constant dense<[2.0, 2.0, 2.0]> : tensor<3xf32>
    %d = stablehlo.constant dense<2.0> : tensor<3xf32>
    %0 = stablehlo.add %a, %b : tensor<3xf32>
    %1 = stablehlo.add %c, %d : tensor<3xf32>
    %2 = stablehlo.constant dense<[2.0]> : tensor<1xf32>
    %3 = stablehlo.constant dense<2.0> : tensor<1xf32>
    return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>
""", "() -> (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>)")
    assert after(text, passes.cse_constants) == """\
HloModule m

ENTRY main {
  constant.1 = f32[3] constant({1, 2, 3})
  constant.3 = f32[3] constant(2)
  add.1 = f32[3] add(constant.1, constant.1)
  add.2 = f32[3] add(constant.3, constant.3)
  constant.5 = f32[1] constant({2})
  constant.6 = f32[1] constant(2)
  ROOT tuple.1 = (f32[3], f32[3], f32[1], f32[1]) tuple(add.1, add.2, constant.5, constant.6)
}
"""


def test_move_constants_right_swaps_a_commutative_ops_constant_first_operand():
    text = module_text("""\
    %c = stablehlo.constant dense<2.0> : tensor<2x3xf32>
    %0 = stablehlo.multiply %c, %arg0 : tensor<2x3xf32>
    %1 = stablehlo.subtract %c, %0 : tensor<2x3xf32>
    %2 = stablehlo.add %c, %c : tensor<2x3xf32>
    %3 = stablehlo.maximum %1, %2 : tensor<2x3xf32>
    return %3 : tensor<2x3xf32>
""")
    lines = after(text, passes.move_constants_right).splitlines()
    assert "  multiply.1 = f32[2,3] multiply(Arg_0.1, constant.1)" in lines
    assert "  subtract.1 = f32[2,3] subtract(constant.1, multiply.1)" in lines  # not commutative
    assert "  add.1 = f32[2,3] add(constant.1, constant.1)" in lines


def test_legalize_broadcast_in_dim_orders_dimensions_and_expands_size_1_dimensions_as_xla_does():
    text = module_text("""\
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [2, 0] : (tensor<2x3xf32>) -> tensor<3x4x2xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>
    %2 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<1x3xf32>) -> tensor<4x1x3xf32>
    return %0, %1, %2 : tensor<3x4x2xf32>, tensor<2x3xf32>, tensor<4x1x3xf32>
""", "(%arg0: tensor<2x3xf32>, %arg1: tensor<1x3xf32>) -> (tensor<3x4x2xf32>, tensor<2x3xf32>, tensor<4x1x3xf32>)")
    assert after(text, passes.legalize_broadcast_in_dim) == """\
HloModule m

ENTRY main {
  Arg_0.1 = f32[2,3] parameter(0)
  Arg_1.1 = f32[1,3] parameter(1)
  transpose.1 = f32[3,2] transpose(Arg_0.1), dimensions={1,0}
  broadcast.4 = f32[3,4,2] broadcast(transpose.1), dimensions={0,2}
  broadcast.5 = f32[1,3] broadcast(Arg_1.1), dimensions={0,1}
  reshape.1 = f32[3] reshape(broadcast.5)
  broadcast.6 = f32[2,3] broadcast(reshape.1), dimensions={1}
  broadcast.3 = f32[4,1,3] broadcast(Arg_1.1), dimensions={1,2}
  ROOT tuple.1 = (f32[3,4,2], f32[2,3], f32[4,1,3]) tuple(broadcast.4, broadcast.6, broadcast.3)
}
"""


def test_expand_splat_constants_makes_a_scalar_and_a_broadcast_or_one_elements_literal():
    text = module_text("""\
    %0 = stablehlo.constant dense<2.5> : tensor<2x3xf32>
    %1 = stablehlo.constant dense<[[7, 7], [7, 7]]> : tensor<2x2xi32>
    %2 = stablehlo.constant dense<3.0> : tensor<1x1xf32>
    %3 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x2xi32>, tensor<1x1xf32>, tensor<2xf32>
""", "() -> (tensor<2x3xf32>, tensor<2x2xi32>, tensor<1x1xf32>, tensor<2xf32>)")
    assert after(text, passes.expand_splat_constants) == """\
HloModule m

ENTRY main {
  constant.5 = f32[] constant(2.5)
  broadcast.1 = f32[2,3] broadcast(constant.5), dimensions={}
  constant.6 = s32[] constant(7)
  broadcast.2 = s32[2,2] broadcast(constant.6), dimensions={}
  constant.3 = f32[1,1] constant({ {3} })
  constant.4 = f32[2] constant({1, 2})
  ROOT tuple.1 = (f32[2,3], s32[2,2], f32[1,1], f32[2]) tuple(broadcast.1, broadcast.2, constant.3, constant.4)
}
"""


def test_expand_iota_makes_an_iota_of_rank_2_a_line_and_a_broadcast():
    text = module_text("""\
    %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>
    %1 = stablehlo.iota dim = 0 : tensor<4xi32>
    return %0, %1 : tensor<2x3xi32>, tensor<4xi32>
""", "() -> (tensor<2x3xi32>, tensor<4xi32>)")
    assert after(text, passes.expand_iota) == """\
HloModule m

ENTRY main {
  iota.3 = s32[3] iota(), iota_dimension=0
  broadcast.1 = s32[2,3] broadcast(iota.3), dimensions={1}
  iota.2 = s32[4] iota(), iota_dimension=0
  ROOT tuple.1 = (s32[2,3], s32[4]) tuple(broadcast.1, iota.2)
}
"""


def test_sink_constants_copies_the_constant_a_region_uses_into_it():
    printed = after(REDUCE, passes.sink_constants)
    assert printed.startswith("""\
HloModule m

region_0 {
  Arg_0.2 = f32[] parameter(0)
  Arg_1.1 = f32[] parameter(1)
  add.1 = f32[] add(Arg_0.2, Arg_1.1)
  constant.4 = f32[] constant(2)
  ROOT multiply.1 = f32[] multiply(constant.4, add.1)
}
""")
    assert "  constant.1 = f32[] constant(2)\n" in printed  # main's, which the region no longer uses


def test_sink_constants_refuses_a_stand_in_whose_value_is_no_constant_at_its_use():
    """The parser refuses those (asking ``fold``); one parsed with a ``fold`` that let it by is that error."""
    text = REDUCE.replace("%c = stablehlo.constant dense<2.0> : tensor<f32>", "%c = stablehlo.negate %z : tensor<f32>")
    text = text.replace("    %z = stablehlo.constant dense<0.0> : tensor<f32>\n", "").replace(
        "func.func public @main(", "func.func public @main(%z: tensor<f32>, ")
    module = parse_stablehlo_ops(text, fold=lambda value: constant("k", Shape("f32", ()), 0))
    with pytest.raises(StableHloParseError) as info:
        passes.sink_constants(module)
    assert (info.value.line, info.value.column) == (7, 31) and "a value defined in this region or a constant" in str(
        info.value)


def test_the_parser_asks_fold_what_a_value_becomes_for_two_errors():
    """As XLA folds before it converts: a region may use a value of its function that folds into a constant (a
    reshape there and back), not one that stays a transpose; a commutative op with operands of two element types
    is checked with a constant operand (once folded) moved right. Without ``fold``, a value is what is written."""
    back = REDUCE.replace("%c = stablehlo.constant dense<2.0> : tensor<f32>",
                          "%k = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>\n"
                          "    %r = stablehlo.reshape %k : (tensor<2x2xf32>) -> tensor<4xf32>\n"
                          "    %c = stablehlo.reshape %r : (tensor<4xf32>) -> tensor<2x2xf32>").replace(
        "%t = stablehlo.multiply %c, %s : tensor<f32>",
        "%t = stablehlo.reduce(%c init: %s) applies stablehlo.add across dimensions = [0, 1] : "
        "(tensor<2x2xf32>, tensor<f32>) -> tensor<f32>")
    parse_stablehlo_ops(back, fold=Folder())
    with pytest.raises(StableHloParseError, match="line 10, column 29: expected a value defined in this region"):
        parse_stablehlo_ops(back)
    transposed = back.replace("%r = stablehlo.reshape %k : (tensor<2x2xf32>) -> tensor<4xf32>",
                              "%r = stablehlo.transpose %k, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>")
    transposed = transposed.replace("%c = stablehlo.reshape %r : (tensor<4xf32>)", "%c = stablehlo.reshape %r : "
                                    "(tensor<2x2xf32>)").replace("return %1 : tensor<2xf32>", "return %1 tensor<2xf32>")
    with pytest.raises(StableHloParseError, match="line 10, column 29: expected a value defined in this region"):
        parse_stablehlo(transposed)  # at the use, though a syntax error follows: parsing stops there, as before
    add = module_text("""\
    %k = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
    %r = stablehlo.reshape %k : (tensor<2x3xi32>) -> tensor<3x2xi32>
    %c = stablehlo.reshape %r : (tensor<3x2xi32>) -> tensor<2x3xi32>
    %0 = "stablehlo.add"(%c, %arg0) : (tensor<2x3xi32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
""")
    with pytest.raises(StableHloParseError, match=r"column 26: expected operands of one element type \(f32\), got %c"):
        parse_stablehlo_ops(add, fold=Folder())
    with pytest.raises(StableHloParseError, match=r"column 30: expected operands of one element type \(s32\), got %ar"):
        parse_stablehlo_ops(add)


def test_name_instructions_numbers_each_opcode_in_parse_order():
    """After passes made and dropped instructions: main's before the region, the region's (its copy of %c), then
    the reduce; the constant %z, folded away but made, keeps its number (XLA numbered what it made)."""
    module = parse_stablehlo_ops(REDUCE.replace("%z = stablehlo.constant dense<0.0> : tensor<f32>",
                                                "%z = stablehlo.constant dense<0.0> : tensor<1x1xf32>\n"
                                                "    %x = stablehlo.reshape %z : (tensor<1x1xf32>) -> tensor<f32>"
                                                ).replace("init: %z", "init: %x"))
    for hlo_pass in (passes.canonicalize_shape_ops, passes.expand_splat_constants, passes.sink_constants):
        hlo_pass(module)
    passes.name_instructions(module)
    assert print_hlo_module(module) == """\
HloModule m

region_0 {
  Arg_0.2 = f32[] parameter(0)
  Arg_1.1 = f32[] parameter(1)
  add.1 = f32[] add(Arg_0.2, Arg_1.1)
  constant.4 = f32[] constant(2)
  ROOT multiply.1 = f32[] multiply(constant.4, add.1)
}

ENTRY main {
  Arg_0.1 = f32[2,3] parameter(0)
  constant.1 = f32[] constant(2)
  constant.2 = f32[1,1] constant({ {0} })
  constant.3 = f32[] constant(0)
  reduce.1 = f32[2] reduce(Arg_0.1, constant.3), dimensions={1}, to_apply=region_0
  ROOT negate.1 = f32[2] negate(reduce.1)
}
"""


def test_hlo_dce_drops_unused_ops_but_keeps_effects_and_every_result_of_a_kept_op():
    """Dropped: an unused negate, a get_tuple_element nobody uses, a function nobody calls. Kept: a custom call
    with effects, both results of the two-result Pair (one unused), whose mark goes."""
    text = module_text("""\
    %dead = stablehlo.negate %arg0 : tensor<2x3xf32>
    %e = stablehlo.custom_call @Effect(%arg0) {has_side_effect = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %p:2 = stablehlo.custom_call @Pair(%arg0) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>)
    %t = stablehlo.custom_call @Tuple(%arg0) : (tensor<2x3xf32>) -> tuple<tensor<2x3xf32>, tensor<2xf32>>
    %t1 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2x3xf32>, tensor<2xf32>>) -> tensor<2xf32>
    %0 = stablehlo.add %p#0, %p#0 : tensor<2x3xf32>
    return %0, %t : tensor<2x3xf32>, tuple<tensor<2x3xf32>, tensor<2xf32>>
  }
  func.func private @unused(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    return %x : tensor<2x3xf32>
""", "(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tuple<tensor<2x3xf32>, tensor<2xf32>>)")
    assert after(text, passes.hlo_dce) == """\
HloModule m

ENTRY main {
  Arg_0.1 = f32[2,3] parameter(0)
  custom-call.1 = f32[2,3] custom-call(Arg_0.1), custom_call_target="Effect", custom_call_has_side_effect=true
  custom-call.2 = (f32[2,3], f32[2]) custom-call(Arg_0.1), custom_call_target="Pair"
  get-tuple-element.1 = f32[2,3] get-tuple-element(custom-call.2), index=0
  get-tuple-element.2 = f32[2] get-tuple-element(custom-call.2), index=1
  custom-call.3 = (f32[2,3], f32[2]) custom-call(Arg_0.1), custom_call_target="Tuple"
  add.1 = f32[2,3] add(get-tuple-element.1, get-tuple-element.1)
  ROOT tuple.1 = (f32[2,3], (f32[2,3], f32[2])) tuple(add.1, custom-call.3)
}
"""


def test_post_order_lists_operands_first_and_the_entry_last():
    text = module_text("""\
    %n = stablehlo.negate %arg1 : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [1]
      : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %1 = call @f(%0) : (tensor<2xf32>) -> tensor<2xf32>
    return %1, %n : tensor<2xf32>, tensor<f32>
  }
  func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    %m = stablehlo.multiply %x, %x : tensor<2xf32>
    return %m : tensor<2xf32>
""", "(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>, %c: tensor<f32>) -> (tensor<2xf32>, tensor<f32>)")
    assert after(text, passes.post_order) == """\
HloModule m

f {
  Arg_0.3 = f32[2] parameter(0)
  ROOT multiply.1 = f32[2] multiply(Arg_0.3, Arg_0.3)
}

region_0 {
  Arg_0.2 = f32[] parameter(0)
  Arg_1.2 = f32[] parameter(1)
  ROOT add.1 = f32[] add(Arg_0.2, Arg_1.2)
}

ENTRY main {
  Arg_0.1 = f32[2,3] parameter(0)
  Arg_2.1 = f32[] parameter(2)
  reduce.1 = f32[2] reduce(Arg_0.1, Arg_2.1), dimensions={1}, to_apply=region_0
  call.1 = f32[2] call(reduce.1), to_apply=f
  Arg_1.1 = f32[] parameter(1)
  negate.1 = f32[] negate(Arg_1.1)
  ROOT tuple.1 = (f32[2], f32[]) tuple(call.1, negate.1)
}
"""


def test_assign_layouts_gives_xlas_layouts_and_the_entry_computation_layout():
    """A transpose's is its operand's permuted (a bitcast), an elementwise op's its operand's, a reshape's the
    default, a custom call's its result_layouts."""
    text = module_text("""\
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %1 = stablehlo.negate %0 : tensor<3x2xf32>
    %2 = stablehlo.reshape %1 : (tensor<3x2xf32>) -> tensor<6xf32>
    %3 = stablehlo.custom_call @f(%2) {result_layouts = [dense<[0, 1]> : tensor<2xindex>]}
      : (tensor<6xf32>) -> tensor<3x2xf32>
    return %1, %3 : tensor<3x2xf32>, tensor<3x2xf32>
""", "(%arg0: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)")
    assert after(text, passes.assign_layouts) == """\
HloModule m, entry_computation_layout={(f32[2,3]{1,0})->(f32[3,2]{0,1}, f32[3,2]{0,1})}

ENTRY main {
  Arg_0.1 = f32[2,3]{1,0} parameter(0)
  transpose.1 = f32[3,2]{0,1} transpose(Arg_0.1), dimensions={1,0}
  negate.1 = f32[3,2]{0,1} negate(transpose.1)
  reshape.1 = f32[6]{0} reshape(negate.1)
  custom-call.1 = f32[3,2]{0,1} custom-call(reshape.1), custom_call_target="f"
  ROOT tuple.1 = (f32[3,2]{0,1}, f32[3,2]{0,1}) tuple(negate.1, custom-call.1)
}
"""


def test_parse_stablehlo_is_the_parser_then_the_passes_in_order():
    module = parse_stablehlo_ops(REDUCE)
    for hlo_pass in STABLEHLO_TO_HLO:
        hlo_pass(module)
    assert print_hlo_module(module) == print_hlo_module(parse_stablehlo(REDUCE))
    order = list(STABLEHLO_TO_HLO)
    assert order.index(passes.name_instructions) < order.index(passes.hlo_dce)  # what goes took names too
