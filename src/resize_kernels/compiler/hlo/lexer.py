"""Tokens of XLA's HLO text format, scanned one at a time, in time linear in the text.

The lexer is deliberately coarse: any run of identifier-ish characters is one
*word*, classified as a name, an integer, a float or some other word
(``2x2``, ``0_0x1_1``, ``b01f_01io->b01f``). The parser gives words their
meaning from context, which keeps this file free of HLO grammar.

Tokens are produced on demand (``Lexer.token(offset)``), so a parser that
stops early (a nesting limit, a syntax error) never scans the rest of the
text; each token is one regular-expression match, and line and column are
counted only when an error or a message needs them. ``canonical`` gives the
text of a stretch of tokens in one regular-expression pass, for values the
parser keeps as raw text.
"""

from __future__ import annotations

import codecs
import re

from ...errors import InvalidValueError

NAME = "name"
INT = "int"
FLOAT = "float"
WORD = "word"
STRING = "string"
PUNCT = "punct"
EOF = "eof"

_W = r"(?:[A-Za-z0-9_.+]|-(?!>))"  # a word character: '-' belongs to a word unless it starts an arrow "->"
WORD_END = rf"(?!{_W}|->{_W})"  # ... and "->" may sit inside a word (dim_labels=b01f_01io->b01f)
# Runs of word characters written as one character class (a regex repeats a class without memory per
# character): the run backs off a final '-' that starts an arrow.
W_RUN = r"[A-Za-z0-9_.+\-]+(?!(?<=-)>)"
NAME_RUN = r"[A-Za-z_][A-Za-z0-9_.\-]*(?!(?<=-)>)"
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")  # names of instructions, computations, opcodes
NAME_PATTERN = rf"%?{NAME_RUN}{WORD_END}"  # a whole word that is a name
_FLOAT_TEXT = r"-?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][+-]?[0-9]+)?"
_WS = r"[ \t\r\n\f\v]"
_ITEMS = 256  # blank items (runs of whitespace, comments) one match takes: bounds a regex's memory


def blanks(pattern: str) -> str:
    """`pattern` with each ``{B}`` made a regex for blanks and comments (at most _ITEMS of them).

    A comment is matched whole: a line comment to the end of its line, a block comment atomically (a
    lookahead captures it, a backreference consumes it), so backtracking can neither shorten a comment nor
    stretch one past its '*/'; the capture groups are named apart.
    """
    parts = pattern.split("{B}")
    out = [parts[0]]
    for number, part in enumerate(parts[1:]):
        tag = f"_c{number}"
        out += [rf"(?:{_WS}+|//[^\n]*(?![^\n])|(?=(?P<{tag}>/\*[\s\S]*?\*/))(?P={tag})){{0,{_ITEMS}}}", part]
    return "".join(out)


BLANKS = blanks("{B}")
# Blanks and comments; then one token, its kind the name of the group that matched. A name, integer or float is
# a whole word (nothing of the word may follow), anything else word-like is a WORD; "more" is more blanks than
# one match takes.
_TOKEN = re.compile(
    BLANKS + r"(?:"
    rf"(?P<{NAME}>{NAME_PATTERN})"
    rf"|(?P<{INT}>-?[0-9]+{WORD_END})"
    rf"|(?P<{FLOAT}>{_FLOAT_TEXT}{WORD_END})"
    rf"|(?P<{WORD}>%?{W_RUN}(?:->{W_RUN}){{0,{_ITEMS}}})"
    rf"|(?P<{STRING}>[\"'])"
    rf"|(?P<more>{_WS}|//|/\*(?=[\s\S]*?\*/))"
    r"|(?P<comment>/\*)"
    rf"|(?P<{PUNCT}>->|[!-~])"
    rf"|(?P<{EOF}>\Z)"
    r"|(?P<other>[\s\S]))")
_ARROWS = re.compile(rf"(?:->{W_RUN}){{1,{_ITEMS}}}")
# A string's body from after its opening quote up to where it ends or goes wrong: each backslash starts a
# valid escape (a match takes at most _ITEMS escapes; string_stop() goes on from there).
_STRING_BODY = {quote: re.compile(rf"[^{quote}\\\n]*(?:\\(?:[ntrabfv\\'\"?0-7]|x[0-9A-Fa-f])[^{quote}\\\n]*)"
                                  rf"{{0,{_ITEMS}}}") for quote in "\"'"}
