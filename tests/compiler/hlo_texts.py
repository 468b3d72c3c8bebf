"""HLO texts for the compiler and runtime tests: the torch_xla-shaped resize module in both dump styles."""

import re
from pathlib import Path

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.hlo"))
NUMPY_DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
ZERO_ZERO = r'"\"00\""'  # backend_config as torch_xla writes it: align_corners=0, half_pixel_centers=0


def shape(dtype: str, dims, layout: str = "") -> str:
    return f"{dtype}[{','.join(map(str, dims))}]{layout}"


def resize_module(style: str = "old", dtype: str = "f32", n: int = 1, c: int = 8, in_hw=(30, 20), out_hw=(59, 38),
                  backend_config: str = ZERO_ZERO) -> str:
    """NCHW -> transpose {0,3,2,1} -> custom-call ResizeNearest -> transpose back, as torch_xla lowers upsample.

    "old": torch_xla's dump (%names, operand shapes, metadata, a tuple ROOT);
    "new": current XLA's (bare names, non-default layouts, the transpose as ROOT).
    """
    (h, w), (oh, ow) = in_hw, out_hw
    x, xt = shape(dtype, (n, c, h, w), "{3,2,1,0}"), shape(dtype, (n, w, h, c), "{1,2,3,0}")
    r, y = shape(dtype, (n, ow, oh, c), "{3,2,1,0}"), shape(dtype, (n, c, oh, ow), "{3,2,1,0}")
    call = f'custom_call_target="ResizeNearest", backend_config={backend_config}'
    if style == "new":
        return (f"HloModule jit_upsample, entry_computation_layout={{({x})->{y}}}\n\n"
                f"ENTRY main.4 {{\n"
                f"  x.1 = {x} parameter(0)\n"
                f"  transpose.2 = {xt} transpose(x.1), dimensions={{0,3,2,1}}\n"
                f"  upsample_nearest2d.1 = {r} custom-call(transpose.2), {call}\n"
                f"  ROOT transpose.3 = {y} transpose(upsample_nearest2d.1), dimensions={{0,3,2,1}}\n"
                f"}}\n")
    meta = 'metadata={op_type="aten__upsample_nearest2d" op_name="aten__upsample_nearest2d" source_line=4036}'
    return (f"HloModule SyncTensorsGraph.7, entry_computation_layout={{({x})->({y})}}\n\n"
            f"ENTRY %SyncTensorsGraph.7 (p0.1: {shape(dtype, (n, c, h, w))}) -> ({shape(dtype, (n, c, oh, ow))}) {{\n"
            f'  %p0.1 = {x} parameter(0), metadata={{op_type="xla__device_data" op_name="xla__device_data"}}\n'
            f"  %transpose.2 = {xt} transpose({x} %p0.1), dimensions={{0,3,2,1}}, {meta}\n"
            f"  %custom-call.3 = {r} custom-call({xt} %transpose.2), {call}, {meta}\n"
            f"  %transpose.4 = {y} transpose({r} %custom-call.3), dimensions={{0,3,2,1}}, {meta}\n"
            f"  ROOT %tuple.5 = ({y}) tuple({y} %transpose.4)\n"
            f"}}\n")


def custom_call_module(operand: str = "f32[1,4,4,8]", result: str = "f32[1,8,8,8]", operands: int = 1,
                       attributes: str = f'custom_call_target="ResizeNearest", backend_config={ZERO_ZERO}') -> str:
    """A module whose ROOT is one custom-call ``rn`` on ``operands`` parameters of shape ``operand``."""
    params = "".join(f"  p{i} = {operand} parameter({i})\n" for i in range(operands))
    names = ", ".join(f"p{i}" for i in range(operands))
    return f"HloModule m\n\nENTRY main {{\n{params}  ROOT rn = {result} custom-call({names}), {attributes}\n}}\n"


# A rough tokenisation, independent of the lexers: blanks, strings, words, single characters.
PIECES = re.compile(r'\s+|"(?:\\.|[^"\\\n])*"|[A-Za-z0-9_.%+\-]+|.', re.S)


@st.composite
def mutated(draw, texts: list[str]) -> str:
    """One of ``texts`` cut short, or with one piece deleted or duplicated (the fuzz tests' inputs)."""
    text = draw(st.sampled_from(texts))
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
