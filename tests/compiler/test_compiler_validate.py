"""validate_resize, the seed's check at HLO lowering: each rejection with its exact text.

The HLO-level checks (operand count, mode, rank-4 arrays of one supported element type) have the
compiler's wording; the shape and dtype rules are the op's contract (contract.py), prefixed with the call.
"""

import pytest

from resize_kernels import contract
from resize_kernels.compiler.hlo import parse_hlo_module, print_hlo_module
from resize_kernels.compiler.passes import ValidationError, validate_resize

from hlo_texts import ZERO_ZERO, custom_call_module, resize_module


def validate(text: str):
    module = parse_hlo_module(text)
    validate_resize(module)
    return module


def message(text: str) -> str:
    with pytest.raises(ValidationError) as info:
        validate(text)
    return str(info.value)


def config(value: str) -> str:
    return custom_call_module(attributes=f'custom_call_target="ResizeNearest", backend_config={value}')


@pytest.mark.parametrize("style", ["old", "new"])
def test_valid_module_passes_unchanged(style):
    text = resize_module(style)
    before = print_hlo_module(parse_hlo_module(text))
    assert print_hlo_module(validate(text)) == before


def test_align_corners_is_rejected_with_the_seeds_two_lines():
    assert message(config(r'"\"10\""')) == (
        "ResizeNearest: align_corners=true is not supported in this implementation.\n"
        "Set align_corners=false in your ResizeNearest configuration.")


def test_align_corners_is_rejected_in_the_torch_xla_module_too():
    assert message(resize_module("old", backend_config=r'"\"10\""')).startswith(
        "ResizeNearest: align_corners=true is not supported")


def test_half_pixel_centers_is_rejected_in_the_same_style():
    assert message(config(r'"\"01\""')) == (
        "ResizeNearest: half_pixel_centers=true is not supported in this implementation.\n"
        "Set half_pixel_centers=false in your ResizeNearest configuration.")


def test_both_flags_report_align_corners_first():
    assert message(config(r'"\"11\""')).startswith("ResizeNearest: align_corners=true")


MALFORMED = ("ResizeNearest custom-call 'rn' requires backend_config to be two quoted characters, align_corners "
             "then half_pixel_centers, each 0 or 1, as torch_xla writes it: backend_config=\"\\\"00\\\"\"; got ")


@pytest.mark.parametrize("value", [r'"00"', r'"\"0\""', r'"\"000\""', r'"\"0a\""', r'"\"00 \""', "{}", "0"])
def test_malformed_backend_config(value):
    assert message(config(value)) == MALFORMED + f"backend_config={value}"


def test_missing_backend_config():
    assert message(custom_call_module(attributes='custom_call_target="ResizeNearest"')) == MALFORMED + \
        "no backend_config"


def test_operand_count():
    assert message(custom_call_module(operands=2)) == (
        "ResizeNearest custom-call 'rn' requires exactly 1 operand (the NHWC image), got 2; pass the image alone")


def test_rank():
    assert message(custom_call_module(operand="f32[4,4,8]", result="f32[8,8,8]")) == (
        "ResizeNearest custom-call 'rn' requires rank-4 arrays (N, H, W, C) as operand and result, got operand "
        "f32[4,4,8] and result f32[8,8,8]; reshape or transpose to NHWC around the call")


def test_tuple_result():
    assert message(custom_call_module(result="(f32[1,8,8,8])")).startswith(
        "ResizeNearest custom-call 'rn' requires rank-4 arrays (N, H, W, C) as operand and result, got operand "
        "f32[1,4,4,8] and result (f32[1,8,8,8])")


def test_element_type_differs():
    assert message(custom_call_module(result="bf16[1,8,8,8]")) == (
        "ResizeNearest custom-call 'rn' requires the result element type to equal the operand's, got operand "
        "f32[1,4,4,8] and result bf16[1,8,8,8]; a resize moves data unchanged, so convert before or after the call")


def test_element_type_the_machine_lacks():
    assert message(custom_call_module(operand="f64[1,4,4,8]", result="f64[1,8,8,8]")) == (
        "ResizeNearest custom-call 'rn' requires an element type the NeuronCore supports "
        "(s8, s16, s32, u8, u16, u32, f16, bf16, f32, f8e5m2, f8e4m3fn, f8e4m3), got operand f64[1,4,4,8] and "
        "result f64[1,8,8,8]; "
        "convert the operand first")


def test_batch_differs():
    assert message(custom_call_module(result="f32[2,8,8,8]")) == (
        "ResizeNearest custom-call 'rn' requires equal batch and channels in in_shape and out_shape (a resize "
        "changes only H and W), got (1, 4, 4, 8) and (2, 8, 8, 8)")


