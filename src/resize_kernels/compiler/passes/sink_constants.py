"""Constants a region uses from its function are copied into the region, as XLA sinks constants into regions.

A region's computation sees only its parameters, so hlo.stablehlo gives a
region that uses a value of an enclosing function a stand-in: a constant
whose operand is that value (``constant(%cst)``, payload ``CapturedValue``).
Once the module is canonicalized (the value folded, equal constants one,
splats exported), this pass makes each stand-in a copy of the constant its
value became, one copy per constant and region (the region's own equal
constants stay apart: they were made unique before). The parser refused a
value that would not become one (it asked ``canonicalize_shape_ops.Folder``);
should one come here all the same (parsed with another ``fold``), it is that
error, at its use.
"""

from __future__ import annotations

from ..hlo import HloInstruction, HloModule
from ..hlo.stablehlo import CapturedValue
from .parse_order import Make, rewrite


def sink_constants(module: HloModule) -> None:
    """Pass: replace each region's stand-in for a value of its function by a copy of the constant it became."""
    copies: dict[tuple, HloInstruction] = {}

    def visit(inst: HloInstruction, make: Make) -> HloInstruction | None:
        if inst.opcode != "constant" or not isinstance(inst.payload, CapturedValue):
            return None
        value = inst.operands[0]
        if value.opcode != "constant":
            raise inst.payload.error()
        key = (inst.parent, value)
        if key not in copies:
            copies[key] = make("constant", value.shape, payload=value.payload)
        return copies[key]

    rewrite(module, visit)

