"""Errors the machine raises: each names what went wrong and where."""

from ..errors import ResizeKernelsError


class MachineError(ResizeKernelsError):
    """Base of every error raised by the NeuronCore model."""


class OutOfBoundsError(MachineError):
    """An access pattern reached outside its tensor (the hardware's default oob mode is to fail)."""


class SbufCapacityError(MachineError):
    """A tile does not fit in the SBUF partition's remaining capacity."""