def test_channels_differ():
    assert message(custom_call_module(result="f32[1,8,8,16]")) == (
        "ResizeNearest custom-call 'rn' requires equal batch and channels in in_shape and out_shape (a resize "
        "changes only H and W), got (1, 4, 4, 8) and (1, 8, 8, 16)")


@pytest.mark.parametrize("operand, result, got", [
    ("f32[1,0,4,8]", "f32[1,8,8,8]", "requires positive sizes, got input size 0"),
    ("f32[1,4,4,8]", "f32[1,8,16777216,8]", "requires every size below 2**24 = 16777216 (float32 positions stop "
                                            "being exact there), got output size 16777216; split the resize into "
                                            "smaller pieces"),
    ("f32[0,4,4,8]", "f32[0,8,8,8]", "requires at least one batch and one channel, got in_shape (0, 4, 4, 8)"),
    ("f32[1,4,4,8]", "f32[1,65536,65536,8]", "requires fewer than 2**31 elements per tensor, got out_shape "
                                             "(1, 65536, 65536, 8) (34,359,738,368 elements); split the batch or "
                                             "the channels"),
])
def test_sizes(operand, result, got):
    assert message(custom_call_module(operand=operand, result=result)) == f"ResizeNearest custom-call 'rn' {got}"


@pytest.mark.parametrize("operand, result", [("f32[1,4,4,8]", "f32[2,8,8,8]"), ("f32[1,0,4,8]", "f32[1,8,8,8]"),
                                             ("f32[1,4,4,8]", "f32[1,8,16777216,8]")])
def test_shape_messages_are_the_contracts(operand, result):
    what = "ResizeNearest custom-call 'rn'"
    module = parse_hlo_module(custom_call_module(operand=operand, result=result))
    dims = module.entry.root.operands[0].shape.dims, module.entry.root.shape.dims
    with pytest.raises((ValueError, TypeError)) as info:
        contract.resize_shapes(what, *dims)
    assert message(custom_call_module(operand=operand, result=result)) == str(info.value)


def test_the_gradient_shape_rule_has_dy_as_operand_and_dx_as_result():
    grad = f'custom_call_target="ResizeNearestGrad", backend_config={ZERO_ZERO}'
    validate(custom_call_module(operand="f32[1,8,8,8]", result="f32[1,4,4,8]", attributes=grad))
    assert message(custom_call_module(operand="f32[1,8,8,8]", result="f32[2,4,4,8]", attributes=grad)) == (
        "ResizeNearestGrad custom-call 'rn' requires equal batch and channels in in_shape and dy's shape (a resize "
        "changes only H and W), got (2, 4, 4, 8) and (1, 8, 8, 8)")


@pytest.mark.parametrize("element_type, dtype", [("s32", "int32"), ("u8", "uint8"), ("s8", "int8")])
def test_a_gradient_takes_the_contracts_dtype_rule(element_type, dtype):
    grad = f'custom_call_target="ResizeNearestGrad", backend_config={ZERO_ZERO}'
    text = custom_call_module(operand=f"{element_type}[1,8,8,8]", result=f"{element_type}[1,4,4,8]", attributes=grad)
    assert message(text) == (f"ResizeNearestGrad custom-call 'rn' requires dtype float32, float16, bfloat16, got "
                             f"{dtype}; a gradient is real-valued")
    validate(custom_call_module(operand=f"{element_type}[1,4,4,8]", result=f"{element_type}[1,8,8,8]"))  # forward


def test_custom_call_without_a_readable_target():
    assert message(custom_call_module(attributes="backend_config=" + ZERO_ZERO)) == (
        "custom-call 'rn' requires custom_call_target=\"<name>\" (a quoted name), got none")
    assert message(custom_call_module(attributes="custom_call_target=ResizeNearest")) == (
        "custom-call 'rn' requires custom_call_target=\"<name>\" (a quoted name), got custom_call_target=ResizeNearest")


def test_the_gradient_custom_call_is_checked_by_the_same_rules():
    text = custom_call_module(operand="f32[1,8,8,8]", result="f32[1,4,4,8]",
                              attributes=r'custom_call_target="ResizeNearestGrad", backend_config="\"10\""')
    assert message(text) == ("ResizeNearestGrad: align_corners=true is not supported in this implementation.\n"
                             "Set align_corners=false in your ResizeNearestGrad configuration.")


def test_other_custom_calls_are_left_alone():
    validate(custom_call_module(operand="f64[3]", result="f32[9,9]", operands=2,
                                attributes='custom_call_target="MyKernel", backend_config="anything"'))


def test_validation_error_is_a_value_error():
    assert issubclass(ValidationError, ValueError)
