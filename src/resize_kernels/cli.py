"""The ``resize-kernels`` command.

Only the standard library is imported up front, so that ``--help``, ``--version`` and usage errors answer at
once; a command imports numpy, the kernels and the compiler when it runs. Exit codes: 0 success, 1 an error
(one message on stderr, never a traceback), 2 a usage error. An exception that is not one of the package's
deliberate errors (a bug) is reported in one line too; RESIZE_KERNELS_DEBUG=1 lets its traceback through.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

from . import __version__
from .errors import InvalidValueError, ResizeKernelsError, plural

#: The Stable Diffusion 2 inpainting UNet upsample at 936x624: 30x20 -> 59x38, 1280 channels.
SD2_IN, SD2_OUT = (10, 30, 20, 1280), (59, 38)
#: The targets, written out so that building the parser imports no numpy (tests/test_cli.py keeps them equal to
#: machine.cost.TARGETS). Kernel names are checked against the registered kernels when a command runs
#: (``_check_kernel``), so that ``--help`` needs no import either.
TARGETS = ("trn1", "trn2")
#: How --kernel is described.
KERNEL_HELP = "a kernel's name, or auto (the default: chosen per shape); a name it does not know lists the others"
#: Set to 1 to see the traceback of an error instead of its one-line message.
DEBUG_ENV = "RESIZE_KERNELS_DEBUG"
#: ``compile`` reads at most this much of a file: module dumps are far smaller, and /dev/zero is no module.
MAX_HLO_BYTES = 256 << 20


def _demo(args) -> int:
    """The story in a few seconds: the SD2 upsample through the compiler's kernel and ours, side by side."""
    import numpy as np

    from . import semantics
    from .api import cost, executable, kernel_variant, trace_resize
    from .machine.memory import check_host_memory
    from .verifier import verify

    in_shape = (args.batch, *SD2_IN[1:])
    out_shape = (args.batch, *SD2_OUT, SD2_IN[3])
    kernels = ["seed", kernel_variant("resize_nearest", args.kernel)]
    ours = kernels[1] if kernels[1] != "auto" else \
        f"auto: {trace_resize(in_shape, SD2_OUT, 'float32', 'auto').selection.kernel}"
    print("The Stable Diffusion 2 inpainting UNet upsample (936x624 image: NHWC float32 "
          f"{'x'.join(map(str, in_shape))} -> {'x'.join(map(str, out_shape))}),\nthrough the Neuron compiler's "
          f"kernel (seed) and ours ({ours}), each traced into a Program of NeuronCore\ninstructions and run on the "
          f"simulated NeuronCore:\n")
    # the input, the reference and torch's output, before the simulator checks its own needs
    check_host_memory(4 * (math.prod(in_shape) + 2 * math.prod(out_shape)), "the demo's input and reference arrays")
    x = np.random.default_rng(0).standard_normal(in_shape, dtype=np.float32)
    ref = semantics.resize_nearest_reference(x, SD2_OUT)
    torch = _optional_torch()
    want_torch = None if torch is None else torch.nn.functional.interpolate(
        torch.from_numpy(x).permute(0, 3, 1, 2), size=SD2_OUT, mode="nearest").permute(0, 2, 3, 1).numpy()
    rows: dict[str, list[str]] = {}
    ok = True
    for kernel in kernels:
        program = trace_resize(in_shape, SD2_OUT, "float32", kernel)
        reports = [cost(in_shape, out_shape, kernel, target) for target in TARGETS]
        t0 = time.perf_counter()
        (y,) = executable("resize_nearest", in_shape, out_shape, x.dtype, kernel).run([x])
        seconds = time.perf_counter() - t0
        exact = np.array_equal(y.view(np.uint32), ref.view(np.uint32))
        wrong = verify((1, 30, 20, 8), (1, 59, 41, 8), kernel).wrong_pixels
        dmas = program.dmas()
        column = [f"{len(program.instructions):,}", f"{len(dmas):,} ({sum(d.nbytes for d in dmas) / 1e6:,.1f} MB)"]
        column += [f"{r.modelled_us:,.1f} us ({r.efficiency:.0%})" for r in reports]
        column += [f"{seconds:.2f} s", "yes" if exact else "NO", f"{wrong:,} of 2,419"]
        if want_torch is not None:
            same = np.array_equal(y.view(np.uint32), want_torch.view(np.uint32))
            column.append("yes" if same else "NO")
            exact = exact and same
        ok &= exact
        rows[kernel] = column
        if args.listing and kernel == kernels[-1]:
            listing = program.listing(limit=args.listing)
    labels = ["instructions", "DMAs (bytes moved)"] + [f"modelled time on {t} (roofline share)" for t in TARGETS]
    labels += ["simulated in (host CPU)", "bit-identical to the reference", "wrong pixels at 30x20 -> 59x41"]
    labels += ["bit-identical to F.interpolate"] if want_torch is not None else []
    width = max(map(len, labels))
    print(f"  {'':<{width}}  {'seed (the compiler' + chr(39) + 's)':>24}  {ours:>24}")
    for n, label in enumerate(labels):
        print(f"  {label:<{width}}  {rows[kernels[0]][n]:>24}  {rows[kernels[1]][n]:>24}")
    if want_torch is None:
        print("\n  torch is not installed, so nothing was compared with F.interpolate: "
              "pip install 'resize-kernels[torch]' adds that row")
    print("\n  Modelled times come from the cost model (calibrated on published NKI kernel latencies), not from a\n"
          "  Trainium. The seed's float32 index arithmetic gets columns wrong on some output widths (41, 47, 55,\n"
          "  ...): at 30x20 -> 59x41, pixels of output column 0 read one column past the end of their source row\n"
          "  (the next row's first pixel). Ours is exact on every pair the verifier sweeps.")
    if args.listing:
        print(f"\n{listing}")
    print("\nNext:")
    print("  resize-kernels inspect --in 10x30x20x1280 --out 59x38            # the default's schedule and program")
    print("  resize-kernels verify --in 1x30x20x8 --out 59x41 --kernel seed   # the seed's wrong pixels, listed")
    print("  resize-kernels verify --sweep 64                                 # prove the default on every pair")
    print("  resize-kernels compile examples/jax_train_step.pb --run          # a module as the compiler gets it")
    return 0 if ok else 1


