"""``fedpriv verify``: evaluate every claim of the register (accountant and audit).

For each :class:`~fedpriv.audit.claims.register.RegisteredClaim` the job runs the accountant recipe at
the claimed δ, runs the end-to-end audit recipe when there is one, and decides the
verdict with :func:`fedpriv.audit.claims.claim.decide_verdict` (docs/reference/verdicts.md).
:func:`assemble_result` turns the recipe's numbers into the row: the end-to-end ε (∞ with
the channel named when the entry declares a ``raw_channel``), the mechanism-only ε, ε at
δ = 10⁻⁶ where the claimed δ is vacuous, the verdict under the claim's coverage (with
the entry's exact analytic ε of the view as lower-bound evidence, when it gives one:
``RegisteredClaim.analytic_lower``), and the row's finding ids (:mod:`fedpriv.audit.claims.findings`).
Fed_UCB's grid of claims (Zhu et al. 2021) is evaluated by
:func:`fedpriv.audit.families.gossip_fed_ucb.regret.verify_gossip_fed_ucb` exactly as before (its report folder
``reports/gossip_fed_ucb/`` is still written) and its results are taken over into the
register's table; Fed_UCB's extra end-to-end claims run through their recipes.

Each claim is one picklable job (its register key, a budget and a SeedSequence
address), run on a local process pool (:func:`fedpriv.audit.families.gossip_fed_ucb.regret._parallel_map`); results do
not depend on the number of workers. A recipe that fails (for example an algorithm
module that is not installed) gives the verdict ``"error"`` with the exception as
evidence, never a silent pass.

Length: the one job runner of `fedpriv verify` (planning, progress, Fed_UCB's job taken
over, assembly of every row); split with the paper families of issue 21.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np
from fedpriv.audit.claims.claim import (
    VACUOUS_DELTA_PROBE,
    ClaimResult,
    LowerBoundEvidence,
    decide_verdict,
)
from fedpriv.audit.engine.views import view_of
from fedpriv.audit.families.gossip_fed_ucb.regret import (
    VerifyConfig,
    VerifyReport,
    _claim_grid,
    _parallel_map,
    variant_label,
    verify_gossip_fed_ucb,
)
from fedpriv.audit.claims.findings import finding_ids
from fedpriv.audit.claims.register import claims_for, paper_of
from fedpriv.audit.engine.coupled import AuditBudget, child_seed
from fedpriv.audit.engine.executor import connect_scheduler
from fedpriv.privacy import ApproxDP
from fedpriv.privacy._checks import check_int_at_least

__all__ = [
    "ClaimsConfig",
    "ClaimsReport",
    "assemble_result",
    "claim_seed",
    "evaluate_claim",
    "planned_jobs",
    "verify_claims",
]

#: Verdict of a claim whose recipe raised.
ERROR = "error"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClaimsConfig:
    """Settings of one ``fedpriv verify`` run over the register.

    Attributes
    ----------
    quick : bool
        Small audit budgets (every paper in under five minutes on 2 cores).
    seed : int
        Root of the SeedSequence tree; claim ``i`` of the register audits under
        ``child_seed(seed, 7, i)``.
    papers : tuple of str or None
        ``--paper`` names to run (None: all).
    budget : AuditBudget
        Base budget of the end-to-end audits (each claim scales ``samples`` by its
        ``sample_factor``).
    workers : int
        Processes (1 runs in this process).
    fed_ucb : VerifyConfig
        The Fed_UCB job's configuration.
    scheduler : str or None
        Address of an existing dask.distributed scheduler (``--scheduler``): every
        job runs on its workers and ``workers`` is unused
        (:func:`fedpriv.audit.engine.executor.connect_scheduler`). The numbers are those of
        the in-process run.
    claims_files : tuple of str
        Users' claims files (``--claims``), loaded here with
        :func:`~fedpriv.audit.claims.family.load_claims_file` and stored as absolute
        paths (every job carries them, so that worker processes load them too). With
        ``papers`` None the run covers only these files' families.
    """

    quick: bool = False
    seed: int = 0
    papers: tuple[str, ...] | None = None
    budget: AuditBudget = dataclasses.field(
        default_factory=lambda: AuditBudget(pilot_samples=500, samples=10_000, batch_size=2_000)
    )
    workers: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 1)
    fed_ucb: VerifyConfig | None = None
    scheduler: str | None = None
    claims_files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_int_at_least("seed", self.seed, 0)
        object.__setattr__(self, "claims_files", _load_claims_files(self.claims_files))
        if self.scheduler is not None and not isinstance(self.scheduler, str):
            raise TypeError(f"`scheduler` must be an address string or None, got "
                            f"{type(self.scheduler).__name__}.")
        check_int_at_least("workers", self.workers, 1)
        if self.papers is not None:
            object.__setattr__(self, "papers", tuple(paper_of(p) for p in self.papers))
        if self.fed_ucb is None:
            fed = (VerifyConfig.quick_config(seed=self.seed, workers=self.workers)
                   if self.quick else VerifyConfig(seed=self.seed, workers=self.workers))
            object.__setattr__(self, "fed_ucb", fed)

    @classmethod
    def quick_config(cls, **overrides) -> ClaimsConfig:
        """The ``--quick`` settings (pilot 100, 1 000 confirming runs per world).

        Fed_UCB's job runs :meth:`quick_fed_ucb` (its tree audits at 2·10⁵ samples per
        world at every horizon, still enough to flag the final-estimate reading's 1.25ε and
        ln's 4/3·ε on the view at T = 16).

        Parameters
        ----------
        **overrides
            Fields of :class:`ClaimsConfig` that replace the quick settings.

        Returns
        -------
        ClaimsConfig
        """
        base = {"quick": True,
                "budget": AuditBudget(pilot_samples=100, samples=1_000, batch_size=1_000)}
        base.update(overrides)
        if base.get("fed_ucb") is None:
            base["fed_ucb"] = cls.quick_fed_ucb(seed=base.get("seed", 0),
                                                workers=base.get("workers", os.cpu_count() or 1))
        return cls(**base)

    @staticmethod
    def quick_fed_ucb(**overrides) -> VerifyConfig:
        """Fed_UCB's job under ``fedpriv verify --quick`` (see :meth:`quick_config`).

        Parameters
        ----------
        **overrides
            Fields of ``VerifyConfig`` that replace the quick settings.

        Returns
        -------
        VerifyConfig
        """
        base = {"audit_samples": ((16, 2 * 10**5), (1024, 2 * 10**5), (600_000, 2 * 10**5))}
        base.update(overrides)
        return VerifyConfig.quick_config(**base)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClaimsReport:
    """Everything one ``fedpriv verify`` found (written by :mod:`fedpriv.audit.claims.report`)."""

    config: ClaimsConfig
    seed_entropy: int
    results: tuple[ClaimResult, ...]
    fed_ucb: VerifyReport | None
    seconds: float

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


def _load_claims_files(paths) -> tuple[str, ...]:
    """Load the claims files ``paths`` (idempotent); their absolute paths, in order."""
    from fedpriv.audit.claims.family import load_claims_file

    if isinstance(paths, (str, os.PathLike)):
        raise TypeError("`claims_files` must be a sequence of paths, not one path.")
    out = []
    for path in paths:
        load_claims_file(path)
        out.append(str(Path(path).expanduser().resolve()))
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


#: SeedSequence branch of the rows outside the built-in register (below the root).
OUTSIDE_SEED_BRANCH = 8


def claim_seed(root: np.random.SeedSequence, key: str) -> np.random.SeedSequence:
    """The audit seed of the register row ``key``.

    A built-in row ``i`` (its position in the built-in register) audits under
    ``child_seed(root, 7, i)``, as every report so far. A row of a family registered
    outside the package (entry point or claims file) audits under
    ``child_seed(root, 8, *w)``, ``w`` the eight 32-bit words of the SHA-256 of its key:
    its numbers depend on its key alone, never on which papers run, how long the
    built-in register is, which other families are installed or where the row sits in
    its own family.

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
    from fedpriv.audit.claims.register import REGISTER

    index = next((i for i, e in enumerate(REGISTER) if e.key == key), None)
    if index is not None:
        return child_seed(root, 7, index)
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    words = np.frombuffer(digest, dtype=">u4").tolist()
    return child_seed(root, OUTSIDE_SEED_BRANCH, *words)


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
        claim, claimed=ApproxDP(float(claim.claimed.epsilon), VACUOUS_DELTA_PROBE))
    accountant = None if entry.raw_channel else float(entry.accountant(probe)[1])
    mechanism = (float(entry.mechanism(probe)[1]) if entry.mechanism is not None
                 else accountant if accountant is not None
                 else float(entry.accountant(probe)[1]))
    return (math.inf if accountant is None else accountant), mechanism


