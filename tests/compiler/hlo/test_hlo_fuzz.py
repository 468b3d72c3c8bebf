"""Property: random mutations of valid modules parse or raise HloParseError, never anything else."""

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resize_kernels.compiler.hlo import HloParseError, parse_hlo_module, print_hlo_module

TEXTS = [p.read_text() for p in sorted((Path(__file__).parent / "data").glob("*.hlo"))]
# A rough tokenisation, independent of the lexer under test: blanks, strings, words, single characters.
PIECES = re.compile(r'\s+|"(?:\\.|[^"\\\n])*"|[A-Za-z0-9_.%+\-]+|.', re.S)
ACCESSORS = ("dimensions", "window", "to_apply", "custom_call_target", "kernel_name", "backend_config",
             "parameter_number", "tuple_index", "literal")


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(TEXTS))
    pieces = PIECES.findall(text)
    i, j = (draw(st.integers(0, len(pieces) - 1)) for _ in range(2))
    kind = draw(st.sampled_from(["truncate", "delete", "duplicate", "swap", "insert char"]))
    if kind == "truncate":
        return text[: draw(st.integers(0, len(text)))]
    if kind == "delete":
        del pieces[i]
    elif kind == "duplicate":
        pieces.insert(i, pieces[i])
    elif kind == "swap":
        pieces[i], pieces[j] = pieces[j], pieces[i]
    else:
        pieces.insert(i, draw(st.characters(codec="utf-8")))
    return "".join(pieces)


def exercise(module):
    """Everything a caller might do with a parsed module: print, re-parse, use every accessor."""
    printed = print_hlo_module(module)
    assert print_hlo_module(parse_hlo_module(printed)) == printed
    for comp in module.computations:
        comp.parameters
        for inst in comp.instructions:
            inst.results
            for accessor in ACCESSORS:
                try:
                    getattr(inst, accessor)
                except ValueError:
                    pass


@settings(max_examples=800, deadline=10_000, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_parse_or_raise_hlo_parse_error(text):
    try:
        module = parse_hlo_module(text)
    except HloParseError as error:
        assert error.line >= 1 and error.column >= 1
        assert str(error).startswith(f"HLO parse error at line {error.line}, column {error.column}: expected ")
        return
    exercise(module)
