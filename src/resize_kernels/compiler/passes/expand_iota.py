"""An iota of rank above one as XLA exports it: a 1-D iota along its dimension and a broadcast.

On a module parsed from StableHLO: ``iota(), iota_dimension=d`` of shape
``s32[2,3]`` becomes a 1-D ``iota`` of the size of dimension d and a
``broadcast`` of it into dimension d, as XLA's conversion writes it. A 1-D
iota stays.
"""

from __future__ import annotations

from ..hlo import HloInstruction, HloModule, IntList, Shape
from .parse_order import Make, rewrite


def expand_iota(module: HloModule) -> None:
    """Pass: make each iota of rank above one a 1-D iota and a broadcast."""
    rewrite(module, _expand)


def _expand(inst: HloInstruction, make: Make) -> HloInstruction | None:
    if inst.opcode != "iota" or inst.shape.rank <= 1:
        return None
    dimension = int(inst.attributes["iota_dimension"])
    line = make("iota", Shape(inst.shape.element_type, (inst.shape.dims[dimension],)), [], {"iota_dimension": 0})
    return make("broadcast", inst.shape, [line], {"dimensions": IntList([dimension])})
