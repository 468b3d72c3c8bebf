"""Codegen: each InternalNativeNkiKernel is looked up in the registry and its kernel re-traced."""

import dataclasses
import functools

import numpy as np
import pytest

from resize_kernels.compiler.codegen import CodegenError, codegen, codegen_internal_native_nki_kernel
from resize_kernels.compiler.hlo import parse_hlo_module
from resize_kernels.compiler.passes import lower_resize_nearest
from resize_kernels import compile_hlo
from resize_kernels.compiler.registry import _get_resize_args, registry, with_forward_kernel
from resize_kernels.kernels import FORWARD, record
from resize_kernels.kernels.rows import resize_nearest_rows_kernel
from resize_kernels.nki.tensor import NkiTensor

from hlo_texts import custom_call_module, resize_module


def lowered(text):
    module = parse_hlo_module(text)
    lower_resize_nearest(module)
    return module


def test_get_resize_args_receives_the_instruction_and_the_kernel_gets_one_operand(monkeypatch):
    """A spy on the registry entry (a kernel function in place of the selection stage): what codegen hands the
    builder and what the kernel is traced with."""
    config = registry["ResizeNearest"]
    built, traced = [], []

    def spy_builder(inst):
        extra_kw = _get_resize_args(inst)
        built.append((inst, extra_kw))
        return extra_kw

    @functools.wraps(resize_nearest_rows_kernel)
    def spy_kernel(*args, **kwargs):
        traced.append((args, kwargs))
        return resize_nearest_rows_kernel(*args, **kwargs)

    monkeypatch.setitem(registry, "ResizeNearest",
                        dataclasses.replace(config, kernel_func=spy_kernel, additional_args_builder=spy_builder))
    compiled = compile_hlo(resize_module("old", dtype="bf16", c=16))

    (kernel,) = compiled.programs
    assert len(built) == 1 and built[0][0] is kernel
    assert kernel.opcode == "InternalNativeNkiKernel" and kernel.parent is compiled.module.entry
    assert built[0][1] == {"out_shape": (1, 38, 59, 16)}
    assert len(traced) == 1
    (args, kwargs), = traced
    assert len(args) == 1 and isinstance(args[0], NkiTensor)
    assert args[0].shape == (1, 20, 30, 16) and args[0].dtype == np.dtype("bfloat16")
    assert kwargs == {"out_shape": (1, 38, 59, 16)}
    assert compiled.programs[kernel].name == "resize_nearest_rows_kernel"
    assert [t.name for t in compiled.programs[kernel].inputs] == ["data_tensor"]


def test_one_program_per_kernel_instruction_traced_with_the_chosen_variant():
    module = lowered(resize_module("new"))
    kernel = module.entry.instruction("upsample_nearest2d.1")
    (program,) = codegen(module, registry).values()
    assert program.name == record(FORWARD, program.selection.kernel).function.__name__
    seed = codegen(module, with_forward_kernel("seed"))
    assert seed[kernel].name == "resize_nearest_fixed_dma_kernel" and seed[kernel].selection.rule == "named"
    assert [t.shape for t in seed[kernel].outputs] == [(1, 38, 59, 8)]


def test_an_unknown_kernel_name_lists_the_known_ones():
    module = parse_hlo_module(custom_call_module(attributes='kernel_name="ResizeBilinear"').replace(
        "custom-call(", "InternalNativeNkiKernel("))
    with pytest.raises(CodegenError) as info:
        codegen(module, registry)
    assert str(info.value) == ("InternalNativeNkiKernel 'rn' names kernel 'ResizeBilinear', which is not in the "
                               "internal-kernel registry; known kernels: 'ResizeNearest', 'ResizeNearestGrad'")


@pytest.mark.parametrize("attributes, got", [("metadata={}", "none"), ("kernel_name=ResizeNearest",
                                                                       "kernel_name=ResizeNearest")])
def test_a_kernel_instruction_needs_a_quoted_kernel_name(attributes, got):
    text = custom_call_module(attributes=attributes).replace("custom-call(", "InternalNativeNkiKernel(")
    with pytest.raises(CodegenError) as info:
        codegen(parse_hlo_module(text), registry)
    assert str(info.value) == f"InternalNativeNkiKernel 'rn' requires kernel_name=\"<registry key>\", got {got}"


def kernel_module(operand, result, operands=1):
    return parse_hlo_module(custom_call_module(operand, result, operands, 'kernel_name="ResizeNearest"').replace(
        "custom-call(", "InternalNativeNkiKernel("))


def test_a_kernel_that_rejects_its_shapes_is_reported_for_the_instruction():
    module = kernel_module("f32[1,4,4,8]", "f32[1,8,8,16]")  # not validated: written directly as a kernel call
    with pytest.raises(CodegenError) as info:
        codegen(module, registry)
    assert str(info.value).startswith("InternalNativeNkiKernel 'rn' (auto) cannot be traced: "
                                      "resize_nearest requires equal batch and channels")


def test_operands_must_be_arrays_of_a_machine_element_type():
    with pytest.raises(CodegenError) as info:
        codegen(kernel_module("f64[1,4,4,8]", "f64[1,8,8,8]"), registry)
    assert str(info.value) == ("InternalNativeNkiKernel 'rn' (auto) requires array operands "
                               "of a NeuronCore element type (s8, s16, s32, u8, u16, u32, f16, bf16, f32, "
                               "f8e5m2, f8e4m3fn, f8e4m3), got p0 of shape "
                               "f64[1,4,4,8]")


def test_too_few_operands():
    module = kernel_module("f32[1,4,4,8]", "f32[1,8,8,8]", operands=0)
    with pytest.raises(CodegenError) as info:
        codegen_internal_native_nki_kernel(module.entry.root, registry)
    assert str(info.value) == "InternalNativeNkiKernel 'rn' (auto) requires 1 operand(s), got 0"


def test_codegen_error_is_a_value_error():
    assert issubclass(CodegenError, ValueError)
