"""The seed's check at HLO lowering (hlo2penguin): reject resize custom-calls the kernels cannot honour.

By default the kernels implement only the asymmetric, floor-rounding
transform (align_corners=false, half_pixel_centers=false), as the seed's. So
the mode is checked here, once, from the custom-call's backend_config, which
torch_xla writes as two quoted characters, align_corners then
half_pixel_centers (``backend_config="\\"00\\""``). The HLO-level checks make
sure the call has one rank-4 operand and result of one element type the
NeuronCore moves; the shape and dtype rules are then the op's one contract
(``contract.resize_shapes`` / ``grad_shapes``, ``resize_dtype`` /
``grad_dtype``), whose messages are re-raised as ValidationError: what
reaches a kernel is an NHWC image resized in dims 1 and 2 only.
torch_xla transposes NCHW with dimensions={0,3,2,1}, so the custom call may
see (N, W, H, C); the map is separable per axis, so dims 1 and 2 are simply
resized as they come. ``validate_resize_extended`` (compile_module's
``extended_modes``) accepts one mode flag instead: the lowering then passes
TensorFlow's map for it (``semantics.TENSORFLOW_MODES``) to the kernel.
"""

from __future__ import annotations

import re

import numpy as np

from ... import contract
from ...errors import InvalidValueError
from ...machine import dtypes
from ..hlo import HloInstruction, HloModule, Shape
from ..hlo.lexer import printable
from ..hlo.shape import ELEMENT_TYPES

#: Custom-call targets of the resize op family; they share the backend_config and the NHWC conventions.
RESIZE_TARGETS = ("ResizeNearest", "ResizeNearestGrad")
#: HLO element types the NeuronCore model moves (f32, bf16, f16, NKI's three float8s and the 8/16/32-bit integers).
SUPPORTED_ELEMENT_TYPES = tuple(name for name, (_, dtype) in ELEMENT_TYPES.items()
                                if dtype is not None and np.dtype(dtype) in dtypes.SUPPORTED)
_BACKEND_CONFIG = re.compile(r'"([01])([01])"')


class ValidationError(InvalidValueError):
    """An HLO module the compiler rejects; the message names the instruction and what to change."""

    def __init__(self, message: str):
        super().__init__(printable(message))  # it may quote the module's text: no control characters


def custom_call_target(inst: HloInstruction) -> str | None:
    """The custom_call_target of a custom-call (None for other opcodes); ValidationError if it is unreadable."""
    if inst.opcode != "custom-call":
        return None
    try:
        return inst.custom_call_target
    except ValueError:
        raw = inst.attributes.get("custom_call_target")
        got = "none" if raw is None else f"custom_call_target={raw}"
        raise ValidationError(f"custom-call {inst.name!r} requires custom_call_target=\"<name>\" (a quoted name), "
                              f"got {got}") from None


def validate_resize(module: HloModule) -> None:
    """Pass: check every resize custom-call of the module (ValidationError at the first bad one)."""
    for comp in module.computations:
        for inst in comp.instructions:
            if custom_call_target(inst) in RESIZE_TARGETS:
                check_resize_custom_call(inst)


def validate_resize_extended(module: HloModule) -> None:
    """Pass: ``validate_resize``, but align_corners or half_pixel_centers (one of them) is accepted, to be lowered
    with TensorFlow's ResizeNearestNeighbor semantics (``compile_module(..., extended_modes=True)``)."""
    for comp in module.computations:
        for inst in comp.instructions:
            if custom_call_target(inst) in RESIZE_TARGETS:
                check_resize_custom_call(inst, extended=True)


def resize_mode(inst: HloInstruction) -> str | None:
    """The flag a validated resize custom-call sets ("align_corners" or "half_pixel_centers"), None for "00"."""
    match = _BACKEND_CONFIG.fullmatch(inst.backend_config)
    return {"10": "align_corners", "01": "half_pixel_centers"}.get(match.group(1) + match.group(2))


def check_resize_custom_call(inst: HloInstruction, extended: bool = False) -> None:
    """One ResizeNearest / ResizeNearestGrad custom-call: its operand count, mode, element types, then the contract.
    ``extended``: accept one of the two mode flags (``validate_resize_extended``)."""
    target = inst.custom_call_target
    what = f"{target} custom-call {inst.name!r}"
    if len(inst.operands) != 1:
        raise ValidationError(f"{what} requires exactly 1 operand (the NHWC image), got {len(inst.operands)}; "
                              f"pass the image alone")
    _check_mode(inst, target, what, extended)
    operand, result = inst.operands[0].shape, inst.shape
    _check_arrays(operand, result, what)
    _check_contract(target, operand, result, what)


def _check_mode(inst: HloInstruction, target: str, what: str, extended: bool = False) -> None:
    try:
        match = _BACKEND_CONFIG.fullmatch(inst.backend_config)
    except ValueError:  # absent, or not a quoted string
        match = None
    if match is None:
        raw = inst.attributes.get("backend_config")
        got = "no backend_config" if raw is None else f"backend_config={raw}"
        raise ValidationError(f"{what} requires backend_config to be two quoted characters, align_corners then "
                              f"half_pixel_centers, each 0 or 1, as torch_xla writes it: "
                              f"backend_config=\"\\\"00\\\"\"; got {got}")
    if extended and match.groups() == ("1", "1"):
        raise ValidationError(f"{what} sets both align_corners and half_pixel_centers, which TensorFlow's "
                              f"ResizeNearestNeighbor rejects as well; set one of them: backend_config "
                              f"\"10\" (align_corners) or \"01\" (half_pixel_centers), quoted as for \"00\"")
    for flag, value in zip(("align_corners", "half_pixel_centers"), match.groups()):
        if value == "1" and not extended:
            raise ValidationError(f"{target}: {flag}=true is not supported in this implementation.\n"
                                  f"Set {flag}=false in your {target} configuration.")


def _check_arrays(operand, result, what: str) -> None:
    """HLO-level: rank-4 arrays of one element type the NeuronCore supports."""
    got = f"got operand {operand} and result {result}"
    if not (isinstance(operand, Shape) and isinstance(result, Shape) and operand.rank == result.rank == 4):
        raise ValidationError(f"{what} requires rank-4 arrays (N, H, W, C) as operand and result, {got}; "
                              f"reshape or transpose to NHWC around the call")
    if operand.element_type not in SUPPORTED_ELEMENT_TYPES:
        raise ValidationError(f"{what} requires an element type the NeuronCore supports "
                              f"({', '.join(SUPPORTED_ELEMENT_TYPES)}), {got}; convert the operand first")
    if result.element_type != operand.element_type:
        raise ValidationError(f"{what} requires the result element type to equal the operand's, {got}; "
                              f"a resize moves data unchanged, so convert before or after the call")


def _check_contract(target: str, operand: Shape, result: Shape, what: str) -> None:
    """The op's shape and dtype rules (contract.py); a gradient's operand is dy and its result dx."""
    try:
        if target == "ResizeNearestGrad":
            contract.grad_shapes(what, operand.dims, result.dims)
            contract.grad_dtype(what, operand.numpy_dtype)
        else:
            contract.resize_shapes(what, operand.dims, result.dims)
            contract.resize_dtype(what, operand.numpy_dtype)
    except (ValueError, TypeError) as error:
        raise ValidationError(str(error)) from error
