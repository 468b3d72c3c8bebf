"""The ``resize-kernels`` command."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from . import semantics
from .api import compile_hlo, cost, executable, kernel_variant, trace_resize
from .compiler.codegen import CodegenError
from .compiler.hlo import HloParseError
from .compiler.passes import ValidationError
from .kernels import FORWARD_KERNELS
from .machine.cost import TARGETS
from .machine.errors import MachineError
from .runtime import ExecutionError, random_arguments
from .verifier import plot_failures, random_shapes, sweep, verify

#: The Stable Diffusion 2 inpainting UNet upsample at 936x624: 30x20 -> 59x38, 1280 channels.
SD2_IN, SD2_OUT = (10, 30, 20, 1280), (59, 38)


def _demo(args) -> int:
    in_shape = (args.batch, *SD2_IN[1:])
    out_shape = (args.batch, *SD2_OUT, SD2_IN[3])
    kernel = kernel_variant("resize_nearest", args.kernel)
    print(f"Stable Diffusion 2 inpainting UNet upsample (936x624 image), kernel {kernel!r}")
    print(f"  NHWC float32 {list(in_shape)} -> {list(out_shape)}")
    x = np.random.default_rng(0).standard_normal(in_shape, dtype=np.float32)

    t0 = time.perf_counter()
    program = trace_resize(in_shape, SD2_OUT, "float32", kernel)
    t1 = time.perf_counter()
    print(f"\ntraced in {t1 - t0:.3f} s\n{program.summary()}\n")
    print(program.listing(limit=args.listing))
    prepared = executable("resize_nearest", in_shape, out_shape, x.dtype, kernel)
    t2 = time.perf_counter()
    (y,) = prepared.run([x])
    t3 = time.perf_counter()
    prepared.run([x])
    t4 = time.perf_counter()
    print(f"\nsimulated {len(program.instructions):,} instructions: prepared in {t2 - t1:.3f} s, "
          f"first run {t3 - t2:.3f} s, second run {t4 - t3:.3f} s")

    ref = semantics.resize_nearest_reference(x, SD2_OUT)
    same = y.shape == ref.shape and np.array_equal(y.view(np.uint32), ref.view(np.uint32))
    print(f"bit-identical to the reference (semantics.resize_nearest_reference): {'yes' if same else 'NO'}")
    try:
        import torch
    except ImportError:
        print("torch is not installed: pip install 'resize-kernels[torch]' to compare with F.interpolate too")
    else:
        t = torch.nn.functional.interpolate(torch.from_numpy(x).permute(0, 3, 1, 2), size=SD2_OUT, mode="nearest")
        same_t = np.array_equal(t.permute(0, 2, 3, 1).numpy().view(np.uint32), y.view(np.uint32))
        print(f"bit-identical to torch.nn.functional.interpolate(mode='nearest'): {'yes' if same_t else 'NO'}")
        same = same and same_t
    return 0 if same else 1


def _shape(text: str) -> tuple:
    try:
        dims = tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        dims = ()
    if len(dims) != 4 or min(dims) <= 0:
        raise argparse.ArgumentTypeError(f"expected an NHWC shape like 1x30x20x8, got {text!r}")
    return dims


def _verify(args) -> int:
    if args.sweep is None:
        if args.in_shape is None or args.out_shape is None:
            print("resize-kernels verify: give --in and --out, or --sweep N", file=sys.stderr)
            return 2
        report = verify(args.in_shape, args.out_shape, kernel=args.kernel)
        print(report)
        return 0 if report.ok else 1
    return _sweep(args)


def _sweep(args) -> int:
    kernels = sorted(FORWARD_KERNELS) if args.kernel is None else [args.kernel]
    axes = ["w", "h"] if args.axis == "both" else [args.axis]
    results, ok = [], True
    for kernel in kernels:
        for axis in axes:
            t0 = time.perf_counter()
            result = sweep(args.sweep, axis, kernel, jobs=args.jobs, progress=True)
            print(result.summary() + f"  [{time.perf_counter() - t0:.1f} s]")
            results.append(result)
            ok &= not result.failures
        if args.random:
            shapes = random_shapes(args.random, args.max_size, seed=args.seed)
            bad = [r for r in (verify(i, o, kernel) for i, o in shapes) if not r.ok]
            print(f"kernel {kernel!r}: {len(shapes)} random 2-D shapes up to {args.max_size}: "
                  f"{len(shapes) - len(bad)} exact" + "".join(f"\n  {r}" for r in bad[:5]))
            ok &= not bad
    if args.plot:
        plot_failures(results, args.plot)
        print(f"wrote {args.plot}")
    return 0 if ok else 1


def _compile(args) -> int:
    try:
        compiled = compile_hlo(args.file.read_text(), kernel=args.kernel)
    except (OSError, HloParseError, ValidationError, CodegenError) as error:
        print(error, file=sys.stderr)
        return 1
    print(compiled)
    if not args.run:
        return 0
    try:
        values = compiled.values(*random_arguments(compiled.module, seed=args.seed))
    except (ExecutionError, MachineError) as error:
        print(error, file=sys.stderr)
        return 1
    print(f"ran on seeded random inputs (seed {args.seed})")
    ok = True
    for inst in compiled.programs:
        if inst.kernel_name == "ResizeNearest":
            x, y = values[inst.operands[0].name], values[inst.name]
            ref = semantics.resize_nearest_reference(x, y.shape[1:3])
            same = y.dtype == ref.dtype and y.shape == ref.shape and np.array_equal(
                np.ascontiguousarray(y).view(np.uint8), np.ascontiguousarray(ref).view(np.uint8))
            print(f"{inst.name}: ResizeNearest {x.dtype} {list(x.shape)} -> {list(y.shape)}, "
                  f"bit-identical to the reference (semantics.resize_nearest_reference): {'yes' if same else 'NO'}")
            ok &= same
    return 0 if ok else 1


def _add_compile_command(sub) -> None:
    comp = sub.add_parser("compile", help="compile an HLO module: validate, lower, trace its kernels; run it",
                          description="Parse an HLO text file (old torch_xla or current XLA dump style), validate "
                                      "its ResizeNearest custom-calls, lower them to internal NKI kernels, trace "
                                      "each kernel and print the lowered module with each Program summarised. "
                                      "Exits 1 on a parse, validation or codegen error.")
    comp.add_argument("file", type=Path, metavar="FILE.hlo", help="HLO module text")
    comp.add_argument("--run", action="store_true",
                      help="run it on seeded random inputs and check every ResizeNearest against the reference")
    comp.add_argument("--kernel", choices=sorted(FORWARD_KERNELS), default=None,
                      help="forward kernel variant for ResizeNearest (default: the default kernel)")
    comp.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    comp.set_defaults(func=_compile)


def _inspect(args) -> int:
    try:
        report = cost(args.in_shape, args.out_shape, kernel=args.kernel, target=args.target)
    except (ValueError, TypeError, MachineError) as error:
        print(f"resize-kernels inspect: {error}", file=sys.stderr)
        return 1
    print(report)
    program = trace_resize(args.in_shape, args.out_shape[1:3], "float32", args.kernel)
    print()
    print(program.listing(limit=args.listing))
    return 0


def _add_inspect_command(sub) -> None:
    ins = sub.add_parser("inspect", help="a kernel's modelled cost on a NeuronCore, next to its program listing",
                         description="Trace a forward kernel for one shape (float32), print the cost model's "
                                     "report (instructions and cycles per engine, DMA traffic and descriptors, "
                                     "SBUF use, modelled time; figures from HARDWARE.md, not measured) and the "
                                     "first instructions of the program.")
    ins.add_argument("--in", dest="in_shape", type=_shape, required=True, metavar="NxHxWxC", help="input shape")
    ins.add_argument("--out", dest="out_shape", type=_shape, required=True, metavar="NxHxWxC", help="output shape")
    ins.add_argument("--kernel", choices=sorted(FORWARD_KERNELS), default=None,
                     help="kernel variant (default: the default kernel)")
    ins.add_argument("--target", choices=sorted(TARGETS), default="trn1",
                     help="trn1 (NeuronCore-v2, default) or trn2 (v3)")
    ins.add_argument("--listing", type=int, default=40, metavar="N", help="instructions of the listing to print (default 40)")
    ins.set_defaults(func=_inspect)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="resize-kernels",
        description="The Neuron compiler's nearest-neighbour resize path, traced and run on a simulated NeuronCore.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="resize the SD2 inpainting UNet upsample through a kernel, check it bit for bit",
                          description="Trace a resize kernel for the SD2 inpainting UNet upsample "
                                      "(10x30x20x1280 -> 59x38 float32), print its program, run it on the "
                                      "simulator and check the result bit for bit.")
    demo.add_argument("--kernel", choices=sorted(FORWARD_KERNELS), default="seed",
                      help="kernel variant (default: seed, the compiler's own)")
    demo.add_argument("--batch", type=int, default=SD2_IN[0], help="batch size (default 10)")
    demo.add_argument("--listing", type=int, default=34, metavar="N", help="instructions of the listing to print (default 34)")
    demo.set_defaults(func=_demo)

    ver = sub.add_parser("verify", help="prove a kernel's gather equals the reference map for one shape",
                         description="Run the kernel on an int32 image whose elements hold their own flat index "
                                     "and check every output element against the reference map. Exits 1 when "
                                     "any element is wrong or a read leaves the input.")
    ver.add_argument("--in", dest="in_shape", type=_shape, metavar="NxHxWxC", help="input shape")
    ver.add_argument("--out", dest="out_shape", type=_shape, metavar="NxHxWxC", help="output shape")
    ver.add_argument("--kernel", choices=sorted(FORWARD_KERNELS), default=None,
                     help="kernel variant (default: the default kernel; with --sweep: every kernel)")
    ver.add_argument("--sweep", type=int, metavar="N", help="verify every (in, out) pair in 1..N along each axis")
    ver.add_argument("--axis", choices=["w", "h", "both"], default="both", help="axis of the sweep (default both)")
    ver.add_argument("--random", type=int, default=0, metavar="K", help="with --sweep: also K random 2-D shapes")
    ver.add_argument("--max-size", type=int, default=1024, help="largest side of the random shapes (default 1024)")
    ver.add_argument("--seed", type=int, default=0, help="seed of the random shapes")
    ver.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes for the sweep (default: all cores)")
    ver.add_argument("--plot", metavar="PNG", help="with --sweep: plot the failing pairs (needs matplotlib)")
    ver.set_defaults(func=_verify)
    _add_compile_command(sub)
    _add_inspect_command(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