_VALID_ESCAPE = re.compile(r"\\(?:[ntrabfv\\'\"?0-7]|x[0-9A-Fa-f])")
_PYTHON_DIFFERS = re.compile(rb"\\(?:\?|x[0-9A-Fa-f](?![0-9A-Fa-f])|[4-7][0-7][0-7])")
_UNESCAPE = re.compile(rb"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))", re.S)
_ESCAPES = {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"a": b"\a", b"b": b"\b", b"f": b"\f",
            b"v": b"\v", b"\\": b"\\", b"'": b"'", b'"': b'"', b"?": b"?"}
# canonical(): strings are kept, blank runs and comments become one space, '%' goes from names.
_STRING_OR_COMMENT = re.compile(r"[\"']|//|/\*")
_COMMENT = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/")
_IRREGULAR_BLANKS = re.compile(r"[\t\n\r\f\v]|  ")  # all the blanks canonical() changes
_TO_SPACE = str.maketrans("\t\r\n\f\v", "     ")
_PERCENT = re.compile(rf"%(?={NAME_RUN}{WORD_END})")
_EXCERPT = 160  # longest stretch of a source line quoted in an error message
_UNUSUAL = re.compile(r"[^\t\n -~]")


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: control characters and lone surrogates as escapes (``\\x1b``)."""
    return _UNUSUAL.sub(_escape_unprintable, text)


def _escape_unprintable(match: re.Match) -> str:
    char = match.group()
    return char if char.isprintable() else ascii(char)[1:-1]


class HloParseError(InvalidValueError):
    """Malformed HLO text: where it is (1-based line and column), what was expected there and what was found."""

    def __init__(self, line: int, column: int, expected: str, got: str, source_line: str = ""):
        self.line = line
        self.column = column
        self.expected = expected
        self.got = got
        self.source_line = source_line
        # Quote at most _EXCERPT characters around the column, control characters escaped, and keep tabs so that
        # the caret lines up under the offending character.
        start = max(0, min(column - 1 - _EXCERPT // 2, len(source_line) - _EXCERPT))
        excerpt = printable(source_line[start : start + _EXCERPT])
        before = printable(source_line[start : column - 1])
        if start > 0:
            excerpt, before = "..." + excerpt, "..." + before
        if start + _EXCERPT < len(source_line):
            excerpt += "..."
        pad = "".join("\t" if c == "\t" else " " for c in before)
        super().__init__(
            f"HLO parse error at line {line}, column {column}: expected {printable(expected)}, got {printable(got)}\n"
            f"{excerpt}\n{pad}^"
        )


class Token:
    """One token: its kind, source text, value (unescaped string, name without '%') and source offsets."""

    __slots__ = ("kind", "text", "value", "start", "end", "lexer")

    def __init__(self, kind: str, text: str, value: str, start: int, end: int, lexer: Lexer):
        self.kind, self.text, self.value, self.start, self.end, self.lexer = kind, text, value, start, end, lexer

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.start}..{self.end})"

    @property
    def line(self) -> int:
        return self.lexer.position(self.start)[0]

    @property
    def column(self) -> int:
        return self.lexer.position(self.start)[1]

    def describe(self) -> str:
        """How the token reads in an error message."""
        if self.kind == EOF:
            return "end of input"
        text = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return repr(text)


class Lexer:
    """Scans HLO text token by token; also turns source offsets into error positions."""

    def __init__(self, text: str):
        self.text = text

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a source offset."""
        line_start = self.text.rfind("\n", 0, offset) + 1
        return self.text.count("\n", 0, line_start) + 1, offset - line_start + 1

    def error(self, offset: int, expected: str, got: str) -> HloParseError:
        """An HloParseError pointing at `offset`, quoting its source line."""
        line, column = self.position(offset)
        start = offset - column + 1
        end = self.text.find("\n", start)
        source_line = self.text[start : end if end >= 0 else len(self.text)].rstrip("\r")
        return HloParseError(line, column, expected, got, source_line)

    def tokenize(self) -> list[Token]:
        """All tokens of the text, ending with one EOF token."""
        tokens = [self.token(0)]
        while tokens[-1].kind != EOF:
            tokens.append(self.token(tokens[-1].end))
        return tokens

    def token(self, offset: int) -> Token:
        """The token after `offset` (blanks and comments skipped); EOF at the end of the text."""
        match = _TOKEN.match(self.text, offset)
        while match.lastgroup == "more":
            match = _TOKEN.match(self.text, match.start("more"))
        kind = match.lastgroup
        start, end = match.span(kind)
        text = match.group(kind)
        if kind == NAME:
            return Token(NAME, text, text[1:] if text[0] == "%" else text, start, end, self)
        if kind == WORD:
            while arrows := _ARROWS.match(self.text, end):  # a word with more arrows than one match takes
                end = arrows.end()
            text = self.text[start:end]
        elif kind == STRING:
            end, value = self.string(start)
            return Token(STRING, self.text[start:end], value, start, end, self)
        elif kind == "comment":
            raise self.error(start, "'*/' closing this comment", "end of input")
        elif kind == "other":
            raise self.error(start, "a token", f"character {text!r}")
        return Token(kind, text, text, start, end, self)

    def string_end(self, start: int) -> int:
        """The end offset of the quoted string at `start`, its escapes checked; HloParseError if it is malformed."""
        text, quote = self.text, self.text[start]
        end = string_stop(text, start)
        if end < len(text) and text[end] == quote:
            return end + 1
        if end < len(text) and text[end] == "\\":
            escape = text[end + 1 : end + 2]
            raise self.error(end, "a string escape (\\n \\t \\\\ \\\" \\ooo \\xHH ...)",
                             repr("\\" + escape) if escape else "end of input")
        got = "end of input" if end >= len(text) else "end of line"
        raise self.error(start, f"a closing {quote} for this string", got)

    def string(self, start: int) -> tuple[int, str]:
        """Scan a quoted string with C escapes; returns (end offset, unescaped value).

        Escapes produce bytes (XLA writes non-ASCII as octal escapes of UTF-8),
        so the value is decoded as UTF-8 at the end.
        """
        end = self.string_end(start)
        body = self.text[start + 1 : end - 1]
        if body.isascii() and "\\" not in body:
            return end, body
        raw = body.encode("utf-8", errors="surrogatepass")
        if "\\" in body:  # escapes C-fast, unless one reads differently in Python (\? \x4 \777): then one by one
            raw = _UNESCAPE.sub(_unescape, raw) if _PYTHON_DIFFERS.search(raw) else codecs.escape_decode(raw)[0]
        return end, raw.decode("utf-8", errors="replace")


