"""The internal-kernel registry: which NKI kernel an InternalNativeNkiKernel names, and how to call it.

As in the seed, an entry binds a kernel function, how many of the
instruction's operands it takes, and an ``additional_args_builder`` that reads
the remaining keyword arguments off the HLO instruction. "ResizeNearest"
needs only the target shape: the kernel derives its scales from the input
shape and ``out_shape``, and its mode was fixed at validation.
"ResizeNearestGrad" (beyond the seed, whose gradient never reaches a kernel)
binds the general gradient kernel for the ratios canonicalization leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from ..kernels import FORWARD_KERNELS
from .hlo import HloInstruction


@dataclass(frozen=True)
class InternalKernelConfig:
    """How codegen calls one internal kernel: ``kernel_func(*operands[:operand_count], **builder(inst))``."""

    kernel_func: Callable
    operand_count: int
    additional_args_builder: Callable[[HloInstruction], dict] | None = None


def _get_resize_args(inst: HloInstruction) -> dict:
    """The seed's extractor: the target output shape, from the instruction's single result."""
    return {"out_shape": inst.results[0].access_shape}


def _get_resize_grad_args(inst: HloInstruction) -> dict:
    """The gradient kernel's extra argument: dx's shape (the forward input's), from the single result.

    Beyond the seed and separate from ``_get_resize_args``: the seed shares no
    extractor between forward and backward, its gradient having become a
    reduce-window before codegen. Only ratios that are not block ratios get here.
    """
    return {"in_shape": inst.results[0].access_shape}


def _build_registry() -> dict[str, InternalKernelConfig]:
    """As the seed's builder: import each kernel by its exact name and bind its config."""
    from ..kernels.dispatch import resize_nearest_auto_kernel
    from ..kernels.grad import resize_nearest_grad_kernel

    registry = {}
    registry["ResizeNearest"] = InternalKernelConfig(
        kernel_func=resize_nearest_auto_kernel,
        operand_count=1,
        additional_args_builder=_get_resize_args)
    registry["ResizeNearestGrad"] = InternalKernelConfig(
        kernel_func=resize_nearest_grad_kernel,
        operand_count=1,
        additional_args_builder=_get_resize_grad_args)
    return registry


registry = _build_registry()


def with_forward_kernel(kernel: str | None) -> Mapping[str, InternalKernelConfig]:
    """The registry with "ResizeNearest" bound to the forward variant named ``kernel`` (None: the registry as is)."""
    if kernel is None:
        return registry
    if kernel not in FORWARD_KERNELS:
        choices = ", ".join(map(repr, FORWARD_KERNELS))
        raise ValueError(f"there is no forward kernel {kernel!r}; choose one of {choices}")
    return {**registry, "ResizeNearest": replace(registry["ResizeNearest"], kernel_func=FORWARD_KERNELS[kernel])}
