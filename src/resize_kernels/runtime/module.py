"""Loading: a CompiledModule (data from the compiler) made callable on numpy arrays."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..compiler.pipeline import CompiledModule
from ..errors import InvalidTypeError
from .executor import Executor


@dataclass(eq=False)
class LoadedModule:
    """A CompiledModule ready to run: call it on numpy arrays, one per entry parameter.

    The Executor is planned on first use, so loading (and printing) a module
    the executor cannot run still works; running it raises ExecutionError.
    """

    compiled: CompiledModule

    @property
    def module(self):
        """The lowered HloModule."""
        return self.compiled.module

    @property
    def programs(self) -> dict:
        """The Program traced for each kernel instruction."""
        return self.compiled.programs

    @functools.cached_property
    def executor(self) -> Executor:
        """The planned entry computation, shared by every run."""
        return Executor(self.compiled.module, self.compiled.programs)

    def __repr__(self) -> str:
        return "<LoadedModule" + repr(self.compiled)[len("<CompiledModule"):]

    def _repr_html_(self) -> str:
        return self.compiled._repr_html_().replace("CompiledModule", "LoadedModule", 1)

    def __call__(self, *args):
        """Run on numpy arrays (one per entry parameter); the ROOT's value, a tuple for a tuple ROOT."""
        return self.executor(*args)

    def values(self, *args) -> dict:
        """Run and return every entry instruction's value by name (to check each kernel's output)."""
        return self.executor.values(*args)

    def __str__(self) -> str:
        return str(self.compiled)


def load(compiled: CompiledModule) -> LoadedModule:
    """The compiled module, callable (``load(compile_module(text))(x)``)."""
    if not isinstance(compiled, CompiledModule):
        raise InvalidTypeError(f"load takes a CompiledModule (from compiler.pipeline.compile_module), "
                               f"got {type(compiled).__name__}")
    return LoadedModule(compiled)
