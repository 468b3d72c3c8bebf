"""The cost model against issue 38's visible corpus, reported as a modelling paper would.

    python benchmarks/calibration.py --accelopt AccelOpt --nki-samples nki-samples --neuron-sdk aws-neuron-sdk
    python benchmarks/calibration.py --dma-only          # the DMA figures alone (no clones, a second)

Every "modelled" figure is machine/cost.py's; every "measured" one is public (the corpus below). Points:

- The NKI docs' DMA figures, each a transfer the DMA model (D1-D4) costs directly: one engine moving 32 KiB
  HBM->SBUF in 1416 ns and a 2 KiB transfer in 97 ns on trn2 (DMA overview's profiles); a 32 KiB transfer in
  1810 ns and a 4-byte one in 7 ns on trn1 (NKI performance guide); the throughput curve at 128 partitions
  (DMA bandwidth guide); a trn1 fp32 kernel moving 234.9 MB in 797.7 us, which the model's trn1 peak must allow
  (a bound: modelled peak time <= measured); the device-side floor, a (4, 3) float16 add in 3.2 us.
  benchmarks/fit_cost.py fits the undocumented figures to some of these (it says which): those points are
  the fit's residuals, not predictions.
- The kernels benchmarks/nki_corpus.py runs, where their source published a figure: the seven visible NKIBench
  baselines (measured), the NKI tutorials (measured: LayerNorm, matmul, Mamba) and the nki-samples perf tests
  (upper bounds: ``<=``; a bound counts as met when modelled <= bound). Figures measured with nki.benchmark
  include its host-device overhead (S4), so their modelled figure does too. The rest of NKIBench is held out:
  nki_corpus hides those figures, and this script never asks for them.

Per point: kernel, shape, target, measured or bound, modelled, ratio (modelled / measured) and the engine
that bounds it (the busiest; "latency" where no engine is busy half the modelled time). Then the mean absolute
percentage error over the measured points, the worst point, the error per kind of kernel, and the parameters
with their sources. ``--plot FILE`` draws predicted vs measured on log-log axes (matplotlib).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fit_cost as fit  # noqa: E402 - the DMA figures, the floor kernel and what was fitted to them
import nki_corpus as corpus  # noqa: E402 - the corpus's loaders, pinned commits and held-out rule

from resize_kernels import nki  # noqa: E402
from resize_kernels.machine import cost  # noqa: E402
from resize_kernels.machine.cost import (PARTITIONS_PER_DMA_ENGINE, DmaShape, dma_packets, program_cost,  # noqa: E402
                                         target_params)


@dataclass
class Point:
    kernel: str
    shape: str
    target: str
    published: float  # us
    modelled: float  # us
    bound: bool  # the published figure is an upper bound, not a measurement
    engine: str  # what bounds the modelled time
    source: str
    fitted: bool = False  # an input of benchmarks/fit_cost.py: a residual of the fit, not a prediction
    held_out: bool = False  # NKIBench's validation set: judged once the fit is frozen, never fitted to

    @property
    def ratio(self) -> float:
        return self.modelled / self.published

    @property
    def met(self) -> bool:
        """A bound is met when the model is under it; a measurement within +/-25%."""
        return self.modelled <= self.published if self.bound else abs(self.ratio - 1) <= 0.25


# -- the DMA figures ---------------------------------------------------------------------------------------------

def engine_us(shape: DmaShape, target: str) -> float:
    """How long the busiest DMA engine moves one transfer's data (D1, D2): what a profile's transfer bar shows."""
    return max(us for _, us in dma_packets(shape, target_params(target)))


def dma_points() -> list[Point]:
    eight = PARTITIONS_PER_DMA_ENGINE  # one engine serves 8 partitions (D1)
    points = [
        Point("dma: one engine, 32 KiB", f"{eight} x 4 KiB", "trn2", 1.416,
              engine_us(fit.transfer(eight, 4096, 4096), "trn2"), False, "dma", "DMA overview (profile)"),
        Point("dma: one 2 KiB transfer", f"{eight} x 256 B", "trn2", 0.097,
              engine_us(fit.transfer(eight, 256, 256), "trn2"), False, "dma", "DMA overview (profile)"),
        Point("dma: one 32 KiB transfer", f"{eight} x 4 KiB", "trn1", 1.810,
              engine_us(fit.transfer(eight, 4096, 4096), "trn1"), False, "dma", "NKI performance guide", True),
        Point("dma: one 4 B transfer", "1 x 4 B", "trn1", 0.007,
              engine_us(fit.transfer(1, 4, 4), "trn1"), False, "dma", "NKI performance guide", True),
    ]
    # The throughput curve (P = 128): time per byte of back-to-back transfers relative to the 32 KiB-per-partition
    # point, so that the point is "measured 1 / fraction, modelled its own" (a ratio, not microseconds).
    params = target_params("trn2")
    whole = fit.curve_time_per_byte(32768, params)
    for per_partition, fraction in fit.CURVE:
        points.append(Point("dma: throughput curve (relative)", f"128 x {per_partition} B vs 32 KiB", "trn2",
                            1 / fraction, fit.curve_time_per_byte(per_partition, params) / whole, False, "dma",
                            "DMA bandwidth guide (time per byte relative to 32 KiB)", True))
    trn1 = target_params("trn1")
    points.append(Point("dma: trn1 peak", "234.9 MB fp32 kernel", "trn1", fit.TRN1_KERNEL[1],
                        fit.TRN1_KERNEL[0] / trn1.peak_dma_gbps / 1e3, True, "dma", "public trn1 kernel (294 GB/s)",
                        True))
    floor = fit.floor_program()
    for target in ("trn1", "trn2"):
        report = program_cost(floor, target, events=False)
        points.append(Point("device floor: (4, 3) float16 add", "4x3 float16", target, fit.FLOOR_US,
                            report.modelled_us, False, bounding_engine(report), "nrtpy device benchmark", True))
    return points


# -- the corpus --------------------------------------------------------------------------------------------------

def bounding_engine(report) -> str:
    """The engine busiest over the modelled time (DMA: its engines' mean), or "latency" below half of it."""
    busy = {engine: us / (report.params.dma_engines if engine == "dma" else 1)
            for engine, us in report.busy_us.items()}
    engine, us = max(busy.items(), key=lambda item: item[1])
    return engine if us >= 0.5 * report.modelled_us else "latency"


def benchmarked(source, kernel: str) -> bool:
    """Whether the published figure is nki.benchmark's latency, which includes host-device overhead (S4): the
    nki-samples perf tests and the LayerNorm and matmul tutorials; NKIBench (neuron-profile total_time) and the
    Mamba tutorial ("device execution latency") are device time."""
    return source is corpus.SAMPLES or (source is corpus.SDK and not kernel.startswith("mamba"))


def corpus_points(args) -> list[Point]:
    sources = [(corpus.ACCELOPT, args.accelopt, corpus.nkibench_kernels),
               (corpus.SAMPLES, args.nki_samples, corpus.sample_kernels),
               (corpus.SDK, args.neuron_sdk, corpus.tutorial_kernels)]
    options = argparse.Namespace(no_numerics=True, numerics_mib=0.0, traceback=False, only=[],
                                 held_out=args.held_out)
    points = []
    with tempfile.TemporaryDirectory(prefix="calibration_") as tmp:
        for source, clone, collect in sources:
            if clone is None:
                print(f"{source.name}: not run (give {source.option} CLONE)", file=sys.stderr)
                continue
            for kernel in collect(clone.resolve(), Path(tmp), options):
                if args.only and not any(text in kernel.name for text in args.only):
                    continue
                for label, bench, published, published_us, target in kernel.shapes:
                    if not published_us or bench is None or published_us > 1e9:  # no figure, or not a latency
                        continue
                    print(f"[{source.label}] {kernel.name} {label} ...", file=sys.stderr, flush=True)
                    try:
                        result = bench()
                    except Exception as e:  # noqa: BLE001 - a kernel the simulator cannot run yet: said, skipped
                        print(f"  not modelled: {corpus.first_line(e)}", file=sys.stderr)
                        continue
                    report = program_cost(result.program, target, events=False)
                    us = report.benchmark_us if benchmarked(source, kernel.name) else report.modelled_us  # S4
                    bound = published.startswith("<=")
                    if kernel.name == fit.POOL:  # its thresholds are measured x 1.05: the fit's measurements
                        published_us, bound = published_us / fit.POOL_MARGIN, False
                    points.append(Point(kernel.name, label, target, published_us, us, bound,
                                        bounding_engine(report), source.label, kernel.name == fit.POOL,
                                        source is corpus.ACCELOPT and kernel.name not in corpus.NKIBENCH_VISIBLE))
                kernel.state.clear()
    return points


# -- the report --------------------------------------------------------------------------------------------------

def table(points: list[Point]) -> str:
    header = ("kernel", "shape", "target", "published us", "modelled us", "ratio", "bound by", "met", "use")
    rows = [(p.kernel, corpus.clip(p.shape, 48), p.target, ("<= " if p.bound else "= ") + f"{p.published:,.3f}",
             f"{p.modelled:,.3f}", f"{p.ratio:.2f}", p.engine, "yes" if p.met else "no", use(p)) for p in points]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    right = {3, 4, 5}

    def fmt(cells):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)])


