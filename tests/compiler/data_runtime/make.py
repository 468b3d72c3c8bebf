"""Write the runtime fixtures of tests/compiler/test_runtime_ops.py: JAX modules around a ResizeNearest call, with
the values XLA computes for them.

    pip install jax jaxlib          # jax is in the test extra; resize-kernels does not need it
    python tests/compiler/data_runtime/make.py [--out DIR]

Each function below is written as examples/make_jax_example.py writes its
modules, three ways: NAME.hlo (``as_text(dialect="hlo")``), NAME.pb (the
serialized HloModuleProto) and NAME.mlir (StableHLO text). They use the ops
the executor runs around a resize (compare, select, clamp, slice, pad, iota,
concatenate, reduce, the unary and binary elementwise ops) on inputs holding
the edge cases (NaN, infinities, -0.0, integer extremes, values that round in
bfloat16), and nested jits, one holding the ResizeNearest call itself.

NAME.npz holds the seeded inputs (``arg0``, ``arg1`` ...), what XLA:CPU
computes for them (``out0``, ``out1`` ...) and how the test compares each
output (``check``): "exact" bit for bit; "ulp:N" within N units in the last
place of the output type, for the functions XLA does not specify bit for bit;
"sum:N" within the bound of an N-term float reduction summed (or multiplied)
in another order, as XLA leaves the order open. bfloat16 arrays, which npz
cannot hold, are stored as their uint16 bits and listed in ``bfloat16``.
XLA cannot run the ResizeNearest custom call, so the values come from the
same function with the call replaced by the gather it specifies
(resize_kernels.semantics.source_index: a copy, the same bits).

XLA runs with ``--xla_allow_excess_precision=false``, so that bfloat16 ops
round their results, as HLO's semantics (and the executor) say. Two things
XLA:CPU does beyond HLO's semantics are kept out of the data: it flushes
subnormal floats to zero (no input is subnormal, and no exact output
becomes one), and it contracts a multiply feeding an add into one fused
multiply-add in float32 and float16 (bfloat16 is converted in between), so
no exact output multiplies then adds in those types.
"""

import argparse
import io
import os
from pathlib import Path

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_allow_excess_precision=false").strip()

import jax  # noqa: E402  (after XLA_FLAGS)
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from resize_kernels.semantics import source_index  # noqa: E402

HERE = Path(__file__).resolve().parent
# The protos' metadata name this script's file: keep the path from tests/ on, so that every checkout writes the
# same bytes.
jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/(?=tests/)")
REFERENCE = False  # True while computing the expected values: the resize is then a gather


def resize_nearest(x, size):
    """upsample_nearest2d of an NCHW array as torch_xla lowers it (as in examples/make_jax_example.py); a gather by
    the specified index map when computing the expected values."""
    n, c, in_h, in_w = x.shape
    out_h, out_w = size
    if REFERENCE:
        return x[:, :, source_index(in_h, out_h)][:, :, :, source_index(in_w, out_w)]
    call = jax.ffi.ffi_call("ResizeNearest", jax.ShapeDtypeStruct((n, out_w, out_h, c), x.dtype),
                            custom_call_api_version=1, legacy_backend_config='"00"')
    return jnp.transpose(call(jnp.transpose(x, (0, 3, 2, 1))), (0, 3, 2, 1))


@jax.jit
def upsample(x):
    """A nested jit holding the resize: an HLO call of a computation with the custom call in it."""
    return resize_nearest(x, (2 * x.shape[2], 2 * x.shape[3]))


@jax.jit
def soft_clip(x, limit):
    """Another nested jit, called twice."""
    return lax.clamp(-limit, x, limit)


