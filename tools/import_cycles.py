"""Fail on any import cycle among the project's modules.

    python tools/import_cycles.py                 # the project's packages
    python tools/import_cycles.py PACKAGE_DIR...  # other packages (a folder with __init__.py)

import-linter sees the imports a module's code names; this check counts what importing it
runs, so it also sees the load-order cycles that pass through a package's ``__init__``:

- every ``import`` and ``from ... import`` counts, also inside functions and ``try`` blocks,
  except under ``if TYPE_CHECKING:`` (never run);
- importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` first: the importer
  depends on them too, unless it is inside that package (then it is already being imported);
- ``from pkg import name`` reads ``pkg/__init__.py`` (a module inside ``pkg`` depends on it
  only for a name that is not a submodule: reading an attribute of a package still loading),
  and imports ``pkg.name`` when that is a submodule;
- ``from . import x`` and the other relative forms are resolved against the importer.

Pure Python (``ast``); nothing is imported. Prints each cycle as a chain of modules, each
link with the line that makes it, and exits 1; exits 0 when there is none.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
PROJECT_PACKAGES = (
    "docplatform",
    "integrations",
    "webhooks",
    "marketplace",
    "sdk/docplatform_sdk",
)


@dataclass(frozen=True)
class Link:
    """Why ``importer`` depends on ``target``: the statement, and where."""

    path: str
    line: int
    statement: str
    how: str  # "" (imports it), "runs its __init__", "reads its __init__"

    def describe(self) -> str:
        how = f" ({self.how})" if self.how else ""
        return f"{self.path}:{self.line}: {self.statement}{how}"


def module_files(package_dir: Path) -> dict[str, Path]:
    """Every module of the package rooted at ``package_dir``, by dotted name."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        relative = path.relative_to(package_dir.parent).with_suffix("")
        parts = relative.parts
        if any(not part.isidentifier() for part in parts):
            continue  # not importable (a template, a folder with a dash)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def import_statements(tree: ast.AST):
    """Every import node that runs: all of them, but those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if isinstance(node, ast.If) and is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def ancestors(name: str) -> list[str]:
    """``a.b.c`` -> ``["a", "a.b"]``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def inside(module: str, package: str) -> bool:
    return module.startswith(package + ".")


class Graph:
    def __init__(self, modules: dict[str, Path], base: Path):
        self.modules = modules
        self.base = base
        self.edges: dict[str, dict[str, Link]] = {name: {} for name in modules}
        for name, path in modules.items():
            self._read(name, path)

    def _link(self, importer: str, target: str, node: ast.stmt, how: str, path: Path) -> None:
        if target == importer or target not in self.modules:
            return
        if target in self.edges[importer]:
            return  # keep the first line that makes the link
        try:
            shown = str(path.relative_to(self.base))
        except ValueError:
            shown = str(path)
        statement = ast.unparse(node).splitlines()[0]
        self.edges[importer][target] = Link(shown, node.lineno, statement, how)

    def _runs(self, importer: str, target: str, node: ast.stmt, path: Path) -> None:
        """``target`` is imported: its packages' ``__init__`` run first, then it."""
        for package in ancestors(target):
            if package != importer and not inside(importer, package):
                self._link(importer, package, node, f"runs its __init__ to import {target}", path)
        if not inside(importer, target):
            self._link(importer, target, node, "", path)

    def _read(self, importer: str, path: Path) -> None:
        tree = ast.parse(path.read_bytes(), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in import_statements(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self._runs(importer, alias.name, node, path)
                continue
            source = self._resolve(importer, is_package, node)
            if source is None:
                continue
            for package in ancestors(source):
                if package != importer and not inside(importer, package):
                    self._link(
                        importer, package, node, f"runs its __init__ to import {source}", path
                    )
            names = [alias.name for alias in node.names]
            submodules = [
                f"{source}.{name}" for name in names if f"{source}.{name}" in self.modules
            ]
            if not inside(importer, source):
                self._link(importer, source, node, "", path)
            elif len(submodules) < len(names):  # a name of a package still being imported
                self._link(importer, source, node, "reads its __init__", path)
            for submodule in submodules:
                if not inside(importer, submodule):
                    self._link(importer, submodule, node, "", path)

    @staticmethod
    def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str | None:
        if not node.level:
            return node.module
        package = importer.split(".") if is_package else importer.split(".")[:-1]
        if node.level > 1:
            package = package[: len(package) - (node.level - 1)]
        if not package:
            return None  # beyond the top-level package: not ours to judge
        return ".".join([*package, node.module] if node.module else package)


def strongly_connected(edges: dict[str, dict[str, Link]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively; components of more than one module, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return sorted(components)


def shortest_cycle(edges: dict[str, dict[str, Link]], start: str, within: set[str]) -> list[str]:
    """The shortest chain from ``start`` back to itself, inside one component."""
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(edges[node]):
            if successor not in within:
                continue
            if successor == start:
                chain = [node]
                while chain[-1] != start:
                    chain.append(previous[chain[-1]])
                return [*reversed(chain), start]
            if successor not in previous:
                previous[successor] = node
                queue.append(successor)
    raise AssertionError(f"{start} is in a component but on no cycle")


def cycles(edges: dict[str, dict[str, Link]]) -> list[list[str]]:
    """For each component, the shortest cycle through each of its modules, without repeats."""
    found: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for component in strongly_connected(edges):
        members = set(component)
        for module in component:
            chain = shortest_cycle(edges, module, members)
            ring = chain[:-1]
            first = ring.index(min(ring))
            key = tuple(ring[first:] + ring[:first])
            if key not in seen:
                seen.add(key)
                found.append([*key, key[0]])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "packages",
        nargs="*",
        type=Path,
        help="package folders (default: the project's: " + ", ".join(PROJECT_PACKAGES) + ")",
    )
    arguments = parser.parse_args(argv)
    packages = arguments.packages or [PROJECT / name for name in PROJECT_PACKAGES]
    modules: dict[str, Path] = {}
    for package in packages:
        package = package.resolve()
        if not (package / "__init__.py").is_file():
            parser.error(f"{package} is not a package (no __init__.py)")
        modules.update(module_files(package))
    base = Path.cwd()
    graph = Graph(modules, base)
    found = cycles(graph.edges)
    if not found:
        print(f"no import cycle among {len(modules)} modules")
        return 0
    for chain in found:
        print("cycle: " + " -> ".join(chain))
        for importer, target in itertools.pairwise(chain):
            print(f"    {importer} -> {target}: {graph.edges[importer][target].describe()}")
    print(f"{len(found)} import cycle(s) among {len(modules)} modules", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