def _optional_torch():
    """torch if it is installed, else None (the demo then says how to get the comparison)."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def _shape(text: str) -> tuple:
    try:
        dims = tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        dims = ()
    if len(dims) != 4 or min(dims) <= 0:
        raise argparse.ArgumentTypeError(f"expected an NHWC shape like 1x30x20x8, got {text!r}")
    return dims


def _out_shape(text: str) -> tuple:
    """An output shape: NxHxWxC, or HxW (the input's batch and channels, as ``rk.resize_nearest`` takes (h, w))."""
    try:
        dims = tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        dims = ()
    if len(dims) not in (2, 4) or min(dims) <= 0:
        raise argparse.ArgumentTypeError(f"expected an output shape NxHxWxC like 1x59x38x8, or HxW like 59x38, "
                                         f"got {text!r}")
    return dims


def _with_input_batch_and_channels(args) -> None:
    """``--out HxW`` becomes (N, H, W, C) with --in's N and C."""
    out, given = getattr(args, "out_shape", None), getattr(args, "in_shape", None)
    if out is not None and len(out) == 2 and given is not None:
        args.out_shape = (given[0], *out, given[3])


def _int_from(low: int, what: str):
    """An argparse type: an integer >= ``low`` (``what`` names it in the usage error)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


_positive = _int_from(1, "a positive integer")
_non_negative = _int_from(0, "a non-negative integer")


def _sizes(text: str) -> tuple[int, int]:
    """--sweep N (1..N) or LOW..HIGH."""
    low, sep, high = text.partition("..")
    try:
        sizes = (int(low), int(high)) if sep else (1, int(text))
    except ValueError:
        sizes = None
    if sizes is None or not 1 <= sizes[0] <= sizes[1]:
        raise argparse.ArgumentTypeError(f"expected N or LOW..HIGH with 1 <= LOW <= HIGH, got {text!r}")
    return sizes


def _verify(args) -> int:
    if args.sweep is not None:
        if args.in_shape or args.out_shape:
            return _usage(args, "give --in and --out, or --sweep N, not both")
        return _sweep(args)
    if args.in_shape is None or args.out_shape is None:
        return _usage(args, "give --in and --out, or --sweep N")
    if args.random or args.plot or args.json or args.dask or args.checkpoint:
        return _usage(args, "--random, --plot, --json, --dask and --checkpoint go with --sweep")
    if args.grad and args.dtype:
        return _usage(args, "--dtype goes with the forward kernels (a gradient kernel's dy are float32)")
    from .verifier import verify, verify_grad

    dtype = {} if args.grad else {"dtype": args.dtype or "int32"}
    report = (verify_grad if args.grad else verify)(args.in_shape, args.out_shape, kernel=args.kernel,
                                                    convention=_convention(args), **dtype)
    print(report)
    return 0 if report.ok else 1


def _convention(args):
    """The map --coordinate-transformation-mode / --nearest-mode (ONNX's), --tensorflow-mode or --convention name
    (inspect has --convention only); None: the compiler's."""
    from . import semantics
    from .api import named_convention

    ctm, nearest = getattr(args, "coordinate_transformation_mode", None), getattr(args, "nearest_mode", None)
    tensorflow, onnx = getattr(args, "tensorflow_mode", None), (ctm, nearest) != (None, None)
    named = [flag for flag, given in (("--coordinate-transformation-mode / --nearest-mode", onnx),
                                      ("--tensorflow-mode", tensorflow is not None),
                                      ("--convention", args.convention is not None)) if given]
    if len(named) > 1:
        raise InvalidValueError(f"{args.command} takes one way of naming the map, got {' and '.join(named)}; give one")
    if args.convention == "all" and args.command == "inspect":
        raise InvalidValueError("inspect --convention requires one convention key, got 'all'; name one "
                                "(semantics.conventions() lists them)")
    if args.convention == "all":
        raise InvalidValueError("--convention all takes --sweep (each convention in turn); name one convention to "
                                "verify a single shape")
    if args.convention is not None:
        return semantics.IndexConvention.from_key(args.convention)
    if tensorflow is not None:
        if tensorflow not in semantics.TENSORFLOW_MODES:
            raise InvalidValueError(f"--tensorflow-mode requires one of {', '.join(semantics.TENSORFLOW_MODES)}, "
                                    f"got {tensorflow!r}")
        return semantics.TENSORFLOW_MODES[tensorflow]
    return named_convention(args.command, None, ctm, nearest)


def _sweep(args) -> int:
    """One kernel (the default unless --kernel) over every pair per axis; pairs it does not take are not failures."""
    from .verifier import (FORWARD, GRAD, check_json_path, check_plot_path, end_pool, local_pool, plot_failures,
                           random_shapes, sweep, verify, verify_grad, write_json)

    op = GRAD if args.grad else FORWARD
    if args.grad and args.dtype:
        return _usage(args, "--dtype goes with the forward kernels (a gradient kernel's dy are float32)")
    dtype = {} if args.grad else {"dtype": args.dtype or "int32"}
    plot = check_plot_path(args.plot) if args.plot else None  # before the sweep, not after it
    report = check_json_path(args.json) if args.json else None
    shapes = random_shapes(args.random, args.max_size, seed=args.seed)
    bad_random = []
    if args.convention == "all":  # every map but the compiler's, in turn, on one pool of workers
        from . import semantics

        conventions = semantics.conventions()
    else:
        conventions = (_convention(args),)
    client = _dask_client(args.dask) if args.dask else None
    pool = None
    if client is None and len(conventions) > 1 and args.jobs > 1:
        pool = local_pool(args.jobs)
    results, ok, finished = [], True, False
    try:
        axes = ["w", "h"] if args.axis == "both" else [args.axis]
        steps = len(axes) * len(conventions) + bool(shapes)
        for k, (convention, axis) in enumerate(((c, a) for c in conventions for a in axes), 1):
            if steps > 1 and sys.stderr.isatty():  # with the progress bars, which tqdm shows there
                print(f"[{k}/{steps}] every (in, out) pair along {axis}", file=sys.stderr)
            result = sweep(args.sweep, axis, args.kernel, jobs=args.jobs, progress=True,
                           executor=client.get_executor() if client else pool, op=op, checkpoint=args.checkpoint,
                           convention=convention, **dtype)
            head, *rest = result.summary().split("\n")
            print("\n".join([head + f"  [{result.seconds:.1f} s]", *rest]))
            results.append(result)
            ok &= not result.failures
        finished = True
    finally:
        client and client.close()
        if pool and finished:
            pool.shutdown()
        elif pool:  # stopped (Ctrl-C): its workers end now, not after their chunks
            end_pool(pool)
    if shapes:
        from tqdm import tqdm

        if sys.stderr.isatty():
            print(f"[{steps}/{steps}] {plural(len(shapes), 'random 2-D shape')}", file=sys.stderr)
        check = verify_grad if args.grad else verify
        reports = [check(i, o, args.kernel, convention=convention, **dtype)
                   for convention in conventions
                   for i, o in tqdm(shapes, desc="random shapes", unit="shapes", disable=None)]
        refused = sum(not r.applicable for r in reports)
        bad = [r for r in reports if r.applicable and not r.ok]
        bad_random = [[list(r.in_shape), list(r.out_shape)] for r in bad]
        each = f" x {len(conventions)} conventions" if len(conventions) > 1 else ""
        print(f"{'gradient ' if args.grad else ''}kernel {results[0].kernel!r}: "
              f"{plural(len(shapes), 'random 2-D shape')}{each} up to {args.max_size}: "
              f"{len(reports) - len(bad) - refused} exact" + (f", {refused} not applicable" if refused else "")
              + "".join(f"\n  {r}" for r in bad[:5])
              + (f"\n  ... and {plural(len(bad) - 5, 'more shape')} not exact" if len(bad) > 5 else ""))
        ok &= not bad
    if plot:
        print(f"wrote {plot_failures(results, plot)}")
    if report:
        random = {"shapes": len(shapes), "max_size": args.max_size, "seed": args.seed, "not_exact": bad_random}
        print(f"wrote {write_json(results, report, random=random)}")
    return 0 if ok else 1


def _dask_client(address: str, timeout: str = "10s"):
    """A client of the Dask cluster whose scheduler is at ``address`` (its get_executor() runs the chunks)."""
    try:
        from distributed import Client
    except ImportError:
        raise InvalidValueError("--dask requires the dask extra: pip install 'resize-kernels[dask]'") from None
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as error:
        raise InvalidValueError(f"--dask could not reach a Dask scheduler at {address!r}: {error}") from None


def _read_hlo(path: Path) -> bytes:
    """The bytes of a module file (HLO or StableHLO text, or a serialized HloModuleProto, maybe gzipped: the
    compiler tells them apart by content); InvalidValueError for a file too large."""
    with open(path, "rb") as f:
        data = f.read(MAX_HLO_BYTES + 1)
    if len(data) > MAX_HLO_BYTES:
        raise InvalidValueError(f"compile requires a module file of at most {MAX_HLO_BYTES >> 20} MiB, "
                                f"got {str(path)!r}, which is larger")
    return data


def _compile(args) -> int:
    import numpy as np

    from . import semantics
    from .api import compile_hlo
    from .runtime import random_arguments

    compiled = compile_hlo(_read_hlo(args.file), kernel=args.kernel, extended_modes=args.extended_modes)
    print(compiled)
    if not args.run:
        return 0
    values = compiled.values(*random_arguments(compiled.module, seed=args.seed))
    print(f"ran on seeded random inputs (seed {args.seed})")
    ok = True
    for inst in compiled.programs:
        if inst.kernel_name == "ResizeNearest":
            x, y = values[inst.operands[0].name], values[inst.name]
            mode = inst.attributes.get("resize_mode")
            if mode is None:
                ref, which = semantics.resize_nearest_reference(x, y.shape[1:3]), "semantics.resize_nearest_reference"
            else:
                convention = semantics.TENSORFLOW_MODES[mode.value]
                ref = semantics.convention_reference(x, y.shape[1:3], convention)
                which = f"TensorFlow {mode.value}, semantics.convention_reference"
            same = y.dtype == ref.dtype and y.shape == ref.shape and np.array_equal(
                np.ascontiguousarray(y).view(np.uint8), np.ascontiguousarray(ref).view(np.uint8))
            print(f"{inst.name}: ResizeNearest {x.dtype} {list(x.shape)} -> {list(y.shape)}, "
                  f"bit-identical to the reference ({which}): {'yes' if same else 'NO'}")
            ok &= same
    return 0 if ok else 1


def _add_compile_command(sub) -> None:
    comp = sub.add_parser("compile", help="compile an HLO module: validate, lower, trace its kernels; run it",
                          description="Parse a module file (HLO text in the old torch_xla or current XLA dump "
                                      "style, StableHLO text as JAX prints it, or a serialized HloModuleProto, "
                                      "gzipped or not; told by content, not by name), validate "
                                      "its ResizeNearest custom-calls, lower them to internal NKI kernels, trace "
                                      "each kernel and print the lowered module with each Program summarised. "
                                      "Exits 1 on a parse, validation or codegen error.")
    comp.add_argument("file", type=Path, metavar="FILE", help="the module: .hlo, .mlir or .pb (by content)")
    comp.add_argument("--run", action="store_true",
                      help="run it on seeded random inputs and check every ResizeNearest against the reference")
    comp.add_argument("--kernel", default=None, metavar="NAME", help="the forward kernel for ResizeNearest: "
                      + KERNEL_HELP)
    comp.add_argument("--seed", type=_non_negative, default=0, help="seed of the random inputs (default 0)")
    comp.add_argument("--extended-modes", action="store_true",
                      help="lower ResizeNearest calls with align_corners or half_pixel_centers (rejected by default, "
                           "as the Neuron compiler does) with TensorFlow's ResizeNearestNeighbor map")
    comp.set_defaults(func=_compile, bare_errors=True)  # the compiler's messages name the file or instruction


def _inspect(args) -> int:
    from .verifier import check_json_path, check_plot_path

    trace = check_json_path(args.trace, "--trace (a Chrome trace)") if args.trace else None  # before the work
    timeline = check_plot_path(args.timeline, "--timeline") if args.timeline else None
    convention = _convention(args)
    report, program = (_grad_cost if args.grad else _forward_cost)(args, convention)
    print(report)
    print()
    print(report.schedule(limit=args.listing))
    if args.trace or args.timeline:
        from .machine.timeline import plot_timeline, write_chrome_trace
        if trace:
            print(f"wrote {write_chrome_trace(report, trace)} (Chrome trace format: open it in "
                  f"https://ui.perfetto.dev or chrome://tracing)")
        if timeline:
            print(f"wrote {plot_timeline(report, timeline)}")
    print()
    print(program.listing(limit=args.listing))
    return 0


def _forward_cost(args, convention):
    """(CostReport, Program) of the forward kernel inspect shows."""
    from .api import cost, trace_resize
    from .contract import resize_dtype

    dtype = resize_dtype("inspect", args.dtype).name
    report = cost(args.in_shape, args.out_shape, kernel=args.kernel, target=args.target, dtype=dtype,
                  convention=convention)
    return report, trace_resize(args.in_shape, args.out_shape[1:3], dtype, args.kernel, convention=convention)


def _grad_cost(args, convention):
    """(CostReport, Program) of the gradient kernel of --in -> --out (dy of --out's shape -> dx of --in's)."""
    from . import contract
    from .api import trace_resize_grad
    from .machine.cost import program_cost

    dtype = contract.grad_dtype("inspect --grad", args.dtype).name
    in_shape, out_shape = contract.resize_shapes("inspect", args.in_shape, args.out_shape)
    program = trace_resize_grad(out_shape, in_shape[1:3], dtype, args.kernel, convention=convention)
    chosen = program.selection
    pick = f"{chosen.label}, auto's pick" if args.kernel in (None, "auto") else chosen.label
    where = f" for {convention.describe()}" if convention is not None and not convention.is_default else ""
    report = program_cost(program, args.target, label=f"gradient kernel {pick}{where}, dy {_dims(out_shape)} -> "
                                                      f"dx {_dims(in_shape)} {dtype}")
    report.notes = tuple(str(chosen).splitlines()) if args.kernel in (None, "auto") else ()
    return report, program


def _dims(shape) -> str:
    return "x".join(map(str, shape))


def _export(args) -> int:
    from .export import export_nki

    text = export_nki(args.in_shape, args.out_shape, args.dtype, kernel=args.kernel, target=args.target,
                      grad=args.grad)
    if args.output is None:
        if args.check:
            return _usage(args, "--check runs the written file: give -o FILE")
        sys.stdout.write(text)
        return 0
    if args.output.is_dir() or not args.output.parent.is_dir():
        return _usage(args, f"-o requires a file in an existing directory, got {str(args.output)!r}")
    args.output.write_text(text)
    print(f"wrote {args.output} (NKI 0.3.0: run it with python on a trn2 instance)", file=sys.stderr)
    if not args.check:
        return 0
    import subprocess
    here = ("import runpy, sys\nfrom resize_kernels import nki\nnki.install_aliases()\n"
            "runpy.run_path(sys.argv[1], run_name='__main__')")
    return subprocess.run([sys.executable, "-c", here, str(args.output)]).returncode


def _add_shape_arguments(parser) -> None:
    """--in and --out of the commands that take one forward resize."""
    parser.add_argument("--in", dest="in_shape", type=_shape, required=True, metavar="NxHxWxC", help="input shape")
    parser.add_argument("--out", dest="out_shape", type=_out_shape, required=True, metavar="NxHxWxC",
                        help="output shape (or HxW: --in's batch and channels)")


def _add_export_command(sub) -> None:
    exp = sub.add_parser("export", help="write a kernel as a self-contained NKI 0.3.0 source file",
                         description="Trace the forward (or --grad: gradient) kernel for one shape and dtype and "
                                     "write it as one Python file of documented NKI 0.3.0 calls (import nki; "
                                     "@nki.jit), with the index map as literals and a __main__ that checks it bit "
                                     "for bit under nki.simulate.")
    _add_shape_arguments(exp)
    exp.add_argument("--dtype", default="float32", help="the tensor dtype (default float32; bfloat16, uint8, ...)")
    exp.add_argument("--kernel", default=None, metavar="NAME", help=KERNEL_HELP)
    exp.add_argument("--target", choices=TARGETS, default="trn2",
                     help="the target whose modelled time the file's docstring gives (default trn2)")
    exp.add_argument("--grad", action="store_true",
                     help="the gradient kernel of that resize (dy of --out's shape -> dx of --in's; rows only)")
    exp.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (default: standard output)")
    exp.add_argument("--check", action="store_true",
                     help="then run the file's own check in a fresh Python, this package standing in for nki "
                          "(needs -o)")
    exp.set_defaults(func=_export)


def _add_inspect_command(sub) -> None:
    ins = sub.add_parser("inspect", help="a kernel's modelled cost on a NeuronCore, next to its program listing",
                         description="Trace a kernel for one shape and dtype (the forward resize, or with "
                                     "--grad its gradient), print the cost model's report (instructions and cycles "
                                     "per engine, DMA traffic and descriptors, SBUF use, modelled time, roofline "
                                     "and efficiency; the model's parameters are "
                                     "documented figures or fitted to public measurements, see machine/cost.py) and "
                                     "the first instructions of the program.")
    _add_shape_arguments(ins)
    ins.add_argument("--kernel", default=None, metavar="NAME", help=KERNEL_HELP + " (with --grad, a gradient kernel's)")
    ins.add_argument("--dtype", default="float32", help="the tensor dtype (default float32; bfloat16, uint8, ...; "
                                                        "with --grad float32, float16 or bfloat16)")
    ins.add_argument("--grad", action="store_true",
                     help="the gradient kernel of that resize instead (dy of --out's shape -> dx of --in's)")
    ins.add_argument("--convention", metavar="KEY", default=None,
                     help="the index convention IndexConvention.from_key names (e.g. "
                          "onnx/half_pixel/round_prefer_ceil; default: the compiler's map)")
    ins.add_argument("--target", choices=TARGETS, default="trn1", help="trn1 (NeuronCore-v2, default) or trn2 (v3)")
    ins.add_argument("--listing", type=_non_negative, default=40, metavar="N",
                     help="instructions of the schedule and the listing to print (default 40)")
    ins.add_argument("--trace", type=Path, metavar="FILE.json",
                     help="write the modelled schedule as a Chrome trace (Perfetto, chrome://tracing): a track per "
                          "engine and DMA engine")
    ins.add_argument("--timeline", type=Path, metavar="FILE.png",
                     help="draw the modelled schedule, lanes per engine and DMA engine (needs matplotlib)")
    ins.set_defaults(func=_inspect)


def build_parser() -> argparse.ArgumentParser:
    """The command's parser; building it imports nothing beyond the standard library."""
    parser = argparse.ArgumentParser(
        prog="resize-kernels",
        description="The Neuron compiler's nearest-neighbour resize path, traced and run on a simulated NeuronCore.",
        epilog=f"Exit codes: 0 success, 1 an error (one message on stderr; {DEBUG_ENV}=1 shows tracebacks), "
               "2 a usage error.")
    parser.add_argument("--version", action="version", version=f"resize-kernels {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="the SD2 UNet upsample through the compiler's kernel and ours, side by side",
                          description="Trace the compiler's resize kernel (seed) and ours for the SD2 inpainting "
                                      "UNet upsample (10x30x20x1280 -> 59x38 float32); print their instructions, "
                                      "DMAs, modelled times on trn1 and trn2, run both on the simulator and check "
                                      "them bit for bit (against the reference, and F.interpolate when torch is "
                                      "installed), and count the seed's wrong pixels on a width it gets wrong.")
    demo.add_argument("--kernel", default=None, metavar="NAME", help="ours, to set beside the seed: " + KERNEL_HELP)
    demo.add_argument("--batch", type=_positive, default=SD2_IN[0], help="batch size (default 10)")
    demo.add_argument("--listing", type=_non_negative, default=0, metavar="N",
                      help="also print the first N instructions of our kernel's program (default 0)")
    demo.set_defaults(func=_demo)

    ver = sub.add_parser("verify", help="prove a kernel's gather equals the reference map for one shape",
                         description="Run the kernel on an int32 image whose elements hold their own flat index "
                                     "and check every output element against the reference map. Exits 1 when "
                                     "any element is wrong or a read leaves the input, or (for --in/--out) when "
                                     "the kernel does not take the shape.")
    ver.add_argument("--in", dest="in_shape", type=_shape, metavar="NxHxWxC", help="input shape")
    ver.add_argument("--out", dest="out_shape", type=_out_shape, metavar="NxHxWxC",
                     help="output shape (or HxW: --in's batch and channels)")
    ver.add_argument("--kernel", default=None, metavar="NAME",
                     help=KERNEL_HELP + " (with --grad, a gradient kernel's)")
    ver.add_argument("--grad", action="store_true",
                     help="verify the gradient kernel instead: dx bit for bit against the reference gradient, "
                          "for the forward resize --in -> --out (or every pair of the sweep)")
    ver.add_argument("--sweep", type=_sizes, metavar="N|LOW..HIGH",
                     help="verify every (in, out) pair in 1..N (or LOW..HIGH) along each axis; pairs the kernel "
                          "does not take are counted as not applicable, not as failures")
    ver.add_argument("--axis", choices=["w", "h", "both"], default="both", help="axis of the sweep (default both)")
    ver.add_argument("--dtype", default=None,
                     help="the forward Program's dtype (default int32; every machine dtype: uint8, bfloat16, ...): "
                          "the flat-index image goes through it in 8- or 16-bit pieces, viewed as the dtype")
    ver.add_argument("--random", type=_non_negative, default=0, metavar="K",
                     help="with --sweep: also K random 2-D shapes")
    ver.add_argument("--max-size", type=_positive, default=1024, help="largest side of the random shapes (default 1024)")
    ver.add_argument("--seed", type=_non_negative, default=0, help="seed of the random shapes")
    ver.add_argument("--jobs", type=_positive, default=os.cpu_count() or 1,
                     help="processes for the sweep (default: all cores)")
    ver.add_argument("--dask", metavar="ADDRESS",
                     help="with --sweep: run it on the Dask cluster whose scheduler is at ADDRESS "
                          "(tcp://host:8786; needs the dask extra) instead of local processes")
    ver.add_argument("--json", metavar="FILE", help="with --sweep: also write the whole report to FILE as JSON")
    ver.add_argument("--checkpoint", metavar="FILE",
                     help="with --sweep: record each finished chunk in FILE, and skip the chunks FILE already "
                          "holds: a long sweep that was stopped resumes where it stopped")
    ver.add_argument("--plot", metavar="FILE",
                     help="with --sweep: plot the failing pairs to FILE.png, .pdf or .svg (needs matplotlib)")
    # (the names are checked when the convention is made: the parser imports no numpy, so not semantics)
    ver.add_argument("--coordinate-transformation-mode", metavar="MODE", default=None,
                     help="prove ONNX Resize's map for this mode (half_pixel, asymmetric, align_corners, "
                          "pytorch_half_pixel, tf_half_pixel_for_nn), as onnx.reference computes it, instead of the "
                          "compiler's; a mode left out takes ONNX's default")
    ver.add_argument("--nearest-mode", metavar="MODE", default=None,
                     help="ONNX Resize's nearest_mode (round_prefer_floor, round_prefer_ceil, floor, ceil)")
    ver.add_argument("--tensorflow-mode", metavar="FLAG", default=None,
                     help="prove TensorFlow ResizeNearestNeighbor's map for align_corners or half_pixel_centers "
                          "instead of the compiler's")
    ver.add_argument("--convention", metavar="KEY", default=None,
                     help="prove the map IndexConvention.from_key names: arithmetic/coordinate mode/nearest mode "
                          "(e.g. torch/half_pixel/round_prefer_ceil, torch's nearest-exact; a torch key may end in "
                          "/indexed or /generic_unfused, the other CPU index paths); with --sweep, 'all' proves "
                          "every map but the compiler's in turn (semantics.conventions())")
    ver.set_defaults(func=_verify)
    _add_compile_command(sub)
    _add_inspect_command(sub)
    _add_export_command(sub)
    return parser


def _check_kernel(args) -> str | None:
    """The usage error of a --kernel that names no registered kernel of the command's op, else None."""
    name = getattr(args, "kernel", None)
    if name is None:
        return None
    from .kernels import FORWARD, GRAD, names

    grad = getattr(args, "grad", False)
    known = names(GRAD if grad else FORWARD)
    if name in known:
        return None
    return (f"--kernel {name!r} is no {'gradient ' if grad else ''}kernel; choose one of "
            f"{', '.join(known)}")


def _usage(args, message: str) -> int:
    print(f"resize-kernels {args.command}: {message}", file=sys.stderr)
    return 2


def _error_line(args, error: Exception) -> str:
    """The one line that reports ``error`` from ``args.command``."""
    where = f"resize-kernels {args.command}: "
    if isinstance(error, (ResizeKernelsError, OSError)):
        return ("" if getattr(args, "bare_errors", False) else where) + str(error)
    if isinstance(error, MemoryError):
        return where + "out of host memory (MemoryError); use a smaller shape or batch"
    return (where + f"unexpected {type(error).__name__}: {error} (a bug: please report it; "
            f"{DEBUG_ENV}=1 shows the traceback)")


def _run(args) -> int:
    """``args.func(args)``; an error becomes one line on stderr and exit 1 (Ctrl-C: 130), never a traceback."""
    try:
        return args.func(args)
    except BrokenPipeError:
        raise  # main's business
    except KeyboardInterrupt:
        print(f"resize-kernels {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if os.environ.get(DEBUG_ENV, "0") not in ("", "0"):
            raise
        print(_error_line(args, error), file=sys.stderr)
        return 1


def main(argv=None) -> int:
    """Run the command line ``argv`` (default: sys.argv[1:]) and return its exit code; usage errors exit 2."""
    if sys.stdout is None:  # started with standard output closed (>&-): nothing to answer on
        if sys.stderr is not None:
            print("resize-kernels: standard output is closed; run it with an output (a file, a pipe, /dev/null)",
                  file=sys.stderr)
        return 1
    try:
        try:
            parser = build_parser()
            args = parser.parse_args(argv)
            if args.command is None:
                parser.print_help()
                return 2
            _with_input_batch_and_channels(args)
            bad = _check_kernel(args)
            return _run(args) if bad is None else _usage(args, bad)
        finally:
            sys.stdout.flush()  # a reader that went away (| head) shows here, not at exit
    except BrokenPipeError:
        # the Python docs' "Note on SIGPIPE": send what is left to devnull, so the flush at exit passes, and stop
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1


def entry() -> None:
    """The command's entry point: exit with ``main``'s code. After Ctrl-C the process ends at once (its output
    flushed), not after Python's exit handlers join the threads of a stopped sweep's worker pool, which can wait
    on workers that are gone."""
    code = main()
    if code == 130:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        os._exit(130)
    sys.exit(code)


if __name__ == "__main__":
    entry()
