"""Malformed HLO raises HloParseError pointing at the right line and column, never another exception."""

import pytest

from resize_kernels.compiler.hlo import HloParseError, parse_hlo_module

HEADER = "HloModule m\n\n"


def entry(*lines: str) -> str:
    """A module whose ENTRY is at line 3 and whose first instruction is at line 4."""
    return HEADER + "ENTRY main {\n" + "".join(f"  {line}\n" for line in lines) + "}\n"


def nested(depth: int, opener: str, inner: str, closer: str) -> str:
    return opener * depth + inner + closer * depth


CASES = {
    "undefined operand": (
        entry("a = f32[2]{0} parameter(0)", "ROOT b = f32[2]{0} add(a, c)"), 5, "c)",
        "the name of an instruction defined earlier in this computation", "'c'"),
    "operand defined later": (
        entry("ROOT b = f32[2]{0} negate(a)", "a = f32[2]{0} parameter(0)"), 4, "a)",
        "the name of an instruction defined earlier", "'a'"),
    "duplicate instruction name": (
        entry("a = f32[] parameter(0)", "a = f32[] negate(a)"), 5, "a =",
        "a new instruction name", "'a' (already defined at line 4, column 3)"),
    "missing ENTRY": (
        HEADER + "main {\n  ROOT a = f32[] parameter(0)\n}\n", 6, None, "an ENTRY computation", "end of input"),
    "two ENTRY computations": (
        HEADER + "ENTRY a {\n  ROOT p = f32[] parameter(0)\n}\nENTRY b {\n  ROOT q = f32[] parameter(0)\n}\n",
        6, None, "one ENTRY computation (the first is at line 3, column 1)", "a second ENTRY"),
    "unknown computation in to_apply": (
        entry("a = f32[2]{0} parameter(0)", "z = f32[] constant(0)",
              "ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=%sum"), 6, "%sum",
        "the name of a computation in this module (main)", "'%sum'"),
    "to_apply that is not a name": (
        entry("ROOT a = f32[2]{0} parameter(0), to_apply=\"add\""), 4, '"add"', "a computation name", "'\"add\"'"),
    "unclosed brace in attribute": (
        entry("ROOT a = f32[] parameter(0), metadata={op_name=\"x\""), 6, None,
        "an instruction or '}'", "end of input"),
    "unclosed brace at end of input": (
        HEADER + "ENTRY main {\n  ROOT a = f32[] parameter(0), metadata={{x}\n", 5, None,
        "'}' closing '{' at line 4, column 41", "end of input"),
    "mismatched bracket in attribute": (
        entry("ROOT a = f32[] parameter(0), sharding={devices=[2,1}"), 4, "}",
        "']' closing '[' at line 4, column 50", "'}'"),
    "missing closing brace of computation": (
        HEADER + "ENTRY main {\n  ROOT a = f32[] parameter(0)\n", 5, None, "an instruction or '}'", "end of input"),
    "extra closing brace": (
        entry("ROOT a = f32[] parameter(0)") + "}\n", 6, None, "a computation name", "'}'"),
    "two ROOTs": (
        entry("ROOT a = f32[] parameter(0)", "ROOT b = f32[] negate(a)"), 5, "ROOT",
        "one ROOT per computation (the first is at line 4, column 3)", "a second ROOT"),
    "empty computation": (HEADER + "ENTRY main {\n}\n", 4, None, "an instruction", "'}'"),
    "missing header": ("ENTRY main {\n  ROOT a = f32[] parameter(0)\n}\n", 1, None, "'HloModule'", "'ENTRY'"),
    "empty input": ("", 1, None, "'HloModule'", "end of input"),
    "unknown element type": (entry("ROOT a = f31[2] parameter(0)"), 4, "f31", "a shape", "'f31'"),
    "dimension is not a number": (entry("ROOT a = f32[2,x] parameter(0)"), 4, "x", "a dimension size", "'x'"),
    "dimension too large": (
        entry("ROOT a = f32[123456789012345678901234567890] parameter(0)"), 4, "1", "a dimension size", "'1234"),
    "layout is not a permutation": (
        entry("ROOT a = f32[2,3]{0,0} parameter(0)"), 4, "{",
        "a layout listing each of the 2 dimensions once", "{0,0}"),
    "parameter number repeated": (
        entry("a = f32[] parameter(0)", "ROOT b = f32[] parameter(0)"), 5, "0",
        "a parameter number not used before in this computation", "0 (already used at line 4, column 23)"),
    "parameter numbers with a gap": (
        entry("a = f32[] parameter(0)", "ROOT b = f32[] parameter(2)"), 5, "2)",
        "parameter numbers 0..1, one per parameter", "'2'"),
    "negative parameter number": (entry("ROOT a = f32[] parameter(-1)"), 4, "-1", "a parameter number", "'-1'"),
    "duplicate attribute": (
        entry("ROOT a = f32[] parameter(0), sharding={replicated}, metadata={}, sharding={maximal}"), 4,
        "sharding={maximal}",
        "each attribute at most once", "a second sharding="),
    "missing attribute value": (
        entry("ROOT a = f32[] parameter(0), metadata="), 5, None, "an attribute value", "'}'"),
    "unterminated string": (
        entry("ROOT a = f32[] parameter(0), metadata={op_name=\"abc}"), 4, '"',
        "a closing \" for this string", "end of line"),
    "bad string escape": (
        entry("ROOT a = f32[] custom-call(), custom_call_target=\"a\\qb\""), 4, "\\", "a string escape", "'\\\\q'"),
    "unterminated block comment": (
        entry("ROOT a = f32[] parameter(0) /* note"), 4, "/*", "'*/' closing this comment", "end of input"),
    "character outside any token": (
        entry("ROOT a = f32[] parameter(0) \u00e9"), 4, "\u00e9", "a token", "character '\u00e9'"),
    "literal with too few elements": (
        entry("ROOT c = f32[3]{0} constant({1, 2})"), 4, "})", "3 elements along dimension 0", "'}' after 2"),
    "literal with too many elements": (
        entry("ROOT c = f32[2,1]{1,0} constant({ {1}, {2}, {3} })"), 4, ", {3}",
        "'}' after 2 elements along dimension 0", "','"),
    "literal out of range": (
        entry("ROOT c = s8[2]{0} constant({1, 128})"), 4, "128", "an integer in [-128, 127] for s8", "'128'"),
    "literal float for an integer type": (
        entry("ROOT c = s32[] constant(1.5)"), 4, "1.5", "an integer in [-2147483648, 2147483647] for s32", "'1.5'"),
    "literal bad pred": (entry("ROOT c = pred[] constant(2)"), 4, "2)", "true or false", "'2'"),
    "literal bad float": (
        entry("ROOT c = f32[] constant(infinity)"), 4, "infinity", "a number, inf or nan", "'infinity'"),
    "operand shape disagrees with its definition": (
        entry("%a = f32[2]{0} parameter(0)", "ROOT %b = f32[2]{0} negate(f32[3]{0} %a)"), 5, "f32[3]",
        "the shape of a (f32[2]{0})", "f32[3]{0}"),
    "signature result disagrees with root": (
        HEADER + "ENTRY %main (p: f32[2]) -> f32[3] {\n  ROOT %p = f32[2]{0} parameter(0)\n}\n", 3, "f32[3]",
        "the result shape of root p (f32[2]{0})", "f32[3]"),
    "duplicate computation name": (
        HEADER + "c {\n  ROOT a = f32[] parameter(0)\n}\nENTRY c {\n  ROOT b = f32[] parameter(0)\n}\n", 6, "c",
        "a new computation name", "'c' (already defined at line 3, column 1)"),
    "trailing garbage": (entry("ROOT a = f32[] parameter(0)") + "42\n", 6, None, "a computation name", "'42'"),
    "tuple shape nested too deep": (
        entry(f"ROOT a = {nested(65, '(', 'f32[]', ')')} parameter(0)"), 4, "(f32",
        "at most 64 levels of nesting", "deeper nesting"),
    "brace group nested too deep": (
        entry(f"ROOT a = f32[] parameter(0), metadata={nested(65, '{', '', '}')}"), 4, "{}",
        "at most 64 levels of nesting", "deeper nesting"),
    "literal nested too deep": (
        entry(f"ROOT a = f32[{','.join(['1'] * 65)}] constant({nested(65, '{', '0', '}')})"), 4, "{0",
        "at most 64 levels of nesting", "deeper nesting"),
    "extremely deep nesting": (
        entry(f"ROOT a = f32[] parameter(0), metadata={{{nested(100_000, '[', '', ']')}}}"), 4,
        41 + 64,  # the 64th '[' after the '{' at column 41
        "at most 64 levels of nesting", "deeper nesting"),
}


