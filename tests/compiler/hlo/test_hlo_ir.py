"""Rewriting parsed modules: replacing and adding instructions and computations, then printing."""

from pathlib import Path

import pytest

from resize_kernels.compiler.hlo import (
    HloComputation, HloInstruction, Shape, parse_hlo_module, print_hlo_module,
)

DATA = Path(__file__).parent / "data"


def resize_module():
    return parse_hlo_module((DATA / "torch_xla_resize_nearest.hlo").read_text())


def test_replace_instruction_rewires_users():
    entry = resize_module().entry
    call = entry.instruction("custom-call.3")
    kernel = HloInstruction("nki.3", "InternalNativeNkiKernel", call.shape, call.operands,
                            {"kernel": '"resize_nearest"'})
    entry.replace_instruction(call, kernel)
    assert entry.instructions[2] is kernel and kernel.parent is entry and call.parent is None
    assert entry.instruction("transpose.4").operands == [kernel]
    assert all(call not in inst.operands for inst in entry.instructions)
    line = '  nki.3 = f32[1,38,59,1280]{3,2,1,0} InternalNativeNkiKernel(transpose.2), kernel="resize_nearest"\n'
    assert line in str(entry.module)
    assert print_hlo_module(parse_hlo_module(str(entry.module))) == str(entry.module)


def test_replace_instruction_rewires_the_root():
    entry = resize_module().entry
    old_root = entry.root
    new_root = HloInstruction("result", "copy", old_root.shape, old_root.operands)
    entry.replace_instruction(old_root, new_root)
    assert entry.root is new_root and new_root.is_root and not old_root.is_root
    assert "  ROOT result = (f32[1,1280,59,38]{3,2,1,0}) copy(transpose.4)\n" in str(entry.module)


def test_expanding_one_instruction_into_several():
    """A pass adds the new instructions before the old one, then replaces it by the last."""
    m = resize_module()
    entry = m.entry
    call = entry.instruction("custom-call.3")
    f32 = Shape("f32", ())
    zero = entry.add_instruction(HloInstruction("zero", "constant", f32, [], payload="0"), before=call)
    pooled = entry.add_instruction(
        HloInstruction("pool", "reduce-window", call.shape, [call.operands[0], zero],
                       {"window": "{size=1x1x1x1}", "to_apply": "add"}), before=call)
    x, y = (HloInstruction(n, "parameter", f32, [], payload=str(i)) for i, n in enumerate("xy"))
    m.add_computation(HloComputation("add", [x, y, HloInstruction("sum", "add", f32, [x, y])]))
    entry.replace_instruction(call, pooled)
    assert [i.name for i in entry.instructions] == ["p0.1", "transpose.2", "zero", "pool", "transpose.4", "tuple.5"]
    assert entry.instruction("transpose.4").operands == [pooled]
    assert pooled.to_apply is m.computation("add") and m.computations[0].name == "add"
    assert zero.literal == 0 and pooled.window.size == (1, 1, 1, 1)
    assert print_hlo_module(parse_hlo_module(str(m))) == str(m)


def test_expand_replaces_many_instructions_in_one_pass():
    entry = resize_module().entry
    call, transpose = entry.instruction("custom-call.3"), entry.instruction("transpose.4")
    first = HloInstruction("first", "copy", call.shape, call.operands)
    second = HloInstruction("second", "copy", call.shape, [first])
    # transpose.4's replacement reads custom-call.3, itself replaced: it gets custom-call.3's replacement
    moved = HloInstruction("moved", "transpose", transpose.shape, [call], dict(transpose.attributes))
    entry.expand({call: [first, second], transpose: [moved]})
    assert [i.name for i in entry.instructions] == ["p0.1", "transpose.2", "first", "second", "moved", "tuple.5"]
    assert moved.operands == [second] and entry.root.operands == [moved]
    assert call.parent is None and transpose.parent is None
    assert print_hlo_module(parse_hlo_module(str(entry.module))) == str(entry.module)


def test_expand_errors():
    entry = resize_module().entry
    call = entry.instruction("custom-call.3")
    with pytest.raises(ValueError, match="uses the instruction it replaces"):
        entry.expand({call: [HloInstruction("c", "copy", call.shape, [call])]})
    with pytest.raises(ValueError, match="at least one new instruction"):
        entry.expand({call: []})
    with pytest.raises(ValueError, match="already has an instruction named 'p0.1'"):
        entry.expand({call: [HloInstruction("p0.1", "copy", call.shape, [])]})
    with pytest.raises(ValueError, match="only"):
        entry.expand({HloInstruction("stray", "copy", call.shape, []): [HloInstruction("s", "copy", call.shape, [])]})


def test_rewrite_errors():
    entry = resize_module().entry
    call, transpose = entry.instruction("custom-call.3"), entry.instruction("transpose.4")
    with pytest.raises(ValueError, match="uses 'custom-call.3', so it cannot replace it"):
        entry.replace_instruction(call, HloInstruction("c", "copy", call.shape, [call]))
    with pytest.raises(ValueError, match="already has an instruction named 'transpose.4'"):
        entry.replace_instruction(call, HloInstruction("transpose.4", "copy", call.shape, []))
    with pytest.raises(ValueError, match="is not in computation"):
        entry.replace_instruction(HloInstruction("stray", "copy", call.shape, []), call)
    with pytest.raises(ValueError, match="already belongs to computation"):
        HloComputation("other", [transpose])
    with pytest.raises(ValueError, match="already has an instruction named 'p0.1'"):
        entry.add_instruction(HloInstruction("p0.1", "copy", call.shape, []))
    with pytest.raises(ValueError, match="instruction name must match"):
        HloInstruction("bad name", "copy", call.shape, [])
    with pytest.raises(ValueError, match="shape must be a Shape"):
        HloInstruction("ok", "copy", "f32[2]", [])
    with pytest.raises(ValueError, match="already has a computation named"):
        entry.module.add_computation(HloComputation("SyncTensorsGraph.12"))
    with pytest.raises(ValueError, match="already has an ENTRY"):
        entry.module.add_computation(HloComputation("main2", is_entry=True))


def test_root_can_be_set_explicitly():
    entry = resize_module().entry
    entry.root = entry.instruction("transpose.4")
    assert entry.root.name == "transpose.4"
    printed = str(entry.module)
    assert "  ROOT transpose.4 =" in printed and "  tuple.5 =" in printed
    assert parse_hlo_module(printed).entry.root.name == "transpose.4"
