"""Write the JAX examples: modules from a real XLA producer, lowered by JAX and committed next to this script.

    pip install jax jaxlib          # not a dependency of resize-kernels
    python examples/make_jax_example.py [--out DIR]

Each function is written three ways, as the compiler may receive it: HLO text
(``NAME.hlo``, ``as_text(dialect="hlo")``), a serialized HloModuleProto
(``NAME.pb``, ``compiler_ir("hlo").as_serialized_hlo_module_proto()``, what
torch-neuronx and the Neuron compile cache keep) and StableHLO text
(``NAME.mlir``, ``as_text()``, what JAX prints by default).

``jax.ffi.ffi_call`` with ``custom_call_api_version=1`` and a
``legacy_backend_config`` emits the custom-call torch_xla emits
(``custom_call_target="ResizeNearest", backend_config="\\"00\\""``). Lowering
needs only the call's shapes, not an implementation of the target, so JAX
writes the module and resize-kernels compiles and runs it.
"""

import argparse
from pathlib import Path

import jax
import jax.numpy as jnp
from jax import lax

HERE = Path(__file__).resolve().parent
# The protos' metadata name this script's file: keep the path from examples/ on, so that every checkout writes the
# same bytes.
jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/(?=examples/)")


def resize_nearest(x, size):
    """upsample_nearest2d of an NCHW array as torch_xla lowers it: to (N, W, H, C), the custom call, back."""
    n, c, _, _ = x.shape
    out_h, out_w = size
    call = jax.ffi.ffi_call("ResizeNearest", jax.ShapeDtypeStruct((n, out_w, out_h, c), x.dtype),
                            custom_call_api_version=1, legacy_backend_config='"00"')
    return jnp.transpose(call(jnp.transpose(x, (0, 3, 2, 1))), (0, 3, 2, 1))


def resize_nearest_grad(dy, size):
    """upsample_nearest2d_backward of an NCHW dy as torch_xla lowers it: the ResizeNearestGrad call between the
    same transposes, its result the input's (N, W, H, C)."""
    n, c, _, _ = dy.shape
    in_h, in_w = size
    call = jax.ffi.ffi_call("ResizeNearestGrad", jax.ShapeDtypeStruct((n, in_w, in_h, c), dy.dtype),
                            custom_call_api_version=1, legacy_backend_config='"00"')
    return jnp.transpose(call(jnp.transpose(dy, (0, 3, 2, 1))), (0, 3, 2, 1))


def sd2_upsample(x):
    """The SD2 inpainting UNet upsample at 936x624: NCHW 1x1280x30x20 -> 59x38."""
    return resize_nearest(x, (59, 38))


def upsample_pool(x, bias):
    """Upsample, add a per-channel bias, ReLU, then a 2x2 average pool (bf16) and a 3x3/2 max pool."""
    y = jnp.maximum(resize_nearest(x, (59, 38)) + bias[None, :, None, None], 0.0)
    window, stride = (1, 1, 2, 2), (1, 1, 2, 2)
    average = lax.reduce_window(y, 0.0, lax.add, window, stride, "VALID") / 4
    maximum = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 3, 3), stride, ((0, 0), (0, 0), (1, 1), (1, 1)))
    return average.astype(jnp.bfloat16), maximum


def odd_bf16(x):
    """A bfloat16 resize by odd ratios both ways: NCHW 2x96x37x53 -> 101x97."""
    return resize_nearest(x, (101, 97))


def train_step(x, dy):
    """A training step's resize calls: the SD2 upsample, its gradient (dy 59x38 -> dx 30x20) and a 2x2 average pool
    of the upsample (reduce-window); outputs (y, dx, pooled)."""
    y = resize_nearest(x, (59, 38))
    dx = resize_nearest_grad(dy, (30, 20))
    pooled = lax.reduce_window(y, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID") / 4
    return y, dx, pooled


EXAMPLES = {
    "jax_resize_nearest": (sd2_upsample, [jax.ShapeDtypeStruct((1, 1280, 30, 20), jnp.float32)]),
    "jax_upsample_pool": (upsample_pool, [jax.ShapeDtypeStruct((2, 8, 30, 20), jnp.float32),
                                          jax.ShapeDtypeStruct((8,), jnp.float32)]),
    "jax_odd_bf16": (odd_bf16, [jax.ShapeDtypeStruct((2, 96, 37, 53), jnp.bfloat16)]),
    "jax_train_step": (train_step, [jax.ShapeDtypeStruct((2, 16, 30, 20), jnp.float32),
                                    jax.ShapeDtypeStruct((2, 16, 59, 38), jnp.float32)]),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE, help="directory to write to (default: examples/)")
    out = parser.parse_args().out
    for name, (function, args) in EXAMPLES.items():
        lowered = jax.jit(function).lower(*args)
        (out / f"{name}.hlo").write_text(lowered.as_text(dialect="hlo").rstrip("\n") + "\n")
        (out / f"{name}.pb").write_bytes(lowered.compiler_ir("hlo").as_serialized_hlo_module_proto())
        (out / f"{name}.mlir").write_text(lowered.as_text().rstrip("\n") + "\n")
        print(f"wrote {out / name}.hlo, .pb and .mlir with jax {jax.__version__}")


if __name__ == "__main__":
    main()