def _analytic_lower(entry, claim) -> LowerBoundEvidence | None:
    """The entry's exact analytic ε of the view as lower-bound evidence (or ``None``)."""
    recipe = getattr(entry, "analytic_lower", None)
    value = None if recipe is None else recipe(claim)
    if value is None:
        return None
    return LowerBoundEvidence(epsilon=float(value), kind="analytic",
                              description="exact analytic ε of the view (register recipe)")


def assemble_result(entry, route: str, epsilon: float, notes, audit=None, *,
                    bound=None, event: str | None = None, **extra) -> ClaimResult:
    """The register row of ``entry`` from its recipes' numbers (module docstring).

    ``audit`` is an :class:`~fedpriv.audit.engine.coupled.EndToEndAudit` (its bound,
    event and wall time are taken) or ``None``; ``bound``/``event`` give a bare lower
    bound instead. ``extra`` goes to :class:`ClaimResult` (e.g. ``initial_pulls_epsilon``).

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
        Further fields of :class:`ClaimResult`.

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
    verdict, evidence = decide_verdict(claim.claimed.epsilon, end_to_end, bound,
                                       coverage=claim.coverage, raw_channel=raw,
                                       analytic_lower=_analytic_lower(entry, claim))
    if mech_at_probe is not None:
        evidence += (f"; the claimed δ = {claim.claimed_delta:g} is vacuous for the mechanism "
                     f"alone (mechanism ε = 0 there); at δ = 1e-6 the mechanism gives ε = "
                     f"{mech_at_probe:.4g}")
        if math.isfinite(at_probe) and at_probe != mech_at_probe:
            evidence += f" and the end-to-end view ε = {at_probe:.4g}"
    if audit is not None:
        evidence += f"; audit event: {audit.event} ({audit.neighbors})"
        at_1e6 = getattr(audit, "epsilon_lower_bound_at_1e_6", math.nan)
        second = getattr(audit, "bound_at_1e_6", None)
        if math.isfinite(at_1e6) and second is not None:
            evidence += (f"; at δ=1e-6: audit lower bound {at_1e6:.4g} "
                         f"({second.confidence:.0%}, {second.n_samples:,}/world; "
                         f"{audit.event_at_1e_6})")
            if at_probe and math.isfinite(at_probe):
                evidence += (f", accountant {at_probe:.4g}, tightness "
                             f"{at_1e6 / at_probe:.2f}")
            extra.setdefault("audit_epsilon_at_1e6", float(at_1e6))
            extra.setdefault("audit_at_1e6", second)
            extra.setdefault("audit_event_at_1e6", audit.event_at_1e_6)
        elif math.isfinite(at_1e6):
            evidence += f"; the same event's audit lower bound at δ=1e-6: {at_1e6:.4g}"
            extra.setdefault("audit_epsilon_at_1e6", float(at_1e6))
    elif bound is None:
        evidence += "; no end-to-end audit (accountant only)"
    elif event:
        evidence += f"; audit event: {event}"
    notes = tuple(notes) + ((entry.note,) if entry.note else ())
    return ClaimResult(
        claim=claim, accountant_epsilon=end_to_end, accountant_route=e2e_route, audit=bound,
        verdict=verdict, evidence=evidence, notes=notes, mechanism_epsilon=mech_eps,
        raw_channel=raw, epsilon_at_1e6=at_probe, mechanism_epsilon_at_1e6=mech_at_probe,
        finding_ids=finding_ids(entry.key), channel=entry.channel, audit_event=event,
        key=entry.key, view=entry.view or view_of(entry.key), **extra,
    )


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
    entry = entries[key]
    claim = entry.claim
    try:
        route, epsilon, notes = entry.accountant(claim)
        audit = None
        if entry.audit is not None:
            audit = entry.audit(claim, _scaled(budget, entry.sample_factor), seed)
        return assemble_result(entry, route, epsilon, notes, audit)
    except Exception as error:  # noqa: BLE001 - a recipe failure is reported, never hidden
        detail = "".join(traceback.format_exception_only(type(error), error)).strip()
        return ClaimResult(
            claim=claim, accountant_epsilon=math.nan, accountant_route="-", audit=None,
            verdict=ERROR, evidence=f"not evaluated: {detail}", channel=entry.channel, key=key,
            finding_ids=finding_ids(key),
        )


def _job(job: dict) -> ClaimResult:
    """One claim (a picklable unit of work for the executor); a worker process loads
    the run's claims files first, so that users' rows are in its register too."""
    _load_claims_files(job.get("claims_files", ()))
    return evaluate_claim(job["key"], job["budget"], job["seed"])


def _fed_ucb_key(mode: str, log_base: str, final: bool, horizon: int, epsilon: float) -> str:
    """The register key of one Fed_UCB grid claim."""
    label = variant_label(mode, log_base, final)
    return f"gossip_fed_ucb/gossip-fed-ucb/{label}/T{horizon}/eps{epsilon:g}"


def _from_fed_ucb(report: VerifyReport, entries) -> dict[str, ClaimResult]:
    """Fed_UCB job results, keyed by the register's keys (matched on the setting)."""
    out = {}
    for result in report.claims:
        s = result.claim.setting_dict()
        final = s["horizon"] > 1 and s.get("released_prefixes") == s["horizon"]
        key = _fed_ucb_key(result.claim.mode, s["log_base"], final, s["horizon"],
                           s["epsilon"])
        if key in entries:
            out[key] = assemble_result(
                entries[key], result.accountant_route, result.accountant_epsilon,
                result.notes, bound=result.audit,
                event=result.audit_event,
                initial_pulls_epsilon=result.initial_pulls_epsilon,
            )
    return out


