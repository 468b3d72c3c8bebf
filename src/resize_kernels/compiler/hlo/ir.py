"""HLO modules, computations and instructions: plain mutable objects for compiler passes.

An attribute value is raw text as parsed (``inst.attributes["dimensions"] ==
"{0,3,2,1}"``), so unknown ones survive a round trip, or a typed value a pass
set (``String``, ``IntList``, ``Window`` from attributes.py) whose ``str()`` is
its canonical HLO text. The typed accessors (``inst.dimensions``,
``inst.window``, ``inst.kernel_name`` ...) return a typed value as it is and
parse raw text on demand, raising ValueError when an attribute is absent or
malformed. A payload (what a parameter or constant prints between its
parentheses) is likewise raw text, or an int parameter number, or a
``Literal``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import InvalidValueError
from .attributes import (
    IntList,
    Literal,
    String,
    Window,
    parse_int,
    parse_int_list,
    parse_literal,
    parse_name,
    parse_string,
    parse_window,
)
from .lexer import IDENTIFIER, HloParseError, printable
from .printer import print_hlo_module
from .shape import Shape, TupleShape, leaf_shapes

#: An attribute value: raw text, or a typed value that prints as its canonical text.
AttributeValue = str | String | IntList | Window | int


def _excerpt(text: str, limit: int = 80) -> str:
    """repr() of `text`, cut to about `limit` characters: an error message quotes a value, not a megabyte."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text):,} characters)"


def _check_identifier(value: object, what: str) -> None:
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        raise InvalidValueError(f"{what} must match [A-Za-z_][A-Za-z0-9_.-]*, got {value!r}")


@dataclass(frozen=True)
class Result:
    """One array an instruction produces (a tuple-shaped instruction produces one per leaf)."""

    shape: Shape

    @property
    def dtype(self) -> str:
        """The element type, e.g. 'f32'."""
        return self.shape.element_type

    @property
    def access_shape(self) -> tuple[int, ...]:
        """The logical dims, e.g. (1, 38, 59, 1280)."""
        return self.shape.dims


