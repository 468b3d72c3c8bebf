"""Write the JAX examples: HLO text from a real XLA producer, lowered by JAX and committed next to this script.

    pip install jax jaxlib          # not a dependency of resize-kernels
    python examples/make_jax_example.py [--out DIR]

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


def resize_nearest(x, size):
    """upsample_nearest2d of an NCHW array as torch_xla lowers it: to (N, W, H, C), the custom call, back."""
    n, c, _, _ = x.shape
    out_h, out_w = size
    call = jax.ffi.ffi_call("ResizeNearest", jax.ShapeDtypeStruct((n, out_w, out_h, c), x.dtype),
                            custom_call_api_version=1, legacy_backend_config='"00"')
    return jnp.transpose(call(jnp.transpose(x, (0, 3, 2, 1))), (0, 3, 2, 1))


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


EXAMPLES = {
    "jax_resize_nearest.hlo": (sd2_upsample, [jax.ShapeDtypeStruct((1, 1280, 30, 20), jnp.float32)]),
    "jax_upsample_pool.hlo": (upsample_pool, [jax.ShapeDtypeStruct((2, 8, 30, 20), jnp.float32),
                                              jax.ShapeDtypeStruct((8,), jnp.float32)]),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE, help="directory to write to (default: examples/)")
    out = parser.parse_args().out
    for name, (function, args) in EXAMPLES.items():
        text = jax.jit(function).lower(*args).as_text(dialect="hlo")
        (out / name).write_text(text.rstrip("\n") + "\n")
        print(f"wrote {out / name} with jax {jax.__version__}")


if __name__ == "__main__":
    main()
