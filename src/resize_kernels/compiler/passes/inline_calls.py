"""Inline every ``call``: the callee's instructions copied into the caller, as XLA's CallInliner does.

JAX writes a nested ``jax.jit`` (``jax.nn.relu`` is one) as a private function
and an HLO ``call(...), to_apply=relu.1``. The executor runs one flat
computation, and the resize passes must see a ResizeNearest inside a called
function as well as one in the entry, so this pass runs first: afterwards no
computation holds a ``call``.

Each call is replaced by renamed copies of its callee's instructions: the
callee's parameters become the call's operands, and the call's users (and the
caller's root, when the call is the root) use the copy of the callee's root,
which takes the call's name. The other copies are named
``<call name>.<callee instruction name>`` (``.1``, ``.2`` ... appended when a
name is taken anywhere in the module), so names stay unique and valid.
Computations are processed callees first, so a copied body holds no calls.
A callee whose root is one of its parameters makes the call its operand.
Instructions that use the callee's root (they are dead: the root is what the
call returns) are not copied. Copies share their originals' attribute values
and literals, which are never mutated in place.

Then the computations that only calls referenced are dropped: those reachable
from the entry before the pass and not after it. A computation is referenced
by any attribute that names it (``to_apply=`` of a reduce or reduce-window,
``calls=``, ``condition=``, ``branch_computations={...}`` ...), so the bodies
of reductions inside an inlined function stay. Computations the entry never
reached are left alone.

Refused, with a ValidationError naming the instruction: a module whose inlined
computations would pass MAX_INLINED_INSTRUCTIONS (counted before anything is
copied: nested calls multiply), a call without a
readable ``to_apply`` or of an unknown computation, recursion (a computation
that calls itself, directly or not), and a call whose operands or result do
not match the callee's parameters (numbered 0..n-1) and root, by element type
and dimensions.
"""

from __future__ import annotations

import re

from ..hlo import HloComputation, HloInstruction, HloModule, Shape, TupleShape
from .validate_resize import ValidationError

_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_NAME = re.compile(r"%?([A-Za-z_][A-Za-z0-9_.\-]*)")


def inline_calls(module: HloModule) -> None:
    """Pass: replace each ``call`` by its callee's instructions, then drop the computations left unreferenced."""
    before = _reachable(module, [comp for comp in module.computations if comp.is_entry])
    unreached = [comp for comp in module.computations if comp not in before]  # kept, and what they use
    callees = {comp: _callees(comp) for comp in module.computations}
    order = _callees_first(callees)
    _check_size(order, callees)
    taken = {inst.name for comp in module.computations for inst in comp.instructions}
    for comp in order:
        calls = callees[comp]
        if not calls:
            continue
        expansions, forwards = {}, []
        for call, callee in calls:
            copies = _copies(call, callee, taken)
            if copies:
                expansions[call] = copies
            else:  # the callee returns a parameter: the call is that operand
                forwards.append((call, callee.parameters.index(callee.root)))
        comp.expand(expansions)
        for call, number in forwards:  # after expand: an operand that was another call is its replacement now
            comp.replace_instruction(call, call.operands[number])
    dropped = before - _reachable(module, [comp for comp in module.computations if comp.is_entry] + unreached)
    for comp in dropped:
        comp.module = None
    module.computations[:] = [comp for comp in module.computations if comp not in dropped]


#: The most instructions inlining may give a computation (about 5 s and 400 MB of IR; a computation written
#: larger is the parsers' to bound): a chain of computations each calling the next twice doubles at every
#: level, 2**40 instructions from 5 KB of text.
MAX_INLINED_INSTRUCTIONS = 250_000


def _check_size(order: list[HloComputation], callees: dict) -> None:
    """ValidationError if inlining would give a computation more than MAX_INLINED_INSTRUCTIONS instructions:
    counted callees first (each call becomes at most its callee's inlined instructions but its parameters),
    before anything is copied."""
    size: dict[HloComputation, int] = {}
    for comp in order:
        calls = callees[comp]
        size[comp] = len(comp.instructions) + sum(size[callee] - len(callee.parameters) - 1 for _, callee in calls)
        if size[comp] > max(MAX_INLINED_INSTRUCTIONS, len(comp.instructions)):
            call, callee = max(calls, key=lambda pair: size[pair[1]])
            raise ValidationError(f"inlining the calls of computation {comp.name!r} would give it up to "
                                  f"{size[comp]:,} instructions (call {call.name!r} of {callee.name!r} alone "
                                  f"{size[callee]:,}), more than the compiler takes ({MAX_INLINED_INSTRUCTIONS:,}); "
                                  f"call fewer functions or split the module")


def _callees(comp: HloComputation) -> list[tuple[HloInstruction, HloComputation]]:
    """The calls of `comp` and the computation each one calls, checked to fit."""
    calls = []
    for inst in comp.instructions:
        if inst.opcode != "call":
            continue
        try:
            callee = inst.to_apply
        except ValueError as error:
            raise ValidationError(f"call {inst.name!r} in computation {comp.name!r} requires to_apply=<the name of "
                                  f"a computation of the module>: {error}") from None
        _check_signature(inst, callee)
        calls.append((inst, callee))
    return calls