def use(p: Point) -> str:
    return "held out" if p.held_out else "fit input" if p.fitted else "bound" if p.bound else "prediction"


def mape(points: list[Point]) -> float:
    return 100 * sum(abs(p.ratio - 1) for p in points) / len(points)


def kinds(points: list[Point]) -> list[str]:
    """The error per kind of kernel (the engine that bounds it)."""
    groups = {}
    for p in points:
        groups.setdefault(p.engine, []).append(p)
    lines = []
    for engine, group in sorted(groups.items()):
        ratios = sorted(p.ratio for p in group)
        lines.append(f"    {engine}-bound: {len(group)} points, mean absolute error {mape(group):.1f}%, ratios "
                     f"{ratios[0]:.2f} .. {ratios[-1]:.2f}")
    return lines


def summary(points: list[Point]) -> str:
    lines = []
    visible = [p for p in points if not p.held_out]
    for title, group in (("visible, every measured point", [p for p in visible if not p.bound]),
                         ("visible, predicted (not a fit input)", [p for p in visible if not p.bound and not p.fitted]),
                         ("HELD OUT (judged, never fitted)", [p for p in points if p.held_out and not p.bound])):
        if not group:
            continue
        worst = max(group, key=lambda p: abs(math.log(p.ratio)))
        lines.append(f"{title}: {len(group)}; within +/-25%: {sum(p.met for p in group)}; mean absolute "
                     f"percentage error {mape(group):.1f}% (median {median_error(group):.1f}%); worst {worst.kernel} "
                     f"({worst.shape}, {worst.target}): modelled {worst.ratio:.2f}x measured")
        lines += kinds(group)
    bounds = [p for p in visible if p.bound]
    if bounds:
        lines.append(f"upper bounds: {len(bounds)}; modelled under the bound: {sum(p.met for p in bounds)}")
    return "\n".join(lines)


