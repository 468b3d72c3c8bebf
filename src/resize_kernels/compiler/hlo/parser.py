"""Recursive-descent parser for XLA's HLO text format: modules, computations, instructions and shapes.

Accepts both dump styles: old torch_xla dumps (``%name``, operand shapes
spelled out, computation signatures, metadata) and current XLA / JAX dumps
(bare names, operands by name only, called computations before ENTRY).
Attribute values are checked only for balance and kept as raw text; the
instruction accessors read them on demand with the value grammar of
attributes.py, which also parses a constant's literal here. The parser is a
token Cursor (cursor.py) with one method per rule; nesting of tuple shapes,
literals and brace groups is bounded by the cursor's depth counter
(MAX_DEPTH), so no input reaches Python's recursion limit. Every malformed
input raises HloParseError.
"""

from __future__ import annotations

from ...errors import InvalidTypeError
from . import attributes as attribute_values
from .cursor import CLOSERS, MAX_DEPTH, Cursor
from .ir import HloComputation, HloInstruction, HloModule
from .lexer import EOF, INT, NAME, PUNCT, STRING, HloParseError, Token
from .shape import ELEMENT_TYPES, Shape, TupleShape, compatible

__all__ = ["COMPUTATION_ATTRIBUTES", "HloParseError", "MAX_DEPTH", "parse_hlo_module"]

# Attributes whose values name computations (checked to exist after parsing).
COMPUTATION_ATTRIBUTES = frozenset({
    "to_apply", "calls", "condition", "body", "select", "scatter",
    "true_computation", "false_computation", "branch_computations", "called_computations",
})
_STACK_FRAME_SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def parse_hlo_module(text: str) -> HloModule:
    """Parse HLO module text (either dump style) into an HloModule; HloParseError if malformed."""
    if not isinstance(text, str):
        raise InvalidTypeError(f"parse_hlo_module takes str, got {type(text).__name__}")
    return _Parser(text).module()


