"""Print the README's cost-model table: the seed kernel against the default on four shapes.

Every time in it is modelled by machine/cost.py (documented figures, and parameters
fitted to public Trainium measurements: benchmarks/fit_cost.py), not measured.
Re-run after kernels change: ``python benchmarks/cost_table.py``.
"""

from __future__ import annotations

import argparse
import sys
import time

import resize_kernels as rk

#: (what, NHWC in, NHWC out)
SHAPES = [
    ("SD2 UNet upsample", (10, 30, 20, 1280), (10, 59, 38, 1280)),
    ("2x integer upsample", (8, 64, 64, 256), (8, 128, 128, 256)),
    ("3x integer downsample", (8, 192, 192, 256), (8, 64, 64, 256)),
    ("large map", (1, 512, 512, 64), (1, 1024, 1024, 64)),
]


def _shape(s) -> str:
    return "x".join(map(str, s))


def _kernel_of(report) -> str:
    """The kernel a report costed, from its label ("kernel sourcerows (column chunks x1), auto's pick, ...")."""
    return report.label.removeprefix("kernel ").split(" ")[0].split(",")[0]


def table(target: str) -> str:
    lines = [f"| shape | kernel | modelled time ({target}) | roofline | efficiency | instructions | DMAs (indirect) "
             f"| DMA bytes | modelled default / seed |",
             "|---|---|---|---|---|---|---|---|---|"]
    for n, (what, in_shape, out_shape) in enumerate(SHAPES, 1):
        print(f"[{n}/{len(SHAPES)}] tracing and costing {what} ...", file=sys.stderr, flush=True)
        seed = rk.cost(in_shape, out_shape, kernel="seed", target=target)
        default = rk.cost(in_shape, out_shape, target=target)
        name = f"{what}: {_shape(in_shape)} -> {_shape(out_shape[1:3])}"
        for kernel, r in (("seed", seed), (f"default ({_kernel_of(default)})", default)):
            ratio = f"{default.modelled_us / seed.modelled_us:.2f}x" if r is default else ""
            lines.append(f"| {name if r is seed else ''} | {kernel} | {r.modelled_us:,.0f} us | "
                         f"{r.roofline_us:,.0f} us | {r.efficiency:.0%} | "
                         f"{sum(r.instructions.values()):,} | {r.dma_count:,} ({r.dma_indirect:,}) | "
                         f"{r.dma_bytes:,} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=["trn1", "trn2"], default="trn1")
    args = parser.parse_args()
    t0 = time.perf_counter()
    print(table(args.target))
    print(f"\n(float32; times modelled by the {args.target} cost model, not measured; "
          f"table built in {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
