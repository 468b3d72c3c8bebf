"""Parsing both dump styles, and the typed accessors on the parsed instructions."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from resize_kernels.compiler.hlo import (
    HloComputation, HloInstruction, HloModule, Result, Shape, TupleShape, Window, parse_hlo_module,
)

DATA = Path(__file__).parent / "data"


def load(name: str) -> HloModule:
    return parse_hlo_module((DATA / name).read_text())


def module_with(body: str, *, extra: str = "") -> HloModule:
    """A module whose ENTRY computation has the given instruction lines."""
    return parse_hlo_module(f"HloModule m\n{extra}\nENTRY main {{\n{body}\n}}\n")


def test_old_style_torch_xla_dump():
    m = load("torch_xla_resize_nearest.hlo")
    assert m.name == "SyncTensorsGraph.12"
    assert m.attributes["entry_computation_layout"] == (
        "{(f32[1,1280,30,20]{3,2,1,0})->(f32[1,1280,59,38]{3,2,1,0})}")
    assert m.computations == [m.entry] and m.entry.is_entry
    entry = m.entry
    assert entry.name == "SyncTensorsGraph.12"
    assert [i.name for i in entry.instructions] == [
        "p0.1", "transpose.2", "custom-call.3", "transpose.4", "tuple.5"]
    p0, t2, cc, t4, tup = entry.instructions
    assert entry.parameters == [p0] and p0.parameter_number == 0
    assert t2.operands == [p0] and t2.operands[0] is p0
    assert t2.dimensions == (0, 3, 2, 1)
    assert t2.shape == Shape("f32", (1, 20, 30, 1280), (1, 2, 3, 0))
    assert cc.opcode == "custom-call"
    assert cc.custom_call_target == "ResizeNearest"
    assert cc.attributes["backend_config"] == '"\\"00\\""'
    assert cc.backend_config == '"00"'
    assert cc.results == [Result(Shape("f32", (1, 38, 59, 1280), (3, 2, 1, 0)))]
    assert cc.results[0].access_shape == (1, 38, 59, 1280)
    assert cc.results[0].dtype == "f32"
    assert entry.root is tup and tup.is_root and not t4.is_root
    assert tup.shape == TupleShape((Shape("f32", (1, 1280, 59, 38), (3, 2, 1, 0)),))
    assert tup.results[0].access_shape == (1, 1280, 59, 38)
    assert p0.attributes["metadata"] == (
        '{op_type="xla__device_data" op_name="xla__device_data" source_file="/x/y.py" source_line=12}')


def test_new_style_jax_dump():
    m = load("jax_avg_pool.hlo")
    assert m.name == "jit_f"
    assert [c.name for c in m.computations] == ["region_0.1", "main.10"]
    region, entry = m.computations
    assert m.entry is entry and not region.is_entry
    assert m.computation("region_0.1") is region
    assert region.root.name == "add.4" and region.root.operands == region.parameters
    rw = entry.instruction("reduce-window.5")
    assert rw.to_apply is region
    assert rw.window == Window(size=(2, 2), stride=(2, 2), pad=((0, 0), (0, 0)), lhs_dilate=(1, 1),
                              rhs_dilate=(1, 1), rhs_reversal=(False, False))
    assert [op.name for op in rw.operands] == ["Arg_0.1", "constant.2"]
    assert entry.instruction("broadcast.7").dimensions == ()
    assert entry.instruction("constant.6").literal == np.float32(4)
    assert entry.instruction("constant.2").literal.dtype == np.float32
    assert entry.root.opcode == "divide" and entry.root.results[0].access_shape == (2, 3)


def test_resize_nearest_grad_dump():
    entry = load("torch_xla_resize_nearest_grad.hlo").entry
    grads = [i for i in entry.instructions if i.opcode == "custom-call"]
    assert [g.custom_call_target for g in grads] == ["ResizeNearestGrad"] * 2
    assert [g.backend_config for g in grads] == ['"00"'] * 2
    assert grads[1].operands == [grads[0]]
    assert [g.results[0].access_shape for g in grads] == [(2, 80, 30, 64), (2, 20, 30, 64)]
    assert grads[0].attributes["api_version"] == "API_VERSION_ORIGINAL"
    assert entry.parameters[0].shape.numpy_dtype == ml_dtypes.bfloat16


def test_tuples_and_get_tuple_element():
    m = load("tuples_and_gte.hlo")
    entry = m.entry
    assert [p.name for p in entry.parameters] == ["p0", "p1"]
    p0 = entry.instruction("p0")
    assert str(p0.shape) == "(f32[2,3]{1,0}, s32[])"
    assert [r.access_shape for r in p0.results] == [(2, 3), ()]
    gte = entry.instruction("get-tuple-element.2")
    assert gte.tuple_index == 1 and gte.operands == [p0]
    assert entry.instruction("reduce.4").to_apply is m.computation("max_s32")
    assert [r.dtype for r in entry.root.results] == ["f32", "s32", "pred"]
    floats, flag = entry.instruction("constant.7").literal
    np.testing.assert_array_equal(floats, np.array([1.5, -np.inf], np.float32))
    assert flag.dtype == np.bool_ and flag.item() is True


def test_comments_tiling_and_raw_attributes():
    m = load("comments_and_extras.hlo")
    assert m.attributes == {"replica_count": "1", "frontend_attributes": '{fingerprint_before_lhs="a1b2"}'}
    assert m.computation("add.1").attributes == {"execution_thread": '"main"'}
    entry = m.entry
    shape = entry.instruction("input").shape
    assert shape.layout == (3, 2, 1, 0) and shape.layout_suffix == "T(8,128)"
    assert str(shape) == "f32[1,8,8,16]{3,2,1,0:T(8,128)}"
    rw = entry.instruction("rw.4")
    assert rw.window.pad == ((0, 0), (1, 1), (1, 1), (0, 0))
    assert rw.window.stride == (1, 2, 2, 1)
    assert rw.to_apply.name == "add.1"
    cc = entry.instruction("cc.5")
    assert cc.backend_config == '{"key": [1, 2], "nested": {"a": "b"}}'
    assert cc.attributes["custom_call_has_side_effect"] == "true"
    assert entry.root.attributes["control-predecessors"] == "{rw.4}"
    assert entry.root.operands == [cc]


def test_stack_frame_index_is_kept():
    m = load("jax_upsample_with_stack_frames.hlo")
    assert list(m.stack_frame_index) == ["FileNames", "FunctionNames", "FileLocations", "StackFrames"]
    assert m.stack_frame_index["FileNames"] == [(1, '"/home/user/model.py"')]
    call = m.entry.instruction("upsample_nearest2d.1")
    assert call.custom_call_target == "ResizeNearest"
    assert call.results[0].access_shape == (1, 6, 8, 8)


def test_percent_is_optional_and_computation_signature_is_optional():
    m = parse_hlo_module(
        "HloModule m\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT %s = f32[] add(%a, b)\n}\nENTRY %main {\n  x = f32[3]{0} parameter(0)\n  %z = f32[] constant(0)\n"
        "  ROOT r = f32[] reduce(f32[3]{0} %x, z), dimensions={0}, to_apply=%add\n}\n")
    assert m.entry.root.to_apply is m.computation("add")
    assert m.entry.root.attributes["to_apply"] == "add"


def test_last_instruction_is_root_when_none_is_marked():
    entry = module_with("  a = f32[] parameter(0)\n  b = f32[] negate(a)").entry
    assert entry.root is entry.instructions[-1] and entry.root.is_root


def test_computation_lookup_names_the_known_ones():
    m = load("jax_avg_pool.hlo")
    with pytest.raises(ValueError, match=r"no computation 'nope' \(known: region_0.1, main.10\)"):
        m.computation("nope")


def test_unknown_attributes_and_opcodes_are_kept():
    inst = module_with(
        "  a = f32[2]{0} parameter(0)\n"
        "  ROOT b = f32[2]{0} some-new-op(a), new_attr={x=[1,2] y=(3)}, other=b01f_01io->b01f, n=-1.5e+3").entry.root
    assert inst.opcode == "some-new-op"
    assert inst.attributes == {"new_attr": "{x=[1,2] y=(3)}", "other": "b01f_01io->b01f", "n": "-1.5e+3"}


@pytest.mark.parametrize("shape, literal, expected", [
    ("f32[]", "0", np.float32(0)),
    ("f32[]", "-inf", np.float32(-np.inf)),
    ("f64[]", "1e-300", np.float64(1e-300)),
    ("s32[]", "-2147483648", np.int32(-2147483648)),
    ("u64[]", "18446744073709551615", np.uint64(18446744073709551615)),
    ("pred[]", "true", np.bool_(True)),
    ("pred[2]", "{0, 1}", np.array([False, True])),
    ("bf16[2]", "{1.5, -2}", np.array([1.5, -2], ml_dtypes.bfloat16)),
    ("f16[2,2]", "{ {1, 2}, {3, 4} }", np.array([[1, 2], [3, 4]], np.float16)),
    ("s8[2,1,3]", "{ { {1, 2, 3} }, { {-4, -5, -6} } }", np.array([[[1, 2, 3]], [[-4, -5, -6]]], np.int8)),
    ("f32[0]", "{}", np.zeros((0,), np.float32)),
    ("f32[2,0]", "{ {}, {} }", np.zeros((2, 0), np.float32)),
    ("c64[]", "(1, -0.5)", np.complex64(1 - 0.5j)),
])
def test_literals(shape, literal, expected):
    value = module_with(f"  ROOT c = {shape} constant({literal})").entry.root.literal
    assert value.dtype == np.asarray(expected).dtype
    assert value.shape == np.shape(expected)
    np.testing.assert_array_equal(value, expected)


def test_nan_literals_keep_sign_and_payload():
    value = module_with("  ROOT c = f64[3] constant({nan, -nan, nan(0x1234)})").entry.root.literal
    bits = value.view(np.uint64)
    assert np.isnan(value).all()
    assert bits[1] >> np.uint64(63) == 1 and bits[0] >> np.uint64(63) == 0
    assert bits[2] & np.uint64((1 << 52) - 1) == 0x1234


def test_elided_literal_parses_but_has_no_value():
    root = module_with("  ROOT c = f32[100]{0} constant({...})").entry.root
    with pytest.raises(ValueError, match="elided"):
        root.literal


@pytest.mark.parametrize("body, accessor, message", [
    ("ROOT a = f32[2]{0} parameter(0)", "dimensions", "has no dimensions="),
    ("a = f32[2]{0} parameter(0)\n ROOT t = f32[2]{0} transpose(a), dimensions={0,x}", "dimensions",
     r"malformed dimensions= '\{0,x\}': expected an integer, got 'x'"),
    ("ROOT a = f32[2]{0} parameter(0), window={stride=2}", "window", "expected a size= field"),
    ("ROOT a = f32[2]{0} parameter(0), window={size=2x2 stride=1}", "window", "expected 2 entries in stride="),
    ("ROOT a = f32[2]{0} parameter(0), window={size=2 pad=1}", "window", "expected pads lo_hi"),
    ("ROOT a = f32[2]{0} parameter(0), window={size=2 stride=0}", "window", "expected positive stride"),
    ("ROOT a = f32[2]{0} parameter(0), custom_call_target=Foo", "custom_call_target", "expected a quoted string"),
    ("ROOT a = f32[2]{0} parameter(0), index=1x2", "tuple_index", "expected an integer"),
    ("ROOT a = f32[2]{0} parameter(0)", "literal", "is not a constant"),
    ("ROOT a = f32[2]{0} constant({1, 2})", "parameter_number", "is not a parameter"),
    ("ROOT a = f32[2]{0} parameter(0)", "to_apply", "has no to_apply="),
])
def test_accessors_raise_value_error(body, accessor, message):
    inst = module_with(body).entry.root
    with pytest.raises(ValueError, match=message):
        getattr(inst, accessor)


def test_accessors_on_constructed_instructions():
    add = HloInstruction("add.1", "add", Shape("f32", ()), [])
    with pytest.raises(ValueError, match="not in a module"):
        HloInstruction("r", "reduce", Shape("f32", ()), [add], {"to_apply": "x"}).to_apply
    c = HloInstruction("c", "constant", Shape("s32", (2,)), [], payload="{7, 8}")
    np.testing.assert_array_equal(c.literal, np.array([7, 8], np.int32))
    with pytest.raises(ValueError, match="malformed literal"):
        HloInstruction("c", "constant", Shape("s32", (2,)), [], payload="{7}").literal
    assert HloInstruction("p", "parameter", Shape("f32", ()), [], payload="3").parameter_number == 3
    comp = HloComputation("c", [add])
    assert comp.root is add and add.parent is comp


def test_shapes():
    s = Shape("bf16", (1, 2), (1, 0))
    assert str(s) == "bf16[1,2]{1,0}" and s.rank == 2 and s.numpy_dtype == ml_dtypes.bfloat16
    assert str(Shape("f32", [])) == "f32[]" and Shape("pred", ()).numpy_dtype == np.bool_
    assert str(TupleShape([Shape("f32", (2,)), Shape("s32", ())])) == "(f32[2], s32[])"
    assert str(TupleShape(())) == "()"
    for element_type in ("pred", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64",
                         "f16", "bf16", "f32", "f64", "c64"):
        assert Shape(element_type, (3,)).numpy_dtype.itemsize > 0
    with pytest.raises(ValueError, match="unknown element type"):
        Shape("f31", (1,))
    with pytest.raises(ValueError, match="not a permutation"):
        Shape("f32", (1, 2), (0, 0))
    with pytest.raises(ValueError, match="no numpy dtype"):
        Shape("token", ()).numpy_dtype
