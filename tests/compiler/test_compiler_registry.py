"""The internal-kernel registry: the "ResizeNearest" entry and _get_resize_args, as the seed binds them."""

import dataclasses

import pytest

from resize_kernels.compiler import registry as reg
from resize_kernels.compiler.hlo import parse_hlo_module
from resize_kernels.compiler.registry import InternalKernelConfig, _get_resize_args, registry, with_forward_kernel
from resize_kernels.kernels import (
    DEFAULT_FORWARD, FORWARD_KERNELS, resize_nearest_auto_kernel, resize_nearest_fixed_dma_kernel,
)

from hlo_texts import resize_module


def test_resize_nearest_entry_binds_the_default_forward_kernel_one_operand_and_get_resize_args():
    config = registry["ResizeNearest"]
    assert config == InternalKernelConfig(kernel_func=resize_nearest_auto_kernel, operand_count=1,
                                          additional_args_builder=_get_resize_args)
    assert config.kernel_func is FORWARD_KERNELS[DEFAULT_FORWARD]
    assert [f.name for f in dataclasses.fields(InternalKernelConfig)] == [
        "kernel_func", "operand_count", "additional_args_builder"]


def test_get_resize_args_returns_only_the_result_shape():
    call = parse_hlo_module(resize_module("new", c=16)).entry.instruction("upsample_nearest2d.1")
    assert _get_resize_args(call) == {"out_shape": (1, 38, 59, 16)}
    assert _get_resize_args(call)["out_shape"] == call.results[0].access_shape


def test_with_forward_kernel_swaps_only_the_kernel_function():
    assert with_forward_kernel(None) is registry
    seed = with_forward_kernel("seed")
    assert seed["ResizeNearest"] == dataclasses.replace(registry["ResizeNearest"],
                                                        kernel_func=resize_nearest_fixed_dma_kernel)
    assert registry["ResizeNearest"].kernel_func is resize_nearest_auto_kernel  # the registry itself is untouched


def test_with_forward_kernel_rejects_an_unknown_variant():
    with pytest.raises(ValueError) as info:
        with_forward_kernel("fast")
    choices = ", ".join(map(repr, FORWARD_KERNELS))
    assert str(info.value) == f"there is no forward kernel 'fast'; choose one of {choices}"


def test_the_registry_is_built_by_importing_the_kernel_by_name():
    assert reg._build_registry() == registry
