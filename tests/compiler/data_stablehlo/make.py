"""Write the StableHLO fixtures of tests/compiler/test_stablehlo.py: JAX's StableHLO text beside XLA's HLO of it.

    pip install jax jaxlib          # not a dependency of resize-kernels; the tests do not need it
    python tests/compiler/data_stablehlo/make.py [--out DIR]

Each NAME.mlir is ``jax.jit(f).lower(*args).as_text()`` and NAME.hlo the HLO
XLA makes of it (``as_text(dialect="hlo")``), so the test can check that
parse_stablehlo converts as XLA does. For two of the examples/ modules the
other ways MLIR prints the same module are written too, to be compared with
examples/NAME.hlo: NAME.generic.mlir (``print_generic_op_form``: every op as
``"dialect.op"(...) <{...}> : (...) -> ...``) and NAME.debug.mlir
(``debug_info=True``: ``loc(...)`` after every op and ``#loc`` definitions; the
file paths in them made relative).
"""

import argparse
import importlib.util
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def _examples_module():
    spec = importlib.util.spec_from_file_location("make_jax_example", ROOT / "examples" / "make_jax_example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLE = _examples_module()
resize_nearest = EXAMPLE.resize_nearest


def relu_call(x):
    """A nested jit (jax.nn.relu is one: a private function and a call), a constant on the left of a multiply
    (XLA moves it right) and the SD2 upsample."""
    return resize_nearest(2.0 * jax.nn.relu(x), (12, 10))


def ops_mix(x, y):
    """The other ops the converter maps: compare, select, clamp, slice with strides, pad with interior padding,
    iota, concatenate, reduce, converts to integers and booleans, constants in hex (a blob, bf16 inf and nan)."""
    table = jnp.asarray(np.linspace(-1, 1, 120, dtype=np.float32).reshape(4, 30))  # printed as a hex blob
    a = jnp.where(x > 0.5, jnp.clip(x, -1.0, 1.0), jnp.exp(x)) + table
    b = jnp.pad(y[:, 1:5:2], ((1, 0), (0, 2)))
    c = jnp.concatenate([a, jnp.arange(30, dtype=jnp.float32)[None, :]], axis=0)
    counts = (a > y.mean()).astype(jnp.int32).sum(axis=1)
    flags = jnp.logical_and(x[:, :8] < 0, y > 0)
    half = jnp.asarray([1.5, -0.0, np.inf, np.nan], jnp.bfloat16)
    return c, b, counts, flags, (x * 255).astype(jnp.uint8), half, jnp.float16(1.0) / jnp.asarray(y, jnp.float16)


def two_results(x):
    """A custom call of two results, one of them unused: a tuple-shaped custom-call and a get-tuple-element per
    result (XLA makes both, the unused one too)."""
    n, c, h, w = x.shape
    call = jax.ffi.ffi_call("Pair", (jax.ShapeDtypeStruct((n, c, h, w), x.dtype), jax.ShapeDtypeStruct((n,), x.dtype)),
                            custom_call_api_version=1, legacy_backend_config="pair")
    first, _ = call(x)
    return resize_nearest(first, (2 * h, 2 * w))


F32 = jnp.float32
PAIRS = {
    "relu_call": (relu_call, [jax.ShapeDtypeStruct((1, 4, 6, 5), F32)]),
    "ops_mix": (ops_mix, [jax.ShapeDtypeStruct((4, 30), F32), jax.ShapeDtypeStruct((4, 8), F32)]),
    "two_results": (two_results, [jax.ShapeDtypeStruct((2, 3, 4, 5), F32)]),
}
FORMS = ("jax_upsample_pool", "jax_train_step")  # examples/ modules written in the generic and debug forms too


def debug_text(lowered) -> str:
    """``as_text(debug_info=True)`` with this machine's paths made relative to the repository."""
    text = lowered.as_text(debug_info=True)
    return text.replace(str(ROOT) + "/", "").replace(str(HERE), "tests/compiler/data_stablehlo")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE, help="directory to write to (default: this one)")
    out = parser.parse_args().out
    for name, (function, args) in PAIRS.items():
        lowered = jax.jit(function).lower(*args)
        (out / f"{name}.mlir").write_text(lowered.as_text().rstrip("\n") + "\n")
        (out / f"{name}.hlo").write_text(lowered.as_text(dialect="hlo").rstrip("\n") + "\n")
    for name in FORMS:
        function, args = EXAMPLE.EXAMPLES[name]
        lowered = jax.jit(function).lower(*args)
        generic = lowered.compiler_ir().operation.get_asm(print_generic_op_form=True)
        (out / f"{name}.generic.mlir").write_text(generic.rstrip("\n") + "\n")
        (out / f"{name}.debug.mlir").write_text(debug_text(lowered).rstrip("\n") + "\n")
    print(f"wrote {out} with jax {jax.__version__}")


if __name__ == "__main__":
    main()
