"""Underscore names are module-private: what crosses a module boundary is public.

A name that starts with one underscore (``_check``, ``_Row``; dunders such as ``__all__`` are
not private) belongs to the module that defines it. Another module of the package may neither
import it (``from fedpriv.x import _check``, relative forms included) nor reach it through a
module object (``x._check`` where ``x`` is a fedpriv module). A name another module needs is
public: no underscore, a numpydoc docstring (``tests/test_docstrings.py``) and listed in its
module's ``__all__`` (CONTRIBUTING.md, "Naming"). Modules whose own name starts with an
underscore (``audit/estimators/_bounds.py``) are private to their package, as PEP 8 reads
them: a module of the same package, or of one of its subpackages, may import them; no other
may.

The sources are read with :mod:`ast`, so nothing is imported. Checked: every module of the
installed package (``api/`` as ``fedpriv``, ``privacy/``, ``algorithms/``, ``audit/``,
``cli/``) and ``fedpriv_pytest.py``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "api": "fedpriv",
    "privacy": "fedpriv.privacy",
    "algorithms": "fedpriv.algorithms",
    "audit": "fedpriv.audit",
    "cli": "fedpriv.cli",
}


def _sources() -> dict[str, Path]:
    """``{dotted module name: path}`` of every module of the package."""
    found = {"fedpriv_pytest": ROOT / "fedpriv_pytest.py"}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


SOURCES = _sources()


def is_private(name: str) -> bool:
    """One leading underscore, and not a dunder."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _ours(module: str) -> bool:
    return module == "fedpriv_pytest" or module == "fedpriv" or module.startswith("fedpriv.")


@dataclass(frozen=True, order=True)
class Crossing:
    """One use, in ``user`` (line ``line``), of the private ``name`` of module ``owner``."""

    owner: str
    name: str
    user: str
    line: int

    def __str__(self) -> str:
        return f"{self.user}:{self.line} uses {self.owner}.{self.name}"


def _private_module_owner(module: str) -> str | None:
    """The package a module is private to, when a part of its dotted name is private."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if is_private(part):
            return ".".join(parts[:i])
    return None


def _may_import_module(user: str, module: str) -> bool:
    owner = _private_module_owner(module)
    return owner is None or user == owner or user.startswith(owner + ".")


def _base(user: str, level: int) -> str:
    """The package a relative import of ``level`` dots starts from."""
    base = user if SOURCES[user].name == "__init__.py" else user.rsplit(".", 1)[0]
    for _ in range(level - 1):
        base = base.rsplit(".", 1)[0]
    return base


class _Walker(ast.NodeVisitor):
    """Collects the crossings of one module (names bound to modules: the whole file's)."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.modules: dict[str, str] = {}  # local name -> fedpriv module it is bound to
        self.found: list[Crossing] = []

    def _module_use(self, module: str, line: int) -> None:
        if not _may_import_module(self.user, module):
            owner = _private_module_owner(module) or module
            self.found.append(Crossing(owner, module[len(owner) + 1 :], self.user, line))

    def _name_use(self, module: str, name: str, line: int) -> None:
        full = f"{module}.{name}"
        if full in SOURCES:
            self._module_use(full, line)
        elif is_private(name) and module != self.user:
            self.found.append(Crossing(module, name, self.user, line))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not _ours(alias.name):
                continue
            self._module_use(alias.name, node.lineno)
            if alias.asname:
                self.modules[alias.asname] = alias.name
            else:
                head = alias.name.split(".")[0]
                self.modules[head] = head

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            module = _base(self.user, node.level)
            module = f"{module}.{node.module}" if node.module else module
        else:
            module = node.module or ""
        if not _ours(module):
            return
        self._module_use(module, node.lineno)
        for alias in node.names:
            if alias.name == "*":
                continue
            self._name_use(module, alias.name, node.lineno)
            if f"{module}.{alias.name}" in SOURCES:
                self.modules[alias.asname or alias.name] = f"{module}.{alias.name}"

    def resolve(self, node: ast.expr) -> str | None:
        """The fedpriv module an expression names (``x``, ``fedpriv.audit``), if any."""
        if isinstance(node, ast.Name):
            return self.modules.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is not None and f"{base}.{node.attr}" in SOURCES:
                return f"{base}.{node.attr}"
        return None

    def visit_Attribute(self, node: ast.Attribute) -> None:
        module = self.resolve(node.value)
        if module is not None:
            self._name_use(module, node.attr, node.lineno)


def crossings(user: str, path: Path) -> list[Crossing]:
    """Every use in module ``user`` of another module's private name (or private module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    walker = _Walker(user)
    # Imports first, so an attribute use before the import's line (in a function defined
    # above a module-level import) still resolves.
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            walker.visit(node)
    found = list(walker.found)
    walker.found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            walker.visit_Attribute(node)
    found += [c for c in walker.found if c not in found]
    return sorted(set(found))


ALL = sorted(c for user, path in SOURCES.items() for c in crossings(user, path))


def _package(module: str) -> str:
    """The package a module belongs to: itself for a package's ``__init__``."""
    if module == "fedpriv_pytest" or SOURCES[module].name == "__init__.py":
        return module
    return module.rsplit(".", 1)[0]


PACKAGES = sorted({_package(m) for m in SOURCES})


def test_the_walk_finds_every_form(tmp_path: Path) -> None:
    path = tmp_path / "user.py"
    path.write_text(
        "import fedpriv.audit.engine.joint as joint\n"
        "import fedpriv.audit.engine.tree\n"
        "from fedpriv.audit.estimators import _bounds, threshold\n"
        "from fedpriv.audit.estimators.threshold import _cp_lower, DIRECTIONS\n"
        "from ..estimators.gdp import _claim_mu\n"
        "def f():\n"
        "    return joint._flat, threshold._cp_upper, fedpriv.audit.engine.tree._x, joint.__all__\n",
        encoding="utf-8",
    )
    SOURCES["fedpriv.audit.regression.user"] = path
    try:
        found = {(c.owner, c.name) for c in crossings("fedpriv.audit.regression.user", path)}
    finally:
        del SOURCES["fedpriv.audit.regression.user"]
    assert found == {
        ("fedpriv.audit.engine.joint", "_flat"),
        ("fedpriv.audit.estimators", "_bounds"),
        ("fedpriv.audit.estimators.threshold", "_cp_lower"),
        ("fedpriv.audit.estimators.threshold", "_cp_upper"),
        ("fedpriv.audit.estimators.gdp", "_claim_mu"),
        ("fedpriv.audit.engine.tree", "_x"),
    }


def test_a_private_module_is_private_to_its_package() -> None:
    assert _may_import_module("fedpriv.audit.estimators.curve", "fedpriv.audit.estimators._x")
    assert _may_import_module("fedpriv.audit.estimators", "fedpriv.audit.estimators._x")
    assert _may_import_module("fedpriv.audit.estimators.sub.m", "fedpriv.audit.estimators._x")
    assert not _may_import_module("fedpriv.audit.regression.api", "fedpriv.audit.estimators._x")
    assert not is_private("__all__") and is_private("_x") and is_private("__x")


@pytest.mark.parametrize("package", PACKAGES)
def test_no_private_name_of_the_package_is_used_by_another_module(package: str) -> None:
    # One case per package that defines the names, so a failure names the package that
    # owns the names to make public (or to stop sharing).
    found = [str(c) for c in ALL if _package(c.owner) == package]
    assert not found, f"private names of {package} used by other modules:\n" + "\n".join(found)
