"""Lower each validated ResizeNearest custom-call to an InternalNativeNkiKernel naming its kernel.

This is where the HLO op becomes a call of an internal NKI kernel: the new
instruction keeps the custom-call's name, operands, result shape and metadata,
and carries ``kernel_name="ResizeNearest"`` (a typed String), the key codegen
looks up in the internal-kernel registry. ResizeNearestGrad is not lowered
here: the seed rewrites it into an average pool long before codegen (a pass
of its own).
Run validate_resize first: this pass trusts the call's mode and shapes.
"""

from __future__ import annotations

from ..hlo import HloInstruction, HloModule, String
from .validate_resize import custom_call_target

KERNEL_OPCODE = "InternalNativeNkiKernel"
RESIZE_NEAREST = "ResizeNearest"
_KEPT_ATTRIBUTES = ("metadata",)


def lower_resize_nearest(module: HloModule) -> None:
    """Pass: replace every ResizeNearest custom-call by an InternalNativeNkiKernel instruction."""
    for comp in module.computations:
        comp.expand({inst: [kernel_instruction(inst, RESIZE_NEAREST)] for inst in comp.instructions
                     if custom_call_target(inst) == RESIZE_NEAREST})


def kernel_instruction(inst: HloInstruction, kernel_name: str) -> HloInstruction:
    """An InternalNativeNkiKernel standing where ``inst`` was: same name, operands and result shape."""
    attributes = {"kernel_name": String(kernel_name)}
    attributes.update((key, inst.attributes[key]) for key in _KEPT_ATTRIBUTES if key in inst.attributes)
    return HloInstruction(inst.name, KERNEL_OPCODE, inst.shape, inst.operands, attributes)
