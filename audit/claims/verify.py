"""``fedpriv verify``: evaluate every claim of the register (accountant and audit).

For each :class:`~fedpriv.audit.claims.register.RegisteredClaim` the job runs the accountant recipe at
the claimed δ, runs the end-to-end audit recipe when there is one, and decides the
verdict with :func:`fedpriv.audit.claims.claim.decide_verdict` (docs/reference/verdicts.md).
:func:`assemble_result` turns the recipe's numbers into the row: the end-to-end ε (∞ with
the channel named when the entry declares a ``raw_channel``), the mechanism-only ε, ε at
δ = 10⁻⁶ where the claimed δ is vacuous, the verdict under the claim's coverage (with
the entry's exact analytic ε of the view as lower-bound evidence, when it gives one:
``RegisteredClaim.analytic_lower``), and the row's finding ids (:mod:`fedpriv.audit.claims.findings`).

A family may attach experiments to its claims (``Family.attachments``,
:mod:`fedpriv.audit.claims.attachment`): when the family is checked, each runs first
(regret runs, a batch of audits sharing one setting, a ledger); the rows it evaluates
come back as :class:`~fedpriv.audit.claims.attachment.RowEvidence` and are assembled
by :func:`assemble_result` like every other row, with no job of their own, and its
files go to the family's report folder (:func:`fedpriv.audit.claims.report.write_attachment`).

Each other claim is one picklable job (its register key, a budget and a SeedSequence
address), run on a local process pool (:func:`fedpriv.audit.engine.executor.parallel_map`);
results do not depend on the number of workers. A claim of a family registered outside
the package (a claims file or an installed entry point) is evaluated inside its job in
a forked worker with a timeout (:func:`fedpriv.audit.engine.isolation.run_isolated`),
so that its exit, death or hang is reported naming it; built-in claims are not forked.
So is every call into such a family's attachments (``configure``, ``planned``, ``run``,
``write``) and the assembly of each row they evaluate
(:mod:`fedpriv.audit.claims.attachment_calls`); built-in attachments run here. A
recipe that fails (for example an algorithm module that is not installed) gives the
verdict ``"error"`` with the exception as evidence, never a silent pass.

Length: the one job runner of ``fedpriv verify`` (configuration, planning, the
attachments, the claim jobs and the assembly of every row).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.claims.attachment import AttachmentResult
from fedpriv.audit.claims.attachment_calls import (
    configure_attachment,
    plan_attachment,
    run_attachment,
    user_origins,
)
from fedpriv.audit.claims.claim import (
    VACUOUS_DELTA_PROBE,
    ClaimResult,
    LowerBoundEvidence,
    decide_verdict,
)
from fedpriv.audit.claims.curves import recipe_curves
from fedpriv.audit.claims.family import entry_point_origins, families
from fedpriv.audit.claims.findings import finding_ids
from fedpriv.audit.claims.register import claims_for, paper_of, view_of
from fedpriv.audit.engine.coupled import AuditBudget
from fedpriv.audit.engine.declarations import check_declarations
from fedpriv.audit.engine.executor import connect_scheduler, parallel_map
from fedpriv.audit.engine.isolation import (
    DEFAULT_TIMEOUT,
    UserCodeAbortedError,
    check_timeout,
    run_isolated,
)
from fedpriv.privacy import ApproxDP
from fedpriv.privacy.checks import check_int_at_least

__all__ = [
    "ClaimsConfig",
    "ClaimsReport",
    "assemble_result",
    "check_entry_declarations",
    "claim_seed",
    "evaluate_claim",
    "evaluate_entry",
    "load_claims_files",
    "planned_jobs",
    "verify_claims",
]

#: Verdict of a claim whose recipe raised.
ERROR = "error"
#: Why a user's row without a declaration check cannot hold, and how to add one.
UNCHECKED = (
    "the row has no `declarations` recipe and no `search` to derive one from; give it "
    "`search=lambda claim: NeighborSearch(run=..., table=..., domain=...)` (the audit's "
    "inputs) or `declarations=lambda claim, seed: check_declarations(run, table, "
    "domain=..., seed=seed)`: docs/guides/your-claims.md, 'Declaring cells honestly'"
)


def _attachments():
    """``(family, attachment, id)`` of every registered attachment, in register order."""
    return [(fam, att, f"{fam.key}/{att.name}") for fam in families() for att in fam.attachments]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClaimsConfig:
    """Settings of one ``fedpriv verify`` run over the register.

    Attributes
    ----------
    quick : bool
        Small audit budgets (every paper in under five minutes on 2 cores); the
        attachments' ``--quick`` settings.
    seed : int
        Root of the SeedSequence tree; the row with key ``k`` audits under
        :func:`claim_seed` ``(seed, k)``; every attachment is configured with this seed.
    papers : tuple of str or None
        ``--paper`` names to run (None: all).
    budget : AuditBudget
        Base budget of the end-to-end audits (each claim scales ``samples`` by its
        ``sample_factor``).
    workers : int
        Processes (1 runs in this process).
    options : mapping of str to mapping
        Attachment id (``"<family key>/<attachment name>"``) -> values of its options
        (``configure`` keywords, e.g. from its command-line options); ``None`` values
        keep the attachment's defaults.
    attachments : mapping of str to object, optional
        Attachment id -> its configuration. Default: built by each attachment's
        ``configure`` from ``quick``, ``seed``, ``workers`` and ``options`` (every
        registered attachment, so a bad option fails before anything runs).
    scheduler : str or None
        Address of an existing dask.distributed scheduler (``--scheduler``): every
        job runs on its workers and ``workers`` is unused
        (:func:`fedpriv.audit.engine.executor.connect_scheduler`). The numbers are those of
        the in-process run.
    claims_files : tuple of str
        Users' claims files (``--claims``), loaded here with
        :func:`~fedpriv.audit.claims.family.load_claims_file` and stored as absolute
        paths (every job carries them, so that worker processes load them too). With
        ``papers`` None the run covers only these files' families. Each file is first
        loaded in a forked worker (:func:`fedpriv.audit.engine.isolation.run_isolated`)
        and each of its claims is evaluated in one, so that a file calling
        ``sys.exit``/``os._exit`` or looping is reported, never taken for a pass.
    timeout : float
        Seconds, in (0, inf], that loading one claims file or evaluating one claim of a
        claims file or of an installed entry point's family may take (``--timeout``;
        default :data:`~fedpriv.audit.engine.isolation.DEFAULT_TIMEOUT`); each such
        claim is evaluated in a forked worker, and each call into such a family's
        attachment (``configure``, ``planned``, ``run``, ``write``, the assembly of
        each row it evaluates) runs in one with this timeout too, ``run`` with
        ``executor=None`` (:mod:`fedpriv.audit.claims.attachment_calls`). Built-in
        families' claims and attachments run unisolated and untimed (an attachment
        with the run's executor). Installed entry points are loaded
        (probed in a forked worker) by the registry,
        :data:`~fedpriv.audit.claims.family.ENTRY_POINT_LOAD_TIMEOUT`.

    Raises
    ------
    ValueError
        On a bad seed, worker count, timeout, paper name, option or attachment id.
    UserCodeAbortedError
        If loading a claims file, or the ``configure`` of a user's attachment, exits,
        dies or runs past ``timeout``.
    AttachmentError
        If the ``configure`` of a user's attachment raises (a ``ValueError``).
    """

    quick: bool = False
    seed: int = 0
    papers: tuple[str, ...] | None = None
    budget: AuditBudget = dataclasses.field(
        default_factory=lambda: AuditBudget(pilot_samples=500, samples=10_000, batch_size=2_000)
    )
    workers: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 1)
    options: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    attachments: Mapping[str, Any] | None = None
    scheduler: str | None = None
    claims_files: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        check_int_at_least("seed", self.seed, 0)
        object.__setattr__(self, "timeout", check_timeout(self.timeout))
        object.__setattr__(
            self, "claims_files", load_claims_files(self.claims_files, timeout=self.timeout)
        )
        if self.scheduler is not None and not isinstance(self.scheduler, str):
            raise TypeError(
                f"`scheduler` must be an address string or None, got "
                f"{type(self.scheduler).__name__}."
            )
        check_int_at_least("workers", self.workers, 1)
        if self.papers is not None:
            object.__setattr__(self, "papers", tuple(paper_of(p) for p in self.papers))
        registered = _attachments()
        known = {ident for *_, ident in registered}
        unknown = sorted((set(self.options) | set(self.attachments or {})) - known)
        if unknown:
            raise ValueError(
                f"`options` and `attachments` must name registered "
                f"attachments ({', '.join(sorted(known)) or 'none'}); got "
                f"{', '.join(unknown)}."
            )
        built = dict(self.attachments or {})
        origins = user_origins(self.claims_files) if registered else {}
        for fam, attachment, ident in registered:
            if ident not in built:
                built[ident] = configure_attachment(
                    attachment,
                    origin=origins.get(fam.key),
                    timeout=self.timeout,
                    quick=self.quick,
                    seed=self.seed,
                    workers=self.workers,
                    **dict(self.options.get(ident, {})),
                )
        object.__setattr__(self, "attachments", built)

    @classmethod
    def quick_config(cls, **overrides) -> ClaimsConfig:
        """The ``--quick`` settings (pilot 100, 1 000 confirming runs per world).

        Every attachment is configured with ``quick=True`` (its own small settings).

        Parameters
        ----------
        **overrides
            Fields of :class:`ClaimsConfig` that replace the quick settings.

        Returns
        -------
        ClaimsConfig
        """
        base = {
            "quick": True,
            "budget": AuditBudget(pilot_samples=100, samples=1_000, batch_size=1_000),
        }
        base.update(overrides)
        return cls(**base)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClaimsReport:
    """Everything one ``fedpriv verify`` found (written by :mod:`fedpriv.audit.claims.report`).

    ``attachments`` holds the run of every attachment of the selected families, in
    register order (their files go to the families' report folders).
    """

    config: ClaimsConfig
    seed_entropy: int
    results: tuple[ClaimResult, ...]
    seconds: float
    attachments: tuple[AttachmentResult, ...] = ()

    def for_paper(self, paper: str) -> tuple[ClaimResult, ...]:
        """Results of one paper (``--paper`` name).

        Parameters
        ----------
        paper : str
            A ``--paper`` name (or alias).

        Returns
        -------
        tuple of ClaimResult
            In register order.
        """
        name = paper_of(paper)
        return tuple(r for r in self.results if r.key and r.key.split("/", 1)[0] == name)


def _probe_claims_file(path: str) -> None:
    """Load a claims file and build its rows (run in a forked worker first)."""
    from fedpriv.audit.claims.family import load_claims_file
    from fedpriv.audit.claims.register import outside_claims

    load_claims_file(path)
    outside_claims()


def load_claims_files(paths, *, timeout: float | None = None) -> tuple[str, ...]:
    """Load the claims files ``paths`` (idempotent); their absolute paths, in order.

    With ``timeout``, a file not loaded yet is first loaded in a forked worker
    (:func:`run_isolated`), so that one which exits, dies or hangs while loading
    raises :class:`UserCodeAbortedError` instead of ending or stalling this process;
    a ``SystemExit`` of the second, in-process load raises it too.

    Parameters
    ----------
    paths : sequence of str or Path
        The claims files (:func:`fedpriv.audit.claims.family.load_claims_file`).
    timeout : float, optional
        Seconds a first load in a forked worker may take; None loads in-process only.

    Returns
    -------
    tuple of str
        The files' absolute paths, in order.

    Raises
    ------
    TypeError
        If ``paths`` is one path instead of a sequence of paths.
    UserCodeAbortedError
        If a file exits, dies or hangs while loading.
    """
    from fedpriv.audit.claims.family import load_claims_file, loaded_claims_files
    from fedpriv.audit.claims.register import outside_claims  # noqa: F401 (imported once, before the fork)

    if isinstance(paths, (str, os.PathLike)):
        raise TypeError("`claims_files` must be a sequence of paths, not one path.")
    out = []
    for path in paths:
        file = str(Path(path).expanduser().resolve())
        what = f"claims file {path}"
        if timeout is not None and file not in loaded_claims_files() and Path(file).is_file():
            run_isolated(_probe_claims_file, file, timeout=timeout, what=what)
        try:
            load_claims_file(path)
        except SystemExit as stop:
            raise UserCodeAbortedError(
                f"{what} called sys.exit({stop.code!r}) while loading; nothing is checked."
            ) from None
        out.append(file)
    return tuple(out)


def _selected(config: ClaimsConfig) -> list:
    """The rows ``config`` runs: its papers, else its claims files' families, else all."""
    if config.papers is not None:
        return [e for e in claims_for(None) if e.paper in config.papers]
    if config.claims_files:
        from fedpriv.audit.claims.family import load_claims_file

        keys = {f.key for path in config.claims_files for f in load_claims_file(path)}
        return [e for e in claims_for(None) if e.paper in keys]
    return list(claims_for(None))


#: SeedSequence branch of every register row's audit (below the root); the rest of the
#: address is the row's key (:func:`claim_seed`).
CLAIM_SEED_BRANCH = 8


def claim_seed(root: np.random.SeedSequence, key: str) -> np.random.SeedSequence:
    """The audit seed of the register row ``key``: an address made of the key alone.

    Every row, built-in or registered outside the package (entry point or claims file),
    audits under ``child_seed(root, 8, *w)``, ``w`` the eight 32-bit words of the
    SHA-256 of its key. Its numbers depend on its key alone, never on which papers run,
    where the row sits in the register, how many rows come before it, or which other
    families are installed: inserting or removing a row moves no other row's numbers
    (CONTRIBUTING.md, Seeding).

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The run's root (``--seed``).
    key : str
        A register key.

    Returns
    -------
    numpy.random.SeedSequence
    """
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    words = np.frombuffer(digest, dtype=">u4").tolist()
    return child_seed(root, CLAIM_SEED_BRANCH, *words)


def _scaled(budget: AuditBudget, factor: float) -> AuditBudget:
    return dataclasses.replace(budget, samples=max(1, round(budget.samples * factor)))


def _mechanism(entry, claim, route: str, epsilon: float) -> tuple[str | None, float | None]:
    """(route, ε) of the noise mechanisms alone (``None`` when the row has none)."""
    if entry.mechanism is not None:
        return entry.mechanism(claim)
    if math.isfinite(epsilon):
        return route, float(epsilon)
    return None, None


def _at_probe_delta(entry, claim) -> tuple[float, float]:
    """``(end-to-end ε, mechanism-only ε)`` at δ = 10⁻⁶ (same calibration, another δ).

    The end-to-end ε is ∞ when the entry names a raw channel, else the accountant
    recipe's (which charges adaptivity where the row's releases depend on raw data
    through the agent's own actions); the mechanism ε is the ``mechanism`` recipe's
    when there is one, else the accountant's.
    """
    probe = dataclasses.replace(
        claim, claimed=ApproxDP(float(claim.claimed.epsilon), VACUOUS_DELTA_PROBE)
    )
    accountant = None if entry.raw_channel else float(entry.accountant(probe)[1])
    mechanism = (
        float(entry.mechanism(probe)[1])
        if entry.mechanism is not None
        else accountant
        if accountant is not None
        else float(entry.accountant(probe)[1])
    )
    return (math.inf if accountant is None else accountant), mechanism


def _analytic_lower(entry, claim) -> LowerBoundEvidence | None:
    """The entry's exact analytic ε of the view as lower-bound evidence (or ``None``)."""
    recipe = getattr(entry, "analytic_lower", None)
    value = None if recipe is None else recipe(claim)
    if value is None:
        return None
    return LowerBoundEvidence(
        epsilon=float(value),
        kind="analytic",
        description="exact analytic ε of the view (register recipe)",
    )


def assemble_result(
    entry,
    route: str,
    epsilon: float,
    notes,
    audit=None,
    *,
    bound=None,
    event: str | None = None,
    **extra,
) -> ClaimResult:
    """The register row of ``entry`` from its recipes' numbers (module docstring).

    ``audit`` is an :class:`~fedpriv.audit.engine.coupled.EndToEndAudit` (its bound,
    event and wall time are taken) or ``None``; ``bound``/``event`` give a bare lower
    bound instead. ``extra`` goes to :class:`ClaimResult` (e.g. ``extras``).

    Parameters
    ----------
    entry : RegisteredClaim
        The registered claim.
    route : str
        The accountant route that gave ``epsilon``.
    epsilon : float
        The accountant's end-to-end ε in nats at the claimed δ.
    notes : str
        The recipe's notes, kept in the row.
    audit : EndToEndAudit, optional
        The end-to-end audit of the row.
    bound : EpsilonLowerBound, optional
        A bare lower bound, when ``audit`` is None.
    event : str, optional
        The event ``bound`` was measured on.
    **extra
        Further fields of :class:`ClaimResult`; ``declarations`` (a
        :class:`~fedpriv.audit.engine.declarations.DeclarationCheck`) that contradicts
        a declaration makes the row never ``holds``.

    Returns
    -------
    ClaimResult
        The row with its verdict (:func:`decide_verdict`).
    """
    claim = entry.claim
    if audit is not None:
        bound, event = audit.bound, audit.event
        extra.setdefault("audit_seconds", audit.seconds)
    _, mech_eps = _mechanism(entry, claim, route, float(epsilon))
    raw = entry.raw_channel
    end_to_end = math.inf if raw else float(epsilon)
    e2e_route = "nonprivate" if raw else route
    at_probe = mech_at_probe = None
    if claim.claimed_delta > 0 and mech_eps == 0.0:
        at_probe, mech_at_probe = _at_probe_delta(entry, claim)
    checked = extra.get("declarations")
    analytic = _analytic_lower(entry, claim)
    verdict, evidence = decide_verdict(
        claim.claimed.epsilon,
        end_to_end,
        bound,
        coverage=claim.coverage,
        raw_channel=raw,
        analytic_lower=analytic,
        contradicted=checked.describe() if checked is not None and checked.contradicted else "",
        unchecked=UNCHECKED if checked is None and _outside(entry) else "",
    )
    if analytic is not None:
        extra.setdefault("analytic_lower", analytic.epsilon)
    if mech_at_probe is not None:
        evidence += (
            f"; the claimed δ = {claim.claimed_delta:g} is vacuous for the mechanism "
            f"alone (mechanism ε = 0 there); at δ = 1e-6 the mechanism gives ε = "
            f"{mech_at_probe:.4g}"
        )
        if math.isfinite(at_probe) and at_probe != mech_at_probe:
            evidence += f" and the end-to-end view ε = {at_probe:.4g}"
    if audit is not None:
        evidence += f"; audit event: {audit.event} ({audit.neighbors})"
        at_1e6 = getattr(audit, "epsilon_lower_bound_at_1e_6", math.nan)
        second = getattr(audit, "bound_at_1e_6", None)
        if math.isfinite(at_1e6) and second is not None:
            evidence += (
                f"; at δ=1e-6: audit lower bound {at_1e6:.4g} "
                f"({second.confidence:.0%}, {second.n_samples:,}/world; "
                f"{audit.event_at_1e_6})"
            )
            if at_probe and math.isfinite(at_probe):
                evidence += f", accountant {at_probe:.4g}, tightness {at_1e6 / at_probe:.2f}"
            extra.setdefault("audit_epsilon_at_1e6", float(at_1e6))
            extra.setdefault("audit_at_1e6", second)
            extra.setdefault("audit_event_at_1e6", audit.event_at_1e_6)
        elif math.isfinite(at_1e6):
            evidence += f"; the same event's audit lower bound at δ=1e-6: {at_1e6:.4g}"
            extra.setdefault("audit_epsilon_at_1e6", float(at_1e6))
    elif bound is None:
        # an unresolved row says why no audit decides it (the channel's stated reason)
        why = entry.channel if verdict == "unresolved" and entry.channel else "accountant only"
        evidence += f"; no end-to-end audit ({why})"
    elif event:
        evidence += f"; audit event: {event}"
    if checked is not None and not checked.contradicted:
        evidence += f"; declarations: {checked.describe()}"
    notes = tuple(notes) + ((entry.note,) if entry.note else ())
    return ClaimResult(
        claim=claim,
        accountant_epsilon=end_to_end,
        accountant_route=e2e_route,
        audit=bound,
        verdict=verdict,
        evidence=evidence,
        notes=notes,
        mechanism_epsilon=mech_eps,
        raw_channel=raw,
        epsilon_at_1e6=at_probe,
        mechanism_epsilon_at_1e6=mech_at_probe,
        finding_ids=finding_ids(entry.key),
        channel=entry.channel,
        audit_event=event,
        key=entry.key,
        view=entry.view or view_of(entry.key),
        **extra,
    )


def _outside(entry) -> bool:
    """True for a row of a family registered outside the package (claims file or
    entry point): fedpriv's tests do not check its declarations.

    Only these rows need a coupled-run check before their accountant's bound may
    support ``holds``. The built-in families' rows (``audit/families/``) charge their
    releases through fedpriv's own algorithms, whose declared sensitivities and
    disjoint levels are the project's own, tested code; they run no check and their
    verdicts are unchanged.
    """
    from fedpriv.audit.claims.family import builtin_families

    return entry.paper not in {fam.key for fam in builtin_families()}


def check_entry_declarations(entry, seed: np.random.SeedSequence):
    """The row's declaration check at its audit seed, or ``None`` when it has none.

    The row's ``declarations`` recipe if it has one, else (for a row of a family
    registered outside the package) the check derived from its ``search``:
    :func:`~fedpriv.audit.engine.declarations.check_declarations` on the search's
    inputs, which at the audit's seed tries the audit's own candidate pairs.

    Parameters
    ----------
    entry : RegisteredClaim
        The row.
    seed : numpy.random.SeedSequence
        The row's address in the run's seed tree (its audit's seed).

    Returns
    -------
    DeclarationCheck or None
    """
    recipe = getattr(entry, "declarations", None)
    if recipe is not None:
        return recipe(entry.claim, seed)
    search = getattr(entry, "search", None)
    if search is not None and _outside(entry):
        return check_declarations(**search(entry.claim).arguments, seed=seed)
    return None


def evaluate_claim(key: str, budget: AuditBudget, seed: np.random.SeedSequence) -> ClaimResult:
    """Accountant, audit and verdict of the registered claim ``key``.

    Parameters
    ----------
    key : str
        A register key.
    budget : AuditBudget
        Samples of the audit (scaled by the entry's ``sample_factor``).
    seed : numpy.random.SeedSequence
        The claim's own address in the run's seed tree.

    Returns
    -------
    ClaimResult
        A failed recipe gives an ``error`` row with the exception's message, never an
        exception.

    Raises
    ------
    KeyError
        If ``key`` is not in the register.
    """
    entries = {entry.key: entry for entry in claims_for(None)}
    return evaluate_entry(entries[key], budget, seed)


def evaluate_entry(entry, budget: AuditBudget, seed: np.random.SeedSequence) -> ClaimResult:
    """Accountant, declaration check, audit and verdict of one register row.

    The row's declaration check (:func:`check_entry_declarations`: its
    ``declarations`` recipe, or one derived from its ``search``) runs at ``seed``,
    before the audit: coupled runs that check the declarations its accountant's bound
    rests on (:mod:`fedpriv.audit.engine.declarations`). A row of a family registered
    outside the package with no check is never ``holds`` on its accountant's bound.

    Parameters
    ----------
    entry : RegisteredClaim
        The row (registered or not).
    budget : AuditBudget
        Samples of the audit (scaled by the entry's ``sample_factor``).
    seed : numpy.random.SeedSequence
        The row's address in the run's seed tree.

    Returns
    -------
    ClaimResult
        A failed recipe gives an ``error`` row with the exception's message, never an
        exception.
    """
    claim = entry.claim
    try:
        route, epsilon, notes = entry.accountant(claim)
        extra = {}
        checked = check_entry_declarations(entry, seed)
        if checked is not None:
            extra["declarations"] = checked
        audit = None
        if entry.audit is not None:
            audit = entry.audit(claim, _scaled(budget, entry.sample_factor), seed)
        return assemble_result(entry, route, epsilon, notes, audit, **extra)
    except Exception as error:
        return _error_row(entry, error)


def _assemble_row(entry, row, seed: np.random.SeedSequence) -> ClaimResult:
    """The row ``entry`` from an attachment's :class:`RowEvidence` ``row`` (its
    declaration check at ``seed``, then :func:`assemble_result`)."""
    checked = check_entry_declarations(entry, seed)
    return assemble_result(
        entry,
        row.route,
        row.epsilon,
        row.notes,
        bound=row.bound,
        event=row.event,
        extras=tuple(row.extras),
        **({} if checked is None else {"declarations": checked}),
    )


def _assemble_user_row(entry, row, seed: np.random.SeedSequence) -> ClaimResult:
    """:func:`_assemble_row` for a user's attachment (run in its forked worker): a
    recipe that raises, or evidence that is not numbers, gives an ``error`` row, as in
    :func:`evaluate_entry`."""
    try:
        return _assemble_row(entry, row, seed)
    except Exception as error:
        return _error_row(entry, error)


def _error_row(entry, error: Exception) -> ClaimResult:
    """The ``error`` row of ``entry`` whose recipe raised ``error``."""
    detail = "".join(traceback.format_exception_only(type(error), error)).strip()
    return ClaimResult(
        claim=entry.claim,
        accountant_epsilon=math.nan,
        accountant_route="-",
        audit=None,
        verdict=ERROR,
        evidence=f"not evaluated: {detail}",
        channel=entry.channel,
        key=entry.key,
        finding_ids=finding_ids(entry.key),
    )


def _job(job: dict) -> ClaimResult:
    """One claim (a picklable unit of work for the executor); a worker process loads
    the run's claims files first, so that users' rows are in its register too. A
    claim of a claims file (``origin``) or of an installed entry point's family
    (``entry_point``) is evaluated in a forked worker (:func:`run_isolated`, timed by
    ``timeout``); a built-in family's claim runs here. The
    row's recipe curves for the report page are computed here too, where the recipes
    just ran and their caches are warm (:func:`fedpriv.audit.claims.curves.recipe_curves`)."""
    load_claims_files(job.get("claims_files", ()))
    what = _user_code(job)
    if what is None:  # a built-in family: fedpriv's own tested code, run here
        return _evaluate_job(job)
    return run_isolated(_evaluate_job, job, timeout=job["timeout"], what=what)


def _user_code(job: dict) -> str | None:
    """How messages name the job's claim when it is a user's code (a claims file's or an
    installed entry point's family), else None (a built-in family)."""
    if job.get("what"):  # a row a user's attachment evaluated
        return job["what"]
    if job.get("origin"):  # a user's claims file: its exit, death or hang is reported
        return f"claim {job['key']} of claims file {job['origin']}"
    if job.get("entry_point"):  # an installed family: the same, naming its entry point
        return f"claim {job['key']} of {job['entry_point']}"
    return None


def _evaluate_job(job: dict) -> ClaimResult:
    """The claim's row and its recipe curves (the work of :func:`_job`)."""
    result = evaluate_claim(job["key"], job["budget"], job["seed"])
    curves = recipe_curves(result.key, result.claim.claimed_delta)
    return dataclasses.replace(result, recipe_curves=curves)


def _with_shared_audits(
    done: dict[str, ClaimResult], entries, jobs: dict[str, dict] | None = None
) -> dict[str, ClaimResult]:
    """Rows that take over another row's audit (``shared_audit``), re-assembled with it.

    Re-assembling runs the row's recipes again (accountant, mechanism, analytic lower
    bound); for a user's row (``jobs[key]`` names a claims file or an entry point) that
    runs in a forked, timed worker as its claim did (:func:`_job`)."""
    out = {}
    for key, result in done.items():
        entry = entries.get(key)
        source = None if entry is None else done.get(entry.shared_audit or "")
        if source is None or source.audit is None or result.verdict == ERROR:
            continue
        job = (jobs or {}).get(key, {})
        what = _user_code(job)
        if what is None:
            out[key] = _reassemble(entry, source, result.declarations)
        else:
            out[key] = run_isolated(
                _reassemble,
                entry,
                source,
                result.declarations,
                timeout=job["timeout"],
                what=f"{what} (re-assembled with the audit of {source.key})",
            )
        why = (
            "same algorithm and setting, another reading of the claim"
            if not entry.shared_audit_differs
            else "same algorithm; the rows differ only in "
            + ", ".join(entry.shared_audit_differs)
            + ", which the audit recipe is run without (checked when the register is built)"
        )
        out[key] = dataclasses.replace(
            out[key], evidence=out[key].evidence + f"; audit shared with `{source.key}` ({why})"
        )
    return out


def _reassemble(entry, source: ClaimResult, declarations) -> ClaimResult:
    """``entry``'s row with ``source``'s audit (the work of :func:`_with_shared_audits`)."""
    route, epsilon, notes = entry.accountant(entry.claim)
    return assemble_result(
        entry,
        route,
        epsilon,
        notes,
        bound=source.audit,
        event=source.audit_event,
        audit_seconds=None,
        declarations=declarations,
    )


def _describe(job: dict, result: ClaimResult) -> str:
    """The per-claim progress line: verdict, accountant, audit, tightness, claim."""
    text = f"{job['key']}: {result.verdict} (accountant {result.accountant_epsilon:.4g}"
    if result.audit is not None:
        text += f", audit LB {result.audit.epsilon_lower_bound:.4g}"
    if result.tightness is not None:
        text += f", tightness {result.tightness:.2f}"
    if result.tightness_at_1e6 is not None:
        text += (
            f"; at δ=1e-6 audit LB {result.audit_epsilon_at_1e6:.4g}, tightness "
            f"{result.tightness_at_1e6:.2f}"
        )
    return text + f" vs claimed {result.claim.claimed.epsilon:.4g})"


def _attached(selected) -> list:
    """``(family, attachment, id, rows)`` of the attachments of the families with
    selected rows (their rows in register order)."""
    out = []
    for fam, attachment, ident in _attachments():
        rows = [e for e in selected if e.paper == fam.key]
        if rows:
            out.append((fam, attachment, ident, rows))
    return out


def planned_jobs(config: ClaimsConfig) -> int:
    """How many finished-job lines ``verify_claims(config, progress=...)`` will send.

    Counts, without running anything, the jobs of the selected families' attachments
    (their ``planned``) and the register's claim jobs (every selected row no attachment
    evaluates), so that a caller can show one progress bar for the whole run. Every job
    reports one line starting ``[i/n]`` (``n`` the size of its step); stage lines
    (``[<family key>] ...``, ``[audit] ...``) are not jobs.

    Parameters
    ----------
    config : ClaimsConfig
        The run's settings.

    Returns
    -------
    int
        >= 0.
    """
    selected = _selected(config)
    n_jobs, covered = 0, set()
    attached = _attached(selected)
    origins = user_origins(config.claims_files) if attached else {}
    for fam, attachment, ident, rows in attached:
        plan = plan_attachment(
            attachment,
            config.attachments[ident],
            rows,
            origin=origins.get(fam.key),
            timeout=config.timeout,
        )
        n_jobs += plan.jobs
        covered |= plan.keys
    return n_jobs + sum(e.key not in covered for e in selected)


def verify_claims(
    config: ClaimsConfig, *, progress: Callable[[str], None] | None = None, executor=None
) -> ClaimsReport:
    """Evaluate every registered claim of ``config.papers``; see the module docstring.

    Parameters
    ----------
    config : ClaimsConfig
    progress : callable, optional
        Receives one line per finished job, starting ``[i/n]`` (``i`` of the ``n``
        jobs of its step; :func:`planned_jobs` counts them over every step), and one
        line as each step starts, starting ``[step name]``.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the claim jobs and the attachments' jobs run; default a client on
        ``config.scheduler`` when set, else a local process pool of ``config.workers``
        (in this process when ``workers == 1``). Every job carries its own SeedSequence
        address, so the numbers do not depend on the executor. A user's attachment
        (claims file or entry point) runs in a forked worker with ``executor=None``;
        its progress lines are relayed here as it sends them.

    Returns
    -------
    ClaimsReport
        One row per claim of the selected papers, the attachments' runs, the seed
        entropy and the wall time.

    Raises
    ------
    UserCodeAbortedError
        If a claim of a claims file or of an installed entry point's family, or a call
        into such a family's attachment (``run``, the assembly of a row it evaluated),
        calls ``sys.exit``, dies (``os._exit``, a signal), runs past
        ``config.timeout`` or returns what cannot be pickled (the message names the
        claim or the attachment, and the file or the entry point): no report is
        returned then.
    AttachmentError
        If such an attachment's ``run`` raises or returns no
        :class:`~fedpriv.audit.claims.attachment.AttachmentOutput` of
        :class:`~fedpriv.audit.claims.attachment.RowEvidence` rows.
    """
    selected = {e.paper for e in _selected(config)}
    outside = [f"claims file(s) {', '.join(config.claims_files)}"] if config.claims_files else []
    outside += [where for key, where in entry_point_origins().items() if key in selected]
    if outside:
        try:
            return _verify_claims(config, progress=progress, executor=executor)
        except SystemExit as stop:  # a user's code run in this process (no os.fork)
            raise UserCodeAbortedError(
                f"code of {' or '.join(outside)} called sys.exit({stop.code!r}); nothing "
                "is reported as checked."
            ) from None
    return _verify_claims(config, progress=progress, executor=executor)


def _verify_claims(
    config: ClaimsConfig, *, progress: Callable[[str], None] | None, executor
) -> ClaimsReport:
    """:func:`verify_claims` itself."""
    if executor is None and config.scheduler is not None:
        with connect_scheduler(config.scheduler) as client:
            return _verify_claims(config, progress=progress, executor=client)
    started = time.perf_counter()
    say = progress or (lambda message: None)
    root = np.random.SeedSequence(config.seed)
    selected = _selected(config)
    entries = {e.key: e for e in selected}

    attached: list[AttachmentResult] = []
    done: dict[str, ClaimResult] = {}
    users: dict[str, dict] = {}  # a user's attachment row -> how messages name it
    to_attach = _attached(selected)
    origins = user_origins(config.claims_files) if to_attach else {}
    for fam, attachment, ident, rows in to_attach:
        say(f"[{fam.key}] {attachment.title}")
        where = origins.get(fam.key)
        output = run_attachment(
            attachment,
            config.attachments[ident],
            rows,
            origin=where,
            timeout=config.timeout,
            progress=say,
            executor=executor,
        )
        attached.append(
            AttachmentResult(
                family=fam.key,
                attachment=attachment,
                config=config.attachments[ident],
                output=output,
                origin=where,
                timeout=config.timeout,
            )
        )
        for key, row in output.rows.items():
            if key not in entries:
                continue
            seed = claim_seed(root, key)
            if where is None:  # a built-in family's row: assembled here, as always
                done[key] = _assemble_row(entries[key], row, seed)
                continue
            what = f"row {key} of attachment {attachment.name!r} of {where}"
            users[key] = {"key": key, "what": what, "timeout": config.timeout}
            done[key] = run_isolated(
                _assemble_user_row, entries[key], row, seed, timeout=config.timeout, what=what
            )

    # Longest jobs first, so that the pool's last jobs are short: the audits of the
    # families that declare them costly (whole-algorithm runs with transcripts), then
    # the others, then accountant-only claims.
    audit_cost = {fam.key: fam.audit_cost for fam in families()}

    def cost(entry) -> int:
        return 0 if entry.audit is None else audit_cost.get(entry.paper, 1)

    from fedpriv.audit.claims.family import load_claims_file

    origin = {f.key: path for path in config.claims_files for f in load_claims_file(path)}
    installed = entry_point_origins()
    jobs = [
        {
            "key": e.key,
            "budget": config.budget,
            "seed": claim_seed(root, e.key),
            "claims_files": config.claims_files,
            "origin": origin.get(e.paper),
            "entry_point": None if e.paper in origin else installed.get(e.paper),
            "timeout": config.timeout,
        }
        for e in sorted(selected, key=cost, reverse=True)
        if e.key not in done
    ]
    results = parallel_map(
        _job, jobs, workers=config.workers, say=say, executor=executor, describe=_describe
    )
    done.update({r.key: r for r in results})
    done.update(_with_shared_audits(done, entries, {**users, **{job["key"]: job for job in jobs}}))
    ordered = tuple(done[e.key] for e in selected if e.key in done)
    return ClaimsReport(
        config=config,
        seed_entropy=int(root.entropy),
        results=ordered,
        seconds=time.perf_counter() - started,
        attachments=tuple(attached),
    )
