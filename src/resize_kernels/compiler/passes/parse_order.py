"""The walk of the StableHLO passes: a module's instructions in the order hlo.stablehlo made them, rewritten in place.

The parser makes one instruction per op, each function's in text order and a
region's while it reads the op that holds it (a reduce or reduce-window), so
before that op's own instruction. XLA's converter rewrites each op as it makes
it, its operands already rewritten, and names instructions in the order it
makes them; the StableHLO passes walk in the parser's order so that they fold
and name as it does. ``rewrite`` is that walk: one pass over each computation,
an instruction replaced by what it became (new instructions in its place, or
an existing one its users take), its users' operands updated as they are
reached, in any computation (a region's stand-in for a constant of its
function too).
"""

from __future__ import annotations

from collections.abc import Callable

from ..hlo import HloComputation, HloInstruction, HloModule
from ..hlo.shape import Shape, TupleShape

#: ``make(opcode, shape, operands=(), attributes=None, payload=None)``: a new instruction where the visited one is.
Make = Callable[..., HloInstruction]
#: ``visit(inst, make)``: what replaces `inst` for its users (one made, or one made before), or None to keep it.
Visit = Callable[[HloInstruction, Make], "HloInstruction | None"]


def rewrite(module: HloModule, visit: Visit) -> None:
    """Call ``visit(inst, make)`` on every instruction in parse order, its operands already replaced by what
    replaced them; the instructions it makes take `inst`'s place in the order made, and `inst` goes unless
    ``visit`` returns None (or `inst`), which keeps it (made nothing, maybe changed in place)."""
    names = _Names(module)
    by_name = {comp.name: comp for comp in module.computations}
    held = {inst: by_name[inst.attributes["to_apply"]] for comp in module.computations for inst in comp.instructions
            if inst.opcode in ("reduce", "reduce-window") and inst.attributes.get("to_apply") in by_name}
    replaced: dict[HloInstruction, HloInstruction] = {}

    def walk(comp: HloComputation) -> None:
        root, kept = comp.root, []
        for inst in comp.instructions:
            if any(operand in replaced for operand in inst.operands):
                inst.operands = [_follow(replaced, operand) for operand in inst.operands]
            if inst in held:
                walk(held[inst])
            made: list[HloInstruction] = []

            def make(opcode: str, shape: Shape | TupleShape, operands=(), attributes=None, payload=None):
                made.append(HloInstruction(names.fresh(opcode), opcode, shape, operands, attributes, payload=payload))
                return made[-1]

            value = visit(inst, make)
            if value is None or value is inst:
                if made:
                    raise AssertionError(f"a visit that keeps {inst.name} made instructions")
                kept.append(inst)
                continue
            for new in made:
                new.parent = comp
            kept += made
            inst.parent = None
            replaced[inst] = value
        comp.instructions = kept
        comp.root = _follow(replaced, root)

    regions = set(held.values())
    for comp in list(module.computations):
        if comp not in regions:
            walk(comp)


def _follow(replaced: dict[HloInstruction, HloInstruction], inst: HloInstruction) -> HloInstruction:
    while inst in replaced:
        inst = replaced[inst]
    return inst


class _Names:
    """Fresh instruction names ``<base>.<n>``, n above any of the module's (the final names come later)."""

    def __init__(self, module: HloModule):
        self.last: dict[str, int] = {}
        for comp in module.computations:
            for inst in comp.instructions:
                base, _, number = inst.name.rpartition(".")
                if number.isdigit():
                    self.last[base] = max(self.last.get(base, 0), int(number))

    def fresh(self, base: str) -> str:
        self.last[base] = self.last.get(base, 0) + 1
        return f"{base}.{self.last[base]}"
