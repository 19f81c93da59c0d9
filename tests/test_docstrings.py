"""Every public function documents its arguments, result and errors (numpydoc).

The walk reads the source folders with :mod:`ast` (``api/`` is ``fedpriv``,
``privacy/`` is ``fedpriv.privacy``, and so on; see ``[tool.setuptools]`` in
``pyproject.toml``), so no module is imported. It collects every public function
and every public method of a public class (no leading underscore, listed in the
module's ``__all__`` when it has one, modules whose own name starts with an
underscore skipped) that takes an argument besides ``self``/``cls``, and asks of
its docstring:

- a ``Parameters`` (or ``Other Parameters``) section naming every argument;
  ``*args``/``**kwargs`` may be named with or without their stars, or left out,
  and so may the ``draw`` of a hypothesis ``@st.composite`` strategy (its callers
  never pass it);
- a ``Returns`` (or ``Yields``) section when the function returns something: a
  return annotation other than ``None``/``NoReturn``, or, unannotated, a
  ``return <value>`` in its own body;
- a ``Raises`` section when its own body (nested functions excluded) holds a
  ``raise <exception>`` statement (a bare re-``raise`` does not count).

``UNDOCUMENTED`` is a ratchet: it lists, by qualified name, the functions that
still lack a section. The test fails when a function outside the list lacks one
(new code must be documented) and when a function in the list has become complete
or no longer exists (remove it: the list only shrinks, never grows). When the test
was added 384 of the 491 public functions were listed; all have been documented
since, so 0 remain and the list is empty: keep it so.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "api": "fedpriv",
    "privacy": "fedpriv.privacy",
    "algorithms": "fedpriv.algorithms",
    "audit": "fedpriv.audit",
    "cli": "fedpriv.cli",
}
_HEADER = re.compile(r"^\s*-{3,}\s*$")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCS, ast.ClassDef, ast.Lambda)
_NO_RESULT = {"None", "NoReturn", "Never", "typing.NoReturn", "typing.Never"}


@dataclass(frozen=True)
class Function:
    qualname: str
    path: str
    line: int
    args: tuple[str, ...]
    star_args: tuple[str, ...]
    returns_value: bool
    raises: bool
    docstring: str


def _modules() -> list[tuple[str, Path]]:
    modules = []
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if any(part.startswith("_") and part != "__init__" for part in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules.append((".".join((package, *parts)), path))
    return modules


def _dunder_all(tree: ast.Module) -> set[str] | None:
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            try:
                return set(ast.literal_eval(node.value))
            except ValueError:  # computed (api/__init__.py): fall back to the names
                return None
    return None


def _own_nodes(func: ast.AST):
    """Nodes of a function's own body, not those of nested functions or classes."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _decorators(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {ast.unparse(d).split("(")[0] for d in func.decorator_list}


def _function(
    func: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, path: Path, method: bool
) -> Function | None:
    decorators = _decorators(func)
    if "overload" in decorators or "typing.overload" in decorators:
        return None
    if any(d.endswith((".setter", ".deleter")) for d in decorators):
        return None
    a = func.args
    positional = [x.arg for x in (*a.posonlyargs, *a.args)]
    if method and "staticmethod" not in decorators and positional:
        positional = positional[1:]
    if any(d.endswith("composite") for d in decorators):  # hypothesis passes `draw`
        positional = positional[1:]
    args = (*positional, *(x.arg for x in a.kwonlyargs))
    star_args = tuple(x.arg for x in (a.vararg, a.kwarg) if x is not None)
    if not args and not star_args:
        return None
    if func.returns is not None:
        returns_value = ast.unparse(func.returns).strip("'\"") not in _NO_RESULT
    else:
        returns_value = any(
            isinstance(n, ast.Return) and n.value is not None for n in _own_nodes(func)
        )
    raises = any(isinstance(n, ast.Raise) and n.exc is not None for n in _own_nodes(func))
    return Function(
        qualname=qualname,
        path=str(path.relative_to(ROOT)),
        line=func.lineno,
        args=tuple(args),
        star_args=star_args,
        returns_value=returns_value,
        raises=raises,
        docstring=ast.get_docstring(func) or "",
    )


