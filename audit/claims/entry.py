"""One entry of the claims register: a claim and the recipes that evaluate it.

See :mod:`fedpriv.audit.claims.register` for the register itself and what each field
means to ``fedpriv verify``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.family import family
from fedpriv.audit.engine.views import View

__all__ = [
    "SETTING_TYPES",
    "AccountantRecipe",
    "AccountantResult",
    "AnalyticLowerRecipe",
    "AuditRecipe",
    "DeclarationRecipe",
    "MechanismRecipe",
    "MechanismResult",
    "RegisteredClaim",
    "SearchRecipe",
    "check_setting",
    "check_shared_audit",
    "ignores_setting",
    "make_claim",
    "reads_setting",
    "setting_reads",
]


class AccountantResult(NamedTuple):
    """What an accountant recipe returns for a claim (a tuple: ``route, eps, f = ...``).

    Attributes
    ----------
    route : str
        The evaluation route of the tightest ε (``"pure"``, ``"pld"``, ...), or
        ``"nonprivate"`` when a release is un-noised.
    epsilon : float
        ε at the claim's δ, in nats; ∞ when raw data reaches an output.
    findings : tuple of str
        What the accountant found on the way (unpriced channels, notes), in order.
    """

    route: str
    epsilon: float
    findings: tuple[str, ...]


class MechanismResult(NamedTuple):
    """What a mechanism recipe returns: the noise mechanisms' ε alone.

    Attributes
    ----------
    route : str
        The evaluation route of the tightest ε.
    epsilon : float
        ε at the claim's δ, in nats.
    """

    route: str
    epsilon: float


AccountantRecipe = Callable[[Claim], AccountantResult]
AuditRecipe = Callable  # (claim, AuditBudget, SeedSequence) -> EndToEndAudit
MechanismRecipe = Callable[[Claim], MechanismResult]
AnalyticLowerRecipe = Callable[[Claim], "float | None"]
DeclarationRecipe = Callable  # (claim, SeedSequence) -> DeclarationCheck
SearchRecipe = Callable  # claim -> NeighborSearch


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredClaim:
    """One claim of the register and how to evaluate it.

    Attributes
    ----------
    key : str
        Unique, stable identifier, ``"<paper>/<algorithm>/<mode>/..."``.
    claim : Claim
    accountant : AccountantRecipe
        ``claim -> AccountantResult(route, epsilon, findings)`` at the claimed δ.
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
        ``claim -> MechanismResult(route, ε)`` of the noise alone (module docstring).
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
        Checked, not asserted (:func:`check_shared_audit`, run when the register is
        built): the list must be exactly the entries that differ, and the shared audit
        recipe must declare the entries it reads (:func:`reads_setting`, or those it
        does not, :func:`ignores_setting`), none of the listed ones read.
    analytic_lower : AnalyticLowerRecipe or None
        ``claim -> ε`` (or ``None``): an exact analytic value of the view's ε, a lower
        bound the verdict may rest on (e.g. the accountant's lower bracket where it is
        tight: pure Laplace releases composed exactly). ``None``: no such value.
    view : View or None
        What the claim protects (:class:`fedpriv.audit.engine.views.View`): a family
        outside the package declares it here; ``None`` takes the view of
        :func:`fedpriv.audit.claims.register.view_of` for the key (the built-in papers).
    declarations : DeclarationRecipe or None
        ``(claim, seed) -> DeclarationCheck``: coupled runs on neighbouring pairs that
        check the declared sensitivities and disjoint levels the accountant's bound
        rests on (:func:`fedpriv.audit.engine.declarations.check_declarations`), called
        with the row's audit seed. A contradicted declaration means the row is never
        ``holds``. ``None``: derived from ``search`` when the row has one.
    search : SearchRecipe or None
        ``claim -> NeighborSearch`` (:class:`fedpriv.audit.engine.neighbor_search.NeighborSearch`):
        the run function, reward table, domain, records and boundaries of the
        worst-neighbour search. Without a ``declarations`` recipe, ``fedpriv verify``
        checks the declarations on the search's candidates
        (``check_declarations(**search(claim).arguments, seed=seed)``); the audit may
        use it too (``search(claim).audit(...)``).

    Notes
    -----
    A row of a family registered outside the package (claims file or entry point)
    with neither ``declarations`` nor ``search`` is never ``holds`` on its
    accountant's bound: the bound rests on declarations nothing checked, so the row
    is ``unresolved`` (a lower bound above the claim still gives ``violated``). The
    built-in papers' rows (``audit/families/``) run no such check: their releases
    are charged by fedpriv's own algorithms, whose declared sensitivities and
    disjoint levels fedpriv's tests check.
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
    declarations: DeclarationRecipe | None = None
    search: SearchRecipe | None = None

    @property
    def paper(self) -> str:
        """The ``--paper`` name."""
        return self.key.split("/", 1)[0]


