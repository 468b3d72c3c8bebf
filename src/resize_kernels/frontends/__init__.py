"""Framework front ends over the numpy API; each imports its framework only when imported itself.

``resize_kernels.frontends.torch`` (extra ``resize-kernels[torch]``): a torch
custom op with autograd, ``interpolate_nearest`` and the ``ResizeNearest`` module.
``resize_kernels.frontends.jax`` (extra ``resize-kernels[jax]``): ``resize_nearest``
and ``resize_nearest_grad`` on NHWC arrays, a ``jax.custom_vjp`` over
``jax.pure_callback``, for jit, grad and vmap.
"""
