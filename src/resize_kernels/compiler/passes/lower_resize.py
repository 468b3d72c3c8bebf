"""Lower each validated ResizeNearest custom-call to an InternalNativeNkiKernel naming its kernel.

This is where the HLO op becomes a call of an internal NKI kernel: the new
instruction keeps the custom-call's name, operands, result shape and metadata,
and carries ``kernel_name="ResizeNearest"`` (a typed String), the key codegen
looks up in the internal-kernel registry. ResizeNearestGrad is not lowered
here: the seed rewrites it into an average pool long before codegen (a pass
of its own).
Run validate_resize first: this pass trusts the call's mode and shapes.
A mode flag the extended validation accepted is kept on the kernel instruction.
"""

from __future__ import annotations

from ..hlo import HloInstruction, HloModule, String
from .validate_resize import custom_call_target, resize_mode

KERNEL_OPCODE = "InternalNativeNkiKernel"
RESIZE_NEAREST = "ResizeNearest"
_KEPT_ATTRIBUTES = ("metadata",)


def lower_resize_nearest(module: HloModule) -> None:
    """Pass: replace every ResizeNearest custom-call by an InternalNativeNkiKernel instruction."""
    for comp in module.computations:
        comp.expand({inst: [kernel_instruction(inst, RESIZE_NEAREST)] for inst in comp.instructions
                     if custom_call_target(inst) == RESIZE_NEAREST})


def kernel_instruction(inst: HloInstruction, kernel_name: str) -> HloInstruction:
    """An InternalNativeNkiKernel standing where ``inst`` was: same name, operands and result shape; a call with a
    mode flag (extended modes) keeps it as ``resize_mode="align_corners"`` (or "half_pixel_centers"), which
    the registry turns into the kernel's convention and the lowered module shows."""
    attributes = {"kernel_name": String(kernel_name)}
    mode = resize_mode(inst)
    if mode is not None:
        attributes["resize_mode"] = String(mode)
    attributes.update((key, inst.attributes[key]) for key in _KEPT_ATTRIBUTES if key in inst.attributes)
    return HloInstruction(inst.name, KERNEL_OPCODE, inst.shape, inst.operands, attributes)
