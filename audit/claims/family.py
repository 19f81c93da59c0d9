"""The registry of paper families: it finds every registration and checks them together.

A registration is a :class:`Family` (declared with :class:`Command` and :func:`lazy`);
those types live in :mod:`fedpriv.audit.claims.registration` and are re-exported here,
so ``from fedpriv.audit.claims.family import Family`` works in a claims file or a plugin.
A family package inside fedpriv imports them from
:mod:`fedpriv.audit.claims.registration`, never from this module: this module imports
every built-in family package, and none of them imports it back.

The registry (:func:`families`) collects the registrations from three places, in order:

1. the packages inside :mod:`fedpriv.audit.families` (the paper families fedpriv ships),
   each of which defines ``FAMILY``;
2. installed distributions that declare an entry point in the group ``fedpriv.papers``
   (the entry point names a :class:`Family` object);
3. files the user names (``fedpriv verify --claims my_claims.py``), loaded with
   :func:`load_claims_file`; such a file defines ``FAMILY`` (one) or ``FAMILIES``.

Nothing here imports a family's algorithms: a registration declares its claims and
commands lazily (a callable and module paths), so ``fedpriv --help`` stays fast.

An installed entry point that is broken (its import raises, calls ``sys.exit`` or
``os._exit``, dies or hangs; it names no Family, or one of its names is taken) is
skipped with a :class:`PluginWarning` naming it (:func:`skipped_entry_points`); a
distribution that reads the registry while it loads sees the built-in families and
the claims files. Each entry point is loaded first in a forked worker
(:func:`fedpriv.audit.engine.isolation.run_isolated`, at most
:data:`ENTRY_POINT_LOAD_TIMEOUT` seconds), and in this process only if it loaded
there: an import that behaves in the worker and misbehaves on its second run (in this
process) is not contained. With no entry point installed nothing is forked. Where
``os.fork`` does not exist the probe runs in this process and catches ``SystemExit``
only.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import pkgutil
import re
import sys
import warnings
from pathlib import Path
from typing import Any

from fedpriv.audit.claims.registration import Command, Family, FamilyError, lazy

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENTRY_POINT_LOAD_TIMEOUT",
    "Command",
    "Family",
    "FamilyError",
    "PluginWarning",
    "builtin_families",
    "entry_point_origins",
    "families",
    "family",
    "lazy",
    "load_claims_file",
    "loaded_claims_files",
    "skipped_entry_points",
    "unload_claims_file",
]

#: The entry-point group an installed package registers its families under.
ENTRY_POINT_GROUP = "fedpriv.papers"

# --------------------------------------------------------------------------- registry

_BUILTIN_PACKAGE = "fedpriv.audit.families"
_builtin_cache: tuple[Family, ...] | None = None
_entry_point_cache: tuple[Family, ...] | None = None
_files: dict[str, tuple[Family, ...]] = {}


def _from_module(module: Any, origin: str) -> tuple[Family, ...]:
    found = getattr(module, "FAMILIES", None)
    if found is None:
        one = getattr(module, "FAMILY", None)
        found = () if one is None else (one,)
    found = tuple(found)
    if not found or not all(isinstance(f, Family) for f in found):
        raise FamilyError(
            f"{origin} must define FAMILY (a fedpriv Family) or FAMILIES (a sequence of them)."
        )
    return tuple(dataclasses.replace(f, origin=f.origin or origin) for f in found)


def _builtin() -> tuple[Family, ...]:
    global _builtin_cache
    if _builtin_cache is None:
        package = importlib.import_module(_BUILTIN_PACKAGE)
        out: list[Family] = []
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_"):
                continue
            name = f"{_BUILTIN_PACKAGE}.{info.name}"
            out.extend(_from_module(importlib.import_module(name), name))
        _builtin_cache = tuple(out)
    return _builtin_cache


def _entry_points() -> tuple[Family, ...]:
    """The installed distributions' families, read once per process (scanning the
    installed metadata costs milliseconds, and every claim's title is looked up).

    While they load, the registry answers without them: a distribution that reads the
    registry at import (``REGISTER``, ``families()``) sees the built-in families and
    the claims files, and the load does not start again inside itself."""
    global _entry_point_cache
    if _entry_point_cache is None:
        if _loading:
            return tuple(_loading[-1])  # re-entered from a distribution's import
        _entry_point_cache = _load_entry_points()
    return _entry_point_cache


#: The families of the entry points loaded so far, while the load runs (else empty).
_loading: list[list[Family]] = []
#: Entry points skipped by the last load: name -> why (see :func:`skipped_entry_points`).
_skipped: dict[str, str] = {}
#: Family key -> the entry point that registered it, in fedpriv's words (the family's
#: own ``origin`` is its author's text), filled by the last load.
_origins: dict[str, str] = {}


class PluginWarning(RuntimeWarning):
    """An installed ``fedpriv.papers`` entry point was skipped (named, with the reason)."""


#: Seconds the forked probe of one installed entry point may take to import it and
#: read its families before it is stopped and the entry point skipped. A plugin's
#: import is a package import (numpy, scipy, pandas, even torch on a cold disk take
#: seconds to a few tens of seconds on a loaded machine), so 60 s stops only an import
#: that does not end; it is also the longest any fedpriv command (``fedpriv --help``
#: included) can stall on a hanging plugin. Read at each load, so a test may lower it.
ENTRY_POINT_LOAD_TIMEOUT = 60.0


def _why(error: BaseException) -> str:
    """Why loading an entry point failed, in words (``error`` raised while loading)."""
    if isinstance(error, SystemExit):
        return f"called sys.exit({error.code!r}) on import"
    if isinstance(error, FamilyError):
        return str(error)
    return f"raised {type(error).__name__}: {error} on import"


def _load_point(point, origin: str, taken: dict[str, Family], commands: set[str]):
    """``point``'s families, checked against ``taken`` names and ``commands``."""
    loaded = point.load()
    found = (
        (dataclasses.replace(loaded, origin=loaded.origin or origin),)
        if isinstance(loaded, Family)
        else _from_module(loaded, origin)
    )
    for fam in found:
        _check_free(fam, taken, commands)
    return found


