"""Names as XLA's conversion makes them: ``<opcode>.<n>``, numbered across the module in the order made.

After the StableHLO passes made what XLA's conversion makes, this pass names
every instruction as XLA names what it makes: the n-th ``transpose`` made in
the module is ``transpose.n``, the n-th parameter numbered i ``Arg_<i>.n``,
in parse order (``parse_order.rewrite``: each function's in text order, a
region's before the op that holds it). Run it before ``hlo_dce``: an
instruction the conversion made and nothing uses takes its number too, as in
XLA (``multiply.2`` may follow no ``multiply.1``). Computation names are the
parser's.
"""

from __future__ import annotations

from ..hlo import HloInstruction, HloModule
from .parse_order import Make, rewrite


def name_instructions(module: HloModule) -> None:
    """Pass: rename every instruction ``<opcode>.<n>`` (parameters ``Arg_<i>.<n>``), n counted per name."""
    counts: dict[str, int] = {}

    def visit(inst: HloInstruction, make: Make) -> None:
        base = f"Arg_{inst.parameter_number}" if inst.opcode == "parameter" else inst.opcode
        counts[base] = counts.get(base, 0) + 1
        inst.name = f"{base}.{counts[base]}"

    rewrite(module, visit)
