"""The package's shape: module sizes and the import graph between its folders.

``python -m tools.layout`` prints the largest modules and the folder graph;
``tests/unit/test_layout.py`` holds the rules (no module over 700 lines, no
cycle between folders, SQL only in ``guardrails/ledger``).
"""

from __future__ import annotations

import ast
import functools
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "guardrails"
#: top-level modules (``guardrails/x.py``) form one group: the shared core
CORE = "(core)"
#: the package's own ``__init__`` (the public surface, re-exporting every folder) and
#: ``__main__``: the root, above every folder
ROOT_GROUP = "(root)"


@functools.cache
def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def folder_of(module: str) -> str:
    """``guardrails.ledger.sqlite`` -> ``ledger``; a top-level module -> the core group."""
    parts = module.split(".")
    if module in ("guardrails", "guardrails.__main__"):
        return ROOT_GROUP
    if len(parts) >= 3 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()):
        return parts[1]
    return CORE


def imports(module: str, path: Path) -> set[str]:
    """Every guardrails module ``module`` imports, lazily or under TYPE_CHECKING too."""
    is_pkg = path.name == "__init__.py"
    package = module if is_pkg else module.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("guardrails"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("guardrails"):
                out.add(target)
                out.update(f"{target}.{a.name}" for a in node.names)
    known = modules()
    return {m for m in out if m in known}


def folder_graph() -> dict[str, set[str]]:
    """Folder -> the other folders (or the core) its modules import."""
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules().items():
        src = folder_of(module)
        graph[src]
        for target in imports(module, path):
            dst = folder_of(target)
            if dst != src:
                graph[src].add(dst)
    return dict(graph)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle, as the folders on it (empty: the graph is a DAG)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def line_counts() -> list[tuple[int, str]]:
    counts = [
        (len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(ROOT)))
        for p in modules().values()
    ]
    return sorted(counts, reverse=True)


def main() -> int:
    print("largest modules:")
    for n, name in line_counts()[:15]:
        print(f"  {n:>5}  {name}")
    graph = folder_graph()
    print("imports between folders:")
    for src in sorted(graph):
        print(f"  {src:<12} -> {', '.join(sorted(graph[src])) or '(nothing)'}")
    found = cycles(graph)
    print("cycles:", found or "none")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
