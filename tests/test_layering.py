"""The house is one-way: every import points down the layer order of docs/design.md, and no modules import each other.

The order is written once, in docs/design.md's "Layers, top to bottom:" line; this
test reads it from there. Every import counts, including those inside functions
(a lazy import that runs back up is still an arrow back up).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "resize_kernels"


def layers() -> dict[str, int]:
    """Top-level part of the package -> its rank (0 at the top), from docs/design.md."""
    line = next(line for line in (ROOT / "docs" / "design.md").read_text().splitlines() if line.startswith("Layers, top to bottom:"))
    order = line.split(":", 1)[1].strip().rstrip(".").split(" > ")
    ranks = {part.strip("` "): rank for rank, group in enumerate(order) for part in group.split(",")}
    assert len(ranks) > 2, "docs/design.md's layer line names no layers"
    return {**ranks, "__init__": 0}  # the package's __init__ counts with the top layer


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict) -> set[str]:
    """The package modules ``name`` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in known and t != name)
    return found


def layer_of(module: str, ranks: dict) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_module_has_a_layer():
    ranks = layers()
    missing = sorted({layer_of(m, ranks) for m in modules()} - set(ranks))
    assert not missing, f"modules outside every layer of docs/design.md's line: {missing}"


def test_imports_point_down():
    ranks, known = layers(), modules()
    upward = []
    for name, path in known.items():
        for target in imports(name, path, known):
            if ranks[layer_of(target, ranks)] < ranks[layer_of(name, ranks)]:
                upward.append(f"{name} imports {target}")
    assert not upward, "imports that point up the layers:\n  " + "\n  ".join(sorted(upward))


def test_no_import_cycles():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, "modules that import each other:\n  " + "\n  ".join(cycles)


def test_the_checker_sees_lazy_and_relative_imports(tmp_path):
    """The walker finds imports inside functions and resolves relative ones (so the tests above can fail)."""
    known = {"resize_kernels.machine.cost": None, "resize_kernels.api": None, "resize_kernels.machine": None}
    source = tmp_path / "cost.py"
    source.write_text("def f():\n    from ..api import cost\n    from . import cost as c\n")
    assert imports("resize_kernels.machine.cost", source, known) == {"resize_kernels.api"}


def test_the_selection_stage_sits_between_the_compiler_and_the_kernels():
    """Choosing a kernel is a stage of its own: the compiler and the API call it, and it calls the kernels."""
    ranks = layers()
    assert ranks["api"] < ranks["compiler"] < ranks["select"] < ranks["kernels"] < ranks["machine"]
