"""The package's architecture as tests: one layer order, no import cycles, short modules.

Imports flow ``privacy`` <- ``algorithms`` <- ``audit`` <- ``cli`` (CONTRIBUTING.md,
"Where things go"); a module never imports a later layer, not even under ``TYPE_CHECKING`` or
inside a function, and no chain of imports returns to where it started, however each import
is written (:func:`_imports`). No module exceeds 1,000 lines. The graph is read from the
source with :mod:`ast`, so nothing runs.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
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


def _package_of(module: str, path: Path) -> str:
    """The package a relative import in ``module`` starts from."""
    return module if path.name == "__init__.py" else module.rsplit(".", 1)[0]


def _lazy_targets(tree: ast.Module, known: Collection[str]) -> set[str]:
    """The fedpriv modules a PEP 562 module ``__getattr__`` imports by name.

    A module that defines ``__getattr__`` at its top level resolves names on first use,
    typically from a table of dotted module paths (``fedpriv.privacy``'s ``_EXPORTS``);
    every string constant of such a module that names a fedpriv module is one of its
    imports.
    """
    if not any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
        return set()
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in known
    }


def _is_import_module(node: ast.AST) -> bool:
    """Whether ``node`` is an ``importlib.import_module(...)`` (or bare
    ``import_module(...)``) call with an argument."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module"
    )


def _string_tables(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level names bound to a tuple or list of string literals, with the strings."""
    tables: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if not isinstance(value, (ast.Tuple, ast.List)) or not value.elts:
            continue
        if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                tables[target.id] = {e.value for e in value.elts}
    return tables


def _table_targets(tree: ast.Module, known: Collection[str]) -> set[str]:
    """The fedpriv modules ``importlib.import_module(name)`` imports where ``name`` comes
    from a module-level tuple or list of string literals.

    The argument counts when it reads the table itself (``import_module(TABLE[i])``) or a
    loop variable over it (``for name in TABLE: import_module(name)``, comprehensions
    included); every string of such a table that names a fedpriv module is an import.
    """
    tables = _string_tables(tree)
    if not tables:
        return set()
    bound: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.For, ast.comprehension))
            and isinstance(node.iter, ast.Name)
            and node.iter.id in tables
            and isinstance(node.target, ast.Name)
        ):
            bound.setdefault(node.target.id, set()).update(tables[node.iter.id])
    found: set[str] = set()
    for node in ast.walk(tree):
        if _is_import_module(node) and not isinstance(node.args[0], ast.Constant):
            for name in ast.walk(node.args[0]):
                if isinstance(name, ast.Name):
                    found |= tables.get(name.id, set()) | bound.get(name.id, set())
    return found & set(known)


_WALKS = {"iter_modules": False, "walk_packages": True}


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to one string literal (``_PACKAGE = "fedpriv.x"``)."""
    constants: dict[str, str] = {}
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign) and node.value is not None
            else []
        )
        value = getattr(node, "value", None)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            constants.update({t.id: value.value for t in targets if isinstance(t, ast.Name)})
    return constants