@pytest.mark.parametrize("text, line, at, expected, got", CASES.values(), ids=CASES.keys())
def test_malformed_input(text, line, at, expected, got):
    """`at` is the column, or text whose first occurrence in the line marks it (None: column 1)."""
    with pytest.raises(HloParseError) as info:
        parse_hlo_module(text)
    error = info.value
    source_line = (text.split("\n") + [""])[line - 1]
    column = at if isinstance(at, int) else 1 if at is None else source_line.index(at) + 1
    assert (error.line, error.column) == (line, column), str(error)
    assert error.expected.startswith(expected), str(error)
    assert error.got.startswith(got), str(error)
    assert error.source_line == source_line
    header, quoted, caret = str(error).split("\n")
    assert header == f"HLO parse error at line {line}, column {column}: expected {error.expected}, got {error.got}"
    if len(source_line) <= 160:
        assert quoted == source_line and caret == " " * (column - 1) + "^"
    else:  # a long line is quoted around the column, the caret still under the offending character
        assert len(quoted) <= 166 and quoted[caret.index("^")] == source_line[column - 1]


def test_error_is_a_value_error():
    assert issubclass(HloParseError, ValueError)


@pytest.mark.parametrize("depth", [1, 64])
def test_nesting_up_to_the_limit_parses(depth):
    shape = nested(depth, "(", "f32[]", ")")
    group = nested(depth, "{", "", "}")
    literal = nested(depth, "{", "0", "}")
    dims = ",".join(["1"] * depth)
    m = parse_hlo_module(entry(f"a = {shape} parameter(0), metadata={group}", f"ROOT c = f32[{dims}] constant({literal})"))
    assert m.entry.root.literal.shape == (1,) * depth


def test_tabs_are_kept_under_the_caret():
    with pytest.raises(HloParseError) as info:
        parse_hlo_module("HloModule m\nENTRY e {\n\tROOT a = f32[] parameter(x)\n}\n")
    assert str(info.value).endswith("\n\tROOT a = f32[] parameter(x)\n\t" + " " * 25 + "^")
