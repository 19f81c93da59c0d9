"""What a family may attach to its claims: an experiment ``fedpriv verify`` runs with them.

A family's claims are register rows, each evaluated by its own recipes
(:mod:`fedpriv.audit.claims.verify`). An :class:`Attachment` is the family's own
experiment run beside those rows whenever ``fedpriv verify`` checks the family:
regret runs, a batch of audits that share one setting, a ledger, tables and plots.
It may evaluate some of the family's rows itself, returning for each the numbers
the row's recipes would give (:class:`RowEvidence`); ``verify`` assembles those rows
exactly as it assembles every other row (same verdict rule, same record), and skips
their per-row jobs. Its files go to the family's report folder ``<out>/<key>/``,
written through a staging folder so that a failure leaves the previous files intact
(:func:`fedpriv.audit.claims.report.write_attachment`).

A registration names the attachment's module (imported only when ``verify`` runs the
family, so ``fedpriv --help`` stays light) and the options it takes on the command
line (:class:`Option`; ``fedpriv verify --help`` lists them under the family). The
module defines four functions:

``configure(*, quick, seed, workers, **options) -> config``
    The attachment's settings: ``quick`` for ``verify --quick``, the run's root
    ``seed`` and process count, and the values of its options that were given
    (fields named by :attr:`Option.field`). Raises ``ValueError`` on bad input
    (``verify`` exits 2 before anything runs).
``planned(config, entries) -> Plan``
    Without running anything: how many ``[i/n]`` progress lines ``run`` sends and
    which of ``entries`` (the selected register rows of the family) it evaluates.
``run(config, entries, *, progress, executor) -> AttachmentOutput``
    The experiment; ``executor`` as in :func:`fedpriv.audit.claims.verify.verify_claims`.
``write(result, folder) -> None``
    Write the files of ``AttachmentOutput.result`` into ``folder`` (an empty staging
    folder).

The attachment of a family a user registered (a claims file, an installed entry point)
is untrusted: its module is imported, and each function called, in a forked worker
stopped after the run's ``--timeout``; ``run`` gets ``executor=None`` there, and what the
functions return must be picklable
(:mod:`fedpriv.audit.claims.attachment_calls`). A built-in family's runs in
``verify``'s process.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from fedpriv.audit.engine.isolation import DEFAULT_TIMEOUT
from fedpriv.privacy.errors import ToolkitError

__all__ = [
    "OPTION_KINDS",
    "Attachment",
    "AttachmentError",
    "AttachmentOutput",
    "AttachmentResult",
    "Option",
    "Plan",
    "RowEvidence",
]

#: ``Option.kind`` -> how the command line's text is read.
OPTION_KINDS = {"str": str, "int": int, "float": float, "path": Path}

_FLAG = re.compile(r"^--[a-z][a-z0-9-]*$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class AttachmentError(ToolkitError, ValueError):
    """A user's attachment raised, or returned what its protocol does not allow.

    The message names the step (``configure``, ``planned``, ``run``, ``write``), the
    attachment and the claims file or entry point that registered its family
    (:mod:`fedpriv.audit.claims.attachment_calls`); ``fedpriv verify`` exits 2 and
    writes nothing.
    """


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Option:
    """One ``fedpriv verify`` option an attachment declares.

    Attributes
    ----------
    flag : str
        The option as typed, ``"--regret-horizon"`` (lower case, hyphens).
    field : str
        The keyword of the attachment's ``configure`` it sets.
    help : str
        One line for ``fedpriv verify --help`` (shown under the family's heading).
    kind : {"str", "int", "float", "path"}
        How the value is read (:data:`OPTION_KINDS`); ``int`` and ``float`` options
        get the command line's range checks.
    metavar : str, optional
        The value's name in the help.
    """

    flag: str
    field: str
    help: str
    kind: str = "str"
    metavar: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.flag, str) or not _FLAG.match(self.flag):
            raise ValueError(f"`flag` must look like '--name-of-option'; got {self.flag!r}.")
        if not isinstance(self.field, str) or not self.field.isidentifier():
            raise ValueError(f"`field` must be a Python identifier; got {self.field!r}.")
        if self.kind not in OPTION_KINDS:
            raise ValueError(f"`kind` must be one of {', '.join(OPTION_KINDS)}; got {self.kind!r}.")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Attachment:
    """An experiment a family attaches to its claims (module docstring).

    Attributes
    ----------
    name : str
        Short name, unique within the family (``"regret"``); ``<key>/<name>`` is the
        attachment's id in :attr:`ClaimsConfig.options
        <fedpriv.audit.claims.verify.ClaimsConfig.options>`.
    module : str
        Dotted path of the module that defines ``configure``, ``planned``, ``run``
        and ``write``.
    title : str
        What it runs, in a few words (progress line and help heading).
    options : tuple of Option
        Its ``fedpriv verify`` options.
    index : str, optional
        A file of the report folder the family's page links to (``"report.md"``).
    index_text : str
        The link's text on the family's page.
    """

    name: str
    module: str
    title: str
    options: tuple[Option, ...] = ()
    index: str | None = None
    index_text: str = "Full report"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(
                "`name` must be lower-case letters, digits and underscores, "
                f"starting with a letter; got {self.name!r}."
            )
        if not isinstance(self.module, str) or not self.module:
            raise ValueError(f"attachment {self.name!r}: `module` must be a dotted path.")
        object.__setattr__(self, "options", tuple(self.options))
        if not all(isinstance(o, Option) for o in self.options):
            raise ValueError(f"attachment {self.name!r}: `options` must be Option objects.")
        fields = [o.field for o in self.options]
        if len(set(fields)) != len(fields):
            raise ValueError(f"attachment {self.name!r}: two options set one field.")

    def load(self) -> ModuleType:
        """The attachment's module (imported on first use).

        Returns
        -------
        module
            Defines ``configure``, ``planned``, ``run`` and ``write``.
        """
        return importlib.import_module(self.module)


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """What an attachment will do, counted before it runs.

    Attributes
    ----------
    jobs : int
        ``[i/n]`` progress lines ``run`` sends.
    keys : frozenset of str
        Register keys of the rows it evaluates (``verify`` runs no job for them).
    """

    jobs: int
    keys: frozenset[str] = frozenset()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RowEvidence:
    """An attachment's numbers for one register row (what the row's recipes give).

    Attributes
    ----------
    route : str
        The accountant route that gave ``epsilon``.
    epsilon : float
        The accountant's end-to-end ε (nats) at the claimed δ.
    notes : tuple of str
        Observations kept in the row.
    bound : EpsilonLowerBound or None
        The audit's lower bound (``None``: not audited).
    event : str or None
        The audit's distinguishing event.
    extras : tuple of (str, float)
        Further named quantities of the row
        (:attr:`fedpriv.audit.claims.claim.ClaimResult.extras`).
    """

    route: str
    epsilon: float
    notes: tuple[str, ...] = ()
    bound: Any = None
    event: str | None = None
    extras: tuple[tuple[str, float], ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentOutput:
    """What an attachment's ``run`` returns.

    Attributes
    ----------
    rows : mapping of str to RowEvidence
        Register key -> its evidence, for the rows of :attr:`Plan.keys`.
    result : object
        The attachment's own result, handed to its ``write``.
    """

    rows: Mapping[str, RowEvidence]
    result: Any = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentResult:
    """One attachment's run within ``fedpriv verify`` (kept in the run's report).

    Attributes
    ----------
    family : str
        The family's key (its report folder's name).
    attachment : Attachment
    config : object
        What ``configure`` returned.
    output : AttachmentOutput
    origin : str or None
        The claims file or installed entry point that registered a user's family
        (``"claims file /abs/x.py"``), None for a built-in family: a user's ``write``
        runs in a forked worker stopped after ``timeout`` seconds
        (:mod:`fedpriv.audit.claims.attachment_calls`).
    timeout : float
        The run's ``--timeout``.
    """

    family: str
    attachment: Attachment
    config: Any
    output: AttachmentOutput
    origin: str | None = None
    timeout: float = DEFAULT_TIMEOUT

    @property
    def id(self) -> str:
        """``<family key>/<attachment name>``."""
        return f"{self.family}/{self.attachment.name}"