def _walk_targets(tree: ast.Module, known: Collection[str]) -> set[str]:
    """The fedpriv modules a package walk imports: every submodule of the walked package.

    The walk is ``importlib.import_module(P)`` of a package ``P`` named by a string
    literal (inline, or a module-level name bound to one), a ``pkgutil.iter_modules`` or
    ``pkgutil.walk_packages`` call over it (its ``__path__``, through the variable the
    import was bound to or the import itself), and an ``import_module`` of a name that
    is not a literal (the names the walk found), all in one function (or at the top
    level). ``iter_modules`` finds ``P``'s direct submodules, ``walk_packages`` all of
    them, at any depth; ``P`` and each module the walk finds are imports.
    """
    constants = _string_constants(tree)

    def literal(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return constants.get(node.id) if isinstance(node, ast.Name) else None

    scopes = [
        tree,
        *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)),
    ]
    found: set[str] = set()
    for scope in scopes:
        nodes = list(ast.walk(scope))
        packages: dict[str, str] = {}  # variable -> the package it was imported as
        for node in nodes:
            if (
                isinstance(node, ast.Assign)
                and _is_import_module(node.value)
                and (name := literal(node.value.args[0])) is not None
            ):
                packages.update({t.id: name for t in node.targets if isinstance(t, ast.Name)})
        if not any(_is_import_module(n) and literal(n.args[0]) is None for n in nodes):
            continue  # nothing imports the names a walk finds
        for node in nodes:
            func = getattr(node, "func", None)
            walk = getattr(func, "attr", None) or getattr(func, "id", None)
            if not isinstance(node, ast.Call) or walk not in _WALKS or not node.args:
                continue
            walked = {
                packages[n.id]
                if isinstance(n, ast.Name) and n.id in packages
                else literal(n.args[0])
                for n in ast.walk(node.args[0])
                if (isinstance(n, ast.Name) and n.id in packages) or _is_import_module(n)
            } - {None}
            for package in walked:
                depth = package.count(".") + 1
                found |= {
                    m
                    for m in known
                    if m == package
                    or (m.startswith(package + ".") and (_WALKS[walk] or m.count(".") == depth))
                }
    return found


def _imports_in(
    tree: ast.Module,
    module: str,
    path: Path,
    known: Collection[str] = SOURCES.keys(),
    *,
    walks: bool = True,
) -> set[str]:
    """Every fedpriv module the syntax tree of ``module`` (at ``path``) imports.

    ``known`` is the set of module names (``from p import m`` imports module ``p.m`` if
    it is one). ``walks=False`` leaves out the submodules a package walk finds
    (:func:`_walk_targets`): the imports that name no module.
    """
    found: set[str] = _lazy_targets(tree, known) | _table_targets(tree, known)
    if walks:
        found |= _walk_targets(tree, known)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("fedpriv")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package_of(module, path).split(".")
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            if base.startswith("fedpriv"):
                found.add(base)
                found |= {f"{base}.{a.name}" for a in node.names} & set(known)
        elif (
            _is_import_module(node)
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("fedpriv")
        ):
            found.add(str(node.args[0].value))
    return found


def _imports(path: Path, *, walks: bool = True) -> set[str]:
    """Every fedpriv module ``path`` imports, at any depth of its syntax tree.

    Imports at the top level, under ``if TYPE_CHECKING:``, inside functions and methods,
    ``importlib.import_module("fedpriv...")`` calls, ``importlib.import_module(name)``
    with ``name`` taken from a module-level tuple or list of module names
    (:func:`_table_targets`), the targets of a lazy module ``__getattr__``
    (:func:`_lazy_targets`) and, unless ``walks`` is False, every submodule found by a
    walk over a package named by a string (:func:`_walk_targets`) all count: an import
    deferred into a function still makes the module depend on its target.
    """
    module = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return _imports_in(tree, module, path, walks=walks)


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


def _module_graph() -> nx.DiGraph:
    """Module -> module import edges, every import of :func:`_imports` counted."""
    graph = nx.DiGraph()
    graph.add_nodes_from(SOURCES)
    for module, path in SOURCES.items():
        graph.add_edges_from(
            (module, target) for target in _imports(path) if target in SOURCES and target != module
        )
    return graph


def _cycle_text(cycles: list[list[str]]) -> str:
    return "\n".join(" -> ".join([*c, c[0]]) for c in sorted(cycles, key=len)[:5])


def test_no_import_cycles_between_modules() -> None:
    # Nothing is left out: function-local imports, TYPE_CHECKING imports, lazy
    # __getattr__ targets, import_module calls over a table of module names and a
    # package's __init__ importing its own submodules all count, so a cycle cannot be
    # closed by deferring one of its imports.
    graph = _module_graph()
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, f"import cycles:\n{_cycle_text(cycles)}"


