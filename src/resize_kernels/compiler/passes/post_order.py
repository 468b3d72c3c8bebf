"""XLA's order of a converted module: instructions in post order, computations callees first, the entry last.

On a module converted from StableHLO, after ``hlo_dce``: each computation's
instructions are listed as XLA lists them, from each instruction nothing uses
(in the order they were made), operands first, depth first, the first operand
first. The computations are listed as XLA's conversion lists them: each after
the regions it holds, the functions in text order but the ENTRY (with its
regions) last.
"""

from __future__ import annotations

from ..hlo import HloComputation, HloInstruction, HloModule


def post_order(module: HloModule) -> None:
    """Pass: list each computation's instructions in post order and the entry's computations last."""
    for comp in module.computations:
        comp.instructions = _post_order(comp.instructions)
    entry = _with_regions(module, module.entry)
    module.computations[:] = ([comp for comp in module.computations if comp not in entry]
                              + [comp for comp in module.computations if comp in entry])


def _post_order(instructions: list[HloInstruction]) -> list[HloInstruction]:
    """From each instruction no other uses (in list order), operands first, depth first, first operand first."""
    used = {operand for inst in instructions for operand in inst.operands}
    state: dict[HloInstruction, int] = {}
    order = []
    for sink in instructions:
        if sink in used:
            continue
        stack = [sink]
        while stack:
            current = stack[-1]
            seen = state.get(current)
            if seen is None:
                state[current] = 1
                stack.extend(reversed(current.operands))
                continue
            stack.pop()
            if seen == 1:
                state[current] = 2
                order.append(current)
    return order


def _with_regions(module: HloModule, comp: HloComputation) -> set[HloComputation]:
    """`comp` and the regions it holds (the computations of its reduces and reduce-windows), nested ones too."""
    by_name = {c.name: c for c in module.computations}
    found, todo = {comp}, [comp]
    while todo:
        for inst in todo.pop().instructions:
            region = by_name.get(inst.attributes.get("to_apply"))
            if inst.opcode in ("reduce", "reduce-window") and region is not None and region not in found:
                found.add(region)
                todo.append(region)
    return found