def _check_signature(call: HloInstruction, callee: HloComputation) -> None:
    params = callee.parameters
    what = f"call {call.name!r} of {callee.name}"
    if [p.parameter_number for p in params] != list(range(len(params))):
        numbers = ", ".join(str(p.parameter_number) for p in params)
        raise ValidationError(f"{what} requires {callee.name}'s parameters to be numbered 0 to {len(params) - 1}, "
                              f"got {numbers}")
    if len(call.operands) != len(params):
        raise ValidationError(f"{what} passes {len(call.operands)} operand(s), but {callee.name} takes "
                              f"{len(params)} parameter(s); pass one operand per parameter")
    for number, (operand, param) in enumerate(zip(call.operands, params)):
        if not _same(operand.shape, param.shape):
            raise ValidationError(f"{what} passes {operand.shape} as operand {number}, but parameter {number} "
                                  f"({param.name}) of {callee.name} is {param.shape}")
    if not _same(call.shape, callee.root.shape):
        raise ValidationError(f"{what} declares {call.shape}, but {callee.name} returns {callee.root.shape} "
                              f"(its root {callee.root.name}); fix the call's shape")


def _same(a: Shape | TupleShape, b: Shape | TupleShape) -> bool:
    """The same element types and dimensions (layouts are physical order only)."""
    if isinstance(a, TupleShape) or isinstance(b, TupleShape):
        return (isinstance(a, TupleShape) and isinstance(b, TupleShape) and len(a.elements) == len(b.elements)
                and all(map(_same, a.elements, b.elements)))
    return a.element_type == b.element_type and a.dims == b.dims


def _callees_first(callees: dict[HloComputation, list]) -> list[HloComputation]:
    """Every computation, each after the computations it calls (ValidationError on recursion)."""
    order, done, active = [], set(), set()
    for start in callees:
        if start in done:
            continue
        stack = [(start, iter(callees[start]))]
        active.add(start)
        while stack:
            comp, pending = stack[-1]
            step = next(pending, None)
            if step is None:
                stack.pop()
                active.discard(comp)
                done.add(comp)
                order.append(comp)
                continue
            call, callee = step
            if callee in active:
                cycle = [c.name for c, _ in stack[[c for c, _ in stack].index(callee):]] + [callee.name]
                raise ValidationError(f"call {call.name!r} in computation {comp.name!r} makes a recursive call "
                                      f"({' -> '.join(cycle)}); HLO computations cannot recurse")
            if callee not in done:
                active.add(callee)
                stack.append((callee, iter(callees[callee])))
    return order


def _copies(call: HloInstruction, callee: HloComputation, taken: set[str]) -> list[HloInstruction]:
    """Renamed copies of the callee's instructions that compute what `call` returns, the root's copy last and
    named as the call; empty when the callee returns one of its parameters."""
    root = callee.root
    if root.opcode == "parameter":
        return []
    values: dict[int, HloInstruction] = {id(p): operand for p, operand in zip(callee.parameters, call.operands)}
    dead = _users_of(root, callee)
    copies = []
    for inst in callee.instructions:
        if inst.opcode == "parameter" or id(inst) in dead or inst is root:
            continue
        values[id(inst)] = _copy(inst, _fresh(taken, f"{call.name}.{inst.name}"), values)
        copies.append(values[id(inst)])
    copies.append(_copy(root, call.name, values))  # the call's name is free once expand removes the call
    return copies


def _copy(inst: HloInstruction, name: str, values: dict[int, HloInstruction]) -> HloInstruction:
    return HloInstruction(name, inst.opcode, inst.shape, [values[id(op)] for op in inst.operands],
                          inst.attributes, payload=inst.payload)


def _users_of(root: HloInstruction, comp: HloComputation) -> set[int]:
    """ids of the instructions of `comp` that use `root`, directly or not."""
    users: set[int] = set()
    after = False
    for inst in comp.instructions:
        if inst is root:
            after = True
        elif after and any(op is root or id(op) in users for op in inst.operands):
            users.add(id(inst))
    return users


def _fresh(taken: set[str], base: str) -> str:
    """``base``, or ``base.1``, ``base.2`` ... whichever is not taken; recorded as taken."""
    name, number = base, 0
    while name in taken:
        number += 1
        name = f"{base}.{number}"
    taken.add(name)
    return name


def _reachable(module: HloModule, roots: list[HloComputation]) -> set[HloComputation]:
    """`roots` and the computations they reach through attributes naming computations (quoted strings aside)."""
    by_name = {comp.name: comp for comp in module.computations}
    seen = set(roots)
    todo = list(seen)
    while todo:
        for inst in todo.pop().instructions:
            for value in inst.attributes.values():
                for name in _NAME.findall(_QUOTED.sub("", str(value))):
                    comp = by_name.get(name)
                    if comp is not None and comp not in seen:
                        seen.add(comp)
                        todo.append(comp)
    return seen
