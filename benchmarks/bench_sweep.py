"""The verifier's exhaustive sweep: time and pairs per second, next to the figure it started from.

Runs `sweep((1, n), axis, kernel, jobs)` for each axis (the same proof as
`resize-kernels verify --sweep n`: every pair's Program traced and run on the
simulator, every output element checked) and prints the time, the pairs per
second, and the ratio to the baseline: 9 min 50 s for 1..512 on both axes with
the default kernel on 2 cores (issue 11, measured before the work on it), i.e.
about 890 pairs/s. The goal there: 2 minutes (4,370 pairs/s).
"""

import argparse
import os
import time

from resize_kernels.verifier import sweep

BASELINE_PAIRS_PER_S = 2 * 512 * 512 / (9 * 60 + 50)
GOAL_PAIRS_PER_S = 2 * 512 * 512 / 120


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=512, help="sweep every (in, out) pair in 1..n (default 512)")
    parser.add_argument("--kernel", default=None, help="kernel variant (default: the default kernel)")
    parser.add_argument("--axis", choices=["w", "h", "both"], default="both")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    total_pairs, total_s = 0, 0.0
    for axis in ["w", "h"] if args.axis == "both" else [args.axis]:
        t0 = time.perf_counter()
        result = sweep(args.n, axis, args.kernel, jobs=args.jobs)
        seconds = time.perf_counter() - t0
        total_pairs, total_s = total_pairs + result.checked, total_s + seconds
        print(f"{result.summary().splitlines()[0]}\n  {seconds:,.1f} s, {result.checked / seconds:,.0f} pairs/s "
              f"on {args.jobs} processes")
    rate = total_pairs / total_s
    print(f"all: {total_pairs:,} pairs in {total_s:,.1f} s = {rate:,.0f} pairs/s; "
          f"{rate / BASELINE_PAIRS_PER_S:.2f}x the baseline ({BASELINE_PAIRS_PER_S:,.0f} pairs/s), "
          f"{rate / GOAL_PAIRS_PER_S:.2f}x the goal ({GOAL_PAIRS_PER_S:,.0f} pairs/s)")


if __name__ == "__main__":
    main()
