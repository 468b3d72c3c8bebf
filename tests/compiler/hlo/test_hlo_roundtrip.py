"""Printing is canonical: print(parse(text)) parses again and prints identically."""

import re
from pathlib import Path

import pytest

from resize_kernels.compiler.hlo import parse_hlo_module, print_hlo_module

DATA = Path(__file__).parent / "data"
FILES = sorted(DATA.glob("*.hlo"))


def test_there_are_data_files():
    assert len(FILES) >= 5


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_round_trip(path):
    module = parse_hlo_module(path.read_text())
    printed = print_hlo_module(module)
    assert str(module) == printed
    assert print_hlo_module(parse_hlo_module(printed)) == printed
    assert "%" not in re.sub(r'"(?:\\.|[^"\\])*"', "", printed)  # new style: bare names


def test_new_style_text_prints_back_unchanged():
    text = (DATA / "jax_avg_pool.hlo").read_text()
    assert print_hlo_module(parse_hlo_module(text)) == text


def test_old_style_prints_in_new_style():
    printed = print_hlo_module(parse_hlo_module((DATA / "torch_xla_resize_nearest.hlo").read_text()))
    assert "  transpose.2 = f32[1,20,30,1280]{1,2,3,0} transpose(p0.1), dimensions={0,3,2,1}\n" in printed
    assert "ENTRY SyncTensorsGraph.12 {\n" in printed
    assert "  ROOT tuple.5 = (f32[1,1280,59,38]{3,2,1,0}) tuple(transpose.4)\n" in printed


def test_comments_and_whitespace_are_normalised_in_raw_values():
    m = parse_hlo_module("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), metadata={a=1 /* c */  b=%x\n  c=\"%y\"}\n}\n")
    assert m.entry.root.attributes["metadata"] == '{a=1 b=x c="%y"}'
