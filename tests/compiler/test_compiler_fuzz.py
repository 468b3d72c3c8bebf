"""Property: random mutations of the examples through compile_hlo raise only the compiler's documented errors."""

from hypothesis import HealthCheck, given, settings

from resize_kernels import compile_hlo
from resize_kernels.compiler.codegen import CodegenError
from resize_kernels.compiler.hlo import HloParseError
from resize_kernels.compiler.passes import ValidationError

from hlo_texts import EXAMPLES, mutated, resize_module

TEXTS = [p.read_text() for p in EXAMPLES] + [resize_module("old"), resize_module("new", dtype="bf16")]


@settings(max_examples=300, deadline=10_000, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(TEXTS))
def test_mutations_compile_or_raise_a_documented_error(text):
    try:
        compiled = compile_hlo(text)
    except (HloParseError, ValidationError, CodegenError) as error:
        assert str(error)
        return
    assert str(compiled)
