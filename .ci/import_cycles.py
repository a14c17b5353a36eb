"""Fail on any import circle in the installed package, counting imports inside functions.

import-linter's layers catch imports that climb a layer; a circle inside one layer (two modules
of a folder importing each other, one of them inside a function) passes them. This check builds
grimp's import graph of ``anoneval`` laid out as installed (see ``lint_imports.py``), with every
import but those under ``TYPE_CHECKING``, and lists each strongly connected group of modules.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lint_imports import installed_layout


def cycles(graph) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0

    def imports(module: str):
        return iter(sorted(graph.find_modules_directly_imported_by(module)))

    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, imports(root))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, imports(child)))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return sorted(groups)


def report() -> int:
    """Print each circle with the imports that close it; the exit code is the number found."""
    import grimp

    graph = grimp.build_graph("anoneval", exclude_type_checking_imports=True)
    found = cycles(graph)
    for group in found:
        print("import circle: " + " <-> ".join(group))
        members = set(group)
        for module in group:
            for imported in sorted(graph.find_modules_directly_imported_by(module) & members):
                lines = graph.get_import_details(importer=module, imported=imported)
                where = ", ".join(f"l.{d['line_number']}" for d in lines)
                print(f"    {module} -> {imported} ({where})")
    print(f"{len(found)} import circle(s) in anoneval")
    return min(len(found), 1)


def main() -> int:
    if os.environ.get("ANONEVAL_CYCLES_INNER"):
        return report()
    with tempfile.TemporaryDirectory() as tmp:
        dest = installed_layout(Path(tmp))
        env = {**os.environ, "PYTHONPATH": str(dest), "ANONEVAL_CYCLES_INNER": "1"}
        return subprocess.run([sys.executable, __file__], cwd=dest, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