class _Parser(Cursor):
    """The cursor plus one method per rule of the module grammar."""

    def __init__(self, text: str):
        super().__init__(text)
        self.references: list[Token] = []  # computation names used by attributes
        self.computation_tokens: dict[str, Token] = {}
        self.entry_token: Token | None = None

    # ----- module structure -------------------------------------------------

    def module(self) -> HloModule:
        """'HloModule' name (',' attribute)* [stack frame index] computation+"""
        self.expect_keyword("HloModule")
        name = self.expect_kind(NAME, "a module name").value
        attributes = self.attributes()
        stack_frame_index = self.stack_frame_index()
        computations = [self.computation()]
        while self.peek().kind != EOF:
            computations.append(self.computation())
        for token in self.references:
            if token.value not in self.computation_tokens:
                known = ", ".join(self.computation_tokens)
                self.fail(token, f"the name of a computation in this module ({known})")
        if self.entry_token is None:
            self.fail(self.peek(), "an ENTRY computation")
        return HloModule(name, computations, attributes, stack_frame_index=stack_frame_index)

    def stack_frame_index(self) -> dict[str, list[tuple[int, str]]] | None:
        """The optional FileNames / FunctionNames / FileLocations / StackFrames sections, kept raw."""
        if not self.at_keyword(_STACK_FRAME_SECTIONS[0]):
            return None
        index = {}
        for section in _STACK_FRAME_SECTIONS:
            self.expect_keyword(section)
            entries = []
            while self.peek().kind == INT:
                number = self.int_value("an entry number")
                start = self.pos
                if section in ("FileNames", "FunctionNames"):
                    self.expect_kind(STRING, "a quoted name")
                elif self.at("{"):
                    self.group()
                else:
                    self.fail(self.peek(), "'{' starting the entry's fields")
                entries.append((number, self.raw(start, self.pos)))
            index[section] = entries
        return index

    def computation(self) -> HloComputation:
        """['ENTRY'] name [signature] '{' instruction+ '}' (',' attribute)*"""
        entry = self.advance() if self.at_keyword("ENTRY") else None
        name_token = self.expect_kind(NAME, "a computation name")
        name = name_token.value
        if name in self.computation_tokens:
            self.fail(name_token, "a new computation name",
                      f"{name!r} (already defined at {self.where(self.computation_tokens[name])})")
        self.computation_tokens[name] = name_token
        signature = self.signature() if self.at("(") else None
        instructions, root = self.instruction_list()
        attributes = self.attributes()
        if signature is not None and not compatible(signature[1], root.shape):
            self.fail(signature[0], f"the result shape of root {root.name} ({root.shape})", str(signature[1]))
        if entry is not None:
            if self.entry_token is not None:
                self.fail(entry, f"one ENTRY computation (the first is at {self.where(self.entry_token)})",
                          "a second ENTRY")
            self.entry_token = entry
        return HloComputation(name, instructions, is_entry=entry is not None, root=root, attributes=attributes)

    def signature(self) -> tuple[Token, Shape | TupleShape]:
        """'(' [name ':' shape (',' name ':' shape)*] ')' '->' shape; returns the result shape and its token."""
        self.advance()
        if not self.at(")"):
            while True:
                self.expect_kind(NAME, "a parameter name")
                self.expect(":", "':' after the parameter name")
                self.shape()
                if not self.eat(","):
                    break
        self.expect(")", "',' or ')' in the parameter list")
        self.expect("->", "'->' before the result shape")
        token = self.peek()
        return token, self.shape()

    def instruction_list(self) -> tuple[list[HloInstruction], HloInstruction]:
        """'{' instruction+ '}'; returns the instructions and the root (ROOT-marked, else the last)."""
        self.expect("{", "'{' starting the instruction list")
        scope: dict[str, tuple[HloInstruction, Token]] = {}
        parameter_tokens: dict[int, Token] = {}
        instructions, root, root_token = [], None, None
        while not self.at("}"):
            if self.peek().kind == EOF:
                self.fail(self.peek(), "an instruction or '}'")
            marker = self.advance() if self.at_keyword("ROOT") else None
            inst = self.instruction(scope, parameter_tokens)
            if marker is not None:
                if root_token is not None:
                    self.fail(marker, f"one ROOT per computation (the first is at {self.where(root_token)})",
                              "a second ROOT")
                root, root_token = inst, marker
            instructions.append(inst)
        if not instructions:
            self.fail(self.peek(), "an instruction")
        self.advance()
        for number, token in parameter_tokens.items():
            if number >= len(parameter_tokens):
                self.fail(token, f"parameter numbers 0..{len(parameter_tokens) - 1}, one per parameter")
        return instructions, root or instructions[-1]

    def instruction(self, scope: dict, parameter_tokens: dict[int, Token]) -> HloInstruction:
        """name '=' shape opcode '(' operands ')' (',' attribute)*"""
        name_token = self.expect_kind(NAME, "an instruction name")
        name = name_token.value
        if name in scope:
            self.fail(name_token, "a new instruction name",
                      f"{name!r} (already defined at {self.where(scope[name][1])})")
        self.expect("=", "'=' after the instruction name")
        shape = self.shape()
        opcode = self.peek()
        if opcode.kind != NAME or opcode.text != opcode.value:
            self.fail(opcode, "an opcode")
        self.advance()
        self.expect("(", "'(' after the opcode")
        operands, payload = [], None
        if opcode.value == "parameter":
            token = self.peek()
            number = self.int_value("a parameter number", minimum=0)
            if number in parameter_tokens:
                self.fail(token, "a parameter number not used before in this computation",
                          f"{number} (already used at {self.where(parameter_tokens[number])})")
            parameter_tokens[number] = token
            payload = str(number)
        elif opcode.value == "constant":
            start = self.pos
            attribute_values.literal(self, shape)
            payload = self.raw(start, self.pos)
        elif not self.at(")"):
            operands.append(self.operand(scope))
            while self.eat(","):
                operands.append(self.operand(scope))
        self.expect(")", "',' or ')' after the operands")
        attributes = self.attributes()
        inst = HloInstruction(name, opcode.value, shape, operands, attributes, payload=payload)
        scope[name] = (inst, name_token)
        return inst

    def operand(self, scope: dict) -> HloInstruction:
        """[shape] name -- old dumps spell out the operand's shape, which must then match."""
        shape_token = self.peek()
        declared = None
        if self.at("(") or (shape_token.kind == NAME and self.at("[", 1)):
            declared = self.shape()
        token = self.expect_kind(NAME, "an operand name")
        if token.value not in scope:
            self.fail(token, "the name of an instruction defined earlier in this computation")
        inst = scope[token.value][0]
        if declared is not None and not compatible(declared, inst.shape):
            self.fail(shape_token, f"the shape of {inst.name} ({inst.shape})", str(declared))
        return inst

    def attributes(self) -> dict[str, str]:
        """(',' name '=' value)*, values kept as raw text; computation references recorded for checking."""
        attributes = {}
        while self.eat(","):
            key = self.expect_kind(NAME, "an attribute name")
            if key.value in attributes:
                self.fail(key, "each attribute at most once", f"a second {key.value}=")
            self.expect("=", f"'=' after {key.value}")
            start = self.pos
            attribute_values.skip_value(self)
            if key.value in COMPUTATION_ATTRIBUTES:
                self.computation_references(start, self.pos)
            attributes[key.value] = self.raw(start, self.pos)
        return attributes

    def computation_references(self, start: int, end: int) -> None:
        """A value such as ``%add.1`` or ``{%a, %b}``: record each name, reject anything else."""
        for token in self.tokens[start:end]:
            if token.kind == NAME:
                self.references.append(token)
            elif not (token.kind == PUNCT and token.text in "{},"):
                self.fail(token, "a computation name")

    # ----- shapes -----------------------------------------------------------

    def shape(self) -> Shape | TupleShape:
        """element_type '[' dims ']' [layout] | '(' [shape (',' shape)*] ')'"""
        token = self.peek()
        if self.at("("):
            with self.nested(token):
                self.advance()
                elements = []
                if not self.at(")"):
                    elements.append(self.shape())
                    while self.eat(","):
                        elements.append(self.shape())
                self.expect(")", "',' or ')' in the tuple shape")
            return TupleShape(elements)
        if token.kind != NAME or token.text not in ELEMENT_TYPES:
            self.fail(token, "a shape (an element type such as f32, or '(' for a tuple)")
        self.advance()
        self.expect("[", "'[' after the element type")
        dims = []
        if not self.at("]"):
            dims.append(self.int_value("a dimension size", minimum=0))
            while self.eat(","):
                dims.append(self.int_value("a dimension size", minimum=0))
        self.expect("]", "',' or ']' in the dimensions")
        layout, suffix = None, None
        # A '{' is a layout only if it looks like one: after a signature's result
        # shape, '{' opens the instruction list instead.
        if self.at("{") and (self.peek(1).kind == INT or self.at(":", 1) or self.at("}", 1)):
            layout, suffix = self.layout(len(dims))
        return Shape(token.text, tuple(dims), layout, suffix)

    def layout(self, rank: int) -> tuple[tuple[int, ...], str | None]:
        """'{' minor_to_major [':' tiling and memory space, kept raw] '}'"""
        start = self.pos
        opener = self.advance()
        minor_to_major = []
        if self.peek().kind == INT:
            minor_to_major.append(self.int_value("a dimension number", minimum=0))
            while self.eat(","):
                minor_to_major.append(self.int_value("a dimension number", minimum=0))
        suffix = None
        if self.eat(":"):
            suffix_start = self.pos
            while not self.at("}"):
                token = self.peek()
                if token.kind == EOF or (token.kind == PUNCT and token.text in CLOSERS):
                    self.fail(token, "'}' closing the layout")
                if self.at_opener():
                    self.group()
                else:
                    self.advance()
            if self.pos == suffix_start:
                self.fail(self.peek(), "layout details (such as T(8,128)) after ':'")
            suffix = self.raw(suffix_start, self.pos)
        self.expect("}", "',' or '}' in the layout")
        if sorted(minor_to_major) != list(range(rank)):
            self.fail(opener, f"a layout listing each of the {rank} dimensions once", self.raw(start, self.pos))
        return tuple(minor_to_major), suffix