def collect() -> list[Function]:
    """Every public function and public method (with arguments) of the source tree."""
    found = []
    for module, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exported = _dunder_all(tree)

        def public(name: str, exported=exported) -> bool:
            return not name.startswith("_") and (exported is None or name in exported)

        for node in tree.body:
            if isinstance(node, _FUNCS) and public(node.name):
                f = _function(node, f"{module}.{node.name}", path, method=False)
                found.append(f)
            elif isinstance(node, ast.ClassDef) and public(node.name):
                for item in node.body:
                    if isinstance(item, _FUNCS) and not item.name.startswith("_"):
                        qualname = f"{module}.{node.name}.{item.name}"
                        found.append(_function(item, qualname, path, method=True))
    return [f for f in found if f is not None]


def sections(docstring: str) -> dict[str, list[str]]:
    """Split a numpydoc docstring into ``{section title: body lines}``."""
    lines = docstring.expandtabs().splitlines()
    result: dict[str, list[str]] = {}
    current: list[str] | None = None
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].strip() and _HEADER.match(lines[i + 1]):
            current = result.setdefault(lines[i].strip(), [])
            i += 2
            continue
        if current is not None:
            current.append(lines[i])
        i += 1
    return result


def parameter_names(body: list[str]) -> set[str]:
    """Names declared in a Parameters section body (``a, b : float`` gives both)."""
    indents = [len(line) - len(line.lstrip()) for line in body if line.strip()]
    if not indents:
        return set()
    base = min(indents)
    names: set[str] = set()
    for line in body:
        if line.strip() and len(line) - len(line.lstrip()) == base:
            head = line.split(" : ")[0].rstrip(":").strip()
            names |= {name.strip().lstrip("*").strip("`") for name in head.split(",")}
    return names


def problems(f: Function) -> list[str]:
    """What the docstring of ``f`` is missing (empty when complete)."""
    found = sections(f.docstring)
    out = []
    body = found.get("Parameters", []) + found.get("Other Parameters", [])
    declared = parameter_names(body)
    missing = [name for name in f.args if name not in declared]
    if missing:
        out.append(f"Parameters misses {', '.join(missing)}")
    if f.returns_value and not ({"Returns", "Yields"} & found.keys()):
        out.append("no Returns section")
    if f.raises and "Raises" not in found:
        out.append("no Raises section")
    return out


UNDOCUMENTED: frozenset[str] = frozenset()


FUNCTIONS = collect()


def test_the_walk_finds_the_public_api() -> None:
    names = {f.qualname for f in FUNCTIONS}
    assert "fedpriv.privacy.ledger.accountant.Accountant.spend" in names
    assert "fedpriv.audit.regression.api.audit_mechanism" in names
    assert len(names) == len(FUNCTIONS)
    assert len(FUNCTIONS) >= 300


def test_the_section_parser() -> None:
    doc = (
        "Sum.\n\nParameters\n----------\na, b : float\n    Terms.\n"
        "*args\n    More.\n\nReturns\n-------\nfloat\n"
    )
    f = Function("m.f", "m.py", 1, ("a", "b"), ("args",), True, True, doc)
    assert problems(f) == ["no Raises section"]
    g = Function("m.g", "m.py", 1, ("a", "c"), (), False, False, doc)
    assert problems(g) == ["Parameters misses c"]


def test_public_functions_are_documented() -> None:
    missing = [
        f"{f.path}:{f.line} {f.qualname}: {'; '.join(p)}"
        for f in FUNCTIONS
        if f.qualname not in UNDOCUMENTED and (p := problems(f))
    ]
    assert not missing, "numpydoc sections missing:\n" + "\n".join(missing)


def test_the_undocumented_list_only_shrinks() -> None:
    by_name = {f.qualname: f for f in FUNCTIONS}
    gone = sorted(name for name in UNDOCUMENTED if name not in by_name)
    fixed = sorted(name for name in UNDOCUMENTED if name in by_name and not problems(by_name[name]))
    assert not gone, "remove from UNDOCUMENTED (gone):\n" + "\n".join(gone)
    assert not fixed, "remove from UNDOCUMENTED (documented):\n" + "\n".join(fixed)
