"""The plan cache: the selection stage's choices kept on disk, so a shape any earlier process chose for is not
compared again (as torch.compile and XLA keep their compilation caches).

A plan is a JSON document (the selection: kernel, setting, rule, every candidate considered), one file per key,
under ``<cache dir>/plans/<code version>/``. The code version is a hash of this package's sources and fitted
parameters, so editing a kernel or the cost model invalidates every plan. Writes go to a temporary file renamed
into place, so concurrent processes read a whole plan or none. At most ``MAX_PLANS`` plans per version and
``KEEP_VERSIONS`` versions are kept (the oldest go first).

The cache directory is ``$RESIZE_KERNELS_CACHE_DIR``, else ``$XDG_CACHE_HOME/resize-kernels``, else
``~/.cache/resize-kernels``; ``RESIZE_KERNELS_PLAN_CACHE=0`` turns the cache off.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path

ENABLE_ENV = "RESIZE_KERNELS_PLAN_CACHE"
DIR_ENV = "RESIZE_KERNELS_CACHE_DIR"
#: Plans kept per code version, and code versions kept: about 2 KB a plan.
MAX_PLANS = 4096
KEEP_VERSIONS = 3

_PACKAGE = Path(__file__).resolve().parent


def enabled() -> bool:
    return os.environ.get(ENABLE_ENV, "1") not in ("0", "")


def directory() -> Path:
    """Where plans of this code version live."""
    root = os.environ.get(DIR_ENV) or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / \
        "resize-kernels"
    return Path(root) / "plans" / code_version()


@functools.cache
def code_version() -> str:
    """A hash of the package's sources and data files: any edit makes a new version."""
    digest = hashlib.sha256()
    for path in sorted(p for p in _PACKAGE.rglob("*") if p.suffix in (".py", ".json") and p.is_file()):
        digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _file(key: str) -> Path:
    return directory() / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")


def lookup(key: str) -> dict | None:
    """The plan stored under ``key``, or None (none stored, the cache off, or a file that does not read whole)."""
    if not enabled():
        return None
    try:
        stored = json.loads(_file(key).read_text())
    except (OSError, ValueError):
        return None
    return stored["plan"] if isinstance(stored, dict) and stored.get("key") == key else None


def store(key: str, plan: dict) -> None:
    """Keep ``plan`` under ``key``; a cache that cannot be written warns once and is skipped."""
    if not enabled():
        return
    folder = directory()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as f:
            json.dump({"key": key, "plan": plan}, f)
        os.replace(f.name, _file(key))
        _bound(folder)
    except OSError as error:
        _warn_once(f"the plan cache in {folder} cannot be written ({error}); selection results are not kept. "
                   f"Set {DIR_ENV} to a writable directory, or {ENABLE_ENV}=0 to turn the cache off")


def _bound(folder: Path) -> None:
    """Drop the oldest plans past MAX_PLANS, and the oldest code versions past KEEP_VERSIONS."""
    for entries, keep in ((list(folder.glob("*.json")), MAX_PLANS),
                          ([p for p in folder.parent.iterdir() if p.is_dir()], KEEP_VERSIONS)):
        if len(entries) <= keep:
            continue
        for old in sorted(entries, key=_mtime)[:len(entries) - keep]:
            if old != folder:
                shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # removed by another process meanwhile
        return 0.0


def clear() -> None:
    """Remove every plan of every code version."""
    shutil.rmtree(directory().parent, ignore_errors=True)


@functools.cache
def _warn_once(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=3)
