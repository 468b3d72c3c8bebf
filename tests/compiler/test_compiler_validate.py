"""validate_resize, the seed's check at HLO lowering: each rejection with its exact text."""

import pytest

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
        "(s8, s16, s32, u8, f16, bf16, f32), got operand f64[1,4,4,8] and result f64[1,8,8,8]; "
        "convert the operand first")


def test_batch_differs():
    assert message(custom_call_module(result="f32[2,8,8,8]")) == (
        "ResizeNearest custom-call 'rn' requires the result batch (dim 0) to equal the operand's, got operand "
        "f32[1,4,4,8] and result f32[2,8,8,8]; a resize changes only dims 1 and 2, so set the result's dim 0 to 1")


def test_channels_differ():
    assert message(custom_call_module(result="f32[1,8,8,16]")) == (
        "ResizeNearest custom-call 'rn' requires the result channels (dim 3) to equal the operand's, got operand "
        "f32[1,4,4,8] and result f32[1,8,8,16]; a resize changes only dims 1 and 2, so set the result's dim 3 to 8")


@pytest.mark.parametrize("operand, result", [("f32[1,0,4,8]", "f32[1,8,8,8]"), ("f32[1,4,4,8]", "f32[1,8,16777216,8]")])
def test_sizes(operand, result):
    assert message(custom_call_module(operand=operand, result=result)) == (
        f"ResizeNearest custom-call 'rn' requires every dimension to be at least 1 and dims 1 and 2 to be below "
        f"2**24 (float32 positions stop being exact there), got operand {operand} and result {result}; "
        f"split the resize")


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
