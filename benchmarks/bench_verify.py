"""Verifier throughput: shapes per second on small shapes, output pixels per second on large ones.

Measured in one run against a peer: the numpy reference index map for the same
shapes (what a check that trusts the kernel's arithmetic would cost).
"""

import argparse
import time

import numpy as np

from resize_kernels import semantics
from resize_kernels.verifier import axis_shapes, verify


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kernel", default=None)
    parser.add_argument("--n", type=int, default=48, help="small sweep: every (in, out) pair in 1..n on the w axis")
    args = parser.parse_args()

    shapes = [axis_shapes("w", i, o) for i in range(1, args.n + 1) for o in range(1, args.n + 1)]
    t0 = time.perf_counter()
    assert all(verify(i, o, args.kernel).ok or args.kernel == "seed" for i, o in shapes)
    small_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for (_, ih, iw, _), (_, oh, ow, _) in shapes:
        semantics.index_map((ih, iw), (oh, ow))
    ref_s = time.perf_counter() - t0
    print(f"small shapes ({len(shapes):,}, w axis 1..{args.n}): {len(shapes) / small_s:,.0f} shapes/s verified, "
          f"reference map alone {len(shapes) / ref_s:,.0f} shapes/s, ratio {small_s / ref_s:.0f}x")

    for i_shape, o_shape in [((1, 512, 512, 1), (1, 1024, 1024, 1)), ((1, 30, 20, 1), (1, 1180, 760, 1))]:
        t0 = time.perf_counter()
        report = verify(i_shape, o_shape, args.kernel)
        dt = time.perf_counter() - t0
        t0 = time.perf_counter()
        semantics.index_map(i_shape[1:3], o_shape[1:3])
        ref = time.perf_counter() - t0
        pixels = np.prod(o_shape[:3])
        print(f"large {i_shape} -> {o_shape}: {'exact' if report.ok else 'NOT exact'}, "
              f"{pixels / dt / 1e6:.2f} M output pixels/s verified ({dt:.2f} s), reference map {ref * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
