"""Lazy re-exports (PEP 562) for :mod:`fedpriv.algorithms` and its family subpackages.

Each subpackage (``algorithms/<key>/__init__.py``) declares which of its modules' names
are public with :func:`lazy_exports`; that gives its ``__all__`` and a module
``__getattr__`` that imports a module on first use, so importing a subpackage imports none
of NumPy, SciPy or networkx. :func:`flat_index` gathers every subpackage's ``__all__``
into the flat namespace of :mod:`fedpriv.algorithms` (``from fedpriv.algorithms import
run_gossip_fed_ucb``), and refuses a name exported by two subpackages.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["flat_index", "lazy_exports"]


def lazy_exports(
    package: str, modules: Mapping[str, Iterable[str]]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` of a package re-exporting its modules' names.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    modules : mapping of str to iterable of str
        Module name relative to ``package`` (``"centralized"``) to the public names it
        defines; each name must be in that module's own ``__all__``.

    Returns
    -------
    tuple
        ``__all__`` (sorted list of the names), a ``__getattr__`` importing the owning
        module on first access (and caching the value in the package), and ``__dir__``.

    Raises
    ------
    ValueError
        When two modules export the same name.
    """
    owner: dict[str, str] = {}
    for module, names in modules.items():
        for name in names:
            if name in owner:
                raise ValueError(
                    f"{package}: {name!r} is exported by both {owner[name]!r} and {module!r}."
                )
            owner[name] = module
    exported = sorted(owner)
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        try:
            module = owner[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exported))

    return exported, __getattr__, __dir__


def flat_index(package: str, path: Iterable[str]) -> dict[str, str]:
    """Every public name of ``package``'s subpackages, mapped to the subpackage that owns it.

    Parameters
    ----------
    package : str
        ``"fedpriv.algorithms"``.
    path : iterable of str
        The package's ``__path__``; every subpackage found there is read (its ``__all__``),
        so a new family folder is exported without editing a list.

    Returns
    -------
    dict of str to str
        Name to the subpackage's full name, e.g. ``{"run_gossip_fed_ucb":
        "fedpriv.algorithms.gossip_fed_ucb", ...}``.

    Raises
    ------
    ValueError
        When two subpackages export the same name (the flat namespace would be ambiguous).
    """
    index: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(list(path)), key=lambda m: m.name):
        if not info.ispkg or info.name.startswith("_"):
            continue
        sub = f"{package}.{info.name}"
        for name in getattr(importlib.import_module(sub), "__all__", ()):
            if name in index:
                raise ValueError(
                    f"{package}: {name!r} is exported by both {index[name]!r} and {sub!r}."
                )
            index[name] = sub
    return index
