"""HLO module -> text, in the current XLA style: bare names, operands by name, no signatures.

The output is canonical: printing a parsed module, parsing that and printing
again gives the same text, so tests compare modules by their printed form.
Attribute values and payloads print as ``str(value)``: raw text as parsed, or
a typed value's canonical text (attributes.py).
"""

from __future__ import annotations


def print_hlo_module(module) -> str:
    """The module as HLO text that parse_hlo_module accepts."""
    lines = [f"HloModule {module.name}{_attributes(module.attributes)}"]
    for section, entries in (module.stack_frame_index or {}).items():
        lines += ["", section, *(f"{number} {value}" for number, value in entries)]
    for comp in module.computations:
        lines += ["", *print_hlo_computation(comp).splitlines()]
    return "\n".join(lines) + "\n"


def print_hlo_computation(comp) -> str:
    """One computation: header, one instruction per line, closing brace and its attributes."""
    root = comp.root
    body = [f"  {print_hlo_instruction(inst, is_root=inst is root)}" for inst in comp.instructions]
    entry = "ENTRY " if comp.is_entry else ""
    return "\n".join([f"{entry}{comp.name} {{", *body, f"}}{_attributes(comp.attributes)}"])


def print_hlo_instruction(inst, is_root: bool = False) -> str:
    """``[ROOT ]name = shape opcode(operands or payload), key=value, ...``"""
    inside = str(inst.payload) if inst.payload is not None else ", ".join(op.name for op in inst.operands)
    root = "ROOT " if is_root else ""
    return f"{root}{inst.name} = {inst.shape} {inst.opcode}({inside}){_attributes(inst.attributes)}"


def _attributes(attributes: dict) -> str:
    return "".join(f", {key}={str(value)}" for key, value in attributes.items())