class HloInstruction:
    """One HLO instruction.

    `operands` are the instruction objects themselves. `payload` is what is
    printed between the parentheses instead of operand names: the number of a
    ``parameter`` (text or int) and the literal of a ``constant`` (text or a
    Literal); None otherwise. Any opcode string is accepted, so passes may
    introduce their own (e.g. "InternalNativeNkiKernel").
    """

    def __init__(self, name: str, opcode: str, shape: Shape | TupleShape,
                 operands: Iterable[HloInstruction], attributes: dict[str, AttributeValue] | None = None,
                 *, payload: str | int | Literal | None = None):
        _check_identifier(name, "instruction name")
        _check_identifier(opcode, "opcode")
        if not isinstance(shape, (Shape, TupleShape)):
            raise InvalidValueError(f"shape must be a Shape or TupleShape, got {shape!r}")
        self.name = name
        self.opcode = opcode
        self.shape = shape
        self.operands = list(operands)
        self.attributes = dict(attributes or {})
        self.payload = payload
        self.parent: HloComputation | None = None

    def __repr__(self) -> str:
        return f"<HloInstruction {self.name} = {self.shape} {self.opcode}>"

    @property
    def is_root(self) -> bool:
        return self.parent is not None and self.parent.root is self

    @property
    def results(self) -> list[Result]:
        """The arrays this instruction produces, tuple shapes flattened in order."""
        return [Result(leaf) for leaf in leaf_shapes(self.shape)]

    def _parse(self, what: str, value, parse):
        """Parse `value` (of `what`; raw text, or a value printed as text) with a value parser; errors as a clear
        ValueError."""
        if value is None:
            raise InvalidValueError(f"{self.opcode} {self.name!r} has no {what}")
        text = value if isinstance(value, str) else str(value)
        try:
            return parse(text)
        except HloParseError as error:
            raise InvalidValueError(printable(f"{self.opcode} {self.name!r}: malformed {what} {_excerpt(text)}: "
                                              f"expected {error.expected}, got {error.got}")) from None

    def _attribute(self, key: str, parse, typed: type | tuple[type, ...] = ()):
        """Attribute ``key``: as it is when it is a ``typed`` value, else parsed from its text."""
        value = self.attributes.get(key)
        if typed and isinstance(value, typed) and not isinstance(value, bool):
            return value
        return self._parse(f"{key}=", value, parse)

    def _string(self, key: str) -> str:
        """The unescaped value of a String attribute (typed, or quoted text)."""
        value = self.attributes.get(key)
        return value.value if isinstance(value, String) else self._attribute(key, parse_string)

    @property
    def dimensions(self) -> IntList:
        """``dimensions={0,3,2,1}`` of transpose, broadcast, reduce, concatenate... (a tuple of ints)."""
        return self._attribute("dimensions", parse_int_list, IntList)

    @property
    def window(self) -> Window:
        """``window={size=.. stride=.. pad=..}``, every field filled in (``window.size``, ``window.pad`` ...)."""
        return self._attribute("window", parse_window, Window)

    @property
    def to_apply(self) -> HloComputation:
        """The computation named by ``to_apply=``, looked up in the owning module."""
        name = self._attribute("to_apply", parse_name)
        module = self.parent.module if self.parent is not None else None
        if module is None:
            raise InvalidValueError(f"{self.opcode} {self.name!r} is not in a module, so to_apply={name} cannot be resolved")
        return module.computation(name)

    @property
    def custom_call_target(self) -> str:
        return self._string("custom_call_target")

    @property
    def kernel_name(self) -> str:
        """``kernel_name="ResizeNearest"`` of an InternalNativeNkiKernel: the internal-kernel registry key."""
        return self._string("kernel_name")

    @property
    def backend_config(self) -> str:
        """The unescaped string (``backend_config="\\"00\\""`` gives '"00"'); a JSON-style {...} value as is."""
        text = self.attributes.get("backend_config")
        if isinstance(text, str) and text.startswith("{"):
            return text
        return self._string("backend_config")

    @property
    def parameter_number(self) -> int:
        if self.opcode != "parameter":
            raise InvalidValueError(f"{self.opcode} {self.name!r} is not a parameter")
        if isinstance(self.payload, int) and not isinstance(self.payload, bool):
            return self.payload
        return self._parse("parameter number", self.payload, parse_int)

    @property
    def tuple_index(self) -> int:
        """``index=`` of a get-tuple-element."""
        return self._attribute("index", parse_int, int)

    @property
    def literal(self) -> np.ndarray | tuple:
        """The value of a constant as a numpy array of the shape's dtype (a tuple of them for tuple shapes)."""
        if self.opcode != "constant":
            raise InvalidValueError(f"{self.opcode} {self.name!r} is not a constant")
        if self.payload is None:
            raise InvalidValueError(f"constant {self.name!r} has no literal")
        if isinstance(self.payload, Literal) and self.payload.shape == self.shape:
            return self.payload.value
        text = str(self.payload)
        try:
            return parse_literal(text, self.shape)
        except HloParseError as error:
            raise InvalidValueError(printable(f"constant {self.name!r}: malformed literal {_excerpt(text)} for "
                                              f"{self.shape}: expected {error.expected}, got {error.got}")) from None
        except ValueError as error:  # well-formed but unusable, e.g. elided as {...}
            raise InvalidValueError(f"constant {self.name!r}: {error}") from None


