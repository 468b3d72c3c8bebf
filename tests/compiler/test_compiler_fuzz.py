"""Property: random mutations of the examples through compile_hlo raise only the compiler's documented errors."""

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resize_kernels import compile_hlo
from resize_kernels.compiler.codegen import CodegenError
from resize_kernels.compiler.hlo import HloParseError
from resize_kernels.compiler.passes import ValidationError

from hlo_texts import EXAMPLES, resize_module

TEXTS = [p.read_text() for p in EXAMPLES] + [resize_module("old"), resize_module("new", dtype="bf16")]
# A rough tokenisation, independent of the lexer: blanks, strings, words, single characters.
PIECES = re.compile(r'\s+|"(?:\\.|[^"\\\n])*"|[A-Za-z0-9_.%+\-]+|.', re.S)


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(TEXTS))
    pieces = PIECES.findall(text)
    i = draw(st.integers(0, len(pieces) - 1))
    kind = draw(st.sampled_from(["truncate", "delete", "duplicate"]))
    if kind == "truncate":
        return text[: draw(st.integers(0, len(text)))]
    if kind == "delete":
        del pieces[i]
    else:
        pieces.insert(i, pieces[i])
    return "".join(pieces)


@settings(max_examples=300, deadline=10_000, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_compile_or_raise_a_documented_error(text):
    try:
        compiled = compile_hlo(text)
    except (HloParseError, ValidationError, CodegenError) as error:
        assert str(error)
        return
    assert str(compiled)
