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

Time and memory are linear in the text, whatever it holds: tokens are lexed as
the parser reaches them (an error or the nesting limit stops it early), and
the common long forms (a shape, an operand list, a simple attribute, a
skipped group, a run of literal values) are each taken in one
regular-expression match. Budget: 10 MB of any text parses or fails in under
5 s and 500 MB; texts beyond MAX_TEXT_CHARS are refused up front.
"""

from __future__ import annotations

import re

from ...errors import InvalidTypeError, ResourceError
from . import attributes as attribute_values
from .cursor import CLOSERS, MAX_DEPTH, PUNCTUATION, Cursor
from .ir import HloComputation, HloInstruction, HloModule
from .lexer import (EOF, INT, NAME, NAME_PATTERN, PUNCT, STRING, W_RUN, WORD_END, NAME_RUN, HloParseError, Token,
                    blanks, canonical)
from .literals import literal
from .shape import ELEMENT_TYPES, MAX_RANK, Shape, TupleShape, compatible

__all__ = ["COMPUTATION_ATTRIBUTES", "HloParseError", "MAX_DEPTH", "MAX_TEXT_CHARS", "parse_hlo_module"]

#: The longest HLO text parse_hlo_module takes (64 Mi characters): at the parser's linear rate (about 0.5 s per
#: MB of the slowest shapes of text) that bounds a parse to about half a minute and a few GB.
MAX_TEXT_CHARS = 64 * 2**20

# Attributes whose values name computations (checked to exist after parsing).
COMPUTATION_ATTRIBUTES = frozenset({
    "to_apply", "calls", "condition", "body", "select", "scatter",
    "true_computation", "false_computation", "branch_computations", "called_computations",
})
_STACK_FRAME_SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
# The common long forms, each one match (anything else goes token by token, with its precise errors). A negative
# lookahead after blanks also refuses blanks or '/', for blanks() stops after so many comments:
# an array shape with an optional plain layout, not followed by '{' (which may open an instruction list) ...
_SHAPE_TEXT = r"(?P<type>[a-z][a-z0-9]*)\[(?P<dims>[0-9, ]*)\](?:\{(?P<layout>[0-9,]*)\})?(?!{B}[{\s/])"
_ARRAY_SHAPE = re.compile(blanks("{B}" + _SHAPE_TEXT))
_TUPLE_ELEMENT = {first: re.compile(blanks(("{B}" if first else "{B},{B}") + _SHAPE_TEXT)) for first in (True, False)}
_DIM = re.compile(r" *[0-9]{1,20} *")
# ... an instruction's head: [ROOT] name = array-shape opcode ...
_HEAD = re.compile(blanks(rf"{{B}}(?:(?P<root>ROOT){WORD_END}{{B}})?(?P<name>{NAME_PATTERN}){{B}}={{B}}"
                          r"(?P<type>[a-z][a-z0-9]*)\[(?P<dims>[0-9, ]*)\](?:\{(?P<layout>[0-9,]*)\})?"
                          rf"{{B}}(?P<opcode>{NAME_RUN}{WORD_END})"))
# ... an operand list of bare names ...
_OPEN_OPERANDS = re.compile(blanks(r"{B}\("))
_OPERAND_RUN = {first: re.compile(blanks(("" if first else "{B},") + rf"{{B}}(?P<name>{NAME_PATTERN})"))
                for first in (True, False)}
_CLOSE_OPERANDS = re.compile(blanks(r"{B}\)"))
_FEW_OPERANDS = re.compile(rf"[ \t\r\n\f\v]*\((?P<names>[ \t\r\n\f\v]*(?:{NAME_PATTERN}[ \t\r\n\f\v]*"
                           rf"(?:,[ \t\r\n\f\v]*{NAME_PATTERN}[ \t\r\n\f\v]*){{0,15}})?)\)")
# ... an attribute whose value is a word, a string without escapes or a brace group without comments, escapes,
# names with '%' or inner brackets, and is not followed by a group (which would belong to the value).
_GROUP_TEXT = r"[\t\n\v\f\r !#$&*+,\-.0-9:;<=>?@A-Z\\^_`a-z|~]"
_SIMPLE_ATTRIBUTE = re.compile(blanks(
    r"{B},{B}%?(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*){B}={B}"
    rf"(?P<value>{W_RUN}(?:->{W_RUN}){{0,64}}{WORD_END}|\"[^\"\\\n]*\""
    rf"|\{{{_GROUP_TEXT}*(?:\"[^\"\\\n]*\"{_GROUP_TEXT}*){{0,64}}\}})"
    r"(?!{B}[\[{(\s/])"))
_IRREGULAR_BLANKS = re.compile(r"[\t\n\r\f\v]|  ")  # in a simple value, the only blanks canonical() changes
_MAYBE_COMMA = re.compile(blanks(r"{B}[,\s/]"))  # a ',' may come (or more blanks than one match takes)
_COMPUTATION_HEAD = re.compile(blanks(rf"{{B}}(?:(?P<entry>ENTRY){WORD_END}{{B}})?(?P<name>{NAME_PATTERN}){{B}}(?=\{{)"))
_PARAMETER = re.compile(blanks(rf"{{B}}\({{B}}(?P<number>[0-9]{{1,20}}{WORD_END}){{B}}\)"))
_REFERENCE = re.compile(blanks(r"(?:{B}[{},]){0,256}{B}(?P<name>" + NAME_PATTERN + ")?"))


def parse_hlo_module(text: str) -> HloModule:
    """Parse HLO module text (either dump style) into an HloModule; HloParseError if malformed."""
    if not isinstance(text, str):
        raise InvalidTypeError(f"parse_hlo_module takes str, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise ResourceError(f"parse_hlo_module requires HLO text of at most {MAX_TEXT_CHARS:,} characters, got "
                            f"{len(text):,}; elide large constants ({{...}}) or split the module")
    return _Parser(text).module()


class _Parser(Cursor):
    """The cursor plus one method per rule of the module grammar."""

    def __init__(self, text: str):
        super().__init__(text)
        self.references: dict[str, tuple[int, str]] = {}  # computation name -> its first use (offset, text)
        self.computation_tokens: dict[str, Token] = {}
        self.entry_token: Token | None = None
        self.shapes: dict[tuple, Shape] = {}  # array shapes by their text, made once

    # ----- module structure -------------------------------------------------

    def module(self) -> HloModule:
        """'HloModule' name (',' attribute)* [stack frame index] computation+"""
        self.expect_keyword("HloModule")
        name = self.expect_kind(NAME, "a module name").value
        attributes = self.attributes()
        stack_frame_index = self.stack_frame_index()
        computations = [self.computation()]
        while not self.at_end():
            computations.append(self.computation())
        for used, (offset, text) in self.references.items():
            if used not in self.computation_tokens:
                known = ", ".join(self.computation_tokens)
                self.fail_at(offset, f"the name of a computation in this module ({known})", repr(text))
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
                start = self.mark()
                if section in ("FileNames", "FunctionNames"):
                    self.expect_kind(STRING, "a quoted name")
                elif self.at("{"):
                    self.group()
                else:
                    self.fail(self.peek(), "'{' starting the entry's fields")
                entries.append((number, self.raw(start)))
            index[section] = entries
        return index

    def computation(self) -> HloComputation:
        """['ENTRY'] name [signature] '{' instruction+ '}' (',' attribute)*"""
        head = _COMPUTATION_HEAD.match(self.text, self.last_end)
        plain = head is not None and head.group("name").removeprefix("%") not in self.computation_tokens and not (
            head.group("name") == "ENTRY" and head.group("entry") is None)
        if plain:
            entry = head.group("entry") and Token(NAME, "ENTRY", "ENTRY", *head.span("entry"), self.lexer)
            name_token = Token(NAME, head.group("name"), head.group("name").removeprefix("%"), *head.span("name"),
                               self.lexer)
            self.seek(head.end())  # '{' follows: no signature
        else:
            entry = self.advance() if self.at_keyword("ENTRY") else None
            name_token = self.expect_kind(NAME, "a computation name")
        name = name_token.value
        if name in self.computation_tokens:
            self.fail(name_token, "a new computation name",
                      f"{name!r} (already defined at {self.where(self.computation_tokens[name])})")
        self.computation_tokens[name] = name_token
        signature = self.signature() if not plain and self.at("(") else None
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
        if not self.take(PUNCTUATION["{"]):
            self.expect("{", "'{' starting the instruction list")
        scope: dict[str, tuple[HloInstruction, Token]] = {}
        parameter_tokens: dict[int, Token] = {}
        instructions, root, root_token = [], None, None
        while True:
            head = self.plain_head(scope)
            if head is None:
                if instructions and self.take(PUNCTUATION["}"]):
                    break
                if self.at("}"):
                    if not instructions:
                        self.fail(self.peek(), "an instruction")
                    self.advance()
                    break
                if self.peek().kind == EOF:
                    self.fail(self.peek(), "an instruction or '}'")
                marker = self.advance() if self.at_keyword("ROOT") else None
                head = self.head(scope)
            else:
                marker, head = head[0], head[1:]
            inst = self.instruction(scope, parameter_tokens, *head)
            if marker is not None:
                if root_token is not None:
                    self.fail(marker, f"one ROOT per computation (the first is at {self.where(root_token)})",
                              "a second ROOT")
                root, root_token = inst, marker
            instructions.append(inst)
        for number, token in parameter_tokens.items():
            if number >= len(parameter_tokens):
                self.fail(token, f"parameter numbers 0..{len(parameter_tokens) - 1}, one per parameter")
        return instructions, root or instructions[-1]

    def plain_head(self, scope: dict) -> tuple | None:
        """['ROOT'] name '=' shape opcode in one match when plain: (ROOT token or None, name token, shape,
        opcode); None (nothing consumed) for anything else, the token rules then read it."""
        match = _HEAD.match(self.text, self.last_end)
        if match is None or match.group("name") == "ROOT" and match.group("root") is None:
            return None
        text = match.group("name")
        name = text.removeprefix("%")
        shape = self.plain_shape(match)
        if name in scope or shape is None:
            return None
        marker = None if match.group("root") is None else Token(NAME, "ROOT", "ROOT", match.start("root"),
                                                                 match.end("root"), self.lexer)
        self.seek(match.end())
        return marker, Token(NAME, text, name, *match.span("name"), self.lexer), shape, match.group("opcode")

    def head(self, scope: dict) -> tuple[Token, Shape | TupleShape, Token]:
        """name '=' shape opcode, token by token: (name token, shape, opcode token)."""
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
        return name_token, shape, opcode.value

    def instruction(self, scope: dict, parameter_tokens: dict[int, Token], name_token: Token,
                    shape: Shape | TupleShape, opcode: str) -> HloInstruction:
        """(after the head) '(' operands ')' (',' attribute)*"""
        name = name_token.value
        operands, payload = [], None
        if opcode not in ("parameter", "constant") and self.operand_names(scope, operands):
            pass
        elif opcode == "parameter":
            if plain := _PARAMETER.match(self.text, self.last_end):
                token = Token(INT, plain.group("number"), plain.group("number"), *plain.span("number"), self.lexer)
                number = int(token.text)
                self.seek(plain.end() - 1)  # the ')' is left to close the list
            else:
                self.expect("(", "'(' after the opcode")
                token = self.peek()
                number = self.int_value("a parameter number", minimum=0)
            if number in parameter_tokens:
                self.fail(token, "a parameter number not used before in this computation",
                          f"{number} (already used at {self.where(parameter_tokens[number])})")
            parameter_tokens[number] = token
            payload = str(number)
        elif opcode == "constant":
            self.expect("(", "'(' after the opcode")
            start = self.mark()
            literal(self, shape)
            payload = self.raw(start)
        else:
            self.expect("(", "'(' after the opcode")
            if not self.at(")"):
                operands.append(self.operand(scope))
                while self.eat(","):
                    operands.append(self.operand(scope))
        if not self.take(PUNCTUATION[")"]):
            self.expect(")", "',' or ')' after the operands")
        attributes = self.attributes()
        inst = HloInstruction(name, opcode, shape, operands, attributes, payload=payload)
        scope[name] = (inst, name_token)
        return inst

    def operand_names(self, scope: dict, operands: list) -> bool:
        """'(' name (',' name)* ')' of defined names, a run of names per match; False (nothing consumed) else."""
        if few := _FEW_OPERANDS.match(self.text, self.last_end):  # the common case, blanks without comments
            names = [name.strip().removeprefix("%") for name in few.group("names").split(",") if name.strip()]
            closed = few
        else:
            opened = _OPEN_OPERANDS.match(self.text, self.last_end)
            if opened is None:
                return False
            names, pos = [], opened.end()
            while run := _OPERAND_RUN[not names].match(self.text, pos):
                names.append(run.group("name").removeprefix("%"))
                pos = run.end()
            closed = _CLOSE_OPERANDS.match(self.text, pos)
        if closed is None or not all(name in scope for name in names):
            return False
        operands.extend(scope[name][0] for name in names)
        self.seek(closed.end() - 1)  # the ')' is left to close the list
        return True

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
        while True:
            if simple := _SIMPLE_ATTRIBUTE.match(self.text, self.last_end):
                key, value = simple.group("key", "value")
                if key not in attributes:
                    if key in COMPUTATION_ATTRIBUTES:
                        self.computation_references(simple.start("value"), simple.end("value"))
                    irregular = value[0] == "{" and _IRREGULAR_BLANKS.search(value)
                    attributes[key] = canonical(value) if irregular else value
                    self.seek(simple.end())
                    continue
            if not _MAYBE_COMMA.match(self.text, self.last_end) or not self.eat(","):
                return attributes
            key = self.expect_kind(NAME, "an attribute name")
            if key.value in attributes:
                self.fail(key, "each attribute at most once", f"a second {key.value}=")
            self.expect("=", f"'=' after {key.value}")
            start = self.mark()
            attribute_values.skip_value(self)
            if key.value in COMPUTATION_ATTRIBUTES:
                self.computation_references(start, self.last_end)
            attributes[key.value] = self.raw(start)

    def computation_references(self, start: int, end: int) -> None:
        """A value such as ``%add.1`` or ``{%a, %b}`` (source offsets): record each name, reject anything else."""
        pos = start
        while pos < end:
            match = _REFERENCE.match(self.text, pos, end)
            if match.end() == pos:
                self.fail(self.lexer.token(pos), "a computation name")
            if name := match.group("name"):
                self.references.setdefault(name.removeprefix("%"), (match.start("name"), name))
            pos = match.end()

    # ----- shapes -----------------------------------------------------------

    def shape(self) -> Shape | TupleShape:
        """element_type '[' dims ']' [layout] | '(' [shape (',' shape)*] ')'"""
        if fast := self.array_shape():
            return fast
        token = self.peek()
        if self.at("("):
            with self.nested(token):
                self.advance()
                elements = []
                while True:
                    plain = _TUPLE_ELEMENT[not elements].match(self.text, self.last_end)
                    if plain and (element := self.plain_shape(plain)):  # f32[2]{0} or , f32[2]{0}: one match
                        elements.append(element)
                        self.seek(plain.end())
                    elif elements and self.eat(",") or not elements and not self.at(")"):
                        elements.append(self.shape())
                    else:
                        break
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
                if len(dims) == MAX_RANK:  # refused as it is read, not after millions of dimensions
                    self.fail(self.peek(), f"at most {MAX_RANK} dimensions (TensorFlow's limit) before ']'")
                dims.append(self.int_value("a dimension size", minimum=0))
        self.expect("]", "',' or ']' in the dimensions")
        layout, suffix = None, None
        # A '{' is a layout only if it looks like one: after a signature's result
        # shape, '{' opens the instruction list instead.
        if self.at("{") and (self.peek(1).kind == INT or self.at(":", 1) or self.at("}", 1)):
            layout, suffix = self.layout(len(dims))
        return Shape(token.text, tuple(dims), layout, suffix)

    def array_shape(self) -> Shape | None:
        """A plain array shape such as ``f32[1,2]{1,0}``, in one match; None (nothing consumed) otherwise."""
        match = _ARRAY_SHAPE.match(self.text, self.last_end)
        shape = None if match is None else self.plain_shape(match)
        if shape is not None:
            self.seek(match.end())
        return shape

    def plain_shape(self, match: re.Match) -> Shape | None:
        """The Shape of a match's type, dims and layout groups (made once per text); None if it is not one."""
        key = match.group("type", "dims", "layout")
        shape = self.shapes.get(key)
        if shape is None:
            element_type, dims, layout = key
            if dims.count(",") >= MAX_RANK:  # the token walk refuses it with its position
                return None
            dims = dims.split(",") if dims.strip() else []
            layout = None if layout is None else layout.split(",") if layout else []
            if element_type not in ELEMENT_TYPES or not all(map(_DIM.fullmatch, dims + (layout or []))):
                return None
            dims, layout = tuple(map(int, dims)), None if layout is None else tuple(map(int, layout))
            if layout is not None and sorted(layout) != list(range(len(dims))):
                return None
            shape = self.shapes[key] = Shape(element_type, dims, layout)
        return shape

    def layout(self, rank: int) -> tuple[tuple[int, ...], str | None]:
        """'{' minor_to_major [':' tiling and memory space, kept raw] '}'"""
        start = self.mark()
        opener = self.advance()
        minor_to_major = []
        if self.peek().kind == INT:
            minor_to_major.append(self.int_value("a dimension number", minimum=0))
            while self.eat(","):
                minor_to_major.append(self.int_value("a dimension number", minimum=0))
        suffix = None
        if self.eat(":"):
            suffix_start = self.mark()
            while not self.at("}"):
                token = self.peek()
                if token.kind == EOF or (token.kind == PUNCT and token.text in CLOSERS):
                    self.fail(token, "'}' closing the layout")
                if self.at_opener():
                    self.group()
                else:
                    self.advance()
            suffix = self.raw(suffix_start)
            if not suffix:
                self.fail(self.peek(), "layout details (such as T(8,128)) after ':'")
        self.expect("}", "',' or '}' in the layout")
        if sorted(minor_to_major) != list(range(rank)):
            self.fail(opener, f"a layout listing each of the {rank} dimensions once", self.raw(start))
        return tuple(minor_to_major), suffix
