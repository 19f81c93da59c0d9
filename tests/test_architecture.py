"""The package's architecture as tests: one layer order, no import cycles, short modules.

Imports flow ``privacy`` <- ``algorithms`` <- ``audit`` <- ``cli`` (CONTRIBUTING.md,
"Where things go"); a module never imports a later layer, not even under ``TYPE_CHECKING`` or
inside a function. The graph is read from the source with :mod:`ast`, so nothing runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("privacy", "algorithms", "audit", "cli")
FOLDER_OF_PACKAGE = {"fedpriv": "api", **{layer: layer for layer in LAYERS}}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if parts[0] == "api":
        parts = parts[1:]
    return ".".join(["fedpriv", *parts])


def _sources() -> dict[str, Path]:
    files = [p for folder in ("api", *LAYERS) for p in (ROOT / folder).rglob("*.py")]
    return {_module_name(p): p for p in files}


SOURCES = _sources()


def _imports(path: Path, *, module_level: bool = False) -> set[str]:
    """Every fedpriv module ``path`` imports, at any depth of its syntax tree.

    With ``module_level``, only the imports that run when the module is imported (its
    top level, including ``if TYPE_CHECKING:`` blocks), not those deferred into a
    function body, which is how a module offers a lazy façade to a later module.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = ast.walk(tree)
    if module_level:
        nodes = (
            n
            for top in tree.body
            if not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for n in ast.walk(top)
        )
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("fedpriv")}
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.startswith("fedpriv")
        ):
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names} & set(SOURCES)
    return found


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_sources_found() -> None:
    assert {"fedpriv", "fedpriv.privacy.ledger.accountant", "fedpriv.cli.main"} <= set(SOURCES)


@pytest.mark.parametrize("module", sorted(m for m in SOURCES if _layer(m) is not None))
def test_imports_never_flow_back(module: str) -> None:
    own = _layer(module)
    later = sorted(m for m in _imports(SOURCES[module]) if (_layer(m) or -1) > own)
    assert not later, f"{module} ({LAYERS[own]}) imports a later layer: {later}"


def test_no_import_cycles_between_modules() -> None:
    # Edges between modules only: a package's __init__ that re-exports its own
    # submodules is not a cycle of concepts, so package -> own submodule is left out.
    graph = nx.DiGraph()
    for module, path in SOURCES.items():
        for target in _imports(path, module_level=True):
            if target in SOURCES and target != module and not target.startswith(module + "."):
                graph.add_edge(module, target)
    cycles = [
        c for c in nx.simple_cycles(graph) if not any(SOURCES[m].name == "__init__.py" for m in c)
    ]
    assert not cycles, f"import cycles: {cycles[:5]}"


#: Modules may run past about this many lines only with a reason in their docstring.
MODULE_LINES = 500


LONG = sorted(
    m for m, p in SOURCES.items() if p.read_text(encoding="utf-8").count("\n") > MODULE_LINES
)


@pytest.mark.parametrize("module", LONG)
def test_long_modules_state_why(module: str) -> None:
    text = SOURCES[module].read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text)) or ""
    assert "Length:" in doc, f"{module} has {text.count(chr(10))} lines and no 'Length:' reason"


def _package(module: str) -> str:
    """The package a module belongs to: itself for a package's ``__init__``."""
    return module if SOURCES[module].name == "__init__.py" else module.rsplit(".", 1)[0]


def _package_edges() -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Package -> package import edges, with the module imports behind each.

    Every static import counts, at any depth (a function-level import is still a
    dependency of the package). A package's ``__init__`` importing its own
    subpackages (a re-export façade) is not an edge: the subpackage does not depend on
    its parent for that.
    """
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for module, path in SOURCES.items():
        source = _package(module)
        for target in _imports(path):
            if target not in SOURCES:
                continue
            dest = _package(target)
            if dest == source or (path.name == "__init__.py" and dest.startswith(module + ".")):
                continue
            edges.setdefault((source, dest), []).append((module, target))
    return edges


PACKAGE_EDGES = _package_edges()


def _package_cycles(layer: str) -> list[list[str]]:
    graph = nx.DiGraph()
    prefix = f"fedpriv.{layer}"
    graph.add_edges_from(
        edge
        for edge in PACKAGE_EDGES
        if all(p == prefix or p.startswith(prefix + ".") for p in edge)
    )
    return list(nx.simple_cycles(graph))


def _explain(cycles: list[list[str]]) -> str:
    lines = []
    for cycle in sorted(cycles, key=len)[:5]:
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            lines.append(f"{a} -> {b}: {PACKAGE_EDGES[(a, b)][:3]}")
        lines.append("")
    return "\n".join(lines)


@pytest.mark.parametrize("layer", ["privacy", "algorithms", "audit", "cli"])
def test_no_import_cycles_between_packages(layer: str) -> None:
    # Cycles across layers are already refused (test_imports_never_flow_back).
    cycles = _package_cycles(layer)
    assert not cycles, f"package import cycles in {layer}/:\n{_explain(cycles)}"


def _edges_from(source: str, dest: str) -> list[tuple[str, str]]:
    return [
        pair
        for (a, b), pairs in PACKAGE_EDGES.items()
        for pair in pairs
        if (a == source or a.startswith(source + ".")) and (b == dest or b.startswith(dest + "."))
    ]


@pytest.mark.parametrize(
    ("source", "dest"),
    [
        ("fedpriv.audit.engine", "fedpriv.audit.claims"),
        ("fedpriv.audit.engine", "fedpriv.audit.families"),
        ("fedpriv.audit.estimators", "fedpriv.audit.claims"),
        ("fedpriv.audit.estimators", "fedpriv.audit.families"),
        # The claims machinery finds the families at run time (the registry), never by name.
        ("fedpriv.audit.claims", "fedpriv.audit.families"),
    ],
)
def test_the_audit_engine_and_claims_machinery_name_no_family(source: str, dest: str) -> None:
    found = _edges_from(source, dest)
    assert not found, f"{source} imports {dest}: {found[:5]}"


def test_families_import_the_claims_types_one_way() -> None:
    assert _edges_from("fedpriv.audit.families", "fedpriv.audit.claims")
    assert not _edges_from("fedpriv.audit.claims", "fedpriv.audit.families")
