"""Exhaustive check of ``semantics.torch_index`` and ``frontends.torch.forward_path`` against F.interpolate itself.

Every (in, out) in 1..N for "nearest" and "nearest-exact": rank 3, rank 4 on each path (forced: contiguous with one
channel and out_h + out_w > 128 for "generic", channels_last with 4 channels for "indexed"), and the backward map
(from the counts the backward sums, which fix a monotone map); then random scale factors on the same four routes;
then random whole calls (batch, channels 1..6, memory format, non-contiguous views, every dtype) where the map is
read back from the output and the path is the one ``forward_path`` predicts. Prints the counts and any mismatch.

    python benchmarks/torch_index_sweep.py [--n 300] [--scales 5000] [--calls 3000]
"""

import argparse
import random
import time

import numpy as np
import torch
import torch.nn.functional as F

from resize_kernels.frontends.torch import forward_path
from resize_kernels.semantics import scaled_size, torch_index

torch.set_num_threads(1)
GENERIC = forward_path(torch.zeros(1, 1, 1), (1, 1))  # "generic", or "generic_unfused" in torch's DEFAULT x86 build
MODES = {"nearest": False, "nearest-exact": True}
BACKWARD = {False: (torch.ops.aten.upsample_nearest1d_backward, torch.ops.aten.upsample_nearest2d_backward),
            True: (torch.ops.aten._upsample_nearest_exact1d_backward, torch.ops.aten._upsample_nearest_exact2d_backward)}


def axis_maps(route: str, i: int, o: int | None, scale: float | None, mode: str):
    """(torch's map on the tested axis, the output size) for one route, read from F.interpolate's output."""
    kw = dict(size=None, scale_factor=None, mode=mode)
    if route == "rank3":
        x = torch.arange(i, dtype=torch.float32).reshape(1, 1, i)
        kw.update(size=o) if scale is None else kw.update(scale_factor=scale)
        y = F.interpolate(x, **kw)[0, 0]
    else:
        x = torch.arange(i, dtype=torch.float32).reshape(1, 1, i, 1)
        if route == "indexed":
            x = x.expand(1, 4, i, 1).contiguous(memory_format=torch.channels_last)
        if scale is None:
            kw.update(size=(o, 129))
        else:
            kw.update(scale_factor=(scale, 129.0))
        y = F.interpolate(x, **kw)[0, -1, :, 0]
    return y.long().numpy(), y.shape[0]


def backward_counts(rank: int, i: int, o: int, scale: float | None, exact: bool):
    """dx for dy = ones: how many outputs each source feeds on torch's backward map."""
    if rank == 3:
        dy = torch.ones(1, 1, o)
        return BACKWARD[exact][0](dy, [o], [1, 1, i], scale).reshape(-1).long().numpy()
    dy = torch.ones(1, 1, o, 1)
    return BACKWARD[exact][1](dy, [o, 1], [1, 1, i, 1], scale, None).reshape(-1).long().numpy()


def sweep_pairs(n: int, stats: dict, bad: list):
    for mode, exact in MODES.items():
        for route in ("rank3", "generic", "indexed"):
            path = {"rank3": GENERIC, "generic": GENERIC}.get(route, route)
            for i in range(1, n + 1):
                for o in range(1, n + 1):
                    got, _ = axis_maps(route, i, o, None, mode)
                    stats[f"sizes {mode} {route}"] = stats.get(f"sizes {mode} {route}", 0) + 1
                    if not np.array_equal(got, torch_index(i, o, exact, None, path)):
                        bad.append(("sizes", mode, route, i, o))
        for rank in (3, 4):
            for i in range(1, n + 1):
                for o in range(1, n + 1):
                    got = backward_counts(rank, i, o, None, exact)
                    stats[f"sizes {mode} backward rank{rank}"] = stats.get(f"sizes {mode} backward rank{rank}", 0) + 1
                    if not np.array_equal(got, np.bincount(torch_index(i, o, exact, None, "indexed"), minlength=i)):
                        bad.append(("backward", mode, rank, i, o))


def random_scales(n: int, count: int, rng: random.Random):
    """Scale factors: log-uniform, near integers and near simple ratios (where float32(1/s) rounding bites)."""
    out = []
    while len(out) < count:
        i = rng.randint(1, n)
        kind = rng.random()
        if kind < 0.4:
            s = 2 ** rng.uniform(-3, 3.5)
        elif kind < 0.7:
            s = rng.choice([0.5, 1, 1.5, 2, 3, 4]) * (1 + rng.choice([-1, 1]) * 10 ** rng.uniform(-9, -1.5))
        else:
            o = rng.randint(1, 2 * n)
            s = o / i * (1 + rng.choice([-1, 0, 1]) * rng.choice([1e-16, 1e-12, 1e-7, 1e-4]))
        if 1 <= scaled_size(i, s) <= 4 * n:
            out.append((i, s))
    return out


