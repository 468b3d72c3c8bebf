"""The internal-kernel registry: which NKI kernel an InternalNativeNkiKernel names, and how to call it.

As in the seed, an entry binds a kernel function, how many of the
instruction's operands it takes, and an ``additional_args_builder`` that reads
the remaining keyword arguments off the HLO instruction. "ResizeNearest"
needs only the target shape: the kernel derives its scales from the input
shape and ``out_shape``, and its mode was fixed at validation.
"ResizeNearestGrad" (beyond the seed, whose gradient never reaches a kernel)
binds the gradient for the ratios canonicalization leaves. Each is bound to
the selection stage's choice per shape (``select.Selected``: the default,
"auto", or a kernel named for ``compile_hlo(kernel=...)``), which codegen
calls where the seed traces a kernel function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from .. import semantics, select
from ..kernels import FORWARD, GRAD
from ..errors import InvalidValueError
from .hlo import HloInstruction, String


@dataclass(frozen=True)
class InternalKernelConfig:
    """How codegen calls one internal kernel: ``kernel_func(*operands[:operand_count], **builder(inst))``."""

    kernel_func: Callable  # a kernel function, or a select.Selected (the selection stage picks one per shape)
    operand_count: int
    additional_args_builder: Callable[[HloInstruction], dict] | None = None


def _get_resize_args(inst: HloInstruction) -> dict:
    """The seed's extractor: the target output shape, from the instruction's single result; and, beyond the seed,
    the convention of an extended mode (``resize_mode``)."""
    return {"out_shape": inst.results[0].access_shape, **_mode_args(inst)}


def _mode_args(inst: HloInstruction) -> dict:
    """{"convention": TensorFlow's map} for a kernel instruction with ``resize_mode`` (extended modes), else {}."""
    mode = inst.attributes.get("resize_mode")
    if mode is None:
        return {}
    name = mode.value if isinstance(mode, String) else None
    if name not in semantics.TENSORFLOW_MODES:
        raise InvalidValueError(f"{inst.name!r} requires resize_mode to be one of "
                                f"{', '.join(map(repr, semantics.TENSORFLOW_MODES))} (quoted), got {mode}")
    return {"convention": semantics.TENSORFLOW_MODES[name]}


def _get_resize_grad_args(inst: HloInstruction) -> dict:
    """The gradient kernel's extra argument: dx's shape (the forward input's), from the single result.

    Beyond the seed and separate from ``_get_resize_args``: the seed shares no
    extractor between forward and backward, its gradient having become a
    reduce-window before codegen. Only ratios that are not block ratios get here.
    """
    return {"in_shape": inst.results[0].access_shape, **_mode_args(inst)}


def _build_registry() -> dict[str, InternalKernelConfig]:
    """As the seed's builder: bind each kernel to its config; both ops to the default, the selection stage's
    choice per shape."""
    registry = {}
    registry["ResizeNearest"] = InternalKernelConfig(
        kernel_func=select.Selected(FORWARD),
        operand_count=1,
        additional_args_builder=_get_resize_args)
    registry["ResizeNearestGrad"] = InternalKernelConfig(
        kernel_func=select.Selected(GRAD),
        operand_count=1,
        additional_args_builder=_get_resize_grad_args)
    return registry


registry = _build_registry()


def with_forward_kernel(kernel: str | None) -> Mapping[str, InternalKernelConfig]:
    """The registry with "ResizeNearest" bound to the forward kernel named ``kernel`` (None: the registry as is)."""
    if kernel is None:
        return registry
    return {**registry, "ResizeNearest": replace(registry["ResizeNearest"], kernel_func=select.Selected(FORWARD, kernel))}