def _probe_point(point, origin: str, taken: dict[str, Family], commands: set[str]) -> str:
    """Worker side of the probe: ``""`` when ``point`` loads, else why not."""
    try:
        _load_point(point, origin, taken, commands)
    except BaseException as error:  # the worker ends anyway: report any of them
        return _why(error)
    return ""


def _probe(point, origin: str, taken: dict[str, Family], commands: set[str]) -> str:
    """Load ``point`` in a forked worker first: ``""`` when it loads, else why not.

    Its exit (``os._exit``), death or a load past :data:`ENTRY_POINT_LOAD_TIMEOUT`
    ends the worker, not this process."""
    from fedpriv.audit.engine.isolation import UserCodeAbortedError, run_isolated

    try:
        return run_isolated(
            _probe_point,
            point,
            origin,
            taken,
            commands,
            timeout=ENTRY_POINT_LOAD_TIMEOUT,
            what=origin,
            hint="ENTRY_POINT_LOAD_TIMEOUT",
        )
    except UserCodeAbortedError as error:
        if error.reason.startswith("ran past"):  # the worker is killed then
            return (
                f"did not finish loading within {ENTRY_POINT_LOAD_TIMEOUT:g} s "
                "(ENTRY_POINT_LOAD_TIMEOUT) and was stopped"
            )
        return f"{error.reason} while loading"