def _unescape(match: re.Match) -> bytes:
    octal, hexa, char = match.groups()
    if octal is not None:
        return bytes([int(octal, 8) & 0xFF])
    if hexa is not None:
        return bytes([int(hexa, 16)])
    return _ESCAPES[char]


def string_stop(text: str, start: int) -> int:
    """Where the string opened at `start` stops: its closing quote, or a bad escape, a newline, the end."""
    body = _STRING_BODY[text[start]]
    end = body.match(text, start + 1).end()
    while _VALID_ESCAPE.match(text, end):  # more escapes than one match takes
        end = body.match(text, end).end()
    return end


def canonical(text: str) -> str:
    """A stretch of tokens as canonical text: names without '%', one space where the source had blanks.

    `text` runs from the start of a token to the end of one, and is known to
    scan (strings closed, comments closed). Strings are kept as they are.
    """
    if '"' not in text and "'" not in text:
        return _plain(text)
    if "/" not in text and "%" not in text and not _IRREGULAR_BLANKS.search(text):
        return text  # nothing to change, inside strings or out
    parts, done, pos = [], 0, 0
    while found := _STRING_OR_COMMENT.search(text, pos):
        if found.group() == "//":
            pos = text.find("\n", found.end())
            pos = len(text) if pos < 0 else pos
        elif found.group() == "/*":
            pos = text.index("*/", found.end()) + 2
        else:
            pos = string_stop(text, found.start()) + 1
            parts += [_plain(text[done : found.start()]), text[found.start() : pos]]
            done = pos
    parts.append(_plain(text[done:]))
    return "".join(parts)


def _plain(text: str) -> str:
    """canonical() of text without strings (in C-speed passes: a substitution costs per match)."""
    if "/" in text:
        text = _COMMENT.sub(" ", text)
    text = text.translate(_TO_SPACE)
    while "  " in text:
        text = text.replace("  ", " ")
    return _PERCENT.sub("", text) if "%" in text else text
