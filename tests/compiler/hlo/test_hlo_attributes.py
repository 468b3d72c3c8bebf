"""Typed attribute values: each prints as canonical HLO and parses back to an equal value; the accessors
take typed values and raw text alike."""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resize_kernels.compiler.hlo import (
    HloComputation, HloInstruction, HloModule, IntList, Literal, Shape, String, TupleShape, Window, constant,
    custom_call_module, parameter, parse_hlo_module, print_hlo_module,
)
from resize_kernels.compiler.hlo.attributes import parse_int_list, parse_literal, parse_string, parse_window

F32 = Shape("f32", ())


# ----- String ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    ("ResizeNearest", '"ResizeNearest"'),
    ('"00"', r'"\"00\""'),
    ("a\\b", r'"a\\b"'),
    ("line\nnext\ttab\r", r'"line\nnext\ttab\r"'),
    ("\x01" + "1", r'"\0011"'),  # three octal digits, so the following digit stays a digit
    ("naïve ☃", '"naïve ☃"'),
    ("", '""'),
])
def test_string_prints_canonically_and_parses_back(value, text):
    assert str(String(value)) == text
    assert parse_string(text) == value
    assert String(parse_string(str(String(value)))) == String(value)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs",))))
def test_any_string_round_trips(value):
    assert parse_string(str(String(value))) == value


def test_string_holds_str():
    with pytest.raises(ValueError, match="a String holds str"):
        String(3)


# ----- IntList --------------------------------------------------------------------------------------

def test_int_list_is_a_tuple_that_prints_as_hlo():
    dims = IntList([0, 3, 2, 1])
    assert dims == (0, 3, 2, 1) and isinstance(dims, tuple)
    assert str(dims) == "{0,3,2,1}" and f"{dims}" == "{0,3,2,1}" and str(IntList()) == "{}"
    assert parse_int_list(str(dims)) == dims and isinstance(parse_int_list("{1, 2}"), IntList)
    assert repr(dims) == "IntList((0, 3, 2, 1))"
    with pytest.raises(ValueError, match="an IntList holds integers"):
        IntList([True])


# ----- Window ---------------------------------------------------------------------------------------

def test_window_fills_in_defaults_and_prints_only_what_differs():
    window = Window(size=(1, 2, 3, 1), stride=(1, 2, 3, 1))
    assert window.pad == ((0, 0),) * 4 and window.lhs_dilate == window.rhs_dilate == (1,) * 4
    assert window.rhs_reversal == (False,) * 4
    assert str(window) == "{size=1x2x3x1 stride=1x2x3x1}"
    assert str(Window(size=(3,))) == "{size=3}"
    full = Window(size=(3, 3), stride=(2, 2), pad=((1, 1), (0, -1)), lhs_dilate=(1, 2), rhs_dilate=(3, 1),
                  rhs_reversal=(False, True))
    assert str(full) == "{size=3x3 stride=2x2 pad=1_1x0_-1 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1}"
    assert parse_window(str(full)) == full


def test_a_parsed_window_equals_the_typed_one_whatever_defaults_the_text_spells_out():
    assert parse_window("{size=2x2 stride=1x1 pad=0_0x0_0 rhs_reversal=0x0}") == Window(size=(2, 2))
    assert parse_window("{size=1x2x2x1 stride=1x2x2x1}") == Window((1, 2, 2, 1), (1, 2, 2, 1))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5).flatmap(lambda rank: st.fixed_dictionaries({
    "size": st.tuples(*[st.integers(0, 10)] * rank),
    "stride": st.tuples(*[st.integers(1, 10)] * rank),
    "pad": st.tuples(*[st.tuples(st.integers(-5, 5), st.integers(-5, 5))] * rank),
    "lhs_dilate": st.tuples(*[st.integers(1, 4)] * rank),
    "rhs_dilate": st.tuples(*[st.integers(1, 4)] * rank),
    "rhs_reversal": st.tuples(*[st.booleans()] * rank),
})))
def test_any_window_round_trips(fields):
    window = Window(**fields)
    assert parse_window(str(window)) == window


@pytest.mark.parametrize("fields, message", [
    ({"size": ()}, "at least one dimension"),
    ({"size": (2, 2), "stride": (1,)}, "window stride needs 2 entries"),
    ({"size": (2,), "stride": (0,)}, "window stride needs integers of at least 1"),
    ({"size": (-1,)}, "window size needs integers of at least 0"),
    ({"size": (2,), "pad": ((1, 2, 3),)}, "window pad is"),
])
def test_window_rejects_what_hlo_cannot_say(fields, message):
    with pytest.raises(ValueError, match=message):
        Window(**fields)