def sweep_scales(n: int, count: int, stats: dict, bad: list, rng: random.Random):
    for i, s in random_scales(n, count, rng):
        o = scaled_size(i, s)
        for mode, exact in MODES.items():
            for route in ("rank3", "generic", "indexed"):
                got, size = axis_maps(route, i, None, s, mode)
                stats[f"scales {mode} {route}"] = stats.get(f"scales {mode} {route}", 0) + 1
                path = {"rank3": GENERIC, "generic": GENERIC}.get(route, route)
                if size != o or not np.array_equal(got, torch_index(i, o, exact, s, path)):
                    bad.append(("scale", mode, route, i, s, size, o))
            for rank in (3, 4):
                stats[f"scales {mode} backward rank{rank}"] = stats.get(f"scales {mode} backward rank{rank}", 0) + 1
                if not np.array_equal(backward_counts(rank, i, o, s, exact),
                                      np.bincount(torch_index(i, o, exact, s, "indexed"), minlength=i)):
                    bad.append(("scale backward", mode, rank, i, s))


DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.uint8)


def random_calls(count: int, stats: dict, bad: list, rng: random.Random):
    """Whole 4-D calls: the map read from outputs of row- and column-numbered inputs, path as forward_path says."""
    for _ in range(count):
        n, c = rng.randint(1, 3), rng.randint(1, 6)
        h, w = rng.randint(1, 120), rng.randint(1, 120)  # values < 256: exact in every dtype
        dtype, mode = rng.choice(DTYPES), rng.choice(list(MODES))
        if rng.random() < 0.5:
            scales = (2 ** rng.uniform(-2, 2), 2 ** rng.uniform(-2, 2))
            out = (scaled_size(h, scales[0]), scaled_size(w, scales[1]))
            if min(out) < 1:
                continue
            kw = dict(scale_factor=scales)
        else:
            scales, out = (None, None), (rng.randint(1, 150), rng.randint(1, 150))
            kw = dict(size=out)
        layout = rng.choice(["contiguous", "channels_last", "sliced"])
        rows = torch.arange(h).reshape(1, 1, h, 1).expand(n, c, h, w)
        cols = torch.arange(w).reshape(1, 1, 1, w).expand(n, c, h, w)
        maps = []
        for v in (rows, cols):
            v = v.to(dtype)
            if layout == "channels_last":
                v = v.contiguous(memory_format=torch.channels_last)
            elif layout == "sliced":  # a non-contiguous view: every other channel of a wider tensor
                v = torch.cat([v, v], 1).contiguous()[:, ::2]
            else:
                v = v.contiguous()
            y = F.interpolate(v, mode=mode, **kw)
            maps.append((y, v))
        (y_rows, v), (y_cols, _) = maps
        path = forward_path(v, out)
        exact = MODES[mode]
        want_h = torch_index(h, out[0], exact, scales[0], path)
        want_w = torch_index(w, out[1], exact, scales[1], path)
        key = f"calls {path}"
        stats[key] = stats.get(key, 0) + 1
        ok = (tuple(y_rows.shape[2:]) == out and all(np.array_equal(y_rows[b, k, :, 0].long().numpy(), want_h)
                                                    and np.array_equal(y_cols[b, k, 0, :].long().numpy(), want_w)
                                                    for b in range(n) for k in range(c)))
        if not ok:
            bad.append(("call", n, c, h, w, dtype, mode, kw, layout, path))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--scales", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    stats, bad = {}, []
    t0 = time.time()
    random_calls(args.calls, stats, bad, rng)
    sweep_scales(args.n, args.scales, stats, bad, rng)
    sweep_pairs(args.n, stats, bad)
    for k, v in sorted(stats.items()):
        print(f"{k:40s} {v:8d}")
    print(f"checks {sum(stats.values())}, mismatches {len(bad)}, {time.time() - t0:.0f} s, torch {torch.__version__}, "
          f"cpu capability {torch.backends.cpu.get_cpu_capability()}")
    for b in bad[:30]:
        print("MISMATCH", b)


if __name__ == "__main__":
    main()
