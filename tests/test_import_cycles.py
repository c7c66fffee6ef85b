"""No import cycle between mlirkit modules (imports inside functions and under ``TYPE_CHECKING`` included).

The layer contract (``tests/test_architecture.py``) forbids cycles between layers; this test forbids them
inside a package too: two modules that import each other are one concept split in two, or one that
belongs below the other. The graph is grimp's (import-linter's own), the cycles its strongly connected
components (Tarjan 1972).
"""
from __future__ import annotations

import pytest

#: cycles known today, each with who removes it; a listed cycle that is gone fails too (remove the entry)
ALLOWED: dict[frozenset[str], str] = {
    frozenset({"mlirkit.datasets._io", "mlirkit.datasets.bundled", "mlirkit.datasets.sources"}):
        "the datasets engineer breaks it (the bundled sources read the manifest through bundled.py)",
}


def _cycles(graph) -> list[frozenset[str]]:
    """The strongly connected components with more than one module, iteratively (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


@pytest.fixture(scope="module")
def graph():
    grimp = pytest.importorskip("grimp")
    return grimp.build_graph("mlirkit", cache_dir=None)


def test_the_cycle_finder_finds_a_planted_cycle():
    class Graph:
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
        modules = set(edges)

        def find_modules_directly_imported_by(self, m):
            return self.edges[m]

    assert _cycles(Graph()) == [frozenset({"a", "b", "c"})]


def test_no_import_cycle_between_mlirkit_modules(graph):
    cycles = set(_cycles(graph))
    unexpected = sorted(" <-> ".join(sorted(c)) for c in cycles - set(ALLOWED))
    assert not unexpected, "import cycles:\n" + "\n".join(unexpected)
    gone = sorted(" <-> ".join(sorted(c)) for c in set(ALLOWED) - cycles)
    assert not gone, "allowed cycles that no longer exist (remove them from ALLOWED):\n" + "\n".join(gone)
