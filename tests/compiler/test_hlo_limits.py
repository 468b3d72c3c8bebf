"""The HLO front end and the runtime on inputs an adversary would try: big, deep, odd bits, odd indices.

Each case has two allowed outcomes: the right value, or one of the project's
own errors with a readable message. Nothing here is timed; a case that hangs
fails the suite by never finishing.
"""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from resize_kernels import compile_hlo
from resize_kernels.compiler.hlo import HloParseError, parse_hlo_module
from resize_kernels.compiler.codegen import CodegenError
from resize_kernels.errors import InvalidTypeError, InvalidValueError, ResizeKernelsError
from resize_kernels.runtime import ExecutionError, Executor, random_arguments

from conftest import assert_bits_equal
from hlo_texts import custom_call_module

ADD = "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"


def module(*lines: str, extra: str = "") -> str:
    body = "".join(f"  {line}\n" for line in lines)
    return f"HloModule m\n\n{extra}ENTRY main {{\n{body}}}\n"


def run(text: str, *args):
    return Executor(parse_hlo_module(text), {})(*args)


def test_a_literal_of_a_million_elements_is_read_exactly():
    values = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)
    text = module(f"ROOT c = f32[{values.size}] constant({{{', '.join(map(repr, values.tolist()))}}})")
    assert_bits_equal(run(text), values)


def test_nesting_beyond_the_limit_is_a_parse_error_not_a_recursion_error():
    text = module("ROOT c = f32[] constant(0), metadata=" + "{" * 100_000 + "}" * 100_000)
    with pytest.raises(HloParseError, match="nest"):
        parse_hlo_module(text)


@pytest.mark.parametrize("element_type, dtype, bits", [
    ("f32", np.float32, [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FABCDEF, 0xFFFFFFFF]),
    ("f16", np.float16, [0x7E00, 0xFE00, 0x7C01, 0x7D55, 0xFFFF]),
    ("bf16", ml_dtypes.bfloat16, [0x7FC0, 0xFFC0, 0x7F81, 0x7FAA, 0xFFFF]),
])
def test_nan_payloads_are_read_in_the_element_types_own_mantissa_and_printed_back(element_type, dtype, bits):
    """XLA writes nan(0x<mantissa bits>) and a plain nan for the quiet NaN; '-' is the sign bit."""
    uint = {2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]
    width, mantissa = 8 * np.dtype(dtype).itemsize, ml_dtypes.finfo(dtype).nmant
    quiet = 1 << (mantissa - 1)

    def text(b):
        sign, payload = "-" if b >> (width - 1) else "", b & ((1 << mantissa) - 1)
        return f"{sign}nan" if payload == quiet else f"{sign}nan(0x{payload:x})"

    source = module(f"ROOT k = {element_type}[5] constant({{{', '.join(map(text, bits))}}})")
    parsed = parse_hlo_module(source)
    assert_bits_equal(np.asarray(parsed.entry.root.literal).view(uint), np.array(bits, uint))
    assert str(parsed) == source


def test_get_tuple_element_out_of_range_is_refused_before_running():
    for index in ("2", "-1"):
        text = module("p = (f32[2], s32[]) parameter(0)", f"ROOT a = f32[2] get-tuple-element(p), index={index}")
        with pytest.raises(ResizeKernelsError, match="index"):
            Executor(parse_hlo_module(text), {})


def test_control_characters_in_a_module_never_reach_the_terminal():
    text = custom_call_module().replace('custom_call_target="ResizeNearest"', 'custom_call_target="Re\\x1b[2Jsize"')
    bad = text.replace("ENTRY main", "ENTRY ma\x1b[2Jin\x07")
    for source in (bad, text.replace("ROOT rn", "ROOT r\x00n")):
        with pytest.raises(ResizeKernelsError) as info:
            compile_hlo(source)
        assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in str(info.value)), str(info.value)


def test_an_integer_gradient_is_a_codegen_error_naming_the_instruction():
    text = custom_call_module("s32[1,8,8,4]", "s32[1,3,3,4]",
                              attributes='custom_call_target="ResizeNearestGrad", backend_config="\\"00\\""')
    with pytest.raises(ResizeKernelsError) as info:
        compile_hlo(text)
    assert "'rn'" in str(info.value) and "int32" in str(info.value)


def test_random_arguments_refuse_a_negative_or_non_integer_seed():
    m = parse_hlo_module(custom_call_module())
    with pytest.raises(InvalidValueError, match="seed of at least 0"):
        random_arguments(m, seed=-1)
    with pytest.raises(InvalidTypeError, match="integer seed"):
        random_arguments(m, seed=1.5)