def median_error(points: list[Point]) -> float:
    errors = sorted(100 * abs(p.ratio - 1) for p in points)
    mid = len(errors) // 2
    return errors[mid] if len(errors) % 2 else (errors[mid - 1] + errors[mid]) / 2


def parameters() -> str:
    lines = ["parameters (machine/cost.py's docstring gives each one's source; FITTED and ASSUMED are marked there):"]
    for target in ("trn1", "trn2"):
        lines.append(f"  {target_params(target).describe()}")
    lines.append(f"fitted by benchmarks/fit_cost.py ({cost.FIT_FILE.name}), each to:")
    for target, entries in json.loads(cost.FIT_FILE.read_text())["parameters"].items():
        for name, entry in entries.items():
            lines.append(f"  {target} {name} = {entry['value']:g}: {entry['fitted_to']}")
    return "\n".join(lines)


def plot(points: list[Point], path: Path) -> None:
    """Modelled vs published latency, log-log: colour by the bounding engine, marker by how the point is used
    (the throughput curve's points are ratios, not latencies: left out)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    points = [p for p in points if "relative" not in p.kernel]
    fig, ax = plt.subplots(figsize=(7, 6))
    colours = {"dma": "tab:blue", "vector": "tab:red", "tensor": "tab:green", "latency": "tab:grey",
               "scalar": "tab:orange", "gpsimd": "tab:purple"}
    markers = {"fit input": "s", "prediction": "o", "bound": "v", "held out": "D"}
    for kind, marker in markers.items():
        for engine, colour in colours.items():
            group = [p for p in points if use(p) == kind and p.engine == engine]
            if group:
                ax.scatter([p.published for p in group], [p.modelled for p in group], marker=marker, c=colour,
                           edgecolors="black" if kind == "held out" else "none", s=36, alpha=0.85)
    for kind, marker in markers.items():
        ax.scatter([], [], marker=marker, c="white", edgecolors="black", label=kind)
    for engine, colour in colours.items():
        if any(p.engine == engine for p in points):
            ax.scatter([], [], marker="o", c=colour, label=f"{engine}-bound")
    lo = min(min(p.published, p.modelled) for p in points) / 2
    hi = max(max(p.published, p.modelled) for p in points) * 2
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
    for f in (0.75, 1.25):
        ax.plot([lo, hi], [lo * f, hi * f], "k:", lw=0.6)
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), xlabel="published latency (us)",
           ylabel="modelled latency (us)", title="cost model vs public measurements (modelled; dotted: +/-25%)")
    ax.legend(loc="upper left", fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for source in (corpus.ACCELOPT, corpus.SAMPLES, corpus.SDK):
        parser.add_argument(source.option, type=Path, metavar="CLONE", help=f"a clone of {source.url}")
    parser.add_argument("--dma-only", action="store_true", help="the DMA figures only (no clones needed)")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="corpus kernels whose name contains TEXT (repeatable)")
    parser.add_argument("--plot", type=Path, metavar="FILE", help="write the log-log plot to FILE (.png, .svg)")
    parser.add_argument("--held-out", action="store_true",
                        help="also judge the model on NKIBench's held-out baselines (never fit to them)")
    args = parser.parse_args()
    if not args.dma_only and not any((args.accelopt, args.nki_samples, args.neuron_sdk)):
        parser.error("give the clones (see --help) or --dma-only")
    nki.install_aliases()
    warnings.simplefilter("ignore")  # device options the simulator ignores
    t0 = time.perf_counter()
    points = dma_points() + ([] if args.dma_only else corpus_points(args))
    print(table(points))
    print()
    print(summary(points))
    print()
    print(parameters())
    print(f"(every modelled figure is the cost model's, not a measurement; {time.perf_counter() - t0:.0f} s)")
    if args.plot:
        plot(points, args.plot)
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
