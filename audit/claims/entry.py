"""One entry of the claims register: a claim and the recipes that evaluate it.

See :mod:`fedpriv.audit.claims.register` for the register itself and what each field
means to ``fedpriv verify``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.engine.views import View

__all__ = [
    "PAPERS",
    "PAPER_ALIASES",
    "AccountantRecipe",
    "AnalyticLowerRecipe",
    "AuditRecipe",
    "MechanismRecipe",
    "RegisteredClaim",
    "make_claim",
]

AccountantRecipe = Callable[[Claim], tuple[str, float, tuple[str, ...]]]
AuditRecipe = Callable  # (claim, AuditBudget, SeedSequence) -> EndToEndAudit
MechanismRecipe = Callable[[Claim], tuple[str, float]]
AnalyticLowerRecipe = Callable[[Claim], "float | None"]

#: ``--paper`` name -> citation used in ``Claim.paper``.
PAPERS: dict[str, str] = {
    "feducb": "Dubey & Pentland 2020 (NeurIPS, FedUCB)",
    "li_song": "Li & Song (CDP/DDP/HDP-MAB)",
    "gossip_fed_ucb": "Zhu et al. 2021",
    "dubey_aamas": "Dubey & Pentland 2020 (AAMAS, cooperative UCB)",
}

#: Other accepted spellings of the ``--paper`` names.
PAPER_ALIASES: dict[str, str] = {
    "fed_ucb": "gossip_fed_ucb", "gossip": "gossip_fed_ucb", "zhu": "gossip_fed_ucb",
    "lisong": "li_song", "li-song": "li_song", "byzantine": "dubey_aamas",
    "coop_ucb": "dubey_aamas", "coop-ucb": "dubey_aamas", "fed-ucb": "gossip_fed_ucb",
    "dubey_pentland": "feducb",
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredClaim:
    """One claim of the register and how to evaluate it.

    Attributes
    ----------
    key : str
        Unique, stable identifier, ``"<paper>/<algorithm>/<mode>/..."``.
    claim : Claim
    accountant : AccountantRecipe
        ``claim -> (route, epsilon, findings)`` at the claimed δ.
    audit : AuditRecipe or None
        ``(claim, budget, seed) -> EndToEndAudit``; ``None`` if the claim rests on the
        accountant alone.
    channel : str
        The audit's observable ("accountant only" without an audit).
    sample_factor : float
        Multiplies the verify run's confirming sample count for this audit (cheap
        scalar audits take more samples, whole-algorithm audits fewer).
    raw_channel : str or None
        Channel inside the claim's coverage that raw data reaches (module docstring).
    mechanism : MechanismRecipe or None
        ``claim -> (route, ε)`` of the noise alone (module docstring).
    note : str
        A remark printed with the row (e.g. where the paper's experiment sits).
    shared_audit : str or None
        Key of the row whose audit this row takes over: the same algorithm in the same
        setting, read as another claim (only the claimed ε differs), so its audit
        would be the same experiment. ``verify`` runs it once.
    shared_audit_differs : tuple of str
        Setting entries in which this row differs from its ``shared_audit`` row, each
        one the audited outputs do not read (e.g. the number of agents for an audit of
        one agent's stream); the row's ``note`` says why. Empty: the settings are equal.
    analytic_lower : AnalyticLowerRecipe or None
        ``claim -> ε`` (or ``None``): an exact analytic value of the view's ε, a lower
        bound the verdict may rest on (e.g. the accountant's lower bracket where it is
        tight: pure Laplace releases composed exactly). ``None``: no such value.
    view : View or None
        What the claim protects (:class:`fedpriv.audit.engine.views.View`): a family
        outside the package declares it here; ``None`` takes the view of
        :func:`fedpriv.audit.engine.views.view_of` for the key (the built-in papers).
    """

    key: str
    claim: Claim
    accountant: AccountantRecipe
    audit: AuditRecipe | None
    channel: str
    sample_factor: float = 1.0
    raw_channel: str | None = None
    mechanism: MechanismRecipe | None = None
    note: str = ""
    shared_audit: str | None = None
    shared_audit_differs: tuple[str, ...] = ()
    analytic_lower: AnalyticLowerRecipe | None = None
    view: View | None = None

    @property
    def paper(self) -> str:
        """The ``--paper`` name."""
        return self.key.split("/", 1)[0]


def make_claim(paper: str, algorithm: str, mode: str, setting: dict, relation, claimed, source,
           **reading) -> Claim:
    """A :class:`Claim` of the paper with ``--paper`` name ``paper``.

    Parameters
    ----------
    paper : str
        A ``--paper`` name (a key of ``PAPERS``).
    algorithm : str
        The algorithm's name in the paper.
    mode : str
        ``paper...`` (as written) or ``corrected...`` (fedpriv's correction).
    setting : dict
        The claim's parameters (horizon, ε, n_agents, ...), in order.
    relation : NeighboringRelation
        The neighboring relation the claim is stated for.
    claimed : guarantee
        The claimed ``PureDP`` or ``ApproxDP``.
    source : str
        Where the paper states it (section, theorem, figure).
    **reading
        Further :class:`Claim` fields (``reading``, ``reading_support``,
        ``coverage``...).

    Returns
    -------
    Claim
    """
    return Claim(
        paper=PAPERS[paper], algorithm=algorithm, mode=mode, setting=tuple(setting.items()),
        relation=relation, claimed=claimed, source=source, **reading,
    )


