"""A constant operand of a commutative op goes right, MLIR's canonical form of commutative ops (XLA keeps it).

On a module parsed from StableHLO, after ``canonicalize_shape_ops`` (so that
a reshape of a splat, now a splat constant, counts): an add, multiply,
maximum, minimum, and, or or xor whose first operand is a constant and whose
second is not has them swapped, ``multiply(constant, x)`` becoming
``multiply(x, constant)``. A region's stand-in for a constant of its
function counts as a constant.
"""

from __future__ import annotations

from ..hlo import HloModule
from ..hlo.stablehlo import COMMUTATIVE_OPCODES


def move_constants_right(module: HloModule) -> None:
    """Pass: swap the operands of each commutative op whose constant operand is the first."""
    for comp in module.computations:
        for inst in comp.instructions:
            constants = [operand.opcode == "constant" for operand in inst.operands]
            if inst.opcode in COMMUTATIVE_OPCODES and constants == [True, False]:
                inst.operands.reverse()