def make_claim(
    paper: str,
    algorithm: str,
    mode: str,
    setting: dict,
    neighboring_relation,
    claimed,
    source,
    **reading,
) -> Claim:
    """A :class:`Claim` of the paper with ``--paper`` name ``paper``.

    Parameters
    ----------
    paper : str
        A registered family's key; the claim's ``paper`` field is that family's
        ``title`` (:func:`fedpriv.audit.claims.family.family`).
    algorithm : str
        The algorithm's name in the paper.
    mode : str
        ``paper...`` (as written) or ``corrected...`` (fedpriv's correction).
    setting : dict
        The claim's parameters (horizon, ε, n_agents, ...), in order.
    neighboring_relation : NeighboringRelation
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

    Raises
    ------
    ValueError
        If ``paper`` names no registered family.
    """
    return Claim(
        paper=family(paper).title,
        algorithm=algorithm,
        mode=mode,
        setting=tuple(setting.items()),
        neighboring_relation=neighboring_relation,
        claimed=claimed,
        source=source,
        **reading,
    )


#: Setting entries any family may use, with their types: the field-standard names
#: (CONTRIBUTING.md, Naming: agents, arms, horizon, privacy, context dimension, message
#: life, contamination rate, communication graph). A family declares its other entries
#: with their types (``Family.setting_fields``).
SETTING_TYPES: dict[str, type] = {
    "n_agents": int,
    "n_arms": int,
    "horizon": int,
    "epsilon": float,
    "delta": float,
    "dim": int,
    "gamma": int,
    "contamination": float,
    "graph": str,
}


def check_setting(setting: Any, declared: Mapping[str, type], *, where: str) -> None:
    """Check every entry of a claim's setting against its declared type.

    Parameters
    ----------
    setting : tuple of (str, value) pairs
        ``Claim.setting``.
    declared : mapping of str to type
        The family's own entries (``Family.setting_fields``), beside
        :data:`SETTING_TYPES`.
    where : str
        Names the row in the error message.

    Raises
    ------
    TypeError
        If an entry is undeclared, or its value is not of the declared type (``bool``
        is not an ``int``; an ``int`` is not a ``float``: settings hold what the run
        used).
    """
    for name, value in setting:
        expected = SETTING_TYPES.get(name, declared.get(name))
        if expected is None:
            raise TypeError(
                f"{where}: setting entry {name!r} is not declared; declare its type in the "
                f"family's setting_fields (standard entries: {', '.join(SETTING_TYPES)})."
            )
        if type(value) is not expected:
            raise TypeError(
                f"{where}: setting entry {name!r} must be {expected.__name__}, got "
                f"{type(value).__name__} ({value!r})."
            )


def reads_setting(*names: str) -> Callable[[Callable], Callable]:
    """Declare, and enforce, the setting entries an audit recipe reads.

    The decorated recipe ``(claim, budget, seed, ...)`` is called with a copy of
    ``claim`` whose setting holds only ``names`` (the other entries are removed), so a
    read of an undeclared entry raises :class:`KeyError` wherever the recipe runs: the
    declaration (:func:`setting_reads`) is what the audit reads, and
    :func:`check_shared_audit` may rely on it. An undeclared entry read with
    ``dict.get`` and a default falls back to that default; declare every entry the
    recipe reads.

    Parameters
    ----------
    *names : str
        The setting entries the recipe reads (non-empty strings).

    Returns
    -------
    callable
        The decorator; the wrapped recipe carries ``setting_reads`` (a frozenset).

    Raises
    ------
    ValueError
        If a name is empty or not a string.
    """
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"`names` must be non-empty setting entry names, got {names!r}.")
    reads = frozenset(names)

    def decorate(recipe: Callable) -> Callable:
        restricted = _restricted(recipe, lambda k: k in reads)
        restricted.setting_reads = reads  # type: ignore[attr-defined]
        return restricted

    return decorate