# ----- Literal --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, value, text", [
    (F32, 0, "0"),
    (F32, 6, "6"),
    (F32, -0.0, "-0"),
    (F32, 1.5, "1.5"),
    (F32, -np.inf, "-inf"),
    (F32, np.nan, "nan"),
    (Shape("f64", ()), 1e-300, "1e-300"),
    (Shape("s32", (2,)), [7, -8], "{7, -8}"),
    (Shape("pred", (2,)), [True, False], "{true, false}"),
    (Shape("bf16", (2, 2)), [[1, 2], [3, 4.5]], "{ {1, 2}, {3, 4.5} }"),
    (Shape("f32", (2, 0)), np.zeros((2, 0)), "{ {}, {} }"),
    (Shape("f32", (0,)), [], "{}"),
    (Shape("c64", ()), 1 - 0.5j, "(1, -0.5)"),
    (TupleShape((Shape("f32", (2,)), Shape("s8", ()))), ([1.5, -np.inf], 3), "({1.5, -inf}, 3)"),
])
def test_literal_prints_canonically_and_parses_back(shape, value, text):
    literal = Literal(shape, value)
    assert str(literal) == text
    again = parse_literal(text, shape)
    for got, want in zip(*(v if isinstance(shape, TupleShape) else (v,) for v in (again, literal.value))):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
    assert Literal(shape, again) == literal


def test_nan_payloads_and_signs_round_trip():
    bits = np.array([0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000001234], np.uint64)
    literal = Literal(Shape("f64", (3,)), bits.view(np.float64))
    assert str(literal) == "{nan, -nan, nan(0x1234)}"
    assert parse_literal(str(literal), literal.shape).view(np.uint64).tolist() == bits.tolist()


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["f32", "f16", "bf16", "f64"]), st.lists(st.floats(allow_nan=False, width=64), max_size=5))
def test_any_float_literal_round_trips_bit_for_bit(element_type, floats):
    shape = Shape(element_type, (len(floats),))
    with np.errstate(over="ignore"):
        literal = Literal(shape, floats)
    assert parse_literal(str(literal), shape).tobytes() == literal.value.tobytes()


def test_literal_value_is_read_only_and_checked_against_the_shape():
    literal = Literal(Shape("s32", (2,)), [1, 2])
    assert not literal.value.flags.writeable and literal.value.dtype == np.int32
    with pytest.raises(ValueError, match=r"has shape \(3,\), got values of shape \(2,\)"):
        Literal(Shape("s32", (3,)), [1, 2])
    with pytest.raises(ValueError, match="token has no literal"):
        Literal(Shape("token", ()), 0)
    assert Literal(F32, 1) == Literal(F32, 1.0) != Literal(Shape("f16", ()), 1)


# ----- the accessors take either ---------------------------------------------------------------------

def inst(attributes=None, opcode="custom-call", payload=None, shape=Shape("f32", (2,))):
    return HloInstruction("i", opcode, shape, [], attributes, payload=payload)


@pytest.mark.parametrize("accessor, key, typed, raw, value", [
    ("window", "window", Window((2,), (2,)), "{size=2 stride=2}", Window((2,), (2,))),
    ("dimensions", "dimensions", IntList([1, 0]), "{1,0}", (1, 0)),
    ("custom_call_target", "custom_call_target", String("ResizeNearest"), '"ResizeNearest"', "ResizeNearest"),
    ("kernel_name", "kernel_name", String("ResizeNearest"), '"ResizeNearest"', "ResizeNearest"),
    ("backend_config", "backend_config", String('"00"'), r'"\"00\""', '"00"'),
    ("tuple_index", "index", 1, "1", 1),
])
def test_accessors_accept_typed_values_and_raw_text(accessor, key, typed, raw, value):
    from_typed, from_raw = getattr(inst({key: typed}), accessor), getattr(inst({key: raw}), accessor)
    assert from_typed == from_raw == value
    assert type(from_typed) is type(from_raw)
    if not isinstance(typed, (String, int)):
        assert from_typed is typed  # a typed value is returned as it is
    assert str(typed) == raw