def _with_shared_audits(done: dict[str, ClaimResult], entries) -> dict[str, ClaimResult]:
    """Rows that take over another row's audit (``shared_audit``), re-assembled with it."""
    out = {}
    for key, result in done.items():
        entry = entries.get(key)
        source = None if entry is None else done.get(entry.shared_audit or "")
        if source is None or source.audit is None or result.verdict == ERROR:
            continue
        route, epsilon, notes = entry.accountant(entry.claim)
        out[key] = assemble_result(
            entry, route, epsilon, notes, bound=source.audit, event=source.audit_event,
            audit_seconds=None)
        why = ("same algorithm and setting, another reading of the claim"
               if not entry.shared_audit_differs else
               "same algorithm; the rows differ only in "
               + ", ".join(entry.shared_audit_differs)
               + ", which the audited outputs do not read (see the note)")
        out[key] = dataclasses.replace(
            out[key], evidence=out[key].evidence + f"; audit shared with `{source.key}` "
            f"({why})")
    return out


def _describe(job: dict, result: ClaimResult) -> str:
    """The per-claim progress line: verdict, accountant, audit, tightness, claim."""
    text = f"{job['key']}: {result.verdict} (accountant {result.accountant_epsilon:.4g}"
    if result.audit is not None:
        text += f", audit LB {result.audit.epsilon_lower_bound:.4g}"
    if result.tightness is not None:
        text += f", tightness {result.tightness:.2f}"
    if result.tightness_at_1e6 is not None:
        text += (f"; at δ=1e-6 audit LB {result.audit_epsilon_at_1e6:.4g}, tightness "
                 f"{result.tightness_at_1e6:.2f}")
    return text + f" vs claimed {result.claim.claimed.epsilon:.4g})"