def ignores_setting(*names: str) -> Callable[[Callable], Callable]:
    """Declare, and enforce, the setting entries an audit recipe does not read.

    The complement of :func:`reads_setting`, for recipes that read most of a long
    setting: the wrapped recipe is called with ``names`` removed from the claim's
    setting, so reading one of them raises :class:`KeyError` wherever the recipe runs.

    Parameters
    ----------
    *names : str
        The setting entries the recipe does not read (non-empty strings).

    Returns
    -------
    callable
        The decorator; the wrapped recipe carries ``setting_ignores`` (a frozenset).

    Raises
    ------
    ValueError
        If a name is empty or not a string.
    """
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"`names` must be non-empty setting entry names, got {names!r}.")
    ignored = frozenset(names)

    def decorate(recipe: Callable) -> Callable:
        restricted = _restricted(recipe, lambda k: k not in ignored)
        restricted.setting_ignores = ignored  # type: ignore[attr-defined]
        return restricted

    return decorate


def _restricted(recipe: Callable, keep: Callable[[str], bool]) -> Callable:
    """``recipe`` called with only the setting entries whose names ``keep`` accepts."""

    @functools.wraps(recipe)
    def restricted(claim: Claim, *args: Any, **kwargs: Any) -> Any:
        setting = tuple((k, v) for k, v in claim.setting if keep(k))
        return recipe(dataclasses.replace(claim, setting=setting), *args, **kwargs)

    return restricted


def setting_reads(recipe: Callable | None, setting: Mapping[str, Any]) -> frozenset[str] | None:
    """The entries of ``setting`` that ``recipe`` may read, by its declaration.

    Parameters
    ----------
    recipe : callable or None
        An audit recipe, decorated with :func:`reads_setting` or :func:`ignores_setting`.
    setting : mapping
        The entries in question (e.g. a claim's ``setting_dict()``).

    Returns
    -------
    frozenset of str or None
        ``None`` when the recipe declares nothing (it may read every entry).
    """
    reads = getattr(recipe, "setting_reads", None)
    if reads is not None:
        return frozenset(setting) & reads
    ignored = getattr(recipe, "setting_ignores", None)
    if ignored is not None:
        return frozenset(setting) - ignored
    return None


def check_shared_audit(entry: RegisteredClaim, source: RegisteredClaim) -> None:
    """Check that ``entry`` may take over the audit of ``source`` (``shared_audit``).

    The two rows must be the same algorithm under the same neighbouring relation at the
    same claimed δ (their readings and claimed ε may differ: the audit measures the
    view, not the claim); ``entry.shared_audit_differs`` must name exactly the setting entries in
    which the two settings differ; and every such entry must lie outside the entries
    the source's audit recipe declares it reads (:func:`reads_setting` or
    :func:`ignores_setting`, which enforce the declaration when the recipe runs). A row that differs in no entry needs no
    declaration.

    Parameters
    ----------
    entry : RegisteredClaim
        The row that shares (``entry.shared_audit == source.key``).
    source : RegisteredClaim
        The audited row.

    Raises
    ------
    ValueError
        If ``source`` has no audit recipe or is not ``entry.shared_audit``, the claims
        differ outside the setting, the declared list is not the differing entries, the
        settings differ and the recipe declares no reads, or a differing entry is read.
    """
    where = f"row {entry.key!r} (audit of {source.key!r})"
    if entry.shared_audit != source.key or source.audit is None:
        raise ValueError(f"{where}: `source` must be the audited row named by `shared_audit`.")
    a, b = entry.claim, source.claim
    for field in ("algorithm", "neighboring_relation", "claimed_delta"):
        if getattr(a, field) != getattr(b, field):
            raise ValueError(
                f"{where}: the claims differ in {field} ({getattr(a, field)!r} vs "
                f"{getattr(b, field)!r}); an audit is shared only by one algorithm under "
                "one relation at one δ."
            )
    mine, theirs = a.setting_dict(), b.setting_dict()
    missing = object()
    differing = {
        k for k in mine.keys() | theirs.keys() if mine.get(k, missing) != theirs.get(k, missing)
    }
    declared = set(entry.shared_audit_differs)
    if declared != differing:
        raise ValueError(
            f"{where}: `shared_audit_differs` must name exactly the differing setting "
            f"entries {sorted(differing)}, got {sorted(declared)}."
        )
    if not differing:
        return
    reads = setting_reads(source.audit, {k: None for k in differing})
    if reads is None:
        raise ValueError(
            f"{where}: the settings differ in {sorted(differing)} but the audit recipe "
            "declares no setting reads (decorate it with reads_setting or ignores_setting)."
        )
    read = sorted(differing & reads)
    if read:
        raise ValueError(
            f"{where}: the audit reads {read}, in which the settings differ: it is not "
            "this row's audit."
        )
