"""Compiling and running the SD2 example HLO (NCHW 1x1280x30x20 -> 59x38 float32), against torch in one run.

Prints, as medians of --repeat runs: parsing the HLO text, the passes
(validate, lower), codegen (tracing the kernel), the whole compile_hlo, a
first call of the module (planning, preparing the kernel's Executable,
running) and a cached call; then torch's F.interpolate(mode="nearest") on the
same NCHW input with one thread, and the ratios against it.
"""

import argparse
from pathlib import Path

import numpy as np
import torch
from timing import median_time

from resize_kernels.compiler.codegen import codegen
from resize_kernels.compiler.hlo import parse_hlo_module
from resize_kernels import compile_hlo
from resize_kernels.compiler.pipeline import run_passes
from resize_kernels.compiler.registry import with_forward_kernel

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sd2_upsample_torch_xla.hlo"




def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--file", type=Path, default=EXAMPLE, help="HLO file (default: the torch_xla SD2 example)")
    parser.add_argument("--kernel", default=None, help="forward kernel variant (default: the default kernel)")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(1)
    text = args.file.read_text()
    registry = with_forward_kernel(args.kernel)

    parse_s = median_time(lambda: parse_hlo_module(text), args.repeat)
    passes_s = median_time(run_passes, args.repeat, setup=lambda: parse_hlo_module(text))
    lowered = run_passes(parse_hlo_module(text))
    trace_s = median_time(lambda: codegen(lowered, registry), args.repeat)
    compile_s = median_time(lambda: compile_hlo(text, args.kernel), args.repeat)

    compiled = compile_hlo(text, args.kernel)
    (param,) = compiled.module.entry.parameters
    x = np.random.default_rng(0).standard_normal(param.shape.dims).astype(param.shape.numpy_dtype)
    first_s = median_time(lambda module: module(x), args.repeat, setup=lambda: compile_hlo(text, args.kernel))
    cached_s = median_time(lambda: compiled(x), args.repeat)
    out_hw = compiled.module.entry.root.results[0].access_shape[2:]
    xt = torch.from_numpy(x)
    torch_s = median_time(lambda: torch.nn.functional.interpolate(xt, size=out_hw, mode="nearest"), args.repeat)

    (program,) = compiled.programs.values()
    print(f"{args.file.name}: {list(param.shape.dims)} -> {list(out_hw)}, kernel {program.name} "
          f"({len(program.instructions)} instructions), median of {args.repeat}")
    print(f"  parse HLO text                         {parse_s * 1e3:8.2f} ms")
    print(f"  passes (validate, lower)               {passes_s * 1e3:8.2f} ms")
    print(f"  codegen (trace the kernel)             {trace_s * 1e3:8.2f} ms")
    print(f"  compile_hlo, all of it                 {compile_s * 1e3:8.2f} ms")
    print(f"  first call (plan, prepare, run)        {first_s * 1e3:8.2f} ms")
    print(f"  cached call                            {cached_s * 1e3:8.2f} ms")
    print(f"  torch F.interpolate, NCHW, 1 thread    {torch_s * 1e3:8.2f} ms")
    print(f"  ratio compile_hlo / torch              {compile_s / torch_s:8.2f}x")
    print(f"  ratio cached call / torch              {cached_s / torch_s:8.2f}x")


if __name__ == "__main__":
    main()
