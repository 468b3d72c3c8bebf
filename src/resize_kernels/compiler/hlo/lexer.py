"""Tokens of XLA's HLO text format, each carrying its line and column.

The lexer is deliberately coarse: any run of identifier-ish characters is one
*word*, classified afterwards as a name, an integer, a float or some other
word (``2x2``, ``0_0x1_1``, ``b01f_01io->b01f``). The parser gives words
their meaning from context, which keeps this file free of HLO grammar.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from ...errors import InvalidValueError

NAME = "name"
INT = "int"
FLOAT = "float"
WORD = "word"
STRING = "string"
PUNCT = "punct"
EOF = "eof"

# Identifier-ish characters; '-' belongs to a word unless it starts an arrow
# ("->"), and "->" may sit inside a word (dim_labels=b01f_01io->b01f).
_WORD_CHAR = r"(?:[A-Za-z0-9_.+]|-(?!>))"
_WORD = re.compile(rf"%?{_WORD_CHAR}+(?:->{_WORD_CHAR}+)*")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")  # names of instructions, computations, opcodes
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][+-]?[0-9]+)?")
_WHITESPACE = " \t\r\n\f\v"
_EXCERPT = 160  # longest stretch of a source line quoted in an error message
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f",
            "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


class HloParseError(InvalidValueError):
    """Malformed HLO text: where it is (1-based line and column), what was expected there and what was found."""

    def __init__(self, line: int, column: int, expected: str, got: str, source_line: str = ""):
        self.line = line
        self.column = column
        self.expected = expected
        self.got = got
        self.source_line = source_line
        # Quote at most _EXCERPT characters around the column, and keep tabs so
        # that the caret lines up under the offending character.
        start = max(0, min(column - 1 - _EXCERPT // 2, len(source_line) - _EXCERPT))
        excerpt = source_line[start : start + _EXCERPT]
        before = source_line[start : column - 1]
        if start > 0:
            excerpt, before = "..." + excerpt, "..." + before
        if start + _EXCERPT < len(source_line):
            excerpt += "..."
        pad = "".join("\t" if c == "\t" else " " for c in before)
        super().__init__(
            f"HLO parse error at line {line}, column {column}: expected {expected}, got {got}\n"
            f"{excerpt}\n{pad}^"
        )


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind, source text, value (unescaped string, name without '%'), and position."""

    kind: str
    text: str
    value: str
    start: int
    end: int
    line: int
    column: int

    def describe(self) -> str:
        """How the token reads in an error message."""
        if self.kind == EOF:
            return "end of input"
        text = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return repr(text)


class Lexer:
    """Splits HLO text into tokens; also turns source offsets into error positions."""

    def __init__(self, text: str):
        self.text = text
        self._line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a source offset."""
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return index + 1, offset - self._line_starts[index] + 1

    def error(self, offset: int, expected: str, got: str) -> HloParseError:
        """An HloParseError pointing at `offset`, quoting its source line."""
        line, column = self.position(offset)
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        source_line = self.text[start : end if end >= 0 else len(self.text)].rstrip("\r")
        return HloParseError(line, column, expected, got, source_line)

    def tokenize(self) -> list[Token]:
        """All tokens of the text, ending with one EOF token."""
        text, pos, tokens = self.text, 0, []
        while True:
            pos = self._skip_blanks(pos)
            if pos >= len(text):
                tokens.append(self._token(EOF, "", "", pos, pos))
                return tokens
            char = text[pos]
            if char in "\"'":
                end, value = self._string(pos)
                tokens.append(self._token(STRING, text[pos:end], value, pos, end))
            elif match := _WORD.match(text, pos):
                tokens.append(self._word(match.group(), pos))
                end = match.end()
            elif text.startswith("->", pos):
                end = pos + 2
                tokens.append(self._token(PUNCT, "->", "->", pos, end))
            elif char.isascii() and char.isprintable() and char != " ":
                end = pos + 1
                tokens.append(self._token(PUNCT, char, char, pos, end))
            else:
                raise self.error(pos, "a token", f"character {char!r}")
            pos = end

    def _token(self, kind: str, text: str, value: str, start: int, end: int) -> Token:
        line, column = self.position(start)
        return Token(kind, text, value, start, end, line, column)

    def _word(self, text: str, start: int) -> Token:
        """Classify a word: %name or name, integer, float, or other (window dims, pads, -inf...)."""
        end = start + len(text)
        if IDENTIFIER.fullmatch(text.removeprefix("%")):
            return self._token(NAME, text, text.removeprefix("%"), start, end)
        if _INT.fullmatch(text):
            return self._token(INT, text, text, start, end)
        if _FLOAT.fullmatch(text):
            return self._token(FLOAT, text, text, start, end)
        return self._token(WORD, text, text, start, end)

    def _skip_blanks(self, pos: int) -> int:
        """Skip whitespace and comments (// to end of line, /* ... */)."""
        text = self.text
        while pos < len(text):
            if text[pos] in _WHITESPACE:
                pos += 1
            elif text.startswith("//", pos):
                end = text.find("\n", pos)
                pos = len(text) if end < 0 else end
            elif text.startswith("/*", pos):
                end = text.find("*/", pos + 2)
                if end < 0:
                    raise self.error(pos, "'*/' closing this comment", "end of input")
                pos = end + 2
            else:
                break
        return pos

    def _string(self, start: int) -> tuple[int, str]:
        """Scan a quoted string with C escapes; returns (end offset, unescaped value).

        Escapes produce bytes (XLA writes non-ASCII as octal escapes of UTF-8),
        so the value is decoded as UTF-8 at the end.
        """
        text, quote = self.text, self.text[start]
        out = bytearray()
        pos = start + 1
        while True:
            if pos >= len(text) or text[pos] == "\n":
                got = "end of input" if pos >= len(text) else "end of line"
                raise self.error(start, f"a closing {quote} for this string", got)
            char = text[pos]
            if char == quote:
                return pos + 1, out.decode("utf-8", errors="replace")
            if char != "\\":
                out += char.encode("utf-8", errors="surrogatepass")
                pos += 1
                continue
            escape = text[pos + 1 : pos + 2]
            if escape in _ESCAPES:
                out += _ESCAPES[escape].encode()
                pos += 2
            elif octal := re.match(r"[0-7]{1,3}", text[pos + 1 : pos + 4]):
                out.append(int(octal.group(), 8) & 0xFF)
                pos += 1 + len(octal.group())
            elif hexa := re.match(r"x([0-9A-Fa-f]{1,2})", text[pos + 1 : pos + 4]):
                out.append(int(hexa.group(1), 16))
                pos += 1 + len(hexa.group())
            else:
                raise self.error(pos, "a string escape (\\n \\t \\\\ \\\" \\ooo \\xHH ...)",
                                 repr("\\" + escape) if escape else "end of input")
