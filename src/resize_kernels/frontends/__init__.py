"""Framework front ends over the numpy API; each imports its framework only when imported itself.

``resize_kernels.frontends.torch`` (extra ``resize-kernels[torch]``): a torch
custom op with autograd, ``interpolate_nearest`` and the ``ResizeNearest`` module.
"""