_CYCLE_BY_DEFERRED_IMPORTS = {
    "fedpriv.x.a": "from fedpriv.x import b\n",
    "fedpriv.x.b": "def f():\n    from fedpriv.x.c import g\n",
    "fedpriv.x.c": (
        "_EXPORTS = {'h': 'fedpriv.x.a'}\n\n\ndef __getattr__(name):\n"
        "    return getattr(importlib.import_module(_EXPORTS[name]), name)\n"
    ),
}


def test_deferred_imports_are_edges() -> None:
    # The graph must see the imports a module defers: one inside a function body
    # (b -> c) and one through a lazy module __getattr__'s table (c -> a).
    found = {
        module: _imports_in(
            ast.parse(text), module, Path(f"{module}.py"), _CYCLE_BY_DEFERRED_IMPORTS.keys()
        )
        - {"fedpriv.x"}
        for module, text in _CYCLE_BY_DEFERRED_IMPORTS.items()
    }
    assert found == {
        "fedpriv.x.a": {"fedpriv.x.b"},
        "fedpriv.x.b": {"fedpriv.x.c"},
        "fedpriv.x.c": {"fedpriv.x.a"},
    }


_CYCLE_BY_A_TABLE_OF_NAMES = {
    "fedpriv.x.a": (
        "import importlib\n\n_MODULES = ('fedpriv.x.b', 'fedpriv.x.c')\n\n\ndef load():\n"
        "    for module in _MODULES:\n        importlib.import_module(module)\n"
    ),
    "fedpriv.x.b": (
        "from importlib import import_module\n\nNAMES: list[str] = ['fedpriv.x.a', 'os']\n"
        "\n\ndef first():\n    return import_module(NAMES[0])\n"
    ),
    "fedpriv.x.c": (
        "import importlib\n\n_MODULES = ('fedpriv.x.a',)\n\n\ndef load(names):\n"
        "    return [importlib.import_module(name) for name in names]\n"
    ),
}


def test_imports_named_by_a_table_are_edges() -> None:
    # ``import_module(name)`` with ``name`` read from a module-level table of strings is
    # an import of every fedpriv module the table names (a loop over it, a subscript of
    # it); a name that comes from elsewhere (c's argument) is not.
    found = {
        module: _imports_in(
            ast.parse(text), module, Path(f"{module}.py"), _CYCLE_BY_A_TABLE_OF_NAMES.keys()
        )
        for module, text in _CYCLE_BY_A_TABLE_OF_NAMES.items()
    }
    assert found == {
        "fedpriv.x.a": {"fedpriv.x.b", "fedpriv.x.c"},
        "fedpriv.x.b": {"fedpriv.x.a"},
        "fedpriv.x.c": set(),
    }


_CYCLE_BY_A_PACKAGE_WALK = {
    "fedpriv.x.registry": (
        "import importlib\nimport pkgutil\n\n_PACKAGE = 'fedpriv.x.plugins'\n\n\n"
        "def found():\n    package = importlib.import_module(_PACKAGE)\n"
        "    return [\n        importlib.import_module(f'{_PACKAGE}.{info.name}')\n"
        "        for info in pkgutil.iter_modules(package.__path__)\n    ]\n"
    ),
    "fedpriv.x.walker": (
        "from importlib import import_module\nfrom pkgutil import walk_packages\n\n\n"
        "def found():\n    for info in walk_packages(import_module('fedpriv.x.plugins').__path__):\n"
        "        import_module('fedpriv.x.plugins.' + info.name)\n"
    ),
    "fedpriv.x.lister": (
        "import importlib\nimport pkgutil\n\n\ndef names():\n"
        "    package = importlib.import_module('fedpriv.x.plugins')\n"
        "    return [info.name for info in pkgutil.iter_modules(package.__path__)]\n"
    ),
    "fedpriv.x.plugins": "",
    "fedpriv.x.plugins.one": "from fedpriv.x.registry import found\n",
    "fedpriv.x.plugins.two": "",
    "fedpriv.x.plugins.two.deep": "",
    "fedpriv.x.other": "",
}