def reduce_window_literally(x, init, size, stride, pad):
    """XLA's elemental order, one window offset at a time: the executor's old, slow, obviously right loop."""
    x = np.pad(x, pad, constant_values=init)
    counts = [max(0, (n - k) // s + 1) for n, k, s in zip(x.shape, size, stride)]
    acc = np.full(counts, init, dtype=x.dtype)
    if acc.size == 0:
        return acc
    for offset in np.ndindex(*size):
        acc = acc + x[tuple(slice(o, o + s * (n - 1) + 1, s) for o, s, n in zip(offset, stride, counts))]
    return acc.astype(x.dtype)


@settings(max_examples=60, deadline=None)
@given(dims=st.lists(st.integers(1, 9), min_size=1, max_size=3), data=st.data())
def test_reduce_window_adds_in_row_major_window_order(dims, data):
    rank = len(dims)
    size = [data.draw(st.integers(1, n + 2)) for n in dims]
    stride = [data.draw(st.integers(1, 3)) for _ in dims]
    pad = [(data.draw(st.integers(0, 1)), data.draw(st.integers(0, 1))) for _ in dims]
    # magnitudes far apart, so that the order of the additions shows in the bits
    rng = np.random.default_rng(sum(dims))
    x = (rng.standard_normal(dims) * 2.0 ** rng.integers(-24, 24, dims)).astype(np.float32)
    expected = reduce_window_literally(x, np.float32(0.5), size, stride, pad)
    window = f"size={'x'.join(map(str, size))} stride={'x'.join(map(str, stride))} " \
             f"pad={'x'.join(f'{lo}_{hi}' for lo, hi in pad)}"
    text = module(f"x = f32[{','.join(map(str, dims))}] parameter(0)", "init = f32[] constant(0.5)",
                  f"ROOT r = f32[{','.join(map(str, expected.shape))}] reduce-window(x, init), window={{{window}}}, "
                  f"to_apply=add_f32", extra=ADD)
    assert rank == expected.ndim
    assert_bits_equal(run(text, x), expected)


def test_a_reduce_window_with_no_output_or_a_huge_window_does_not_loop():
    # a window larger than the operand: no positions, an empty result at once
    text = module("x = f32[4,4] parameter(0)", "zero = f32[] constant(0)",
                  "ROOT r = f32[0,0] reduce-window(x, zero), window={size=100000x100000}, to_apply=add_f32", extra=ADD)
    assert run(text, np.ones((4, 4), np.float32)).shape == (0, 0)
    # one output element per 2048 x 2048 block: the gradient of a 2048x2048 -> 1x1 resize
    x = np.random.default_rng(1).standard_normal((1, 2048, 2048, 1)).astype(np.float32)
    text = module("x = f32[1,2048,2048,1] parameter(0)", "zero = f32[] constant(0)",
                  "ROOT r = f32[1,1,1,1] reduce-window(x, zero), window={size=1x2048x2048x1 stride=1x2048x2048x1}, "
                  "to_apply=add_f32", extra=ADD)
    expected = np.add.accumulate(np.concatenate([[np.float32(0)], x.ravel()]), dtype=np.float32)[-1]
    assert_bits_equal(run(text, x).ravel()[0], expected)


def test_a_reduce_window_whose_declared_shape_is_wrong_is_caught_before_running():
    text = module("x = f32[4,4] parameter(0)", "zero = f32[] constant(0)",
                  "ROOT r = f32[3,3] reduce-window(x, zero), window={size=2x2 stride=2x2}, to_apply=add_f32", extra=ADD)
    with pytest.raises(ExecutionError, match=r"computes \[2, 2\]"):
        Executor(parse_hlo_module(text), {})


def test_a_module_beyond_host_memory_is_refused_before_allocating(monkeypatch):
    import resize_kernels.machine.memory as memory
    monkeypatch.setattr(memory, "host_memory_available", lambda: 1 << 20)
    text = module("x = f32[1024,1024] parameter(0)", "ROOT c = f32[1024,1024] copy(x)")
    with pytest.raises(ResizeKernelsError, match="memory"):
        random_arguments(parse_hlo_module(text))


@pytest.mark.parametrize("prefix, kind", [(" " * 3_000_000, "hlo"), ("\n// a comment\n" * 200_000, "hlo"),
                                          (" \t\n" * 1_000_000 + "// c\n", "stablehlo")])
def test_the_form_is_told_past_any_run_of_blanks_and_comments(prefix, kind):
    """Format detection walks blanks and comments in one linear scan (a regex's repeated group over 30 M blanks
    took gigabytes), then reads the first word."""
    from resize_kernels.compiler.hlo.formats import module_format

    word = "module {" if kind == "stablehlo" else "HloModule m"
    assert module_format(prefix + word) == kind
    assert module_format((prefix + word).encode()) == kind
    assert module_format(prefix) == "hlo"  # blanks alone: the HLO parser's error says what is missing


def test_a_module_past_the_size_limit_is_refused_before_any_look_at_it(monkeypatch):
    from resize_kernels.compiler import frontend

    monkeypatch.setattr(frontend, "MAX_MODULE_BYTES", 1000)
    with pytest.raises(InvalidValueError, match=r"requires a module of at most 0 MiB, got 1,001 bytes; split it"):
        frontend.parse_module(b" " * 1001)
    with pytest.raises(InvalidValueError, match="got 1,001 characters"):
        compile_hlo(" " * 1001)


@pytest.mark.parametrize("rank, form", [(255, "hlo"), (2_000_000, "hlo"), (255, "stablehlo"), (2_000_000, "stablehlo")])
def test_a_shape_past_the_rank_limit_is_refused_as_it_is_read(rank, form):
    """Issue 40.17: a shape of millions of dimensions (a few MB of text) is an error at its 255th dimension."""
    if form == "hlo":
        dims = ",".join(["1"] * rank)
        text = f"HloModule m\nENTRY e {{\n  ROOT p = f32[{dims}] parameter(0)\n}}\n"
    else:
        dims = "x".join(["1"] * rank)
        text = (f"module @m {{\n  func.func public @main(%arg0: tensor<{dims}xf32>) -> (tensor<{dims}xf32>) {{\n"
                f"    return %arg0 : tensor<{dims}xf32>\n  }}\n}}\n")
    with pytest.raises(ResizeKernelsError, match="at most 254 dimensions"):
        compile_hlo(text)
    assert compile_hlo(text.replace(dims, dims[:2 * 254 - 1]))  # 254 dimensions: a shape like any other
