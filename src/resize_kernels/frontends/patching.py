"""What a front end's patch (``patch_interpolate``, ``patch_image_resize``) yields: the calls it took and passed."""

from __future__ import annotations


class PatchCalls:
    """The calls made while a patch block lasted: ``taken`` (run on the simulated NeuronCore) and ``passed`` (to
    the framework). Subclasses name the patch and the framework for the repr."""

    patch = framework = ""

    def __init__(self):
        self.taken = self.passed = 0

    @property
    def calls(self) -> int:
        return self.taken + self.passed

    def __repr__(self) -> str:
        return f"<{self.patch}: {self.taken} call{'' if self.taken == 1 else 's'} taken, {self.passed} " \
               f"passed to {self.framework}>"


def count(handles, lock, taken: bool) -> None:
    """One call on every open block's handle (``handles``, guarded by ``lock``): taken or passed on."""
    with lock:
        for handle in handles:
            if taken:
                handle.taken += 1
            else:
                handle.passed += 1