class HloComputation:
    """A named list of instructions with a root; the entry computation has ``is_entry``.

    The root is the instruction marked ROOT, or the last one when none is.
    """

    def __init__(self, name: str, instructions: Iterable[HloInstruction] = (), *, is_entry: bool = False,
                 root: HloInstruction | None = None, attributes: dict[str, str] | None = None):
        _check_identifier(name, "computation name")
        self.name = name
        self.is_entry = is_entry
        self.attributes = dict(attributes or {})
        self.module: HloModule | None = None
        self.instructions: list[HloInstruction] = []
        self._root: HloInstruction | None = None
        names = set()
        for inst in instructions:
            if inst.name in names:
                raise InvalidValueError(f"computation {name!r} has two instructions named {inst.name!r}")
            names.add(inst.name)
            self._adopt(inst)
            self.instructions.append(inst)
        if root is not None:
            self.root = root

    def __repr__(self) -> str:
        return f"<HloComputation {self.name} ({len(self.instructions)} instructions)>"

    @property
    def root(self) -> HloInstruction:
        if self._root is not None:
            return self._root
        if not self.instructions:
            raise InvalidValueError(f"computation {self.name!r} has no instructions")
        return self.instructions[-1]

    @root.setter
    def root(self, inst: HloInstruction) -> None:
        self._index(inst)
        self._root = inst

    @property
    def parameters(self) -> list[HloInstruction]:
        """The parameter instructions, ordered by parameter number."""
        params = [inst for inst in self.instructions if inst.opcode == "parameter"]
        return sorted(params, key=lambda inst: inst.parameter_number)

    def instruction(self, name: str) -> HloInstruction:
        """The instruction called `name` (ValueError if there is none)."""
        for inst in self.instructions:
            if inst.name == name:
                return inst
        raise InvalidValueError(f"computation {self.name!r} has no instruction {name!r}")

    def add_instruction(self, inst: HloInstruction, before: HloInstruction | None = None) -> HloInstruction:
        """Insert `inst` before `before` (or at the end); its name must be new here."""
        if any(other.name == inst.name for other in self.instructions):
            raise InvalidValueError(f"computation {self.name!r} already has an instruction named {inst.name!r}")
        self._adopt(inst)
        index = len(self.instructions) if before is None else self._index(before)
        self.instructions.insert(index, inst)
        return inst

    def replace_instruction(self, old: HloInstruction, new: HloInstruction) -> HloInstruction:
        """Put `new` where `old` was and make every user of `old` (and the root) use `new`.

        `new` may already be in the computation (added before `old` by a pass
        that expands one instruction into several); then `old` is just removed.
        """
        index = self._index(old)
        if new is old:
            return new
        if any(operand is old for operand in new.operands):
            raise InvalidValueError(f"{new.name!r} uses {old.name!r}, so it cannot replace it")
        was_root = self.root is old
        if any(inst is new for inst in self.instructions):
            del self.instructions[index]
        else:
            if any(inst.name == new.name and inst is not old for inst in self.instructions):
                raise InvalidValueError(f"computation {self.name!r} already has an instruction named {new.name!r}")
            self._adopt(new)
            self.instructions[index] = new
        old.parent = None
        for inst in self.instructions:
            inst.operands = [new if operand is old else operand for operand in inst.operands]
        if was_root:
            self._root = new
        return new

    def expand(self, expansions: Mapping[HloInstruction, Sequence[HloInstruction]]) -> None:
        """Replace each key by its new instructions, in order, where it was; the last takes its place (users, root).

        One pass over the computation however many instructions are replaced
        (replace_instruction is one pass per call), so a pass lowering every
        call of a large module stays linear. The names must be new, except that
        a key's name is free once it is gone. A new instruction may use another
        key (a chain of replaced calls): it gets that key's replacement.
        """
        replaced = {id(old): news[-1] for old, news in expansions.items() if news}
        if len(replaced) != len(expansions):
            raise InvalidValueError("expand() replaces each instruction by at least one new instruction")
        names = {inst.name for inst in self.instructions if id(inst) not in replaced}
        found, instructions = 0, []
        for inst in self.instructions:
            if id(inst) not in replaced:
                instructions.append(inst)
                continue
            found += 1
            for new in expansions[inst]:
                if new.name in names:
                    raise InvalidValueError(f"computation {self.name!r} already has an instruction named {new.name!r}")
                if any(operand is inst for operand in new.operands):
                    raise InvalidValueError(f"{new.name!r} uses the instruction it replaces, so it cannot replace it")
                names.add(new.name)
                instructions.append(new)
        if found != len(expansions):
            raise InvalidValueError(f"expand() replaces instructions of computation {self.name!r} only")
        for old, news in expansions.items():
            old.parent = None
            for new in news:
                self._adopt(new)
        for inst in instructions:
            if any(id(operand) in replaced for operand in inst.operands):
                inst.operands = [replaced.get(id(operand), operand) for operand in inst.operands]
        if self._root is not None and id(self._root) in replaced:
            self._root = replaced[id(self._root)]
        self.instructions = instructions

    def _adopt(self, inst: HloInstruction) -> None:
        if inst.parent is not None:
            raise InvalidValueError(f"instruction {inst.name!r} already belongs to computation {inst.parent.name!r}")
        inst.parent = self

    def _index(self, inst: HloInstruction) -> int:
        for index, candidate in enumerate(self.instructions):
            if candidate is inst:
                return index
        raise InvalidValueError(f"instruction {getattr(inst, 'name', inst)!r} is not in computation {self.name!r}")


