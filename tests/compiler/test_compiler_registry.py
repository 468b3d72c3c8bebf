"""The internal-kernel registry: the "ResizeNearest" entry and _get_resize_args, as the seed binds them."""

import dataclasses
import inspect

import numpy as np
import pytest

from resize_kernels.compiler import registry as reg
from resize_kernels.compiler.hlo import parse_hlo_module
from resize_kernels.compiler.registry import InternalKernelConfig, _get_resize_args, registry, with_forward_kernel
from resize_kernels.kernels import FORWARD, GRAD, names, record
from resize_kernels.nki import TensorSpec
from resize_kernels.select import Selected

from hlo_texts import resize_module


def test_resize_nearest_entry_binds_the_default_selection_one_operand_and_get_resize_args():
    config = registry["ResizeNearest"]
    assert config == InternalKernelConfig(kernel_func=Selected(FORWARD), operand_count=1,
                                          additional_args_builder=_get_resize_args)
    assert [f.name for f in dataclasses.fields(InternalKernelConfig)] == [
        "kernel_func", "operand_count", "additional_args_builder"]


def test_get_resize_args_returns_only_the_result_shape():
    call = parse_hlo_module(resize_module("new", c=16)).entry.instruction("upsample_nearest2d.1")
    assert _get_resize_args(call) == {"out_shape": (1, 38, 59, 16)}
    assert _get_resize_args(call)["out_shape"] == call.results[0].access_shape


def test_with_forward_kernel_swaps_only_the_kernel():
    assert with_forward_kernel(None) is registry
    seed = with_forward_kernel("seed")
    assert seed["ResizeNearest"] == dataclasses.replace(registry["ResizeNearest"],
                                                        kernel_func=Selected(FORWARD, "seed"))
    assert seed["ResizeNearest"].kernel_func.__name__ == "resize_nearest_fixed_dma_kernel"
    assert registry["ResizeNearest"].kernel_func == Selected(FORWARD)  # the registry itself is untouched


def test_with_forward_kernel_rejects_an_unknown_variant():
    with pytest.raises(ValueError) as info:
        with_forward_kernel("fast")
    choices = ", ".join(map(repr, names(FORWARD)))
    assert str(info.value) == f"resize_nearest has no kernel 'fast'; choose one of {choices}"


def test_the_registry_binds_each_kernel_operand_count_and_builder():
    built = reg._build_registry()
    assert list(built) == ["ResizeNearest", "ResizeNearestGrad"]
    forward, grad = built["ResizeNearest"], built["ResizeNearestGrad"]
    assert forward.kernel_func == Selected(FORWARD) and forward.kernel_func.__name__ == "auto"
    assert forward.operand_count == 1
    assert forward.additional_args_builder is _get_resize_args
    assert grad.kernel_func == Selected(GRAD)
    assert grad.operand_count == 1
    assert grad.additional_args_builder is reg._get_resize_grad_args
    assert built is not registry and built == registry  # a fresh dict, equal to the module's registry


def test_a_selected_entry_traces_the_kernel_the_selection_stage_chooses():
    program = registry["ResizeNearest"].kernel_func.program(TensorSpec((1, 30, 20, 8), np.float32), out_shape=(1, 59, 38, 8))
    assert program.selection.op == FORWARD
    assert program.name == record(FORWARD, program.selection.kernel).function.__name__


def test_the_registry_names_no_kernel_function_itself():
    """Which kernel runs is the selection stage's call (resize_kernels.select), not the registry's."""
    source = inspect.getsource(reg)
    assert "resize_nearest_rows_kernel" not in source and "resize_nearest_grad_kernel" not in source