def float_ops(x, y):
    """float32: x (2,3,6,5) NCHW upsampled to y's (2,3,12,10)."""
    u = upsample(x)
    picked = jnp.where(u > y, u - y, -(y * y))  # compare, select
    clipped = soft_clip(u, jnp.float32(0.5)) + soft_clip(y, jnp.float32(2.0))
    window = lax.pad(u[:, :, 1:11:2, ::3], jnp.float32(-0.0), [(0, 0, 0), (0, 0, 0), (1, 2, 1), (-1, 1, 0)])
    joined = jnp.concatenate([u, y, lax.broadcasted_iota(jnp.float32, y.shape, 2)], axis=1)
    exact = (jnp.floor(u), jnp.ceil(y), jnp.sign(u), jnp.abs(y), jnp.round(y * 4), lax.rem(u * 7, y),
             jnp.maximum(u, y), jnp.minimum(u, -y), jnp.sqrt(jnp.abs(u)), u / y,
             jnp.isfinite(u), (u >= y) ^ (y < 0) | (u != u))
    approximate = (jnp.exp(u), jnp.log(jnp.abs(y)), lax.rsqrt(jnp.abs(u)), jnp.tanh(y), jax.nn.sigmoid(u),
                   jnp.power(jnp.abs(u), y), jnp.expm1(y), jnp.log1p(jnp.abs(u)))
    reductions = (jnp.sum(y, axis=(2, 3)), jnp.prod(u[:, :, :4, :4], axis=3))
    extremes = (jnp.max(u, axis=(1, 3)), jnp.min(y, axis=0), lax.reduce(u, jnp.float32(-jnp.inf), lax.max, (2,)))
    counts = jnp.sum((u > 0).astype(jnp.int32), axis=(2, 3))
    outputs = (picked, clipped, window, joined) + exact + extremes + (counts,) + approximate + reductions
    checks = ["exact"] * (4 + len(exact) + len(extremes) + 1) + ["ulp:4"] * len(approximate) + [
        f"sum:{12 * 10}", "sum:4"]
    return outputs, checks


def int_ops(p, q, b):
    """int32 p (2,3,4,5) NCHW upsampled to q's (2,3,8,10); uint8 b (2,3,4,5) upsampled too."""
    u = upsample(p)
    v = upsample(b)
    shifts = (lax.shift_left(u, q), lax.shift_right_arithmetic(u, q), lax.shift_right_logical(u, q),
              lax.shift_left(v, v), lax.shift_right_arithmetic(v, v >> 5), lax.shift_right_logical(v, v >> 5))
    arithmetic = (lax.rem(u, q), lax.div(u, q), lax.rem(v, v >> 4),
                  u + q, u * q, -u, lax.abs(u), jnp.sign(u), jnp.sign(v), v * v, v - (v >> 1) * 3)
    bits = ((u & q) | (~u ^ q), ~v, (u > q) & ~(q == 0) | (u <= -5))
    extremes = (jnp.maximum(u, q), jnp.minimum(v, jnp.uint8(200)), soft_int(u), lax.clamp(jnp.uint8(3), v,
                                                                                           jnp.uint8(99)))
    reductions = (jnp.sum(u, axis=(2, 3)), jnp.prod(u, axis=1), jnp.max(u, axis=3), jnp.min(v, axis=(0, 2)),
                  jnp.all(u > q, axis=2), jnp.any(u == q, axis=(1, 2)),
                  lax.reduce(u, jnp.int32(0), lax.bitwise_xor, (3,)), jnp.sum(v, axis=3, dtype=jnp.uint8),
                  lax.reduce(v, jnp.uint8(0xFF), lax.bitwise_and, (2,)), lax.reduce(q, jnp.int32(0), lax.bitwise_or,
                                                                                      (0, 1)))
    iotas = (lax.broadcasted_iota(jnp.int8, (300, 2), 0), lax.broadcasted_iota(jnp.uint8, (2, 260), 1))
    outputs = shifts + arithmetic + bits + extremes + reductions + iotas
    return outputs, ["exact"] * len(outputs)


@jax.jit
def soft_int(u):
    return lax.clamp(jnp.int32(-1000), u, jnp.int32(1000))


def half_ops(x, h):
    """bfloat16 x (2,3,6,5) NCHW upsampled; float16 h (2,3,12,10). Results stay in their half type: each op
    rounds once, as HLO says."""
    u = upsample(x)
    hu = upsample(h[:, :, ::2, ::2])
    exact = (u * u + u, u - u * 3, jnp.maximum(u, 0), jnp.minimum(u, -u), lax.clamp(x.dtype.type(-1), u,
                                                                                      x.dtype.type(1)),
             -u, jnp.abs(u), jnp.sign(u), jnp.floor(u * 3), jnp.ceil(u * 3), jnp.sqrt(u), u / (u - 1),
             jnp.where(u > 0, u, u * 2), u.astype(jnp.float16), u.astype(jnp.float32),
             h * hu, h + hu, h / (hu - 1), -h, jnp.abs(h), jnp.sign(h), jnp.maximum(h, hu), jnp.minimum(h, 0),
             jnp.sqrt(h), jnp.floor(h * 3), h.astype(jnp.bfloat16), h.astype(jnp.float32), hu < h,
             lax.rem(h, hu), jnp.max(u, axis=3), jnp.min(h, axis=(2, 3)))
    approximate = (jnp.exp(u), jnp.tanh(u), jnp.log(h), jax.nn.sigmoid(h))
    reductions = (lax.reduce(u, x.dtype.type(0), lax.add, (3,)), lax.reduce(h, h.dtype.type(0), lax.add, (2,)))
    outputs = exact + approximate + reductions
    return outputs, ["exact"] * len(exact) + ["ulp:1"] * len(approximate) + ["sum:10", "sum:12"]


