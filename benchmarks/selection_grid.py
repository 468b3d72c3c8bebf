"""What the default picks against the best candidate kernel, on a grid of narrow and one-column shapes (modelled).

For each shape: the modelled time (trn1 cost model) of "rows", "rowreuse",
"batched" and "twopass", the kernel the default chooses, and the ratio of its
time to the fastest candidate's. These outputs are all below
select.COMPARE_FROM_BYTES, where the selection stage takes the first candidate
that fits without comparing: the grid checks that rule against the candidates'
modelled times. Rerun it when the cost model or a kernel changes.
"""

import argparse

import resize_kernels as rk

CANDIDATES = ("rows", "rowreuse", "batched", "twopass")
# (in_w, out_w, channels, dtype): one-column outputs (the verifier's h sweep), narrow images, small channels
WIDTHS = [(3, 1, 1, "int32"), (3, 2, 1, "int32"), (4, 7, 64, "float32"), (16, 9, 1, "float32"),
          (8, 5, 3, "uint8"), (20, 38, 1, "float32")]
HEIGHTS = [2, 7, 37, 100, 255, 300, 512]
OUT_HEIGHTS = [1, 3, 37, 99, 256, 300, 511]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="trn1")
    args = parser.parse_args()
    worst, ratios = 0.0, []
    print(f"{'in':>16} {'out':>16} {'dtype':>7}  " + "  ".join(f"{k:>9}" for k in CANDIDATES) + "  auto      auto/best")
    for in_h in HEIGHTS:
        for out_h in OUT_HEIGHTS:
            for in_w, out_w, c, dtype in WIDTHS:
                a, b = (1, in_h, in_w, c), (1, out_h, out_w, c)
                us = {k: rk.cost(a, b, kernel=k, target=args.target, dtype=dtype).modelled_us for k in CANDIDATES}
                chosen = rk.trace_resize(a, b[1:3], dtype).selection.kernel
                chosen_us = rk.cost(a, b, kernel="auto", target=args.target, dtype=dtype).modelled_us
                ratio = chosen_us / min(us.values())
                ratios.append(ratio)
                worst = max(worst, ratio)
                print(f"{'x'.join(map(str, a)):>16} {'x'.join(map(str, b)):>16} {dtype:>7}  "
                      + "  ".join(f"{us[k]:9.1f}" for k in CANDIDATES) + f"  {chosen:<9} {ratio:6.2f}", flush=True)
    ratios.sort()
    print(f"modelled ({args.target}): auto / best candidate over {len(ratios)} shapes: median "
          f"{ratios[len(ratios) // 2]:.2f}, worst {worst:.2f}")


if __name__ == "__main__":
    main()