def planned_jobs(config: ClaimsConfig) -> int:
    """How many finished-job lines ``verify_claims(config, progress=...)`` will send.

    Counts, without running anything, Fed_UCB's regret runs and tree audits (when its
    paper is selected) and the register's claim jobs, so that a caller can show one
    progress bar for the whole run. Every job reports one line starting ``[i/n]``
    (``n`` the size of its step); stage lines (``[gossip_fed_ucb] ...``,
    ``[ledger] ...``) are not jobs.

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
    n_jobs, from_fed = 0, set()
    if any(e.paper == "gossip_fed_ucb" for e in selected):
        fed = config.fed_ucb
        grid = _claim_grid(fed)
        n_jobs += 1 + 2 * len(fed.epsilons)  # Gossip_UCB, then paper and corrected per ε
        n_jobs += sum(horizon in fed.audit_horizons for *_, horizon, _ in grid)
        from_fed = {_fed_ucb_key(mode, base, horizon > 1 and final, horizon, eps)
                    for _, mode, base, final, horizon, eps in grid}
    return n_jobs + sum(e.key not in from_fed for e in selected)


def verify_claims(
    config: ClaimsConfig,
    *,
    progress: Callable[[str], None] | None = None,
    executor=None,
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
        Where the claim jobs run; default a client on ``config.scheduler`` when set,
        else a local process pool of ``config.workers`` (in this process when
        ``workers == 1``). Every job carries its own SeedSequence address, so the
        numbers do not depend on the executor.

    Returns
    -------
    ClaimsReport
        One row per claim of the selected papers, the seed entropy and the wall time.
    """
    if executor is None and config.scheduler is not None:
        with connect_scheduler(config.scheduler) as client:
            return verify_claims(config, progress=progress, executor=client)
    started = time.perf_counter()
    say = progress or (lambda message: None)
    root = np.random.SeedSequence(config.seed)
    selected = _selected(config)
    entries = {e.key: e for e in selected}

    fed_report = None
    done: dict[str, ClaimResult] = {}
    if any(e.paper == "gossip_fed_ucb" for e in selected):
        say("[gossip_fed_ucb] Fed_UCB job (regret runs, tree audits)")
        fed_report = verify_gossip_fed_ucb(config.fed_ucb, progress=say, executor=executor)
        done = _from_fed_ucb(fed_report, entries)

    # Longest jobs first, so that the pool's last jobs are short (whole-algorithm
    # audits with transcripts, then other audits, then accountant-only claims).
    def cost(entry) -> int:
        if entry.audit is None:
            return 0
        return 2 if entry.paper in ("li_song", "dubey_aamas", "feducb") else 1

    jobs = [
        {"key": e.key, "budget": config.budget, "seed": claim_seed(root, e.key),
         "claims_files": config.claims_files}
        for e in sorted(selected, key=cost, reverse=True) if e.key not in done
    ]
    results = _parallel_map(
        _job, jobs, workers=config.workers, say=say, executor=executor,
        describe=_describe,
    )
    done.update({r.key: r for r in results})
    done.update(_with_shared_audits(done, entries))
    ordered = tuple(done[e.key] for e in selected if e.key in done)
    return ClaimsReport(
        config=config, seed_entropy=int(root.entropy), results=ordered, fed_ucb=fed_report,
        seconds=time.perf_counter() - started,
    )