def special(rng, shape, dtype, values):
    """Standard normal values with `values` (NaN, -0.0 ...) put at random places."""
    x = (rng.standard_normal(shape) * 2).astype(np.float32)
    flat = x.reshape(-1)
    places = rng.choice(flat.size, size=len(values) * 3, replace=False)
    flat[places] = np.tile(np.asarray(values, np.float32), 3)
    return x.astype(dtype)


def integers(rng, shape, dtype, values):
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -40), min(info.max, 40), size=shape, endpoint=True).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, size=len(values) * 3, replace=False)] = np.tile(np.asarray(values, dtype), 3)
    return x


def arguments(name):
    rng = np.random.default_rng({"jax_resize_float_ops": 1, "jax_resize_int_ops": 2, "jax_resize_half_ops": 3}[name])
    f32, bf16, f16 = np.float32, ml_dtypes.bfloat16, np.float16
    edges = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, -1e30, 0.5, -2.5]
    if name == "jax_resize_float_ops":
        return [special(rng, (2, 3, 6, 5), f32, edges), special(rng, (2, 3, 12, 10), f32, edges)]
    if name == "jax_resize_int_ops":
        i32 = [np.iinfo(np.int32).min, np.iinfo(np.int32).max, -1, 0, 31, 32, 33, -33, 1 << 20]
        return [integers(rng, (2, 3, 4, 5), np.int32, i32), integers(rng, (2, 3, 8, 10), np.int32, i32),
                integers(rng, (2, 3, 4, 5), np.uint8, [0, 255, 128, 127, 1, 7, 8, 9])]
    halves = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.00390625, 3.0e-6, 65504.0, -1.0]
    return [special(rng, (2, 3, 6, 5), bf16, halves), special(rng, (2, 3, 12, 10), f16, halves)]


FUNCTIONS = {"jax_resize_float_ops": float_ops, "jax_resize_int_ops": int_ops, "jax_resize_half_ops": half_ops}


def outputs_of(function, checks: list | None = None):
    """The function's outputs alone, under its name (the module is then jit_<name>); its checks into `checks`."""
    def run(*args):
        outputs, kinds = function(*args)
        if checks is not None:
            checks[:] = kinds
        return outputs

    run.__name__ = function.__name__
    return jax.jit(run)


def write(out: Path, name: str) -> None:
    """NAME.hlo, NAME.pb, NAME.mlir and NAME.npz (the inputs, XLA's outputs and the checks)."""
    global REFERENCE
    function = FUNCTIONS[name]
    args = arguments(name)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    checks = []
    lowered = outputs_of(function, checks).lower(*shapes)
    (out / f"{name}.hlo").write_text(lowered.as_text(dialect="hlo").rstrip("\n") + "\n")
    (out / f"{name}.pb").write_bytes(lowered.compiler_ir("hlo").as_serialized_hlo_module_proto())
    (out / f"{name}.mlir").write_text(lowered.as_text().rstrip("\n") + "\n")
    REFERENCE = True
    jax.clear_caches()  # the nested jits were traced with the custom call
    try:
        values = outputs_of(function)(*args)
    finally:
        REFERENCE = False
        jax.clear_caches()
    arrays = {f"arg{i}": a for i, a in enumerate(args)}
    arrays.update({f"out{i}": np.asarray(v) for i, v in enumerate(values)})
    assert len(checks) == len(values), (name, len(checks), len(values))
    stored = {key: value.view(f"u{value.dtype.itemsize}") if value.dtype == ml_dtypes.bfloat16 else value
              for key, value in arrays.items()}
    stored["check"] = np.array(checks)
    stored["bfloat16"] = np.array([key for key, value in arrays.items() if value.dtype == ml_dtypes.bfloat16])
    buffer = io.BytesIO()
    np.savez(buffer, **stored)
    (out / f"{name}.npz").write_bytes(buffer.getvalue())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE, help="directory to write to (default: this one)")
    out = parser.parse_args().out
    for name in FUNCTIONS:
        write(out, name)
    print(f"wrote {out} with jax {jax.__version__}")


if __name__ == "__main__":
    main()