def _load_entry_points() -> tuple[Family, ...]:
    """Load every entry point of the group; skip (and warn about) the broken ones.

    An entry point is broken when its import raises (any exception, ``SystemExit``
    included), exits the process (``os._exit``), dies (a signal) or does not end
    within :data:`ENTRY_POINT_LOAD_TIMEOUT` seconds, when it names no :class:`Family`,
    or when one of its names (key, alias, ``run`` or ``experiment`` command) is
    already registered. Each entry point is first loaded in a forked worker
    (:func:`fedpriv.audit.engine.isolation.run_isolated`; none when no entry point is
    installed); only one that loaded there is loaded in this process."""
    from importlib.metadata import entry_points

    points = tuple(entry_points(group=ENTRY_POINT_GROUP))
    _skipped.clear()
    _origins.clear()
    if not points:
        return ()
    taken = _names(_builtin())
    commands = _commands(_builtin())
    out: list[Family] = []
    _loading.append(out)
    try:
        for point in points:
            origin = f"entry point {point.name!r} ({point.value})"
            why = _probe(point, origin, taken, commands)
            if not why:
                try:
                    found = _load_point(point, origin, taken, commands)
                except (Exception, SystemExit) as error:
                    why = _why(error)
            if why:
                _skipped[point.name] = (
                    f"{origin} in group {ENTRY_POINT_GROUP!r} skipped: {why}. Fix or "
                    "uninstall the distribution that declares it."
                )
                warnings.warn(_skipped[point.name], PluginWarning, stacklevel=2)
                continue
            for fam in found:
                taken.update(_names((fam,)))
                commands.update(_commands((fam,)))
                _origins[fam.key] = origin
            out.extend(found)
    finally:
        _loading.pop()
    return tuple(out)


def _names(registered) -> dict[str, Family]:
    """Key and aliases -> family."""
    return {name: fam for fam in registered for name in (fam.key, *fam.aliases)}


def _commands(registered) -> set[str]:
    """``run`` and ``experiment`` command names of ``registered``."""
    return {
        f"{kind} {name}"
        for fam in registered
        for kind, table in (("run", fam.run_commands), ("experiment", fam.experiments))
        for name in table
    }


def _check_free(fam: Family, taken: dict[str, Family], commands: set[str]) -> None:
    """Refuse an entry point's family whose key, alias or command is already registered."""
    for name in (fam.key, *fam.aliases):
        if name in taken:
            other = taken[name]
            raise FamilyError(
                f"family name {name!r} is already registered by {other.origin or other.key}"
            )
    for command in sorted(_commands((fam,)) & commands):
        raise FamilyError(f"`fedpriv {command}` is already registered")


def skipped_entry_points() -> dict[str, str]:
    """The installed entry points the registry skipped, with why.

    Loading the entry points of the group :data:`ENTRY_POINT_GROUP` skips a broken one
    (its import raises, calls ``sys.exit`` or ``os._exit``, dies or runs past
    :data:`ENTRY_POINT_LOAD_TIMEOUT` in the forked probe; it names no :class:`Family`,
    or one of its names or commands is taken) with a :class:`PluginWarning`; the other
    families load and every command that does not need the broken one runs.

    Returns
    -------
    dict of str to str
        Entry point name -> a message naming it, its distribution's target and the
        reason (empty when none was skipped, or before the entry points are read).
    """
    _entry_points()
    return dict(_skipped)


def entry_point_origins() -> dict[str, str]:
    """The families installed entry points registered, each with its entry point.

    ``fedpriv verify`` evaluates these families' claims in forked workers and names
    the entry point when one exits, dies or hangs.

    Returns
    -------
    dict of str to str
        Family key -> ``"entry point 'NAME' (module:attribute)"`` (empty when no
        entry point is installed or every one was skipped).
    """
    _entry_points()
    return dict(_origins)


