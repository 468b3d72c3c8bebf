"""Dead code goes, as MLIR's canonicalizer erases it before XLA converts: unused ops, then unreached computations.

On a module converted from StableHLO: an instruction is kept when the root
uses it, directly or not, or when it has effects or is kept for its own sake:
a parameter, a ``call``, a custom-call with ``custom_call_has_side_effect``.
An op of several results (the parser marks it ``results=<n>``) keeps a
get-tuple-element per result as long as it is kept, used or not, as XLA makes
them all; the mark then goes. Then a computation stays only when the entry
reaches it through ``to_apply`` (a called function, a region of a kept reduce
or reduce-window), as XLA converts only those. Run it after
``name_instructions``: what it drops took its names.
"""

from __future__ import annotations

from ..hlo import HloComputation, HloInstruction, HloModule


def hlo_dce(module: HloModule) -> None:
    """Pass: drop the instructions nothing kept uses, then the computations the entry does not reach."""
    for comp in module.computations:
        _drop_dead(comp)
    by_name = {comp.name: comp for comp in module.computations}
    reached, todo = set(), [module.entry]
    while todo:
        comp = todo.pop()
        if comp not in reached:
            reached.add(comp)
            todo += [by_name[inst.attributes["to_apply"]] for inst in comp.instructions
                     if inst.attributes.get("to_apply") in by_name]
    for comp in module.computations:
        if comp not in reached:
            comp.module = None
    module.computations[:] = [comp for comp in module.computations if comp in reached]


def _drop_dead(comp: HloComputation) -> None:
    keep = {comp.root}
    keep.update(inst for inst in comp.instructions if inst.opcode in ("parameter", "call")
                or inst.attributes.get("custom_call_has_side_effect") == "true")
    stack = list(keep)
    while stack:
        for operand in stack.pop().operands:
            if operand not in keep:
                keep.add(operand)
                stack.append(operand)
    kept = [inst for inst in comp.instructions if inst in keep or _is_result(inst) and inst.operands[0] in keep]
    for inst in set(comp.instructions).difference(kept):
        inst.parent = None
    for inst in kept:
        inst.attributes.pop("results", None)
    comp.instructions = kept


def _is_result(inst: HloInstruction) -> bool:
    """A get-tuple-element of an op of several results."""
    return inst.opcode == "get-tuple-element" and "results" in inst.operands[0].attributes
