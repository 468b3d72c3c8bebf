"""lower_resize_nearest: a validated ResizeNearest custom-call becomes an InternalNativeNkiKernel."""

from pathlib import Path

import pytest

from resize_kernels.compiler.hlo import String, parse_hlo_module, print_hlo_module
from resize_kernels.compiler.passes import KERNEL_OPCODE, lower_resize_nearest

from hlo_texts import custom_call_module, resize_module

GRAD = Path(__file__).parent / "hlo" / "data" / "torch_xla_resize_nearest_grad.hlo"


@pytest.mark.parametrize("style, name", [("old", "custom-call.3"), ("new", "upsample_nearest2d.1")])
def test_the_custom_call_becomes_a_kernel_instruction(style, name):
    module = parse_hlo_module(resize_module(style))
    entry = module.entry
    call = entry.instruction(name)
    operands, shape = call.operands, call.shape
    lower_resize_nearest(module)
    kernel = entry.instruction(name)
    assert kernel is not call and kernel.opcode == KERNEL_OPCODE == "InternalNativeNkiKernel"
    assert kernel.operands == operands and kernel.operands[0] is operands[0]
    assert kernel.shape == shape and kernel.results[0].access_shape == (1, 38, 59, 8)
    assert kernel.attributes["kernel_name"] == String("ResizeNearest") and kernel.kernel_name == "ResizeNearest"
    assert str(kernel.attributes["kernel_name"]) == '"ResizeNearest"'
    assert [inst for inst in entry.instructions if kernel in inst.operands] == [entry.instructions[3]]
    assert all(inst.opcode != "custom-call" for inst in entry.instructions)


def test_metadata_is_kept_and_the_custom_call_attributes_are_dropped():
    module = parse_hlo_module(resize_module("old"))
    lower_resize_nearest(module)
    kernel = module.entry.instruction("custom-call.3")
    assert list(kernel.attributes) == ["kernel_name", "metadata"]


def test_the_lowered_module_prints_and_parses_back():
    module = parse_hlo_module(resize_module("old"))
    lower_resize_nearest(module)
    printed = print_hlo_module(module)
    assert ('  custom-call.3 = f32[1,38,59,8]{3,2,1,0} InternalNativeNkiKernel(transpose.2), '
            'kernel_name="ResizeNearest", metadata=') in printed
    assert print_hlo_module(parse_hlo_module(printed)) == printed


def test_a_kernel_at_the_root_stays_the_root():
    module = parse_hlo_module(custom_call_module())
    lower_resize_nearest(module)
    assert module.entry.root.opcode == KERNEL_OPCODE and module.entry.root.name == "rn"


def test_resize_nearest_grad_is_not_lowered_here():
    module = parse_hlo_module(GRAD.read_text())
    before = print_hlo_module(module)
    lower_resize_nearest(module)
    assert print_hlo_module(module) == before


def test_other_custom_calls_stay():
    text = custom_call_module(attributes='custom_call_target="MyKernel"')
    module = parse_hlo_module(text)
    lower_resize_nearest(module)
    assert module.entry.root.opcode == "custom-call"
