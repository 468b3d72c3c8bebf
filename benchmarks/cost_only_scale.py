"""What a cost-only ``nki.benchmark`` takes on the largest public kernels: nki-samples' flash attention perf
shapes (flash_fwd, flash_attn_bwd), each run as its own perf test runs it, in its own process.

    python benchmarks/cost_only_scale.py --nki-samples nki-samples [--only flash_fwd]

The clone is read as benchmarks/nki_corpus.py reads it (the pinned commit, ``git archive``, nothing copied into
the project). Per shape: the instructions the trace emitted (what the tracer's budget counts) and those the
Program kept (after folding copies into their producers), the wall time of the perf test (its inputs, the
trace, the cost), the process's peak resident memory, and the modelled latency. The last lines give the
largest time and memory per emitted instruction: what nki/tracer.py's SECONDS_PER_INSTRUCTION and
BYTES_PER_INSTRUCTION must cover for the budget's error message to be right.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

KERNELS = ("flash_fwd", "flash_attn_bwd")


def resident_bytes() -> int:
    """The process's resident memory now (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def run_shape(clone: Path, kernel: str, index: int) -> dict:
    """Run perf shape ``index`` of ``kernel`` here; what it took."""
    sys.path.insert(0, str(Path(__file__).parent))
    import nki_corpus

    from resize_kernels import nki
    from resize_kernels.nki import tracer

    nki.install_aliases()
    warnings.simplefilter("ignore")
    emitted = []
    finish = tracer.Tracer.finish

    def counting_finish(self):  # the instructions emitted, before the folds drop some
        emitted.append(len(self.program.instructions))
        finish(self)

    tracer.Tracer.finish = counting_finish
    with tempfile.TemporaryDirectory(prefix="cost_only_scale_") as tmp:
        args = argparse.Namespace(no_numerics=True, numerics_mib=256.0, traceback=False, only=[], held_out=False)
        found = next(k for k in nki_corpus.sample_kernels(clone, Path(tmp), args) if k.name == kernel)
        label, bench, *_ = found.shapes[index]
        before, t0 = resident_bytes(), time.perf_counter()
        try:
            result = bench()
            outcome = dict(kept=len(result.program.instructions), us=result.nc_latency.get_latency_percentile(50))
        except Exception as e:  # noqa: BLE001 - a failing shape is a row
            outcome = dict(error=f"{type(e).__name__}: {str(e).splitlines()[0]}")
        seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return dict(label=label, emitted=emitted[-1] if emitted else 0, seconds=seconds, peak=peak,
                grown=max(peak - before, 0), **outcome)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nki-samples", type=Path, required=True, metavar="CLONE",
                        help="a clone of https://github.com/aws-neuron/nki-samples")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="run only kernels whose name contains TEXT (repeatable)")
    parser.add_argument("--child", nargs=2, metavar=("KERNEL", "INDEX"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    clone = args.nki_samples.resolve()
    if args.child:
        print(json.dumps(run_shape(clone, args.child[0], int(args.child[1]))))
        return 0
    sys.path.insert(0, str(Path(__file__).parent))
    import nki_corpus

    from resize_kernels import nki

    nki.install_aliases()
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="cost_only_scale_") as tmp:
        namespace = argparse.Namespace(no_numerics=True, numerics_mib=256.0, traceback=False, only=[],
                                       held_out=False)
        listed = {k.name: len(k.shapes) for k in nki_corpus.sample_kernels(clone, Path(tmp), namespace)}
    rows = []
    print(f"{'kernel':<15} {'emitted':>9} {'kept':>9} {'s':>6} {'peak MB':>8} {'modelled us':>12}  shape")
    for kernel in KERNELS:
        if args.only and not any(text in kernel for text in args.only):
            continue
        for index in range(listed[kernel]):
            done = subprocess.run([sys.executable, __file__, "--nki-samples", str(clone), "--child", kernel,
                                   str(index)], capture_output=True, text=True)
            if done.returncode:
                print(f"{kernel:<15} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            result = f"{row['us']:>12,.1f}" if "us" in row else f"  error: {row['error'][:100]}"
            print(f"{kernel:<15} {row['emitted']:>9,} {row.get('kept', 0):>9,} {row['seconds']:>6.1f} "
                  f"{row['peak'] / 2**20:>8,.0f} {result}  {row['label']}", flush=True)
    measured = [r for r in rows if r["emitted"]]
    if measured:
        print(f"\nat most {max(r['seconds'] / r['emitted'] for r in measured) * 1e6:.0f} us and "
              f"{max(r['grown'] / r['emitted'] for r in measured):,.0f} bytes (resident memory grown during the "
              f"benchmark) per emitted instruction")
    return 0


if __name__ == "__main__":
    sys.exit(main())
