"""A cursor over HLO tokens: look ahead, consume, fail with a positioned HloParseError.

Both grammars sit on it: the attribute-value grammar (attributes.py) and the
module / computation / instruction / shape grammar (parser.py). It knows no
HLO rule itself beyond balanced brackets: ``group`` skips one balanced (), []
or {} group, and ``nested`` bounds how deep any rule may nest (MAX_DEPTH), so
no input reaches Python's recursion limit.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import NoReturn

from .lexer import EOF, INT, NAME, PUNCT, Lexer, Token

MAX_DEPTH = 64
OPENERS = {"{": "}", "[": "]", "(": ")"}
CLOSERS = frozenset(OPENERS.values())
_MAX_INT_DIGITS = 20  # enough for any 64-bit value; keeps int() away from huge strings


class Cursor:
    """The tokens of one text and a position in them."""

    def __init__(self, text: str):
        self.lexer = Lexer(text)
        self.tokens = self.lexer.tokenize()
        self.pos = 0
        self.depth = 0

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.tokens[self.pos]
        if token.kind != EOF:
            self.pos += 1
        return token

    def at(self, punct: str, ahead: int = 0) -> bool:
        token = self.peek(ahead)
        return token.kind == PUNCT and token.text == punct

    def at_keyword(self, word: str, ahead: int = 0) -> bool:
        token = self.peek(ahead)
        return token.kind == NAME and token.text == word

    def at_opener(self) -> bool:
        token = self.peek()
        return token.kind == PUNCT and token.text in OPENERS

    def eat(self, punct: str) -> bool:
        if self.at(punct):
            self.advance()
            return True
        return False

    def expect(self, punct: str, expected: str | None = None) -> Token:
        if not self.at(punct):
            self.fail(self.peek(), expected or repr(punct))
        return self.advance()

    def expect_kind(self, kind: str, expected: str) -> Token:
        if self.peek().kind != kind:
            self.fail(self.peek(), expected)
        return self.advance()

    def expect_keyword(self, word: str) -> Token:
        if not self.at_keyword(word):
            self.fail(self.peek(), repr(word))
        return self.advance()

    def fail(self, token: Token, expected: str, got: str | None = None) -> NoReturn:
        raise self.lexer.error(token.start, expected, got or token.describe())

    def where(self, token: Token) -> str:
        return f"line {token.line}, column {token.column}"

    @contextmanager
    def nested(self, token: Token):
        """One level of nesting (tuple shape, literal brace, ...) opened at `token`, at most MAX_DEPTH deep."""
        if self.depth >= MAX_DEPTH:
            self.fail(token, f"at most {MAX_DEPTH} levels of nesting", "deeper nesting")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def raw(self, start: int, end: int) -> str:
        """Tokens start..end as canonical text: names without '%', one space where the source had blanks."""
        parts = []
        for index in range(start, end):
            token = self.tokens[index]
            if index > start and token.start > self.tokens[index - 1].end:
                parts.append(" ")
            parts.append(token.value if token.kind == NAME else token.text)
        return "".join(parts)

    def whole(self, rule):
        """Apply `rule` (a function of the cursor) to the whole text; nothing may follow."""
        value = rule(self)
        if self.peek().kind != EOF:
            self.fail(self.peek(), "end of the value")
        return value

    def int_value(self, expected: str, minimum: int | None = None) -> int:
        token = self.peek()
        if token.kind != INT or len(token.text.lstrip("-")) > _MAX_INT_DIGITS:
            self.fail(token, expected)
        value = int(token.text)
        if minimum is not None and value < minimum:
            self.fail(token, expected)
        self.advance()
        return value

    def group(self) -> None:
        """Skip one balanced (), [] or {} group of arbitrary tokens; iterative, nesting bounded."""
        openers: list[Token] = []
        while True:
            token = self.advance()
            if token.kind == PUNCT and token.text in OPENERS:
                if self.depth >= MAX_DEPTH:
                    self.fail(token, f"at most {MAX_DEPTH} levels of nesting", "deeper nesting")
                self.depth += 1
                openers.append(token)
            elif openers and (token.kind == EOF or (token.kind == PUNCT and token.text in CLOSERS)):
                closer = OPENERS[openers[-1].text]
                if token.text != closer:
                    self.fail(token, f"{closer!r} closing {openers[-1].text!r} at {self.where(openers[-1])}")
                self.depth -= 1
                openers.pop()
            if not openers:
                return