def test_payload_accessors_accept_typed_values_and_raw_text():
    assert inst(opcode="parameter", payload=3).parameter_number == 3
    assert inst(opcode="parameter", payload="3").parameter_number == 3
    typed = inst(opcode="constant", payload=Literal(Shape("f32", (2,)), [1, 2])).literal
    np.testing.assert_array_equal(typed, inst(opcode="constant", payload="{1, 2}").literal)


def test_accessors_still_explain_absent_and_malformed_values():
    with pytest.raises(ValueError, match="custom-call 'i' has no kernel_name="):
        inst().kernel_name
    with pytest.raises(ValueError, match=r"malformed kernel_name= 'ResizeNearest': expected a quoted string"):
        inst({"kernel_name": "ResizeNearest"}).kernel_name
    with pytest.raises(ValueError, match=r"malformed dimensions= '\{size=2\}': expected an integer"):
        inst({"dimensions": Window((2,))}).dimensions  # a typed value of another kind is read as its text
    with pytest.raises(ValueError, match=r"malformed index= 'True': expected an integer"):
        inst({"index": True}).tuple_index  # a bool is no index


def test_a_json_backend_config_stays_text():
    assert inst({"backend_config": '{"a": 1}'}).backend_config == '{"a": 1}'


# ----- printing modules built with typed values -------------------------------------------------------

def test_a_module_built_with_typed_values_prints_and_parses_back_to_the_same_text_and_values():
    x = parameter("x", 0, Shape("f32", (1, 4, 6, 1)))
    zero = constant("zero", F32, 0)
    lhs, rhs = parameter("lhs", 0, F32), parameter("rhs", 1, F32)
    add = HloComputation("add", [lhs, rhs, HloInstruction("sum", "add", F32, [lhs, rhs])])
    window = Window((1, 2, 2, 1), (1, 2, 2, 1))
    pool = HloInstruction("pool", "reduce-window", Shape("f32", (1, 2, 3, 1)), [x, zero],
                          {"window": window, "to_apply": "add"})
    call = HloInstruction("call", "custom-call", pool.shape, [pool],
                          {"custom_call_target": String("MyKernel"), "backend_config": String('{"k": "v"}')})
    t = HloInstruction("t", "transpose", Shape("f32", (1, 3, 2, 1)), [call],
                       {"dimensions": IntList([0, 2, 1, 3])})
    module = HloModule("built", [add, HloComputation("main", [x, zero, pool, call, t], is_entry=True)])
    text = print_hlo_module(module)
    assert ("  pool = f32[1,2,3,1] reduce-window(x, zero), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=add\n"
            in text)
    assert ('  call = f32[1,2,3,1] custom-call(pool), custom_call_target="MyKernel", '
            'backend_config="{\\"k\\": \\"v\\"}"\n') in text
    assert "  ROOT t = f32[1,3,2,1] transpose(call), dimensions={0,2,1,3}\n" in text
    assert "  zero = f32[] constant(0)\n" in text
    parsed = parse_hlo_module(text)
    assert print_hlo_module(parsed) == text
    entry = parsed.entry
    assert entry.instruction("pool").window == window and entry.instruction("t").dimensions == (0, 2, 1, 3)
    assert entry.instruction("call").backend_config == '{"k": "v"}'
    assert entry.instruction("zero").literal == 0 and entry.instruction("x").parameter_number == 0


def test_custom_call_module_builds_the_one_call_module():
    module = custom_call_module("ResizeNearestGrad", Shape("bf16", (1, 4, 4, 2)), Shape("bf16", (1, 2, 2, 2)),
                                '"00"', name="grad", operand="dy", result="dx")
    assert print_hlo_module(module) == (
        "HloModule grad\n\nENTRY main {\n  dy = bf16[1,4,4,2] parameter(0)\n"
        '  ROOT dx = bf16[1,2,2,2] custom-call(dy), custom_call_target="ResizeNearestGrad", '
        'backend_config="\\"00\\""\n}\n')
    root = module.entry.root
    assert root.custom_call_target == "ResizeNearestGrad" and root.backend_config == '"00"'
    assert module.entry.parameters == [root.operands[0]]


def test_rounding_is_numpy_s_when_a_literal_is_built():
    literal = Literal(Shape("bf16", ()), 1.00390625)  # halfway between two bf16 values: to even
    assert literal.value == np.array(1, ml_dtypes.bfloat16) and str(literal) == "1"
    with np.errstate(over="ignore"):
        assert math.isinf(float(Literal(Shape("f16", ()), 1e6).value))
