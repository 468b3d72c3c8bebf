"""The lexer: token kinds, values and positions."""

import pytest

from resize_kernels.compiler.hlo.lexer import EOF, FLOAT, INT, NAME, PUNCT, STRING, WORD, HloParseError, Lexer


def tokens(text):
    return [(t.kind, t.value) for t in Lexer(text).tokenize()]


def test_names_numbers_and_words():
    assert tokens("%custom-call.3 = f32[1,2]{1,0} x.1 -1 2.5e-3 -inf 2x2 0_0x1_1 b01f_01io->b01f ...") == [
        (NAME, "custom-call.3"), (PUNCT, "="), (NAME, "f32"), (PUNCT, "["), (INT, "1"), (PUNCT, ","),
        (INT, "2"), (PUNCT, "]"), (PUNCT, "{"), (INT, "1"), (PUNCT, ","), (INT, "0"), (PUNCT, "}"),
        (NAME, "x.1"), (INT, "-1"), (FLOAT, "2.5e-3"), (WORD, "-inf"), (WORD, "2x2"), (WORD, "0_0x1_1"),
        (WORD, "b01f_01io->b01f"), (WORD, "..."), (EOF, ""),
    ]


def test_arrow_between_shapes():
    assert tokens("(f32[])->f32[]")[3:6] == [(PUNCT, "]"), (PUNCT, ")"), (PUNCT, "->")]
    assert tokens("a -> b") == [(NAME, "a"), (PUNCT, "->"), (NAME, "b"), (EOF, "")]


def test_strings_are_unescaped():
    assert tokens(r'"\"00\"" "a\\b\nc" "\303\251" "\x41" ' + "'single'") == [
        (STRING, '"00"'), (STRING, "a\\b\nc"), (STRING, "é"), (STRING, "A"), (STRING, "single"), (EOF, "")]


def test_comments_are_skipped_and_positions_counted():
    toks = Lexer("// header\n/* multi\nline */ a\n\tb // tail").tokenize()
    assert [(t.value, t.line, t.column) for t in toks] == [("a", 3, 9), ("b", 4, 2), ("", 4, 11)]


@pytest.mark.parametrize("text, line, column", [
    ('x = "abc', 1, 5),
    ("a /* never closed", 1, 3),
    ('"bad \\q escape"', 1, 6),
    ("ok\n  \u00a0", 2, 3),
])
def test_lexer_errors(text, line, column):
    with pytest.raises(HloParseError) as info:
        Lexer(text).tokenize()
    assert (info.value.line, info.value.column) == (line, column)