class HloModule:
    """An HLO module: header attributes (raw text) and computations in file order, one of them ENTRY.

    `stack_frame_index` keeps the optional FileNames / FunctionNames /
    FileLocations / StackFrames sections of newer dumps as
    {section: [(id, raw value)]}, so that they print back.
    """

    def __init__(self, name: str, computations: Iterable[HloComputation] = (),
                 attributes: dict[str, str] | None = None,
                 *, stack_frame_index: dict[str, list[tuple[int, str]]] | None = None):
        _check_identifier(name, "module name")
        self.name = name
        self.attributes = dict(attributes or {})
        self.stack_frame_index = stack_frame_index
        self.computations: list[HloComputation] = []
        names, entries = set(), 0
        for comp in computations:  # _add's checks, with a set: linear in the number of computations
            if comp.name in names:
                raise InvalidValueError(f"module {self.name!r} already has a computation named {comp.name!r}")
            if comp.is_entry and entries:
                raise InvalidValueError(f"module {self.name!r} already has an ENTRY computation")
            if comp.module is not None:
                raise InvalidValueError(f"computation {comp.name!r} already belongs to module {comp.module.name!r}")
            names.add(comp.name)
            entries += comp.is_entry
            comp.module = self
            self.computations.append(comp)

    def __repr__(self) -> str:
        return f"<HloModule {self.name} ({len(self.computations)} computations)>"

    def __str__(self) -> str:
        return print_hlo_module(self)

    @property
    def entry(self) -> HloComputation:
        for comp in self.computations:
            if comp.is_entry:
                return comp
        raise InvalidValueError(f"module {self.name!r} has no ENTRY computation")

    def computation(self, name: str) -> HloComputation:
        """The computation called `name`; ValueError naming the known ones otherwise."""
        for comp in self.computations:
            if comp.name == name:
                return comp
        known = ", ".join(comp.name for comp in self.computations) or "none"
        raise InvalidValueError(f"module {self.name!r} has no computation {name!r} (known: {known})")

    def add_computation(self, comp: HloComputation) -> HloComputation:
        """Add a computation (e.g. the add region of a new reduce-window) before the entry, as XLA orders them."""
        index = next((i for i, c in enumerate(self.computations) if c.is_entry), len(self.computations))
        self._add(comp, index)
        return comp

    def _add(self, comp: HloComputation, index: int) -> None:
        if any(other.name == comp.name for other in self.computations):
            raise InvalidValueError(f"module {self.name!r} already has a computation named {comp.name!r}")
        if comp.module is not None:
            raise InvalidValueError(f"computation {comp.name!r} already belongs to module {comp.module.name!r}")
        if comp.is_entry and any(other.is_entry for other in self.computations):
            raise InvalidValueError(f"module {self.name!r} already has an ENTRY computation")
        comp.module = self
        self.computations.insert(index, comp)
