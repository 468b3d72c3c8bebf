"""A cursor over HLO tokens: look ahead, consume, fail with a positioned HloParseError.

Both grammars sit on it: the attribute-value grammar (attributes.py) and the
module / computation / instruction / shape grammar (parser.py). It knows no
HLO rule itself beyond balanced brackets: ``group`` skips one balanced (), []
or {} group, and ``nested`` bounds how deep any rule may nest (MAX_DEPTH), so
no input reaches Python's recursion limit.

Tokens are lexed as the cursor reaches them (a few of lookahead), so work and
memory follow what the parser reads, and a rule may take a stretch of text in
one regular-expression match and ``seek`` past it (a group, a shape, a run of
literal values). Consumed text is addressed by source offsets: ``mark()``
before, ``raw(mark)`` after gives its canonical text.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import NoReturn

from .lexer import EOF, INT, NAME, PUNCT, Lexer, Token, blanks, canonical

MAX_DEPTH = 64
OPENERS = {"{": "}", "[": "]", "(": ")"}
CLOSERS = frozenset(OPENERS.values())
_MAX_INT_DIGITS = 20  # enough for any 64-bit value; keeps int() away from huge strings
# Inside a skipped group, what passes at once: plain characters (no bracket, quote, '/' or character that starts
# no token), strings without escapes, a '/' that starts no comment.
#: Punctuation (after blanks) for ``take``: a rule that expects it takes it without making a token.
PUNCTUATION = {punct: re.compile(blanks("{B}" + re.escape(punct))) for punct in "{}()"}
_BLANKS = re.compile(blanks("{B}"))
_GROUP_PLAIN = re.compile(r"""(?:[\t\n\v\f\r !#-&*-.0-Z\\^-z|~]+|"[^"\\\n]*"|'[^'\\\n]*'|/(?![/*])){0,256}""")
_BRACKETS = re.compile(r"[\[\]{}()]+")


class Cursor:
    """The tokens of one text and a position in them."""

    def __init__(self, text: str):
        self.text = text
        self.lexer = Lexer(text)
        self._ahead: list[Token] = []  # tokens lexed but not consumed
        self._scan = 0  # where lexing continues
        self.last_end = 0  # end of the last consumed token
        self.depth = 0

    def peek(self, ahead: int = 0) -> Token:
        while len(self._ahead) <= ahead:
            token = self.lexer.token(self._scan)
            self._ahead.append(token)
            self._scan = token.end
        return self._ahead[ahead]

    def advance(self) -> Token:
        token = self.peek()
        if token.kind != EOF:
            del self._ahead[0]
            self.last_end = token.end
        return token

    def seek(self, offset: int) -> None:
        """Continue after `offset`, the end of text a rule consumed itself."""
        self._ahead.clear()
        self._scan = self.last_end = offset

    def mark(self) -> int:
        """The source offset of the next token: pass it to ``raw`` once the rule is done."""
        return self.peek().start

    def raw(self, mark: int) -> str:
        """The tokens consumed since ``mark`` as canonical text: names without '%', one space for blanks."""
        return canonical(self.text[mark : self.last_end]) if self.last_end > mark else ""

    def take(self, pattern: re.Pattern) -> bool:
        """Consume what `pattern` (starting with blanks) matches at the position, if it does; no tokens made."""
        match = pattern.match(self.text, self.last_end)
        if match is not None:
            self.seek(match.end())
        return match is not None

    def at_end(self) -> bool:
        """Whether only blanks and comments are left (no token made)."""
        pos = self.last_end
        while (end := _BLANKS.match(self.text, pos).end()) > pos:
            pos = end
        return pos == len(self.text)

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

    def fail_at(self, offset: int, expected: str, got: str) -> NoReturn:
        raise self.lexer.error(offset, expected, got)

    def where(self, token: Token) -> str:
        line, column = self.lexer.position(token.start)
        return f"line {line}, column {column}"

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
        """Skip one balanced (), [] or {} group of arbitrary tokens, the next token being its opener.

        The text is scanned, not tokenized: plain text and strings without
        escapes are passed over a stretch per regular-expression match, and only
        brackets, other strings, comments and characters that start no token
        are looked at. Nesting is bounded.
        """
        text, lexer = self.text, self.lexer
        openers: list[int] = []  # offsets of the open brackets
        pos = self.peek().start
        while True:
            pos = _GROUP_PLAIN.match(text, pos).end()
            char = text[pos : pos + 1]
            if char and char in "([{)]}":
                run = _BRACKETS.match(text, pos)
                for offset, char in enumerate(run.group(), pos):
                    if char in OPENERS:
                        if self.depth + len(openers) >= MAX_DEPTH:
                            self.fail_at(offset, f"at most {MAX_DEPTH} levels of nesting", "deeper nesting")
                        openers.append(offset)
                    elif OPENERS[text[openers[-1]]] != char:
                        self._unclosed(openers, offset, repr(char))
                    else:
                        openers.pop()
                        if not openers:
                            self.seek(offset + 1)
                            return
                pos = run.end()
            elif char and char in "\"'":
                pos = lexer.string_end(pos)
            elif text.startswith("//", pos):
                end = text.find("\n", pos)
                pos = len(text) if end < 0 else end
            elif text.startswith("/*", pos):
                end = text.find("*/", pos + 2)
                if end < 0:
                    self.fail_at(pos, "'*/' closing this comment", "end of input")
                pos = end + 2
            elif not char:
                self._unclosed(openers, pos, "end of input")
            elif _GROUP_PLAIN.match(text, pos).end() == pos:  # else one match's stretch ended: go on
                self.fail_at(pos, "a token", f"character {char!r}")

    def _unclosed(self, openers: list[int], offset: int, got: str) -> NoReturn:
        opener = openers[-1]
        closer = OPENERS[self.text[opener]]
        line, column = self.lexer.position(opener)
        self.fail_at(offset, f"{closer!r} closing {self.text[opener]!r} at line {line}, column {column}", got)
