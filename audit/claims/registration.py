"""What a paper family declares about itself: :class:`Family`, :class:`Command`, :func:`lazy`.

A :class:`Family` is everything fedpriv knows about one paper (or one user's algorithm)
under one key: its claims with their views and readings, its findings, and its ``run``
and ``experiment`` commands. The key is the same in every layer: the folders
(``algorithms/<key>/``, ``privacy/calibrations/<key>.py``, ``audit/families/<key>/``),
the ``--paper`` name of ``fedpriv verify``, the first part of every register key, the
report's ``<key>.md`` and ``<key>/`` folder, and the prefix of every finding id.

This module holds only the types a registration is written with; it imports no family
and finds none. The registry that collects the registrations (the built-in packages,
the ``fedpriv.papers`` entry points, the claims files) is
:mod:`fedpriv.audit.claims.family`, which re-exports these names: a family's own
package imports this module, never the registry, so that finding the families does
not import the module that is finding them.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fedpriv.audit.claims.attachment import Attachment

__all__ = ["USER_ORDER", "Command", "Family", "FamilyError", "lazy"]

#: A family key: lower-case letters, digits and underscores, starting with a letter.
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")

#: Register position of families that do not state one (after the built-in papers).
USER_ORDER = 1_000


class FamilyError(ValueError):
    """A registration is malformed, or two registrations collide."""


@dataclasses.dataclass(frozen=True, slots=True)
class Command:
    """One ``fedpriv run`` or ``fedpriv experiment`` command a family provides.

    Attributes
    ----------
    module : str
        Dotted path of the module that declares the command: its ``COMMANDS``, a tuple
        of :class:`fedpriv.cli.runs.RunCommand` and ``ExperimentCommand`` (options and a
        run function), from which :func:`fedpriv.cli.runs.register_commands` builds the
        parser; imported only when the command is asked for.
    help : str
        One-line help shown by ``fedpriv run --help`` / ``fedpriv experiment --help``.
    secure_noise : bool
        ``run`` commands only: the command's mechanism takes ``--secure-noise`` (exact
        discrete noise on a grid). Default False: the option is refused.
    tables : str
        What the command samples up front, for the memory check before it runs:
        ``"rewards"`` (8 bytes × trials × agents × horizon × arms), ``"contexts"`` (the
        same × dimension) or ``""`` (nothing planned; not checked).
    """

    module: str
    help: str
    secure_noise: bool = False
    tables: str = ""

    def __post_init__(self) -> None:
        if self.tables not in ("", "rewards", "contexts"):
            raise FamilyError(f"`tables` must be '', 'rewards' or 'contexts'; got {self.tables!r}.")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Family:
    """One paper family's registration.

    Attributes
    ----------
    key : str
        The family's one name in every layer (module docstring): lower-case letters,
        digits and underscores.
    title : str
        The citation each claim's ``paper`` field carries, e.g.
        ``"Smith & Jones 2024"``.
    claims : callable
        ``() -> sequence of RegisteredClaim``, called when the register is first
        needed; every key must start with ``"<key>/"``.
    findings : callable
        ``() -> sequence of Finding``: the family's distinct defects (ids start with
        ``"<key>-"``). Default: none.
    views : callable
        ``() -> sequence of (key pattern, View)`` in match order: what each row's claim
        protects (:class:`fedpriv.audit.engine.views.View`), found by
        :func:`fedpriv.audit.claims.register.view_of`. A row may instead carry its
        own ``RegisteredClaim.view``. Default: none.
    algorithm_names : mapping of str to str
        CLI name of each algorithm the family's claims name -> its name in prose (the
        subject of the row's sentence, :mod:`fedpriv.audit.claims.statements`); an
        algorithm not listed is called by its CLI name.
    setting_fields : mapping of str to type
        The type of every setting entry the family's claims use besides the standard
        ones (:data:`fedpriv.audit.claims.entry.SETTING_TYPES`); the register refuses a
        row whose setting has an undeclared entry or a value of another type.
    structure_names : mapping of str to str
        Value of a claim setting's ``"structure"`` (how the agents communicate) -> its
        phrase in the row's sentence (``{"star": "through a server"}``); a structure not
        listed reads ``"<value> structure"``.
    aliases : tuple of str
        Other spellings ``--paper`` accepts (lower case).
    run_commands, experiments : mapping of str to Command
        ``fedpriv run NAME`` / ``fedpriv experiment NAME`` commands. Experiment names
        start with the key, hyphenated (``"my-paper-fig1"`` for the key ``my_paper``).
    attachments : tuple of Attachment
        Experiments ``fedpriv verify`` runs with the family's claims (regret runs,
        batched audits, a ledger), which may evaluate some of its rows and write
        tables and plots to its report folder (:mod:`fedpriv.audit.claims.attachment`).
    audit_cost : int
        Relative wall time of one of the family's per-row audits: ``verify`` starts
        the costlier first, so that the pool's last jobs are short. 2 (the default)
        for audits that run the whole algorithm, 1 for short ones.
    order : int
        Position in the register and the report (not in the audits' seeds, which are
        addressed by each row's key). The built-in papers state theirs; other families
        default to ``USER_ORDER`` and then sort by key.
    algorithms : str
        Dotted path of the package holding the family's algorithms (its public names in
        ``__all__``, exported flat by :mod:`fedpriv.algorithms` for the built-in
        families); imported only when asked for. Empty: none declared.
    calibration : str
        Dotted path of the module holding the paper's noise formulas as written (and
        corrected). Empty: none declared.
    origin : str
        Where the registration came from (set by the registry).
    """

    key: str
    title: str
    claims: Callable[[], Sequence[Any]]
    findings: Callable[[], Sequence[Any]] = tuple
    views: Callable[[], Sequence[Any]] = tuple
    algorithm_names: Mapping[str, str] = dataclasses.field(default_factory=dict)
    setting_fields: Mapping[str, type] = dataclasses.field(default_factory=dict)
    structure_names: Mapping[str, str] = dataclasses.field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    run_commands: Mapping[str, Command] = dataclasses.field(default_factory=dict)
    experiments: Mapping[str, Command] = dataclasses.field(default_factory=dict)
    attachments: tuple[Attachment, ...] = ()
    audit_cost: int = 2
    order: int = USER_ORDER
    algorithms: str = ""
    calibration: str = ""
    origin: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not _KEY.match(self.key):
            raise FamilyError(
                "`key` must be lower-case letters, digits and underscores, starting with "
                f"a letter; got {self.key!r}."
            )
        if not isinstance(self.title, str) or not self.title.strip():
            raise FamilyError(f"family {self.key!r}: `title` must be a non-empty string.")
        if not callable(self.claims):
            raise FamilyError(f"family {self.key!r}: `claims` must be a callable returning claims.")
        object.__setattr__(self, "attachments", tuple(self.attachments))
        names = [a.name for a in self.attachments if isinstance(a, Attachment)]
        if len(names) != len(self.attachments) or len(set(names)) != len(names):
            raise FamilyError(
                f"family {self.key!r}: `attachments` must be Attachment "
                "objects with distinct names."
            )
        prefix = self.key.replace("_", "-")
        for name in self.experiments:
            if not name.startswith(prefix):
                raise FamilyError(
                    f"family {self.key!r}: experiment {name!r} must start with {prefix!r}."
                )

    @property
    def cli_name(self) -> str:
        """The key as command lines write it (hyphens for underscores)."""
        return self.key.replace("_", "-")


def lazy(target: str) -> Callable[[], tuple]:
    """A registration's lazy field: ``() -> tuple`` that imports ``target`` when called.

    Parameters
    ----------
    target : str
        ``"package.module:name"``; ``name`` is a sequence (e.g. ``FINDINGS``) or a
        function returning one (e.g. ``build_claims``).

    Returns
    -------
    callable
        Imports the module on first call (so registrations stay light) and returns the
        sequence as a tuple.
    """
    module, _, name = target.partition(":")

    def load() -> tuple:
        value = getattr(importlib.import_module(module), name)
        return tuple(value() if callable(value) else value)

    load.__qualname__ = load.__name__ = f"lazy({target})"
    return load
