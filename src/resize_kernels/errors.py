"""The errors this package raises on purpose: every one is a ResizeKernelsError (and LayoutWarning, a warning).

Each is also the standard exception a caller would expect (ValueError for a
value the call cannot take, TypeError for an argument of the wrong kind), so
``except ValueError`` keeps working; ``except ResizeKernelsError`` tells the
package's own, deliberate errors from anything else. Messages follow one form:
"<what> requires <this>, got <that>; <what to change>".
"""


class ResizeKernelsError(Exception):
    """Base of every error the package raises on purpose."""


class InvalidValueError(ResizeKernelsError, ValueError):
    """An argument or input the call cannot take (a shape, a size, a name, a file's contents)."""


class InvalidTypeError(ResizeKernelsError, TypeError):
    """An argument of the wrong kind (a list where an array is needed, a float where an int is)."""


class ResourceError(ResizeKernelsError, ValueError):
    """A request beyond a stated budget: host memory for a simulation, instructions for a trace, input size."""


class InstructionBudgetError(ResourceError):
    """A trace that would emit more instructions than its budget (the tracer stops it there)."""


class LayoutWarning(UserWarning):
    """An array given as NHWC whose shape reads as NCHW (``api.looks_nchw``): say ``layout="NCHW"`` or
    ``layout="NHWC"`` to mean it."""


class NotSimulatedError(ResizeKernelsError, AttributeError):
    """An NKI name (``nl.xyz``, ``nisa.xyz``) that the simulator does not provide; an AttributeError, so that
    ``hasattr`` and ``from ... import`` behave as for any missing name."""


def not_simulated(module: str, name: str) -> AttributeError:
    """The error for ``module.name`` missing from one of the NKI modules (module as kernels write it: "nl")."""
    if name.startswith("__"):  # Python's own probes (pickle, copy, inspect): a plain missing attribute
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    return NotSimulatedError(f"{module}.{name} is not simulated by resize_kernels.nki (dir({module}) lists what "
                             f"is); a kernel that uses it cannot run here yet")


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """A count with its noun, as messages and reports print it: "1 pixel", "2,419 pixels" (``nouns``: an irregular
    plural)."""
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"