def load_claims_file(path: str | Path) -> tuple[Family, ...]:
    """Load the families a user's claims file registers, and add them to the registry.

    The file's folder is on ``sys.path`` while it loads (and only then), so that it
    can import the modules beside it (``from my_algorithm import run``) as a test
    module does under pytest; imports made later, inside a recipe, do not see it.

    Parameters
    ----------
    path : str or Path
        A Python file that defines ``FAMILY`` or ``FAMILIES``.

    Returns
    -------
    tuple of Family
        The file's families (loading the same file twice returns the first load).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    FamilyError
        If the file defines no family, or one collides with a registered family.
    """
    file = Path(path).expanduser().resolve()
    if str(file) in _files:
        return _files[str(file)]
    if not file.is_file():
        raise FileNotFoundError(f"`claims` file not found: {path}")
    name = f"fedpriv_user_claims_{len(_files)}_{re.sub(r'[^0-9a-zA-Z_]', '_', file.stem)}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise FamilyError(f"`claims` file {path} is not a Python file.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # picklable recipes need their module importable by name
    folder = str(file.parent)
    sys.path.insert(0, folder)  # the file's own folder, for its imports (as pytest does)
    try:
        spec.loader.exec_module(module)
        loaded = _from_module(module, f"claims file {file}")
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:  # only while the file loads: nothing else resolves names there
        sys.path.remove(folder)
    _files[str(file)] = loaded
    try:
        families()
    except FamilyError:
        del _files[str(file)]
        sys.modules.pop(name, None)
        raise
    return loaded


def loaded_claims_files() -> tuple[str, ...]:
    """Paths of the claims files loaded so far (worker processes load them again).

    Returns
    -------
    tuple of str
        Absolute paths, in load order.
    """
    return tuple(_files)


def unload_claims_file(path: str | Path) -> None:
    """Forget a loaded claims file (nothing happens when it was not loaded).

    A file whose rows turn out malformed after loading leaves the registry as it found it.

    Parameters
    ----------
    path : str or Path
        The file, as given to :func:`load_claims_file`.
    """
    _files.pop(str(Path(path).expanduser().resolve()), None)


def builtin_families() -> tuple[Family, ...]:
    """The families fedpriv ships (the packages of :mod:`fedpriv.audit.families`).

    Their rows make the built-in register; families registered from outside (entry
    points, claims files) come after them. Every row's audit is seeded by its key.

    Returns
    -------
    tuple of Family
        Sorted by ``(order, key)``.
    """
    return tuple(sorted(_builtin(), key=lambda f: (f.order, f.key)))


def families() -> tuple[Family, ...]:
    """Every registered family, in register order.

    Returns
    -------
    tuple of Family
        Built-in families, then entry points, then loaded claims files, sorted by
        ``(order, key)``.

    Raises
    ------
    FamilyError
        If two families share a key or an alias, or an alias is another family's key
        (a claims file against any family; an installed entry point that collides is
        skipped instead, :func:`skipped_entry_points`).
    """
    found = [*_builtin(), *_entry_points(), *(f for group in _files.values() for f in group)]
    names: dict[str, Family] = {}
    for fam in found:
        for name in (fam.key, *fam.aliases):
            other = names.get(name)
            if other is not None and other is not fam:
                raise FamilyError(
                    f"family name {name!r} is registered twice: by {other.origin or other.key} "
                    f"and by {fam.origin or fam.key}."
                )
            names[name] = fam
    return tuple(sorted(found, key=lambda f: (f.order, f.key)))


def family(name: str) -> Family:
    """The family registered under ``name`` (its key or an alias, any case, - or _).

    Parameters
    ----------
    name : str
        A family key or alias.

    Returns
    -------
    Family

    Raises
    ------
    ValueError
        If no family has that name; the message lists the keys. A
        :class:`FamilyError` (a ValueError) naming the entry point and why when
        ``name`` is an installed entry point that was skipped.
    """
    wanted = str(name).strip().lower().replace("-", "_")

    def find(registered) -> Family | None:
        for fam in registered:
            if wanted == fam.key or wanted in {a.replace("-", "_") for a in fam.aliases}:
                return fam
        return None

    # The built-in families and claims files first: a built-in row's title never
    # imports an installed distribution.
    found = find([*_builtin(), *(f for group in _files.values() for f in group)])
    if found is not None:
        return found
    registered = families()
    found = find(registered)
    if found is not None:
        return found
    for point, why in _skipped.items():
        if point.strip().lower().replace("-", "_") == wanted:
            raise FamilyError(f"`paper` {name!r}: {why}")
    keys = ", ".join(f.key for f in registered)
    raise ValueError(f"`paper` must be one of {keys}; got {name!r}.")