def test_a_walk_over_a_named_package_is_an_edge_to_each_submodule() -> None:
    # The registry's cycle: it imports a package named by a string, walks it with
    # pkgutil and imports what it finds, and a found module imports the registry back.
    # iter_modules finds the direct submodules, walk_packages all of them; a walk whose
    # names are never imported (the lister) imports only the package itself.
    known = _CYCLE_BY_A_PACKAGE_WALK.keys()
    found = {
        module: _imports_in(ast.parse(text), module, Path(f"{module}.py"), known)
        for module, text in _CYCLE_BY_A_PACKAGE_WALK.items()
    }
    assert found["fedpriv.x.registry"] == {
        "fedpriv.x.plugins",
        "fedpriv.x.plugins.one",
        "fedpriv.x.plugins.two",
    }
    assert found["fedpriv.x.walker"] == {
        "fedpriv.x.plugins",
        "fedpriv.x.plugins.one",
        "fedpriv.x.plugins.two",
        "fedpriv.x.plugins.two.deep",
    }
    assert found["fedpriv.x.lister"] == {"fedpriv.x.plugins"}
    graph = nx.DiGraph((m, t) for m, targets in found.items() for t in targets)
    assert ["fedpriv.x.plugins.one", "fedpriv.x.registry"] in [
        sorted(c) for c in nx.simple_cycles(graph)
    ]
    no_walks = _imports_in(
        ast.parse(_CYCLE_BY_A_PACKAGE_WALK["fedpriv.x.registry"]),
        "fedpriv.x.registry",
        Path("fedpriv/x/registry.py"),
        known,
        walks=False,
    )
    assert no_walks == set()  # the package too is named only through a constant


def test_the_family_registry_walks_the_builtin_families() -> None:
    # The real registry's walk is seen: every built-in family package is an import of
    # fedpriv.audit.claims.family (with their package), and of no other module.
    families = {m for m in SOURCES if m.startswith("fedpriv.audit.families.") and m.count(".") == 3}
    assert families
    walkers = {
        module: walked
        for module, path in SOURCES.items()
        if (walked := _imports(path) - _imports(path, walks=False))
    }
    assert walkers == {"fedpriv.audit.claims.family": {"fedpriv.audit.families", *families}}


#: Modules may run past about this many lines only with a reason in their docstring.
MODULE_LINES = 500


LONG = sorted(
    m for m, p in SOURCES.items() if p.read_text(encoding="utf-8").count("\n") > MODULE_LINES
)


#: No module may run past this many lines, whatever its reason: split it along its concerns.
MAX_MODULE_LINES = 1000


def test_no_module_is_over_the_limit() -> None:
    # Every module of the package, none excepted.
    over = {
        module: lines
        for module, path in SOURCES.items()
        if (lines := path.read_text(encoding="utf-8").count("\n")) > MAX_MODULE_LINES
    }
    assert not over, f"modules over {MAX_MODULE_LINES} lines: {over}"


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

    Every import that names its target counts, at any depth (a function-level import is
    still a dependency of the package). A package's ``__init__`` importing its own
    subpackages (a re-export façade) is not an edge: the subpackage does not depend on
    its parent for that. Nor is a package walk (:func:`_walk_targets`): the registry
    finds the families at run time without naming one, which is what the tests below
    ask of the claims machinery; the module graph counts the walk
    (:func:`test_no_import_cycles_between_modules`), so it closes no cycle there.
    """
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for module, path in SOURCES.items():
        source = _package(module)
        for target in _imports(path, walks=False):
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


def test_the_shared_matrix_tree_mechanism_names_no_family_calibration() -> None:
    # FedUCB's Privatizer calibration is the family's (algorithms/feducb/privatizer.py);
    # the mechanism gives only the σ its own charge allows.
    found = {
        target
        for target in _imports(SOURCES["fedpriv.privacy.mechanisms.matrix_tree"])
        if target.startswith("fedpriv.privacy.calibrations")
    }
    assert not found, found
