"""The internal-kernel registry: the "ResizeNearest" entry and _get_resize_args, as the seed binds them."""

import dataclasses
import inspect

import pytest

from resize_kernels import kernels
from resize_kernels.compiler import registry as reg
from resize_kernels.compiler.hlo import parse_hlo_module
from resize_kernels.compiler.registry import InternalKernelConfig, _get_resize_args, registry, with_forward_kernel
from resize_kernels.kernels import (
    DEFAULT_FORWARD, FORWARD_KERNELS, resize_nearest_auto_kernel, resize_nearest_fixed_dma_kernel,
    resize_nearest_grad_auto_kernel,
    resize_nearest_grad_kernel,
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


def test_the_registry_binds_each_kernel_function_operand_count_and_builder():
    built = reg._build_registry()
    assert list(built) == ["ResizeNearest", "ResizeNearestGrad"]
    forward, grad = built["ResizeNearest"], built["ResizeNearestGrad"]
    assert forward.kernel_func is resize_nearest_auto_kernel
    assert forward.operand_count == 1
    assert forward.additional_args_builder is _get_resize_args
    assert grad.kernel_func is resize_nearest_grad_auto_kernel
    assert grad.operand_count == 1
    assert grad.additional_args_builder is reg._get_resize_grad_args
    assert built is not registry and built == registry  # a fresh dict, equal to the module's registry


def test_the_default_kernels_are_looked_up_by_their_names_in_kernels(monkeypatch):
    monkeypatch.setattr(kernels, "DEFAULT_FORWARD", "seed")
    assert reg._build_registry()["ResizeNearest"].kernel_func is resize_nearest_fixed_dma_kernel

    def other_grad_kernel(dy, in_shape):
        raise AssertionError("never traced")

    monkeypatch.setitem(kernels.GRAD_KERNELS, kernels.DEFAULT_GRAD, other_grad_kernel)
    assert reg._build_registry()["ResizeNearestGrad"].kernel_func is other_grad_kernel


def test_the_registry_names_no_kernel_function_itself():
    """The default forward variant is named in one place, resize_kernels.kernels."""
    source = inspect.getsource(reg)
    assert "resize_nearest_auto_kernel" not in source and "resize_nearest_grad_kernel" not in source
