"""Findings: one entry per distinct defect of the four papers, as data.

A finding is a defect, not a row: one defect read under two log bases, at three values of
ε or under two reconstructions of a lost formula is one finding (docs/reference/verdicts.md,
"The headline"). Each :class:`Finding` names the register keys it affects (``fnmatch``
patterns), says where in the paper it lives, and whether the analysis proves it (the
accountant's end-to-end ε or a derivation in the per-paper reference report). Whether the
audit shows it too is computed from a run's results (:func:`audited`): some affected row
has an audit lower bound above the row's reference, which is the claimed ε for a row
under the paper's claim (the audit refutes it) and the mechanism-only ε (0 without a noise
mechanism) for a row outside the claim or without one (more leaks than the noise
accounts for).

``findings.json`` holds one record per finding: ``{id, statement, claims, evidence,
where}`` with ``evidence`` one of ``proved``, ``audited``, ``both``, ``open`` (``claims``: the keys of
the run's rows it affects).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from collections.abc import Iterable

__all__ = [
    "FINDINGS",
    "Finding",
    "as_written",
    "audited",
    "finding_ids",
    "findings_records",
    "headline",
    "verdict_counts",
]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One distinct defect.

    Attributes
    ----------
    id : str
        Stable identifier, ``"<paper>-<short-name>"``.
    statement : str
        One sentence.
    claims : tuple of str
        ``fnmatch`` patterns of the register keys the defect affects.
    where : str
        Where in the paper (and in the reference report) it lives.
    proved : bool
        True when an analysis shows it: an exact value, a derivation or an un-noised
        channel, never an upper bound above a claim (that shows nothing: the finding
        is then ``open`` unless an audit shows it).
    audit_claims : tuple of str or None
        Patterns of the rows whose audit targets this defect (default: :attr:`claims`;
        empty when no audit targets it, e.g. a calibration constant that only the
        analysis sees).
    """

    id: str
    statement: str
    claims: tuple[str, ...]
    where: str
    proved: bool = True
    audit_claims: tuple[str, ...] | None = None

    def audited_by(self, key: str) -> bool:
        """True if the audit of row ``key`` targets this defect.

        Parameters
        ----------
        key : str
            A register key such as ``"feducb/feducb/fig1a/eps0.1"``.

        Returns
        -------
        bool
        """
        patterns = self.claims if self.audit_claims is None else self.audit_claims
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in patterns)

    def affects(self, key: str) -> bool:
        """True if the register key ``key`` matches one of :attr:`claims`.

        Parameters
        ----------
        key : str
            A register key.

        Returns
        -------
        bool
        """
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.claims)


FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="feducb-raw-sync-trigger",
        statement=("FedUCB's adaptive synchronisation is decided by a log-det test on each "
                   "agent's raw local Gram matrix, so the sync and request times the "
                   "controller or neighbours see are un-noised functions of the data "
                   "(ε = ∞ under Definition 1)."),
        claims=("feducb/*/adaptive", "feducb/feducb/fig1a/*", "feducb/feducb/fig1b/M1.5",
                "feducb/feducb/fig1b/MlogT", "feducb/feducb/fig1c/*"),
        where="Alg. 1 line 12, Alg. 3 line 6, Definition 1, Prop. 3 (scope: the Privatizer's releases only)",
    ),
    Finding(
        id="feducb-sensitivity",
        statement=("The Privatizer is calibrated to the add/remove sensitivity L²+1 of one "
                   "(x, y) pair, but Definition 1 replaces a pair, which moves the released "
                   "Gram matrix by up to √2(L²+1) in Frobenius norm; the calibration's "
                   "slack absorbs the factor, so no verdict changes."),
        claims=("feducb/*",),
        where="§4.3 Privatizer calibration (Alg. 2 line 5), Prop. 3, Definition 1 (t-neighbours)",
        audit_claims=(),
    ),
    Finding(
        id="feducb-own-data-between-syncs",
        statement=("Between syncs a FedUCB agent acts on its raw own Gram matrix, so one "
                   "changed (x, y) pair changes its later actions up to the next sync and "
                   "the Privatizer's leaf differs in up to every pair of the batch (B with "
                   "the fixed schedule, ⌈B/γ⌉ per set decentralized), not one: the paper's "
                   "per-observation charge prices the Privatizer on an oblivious stream, "
                   "not the view. Charged for the pairs reached (group privacy scales each "
                   "node's L2 sensitivity by B), the fixed schedule's ε at δ = 10⁻⁶ is B "
                   "times the one-pair μ's (3.10 instead of 0.327 at B = 8); the claims at "
                   "δ = 0.1 still hold. The adaptive schedule's rows are ∞ through the raw "
                   "sync times already."),
        claims=("feducb/feducb/fixed", "feducb/feducb-decentralized/fixed",
                "feducb/feducb/user-at-all-agents"),
        where=("Alg. 1 line 4 ('Set V_i,t ← S_i,t + U_i,t'), lines 8 and 10, eqs. (2)-(3); "
               "Alg. 3 line 5; Remark 3 ('a single differing observation ... and not the "
               "entire message itself, ... which may potentially have O(t) sensitivity'); "
               "Prop. 3"),
    ),
    Finding(
        id="li_song-raw-actions",
        statement=("DDP- and HDP-MAB exploit the arm with the best raw local mean during "
                   "t_delay, so their actions reveal single rewards; Definition 1 protects "
                   "only the messages, so this leak is outside the claim."),
        claims=("li_song/ddp-mab/actions", "li_song/hdp-mab/actions"),
        where="Alg. 2 line 3, Alg. 5 line 11 (local exploitation during t_delay), Definition 1",
    ),
    Finding(
        id="li_song-epsilon-not-guarantee",
        statement=("The privacy level the paper reports, ε (Fig. 4's caption 'different "
                   "privacy level ε', §VII-A1's 'ε = 1 indicates the non-private case'), "
                   "is not the guarantee: the noise Lap(1/(Mε n_r)) makes every message "
                   "exactly Mε-DP, 5 to 50 at Fig. 4's M = 50, as Theorem 1 states."),
        claims=("li_song/cdp-mab/fig4-eps-as-guarantee/*",),
        where="abstract, §I, Fig. 4 caption, §VII-A1 against Theorem 1 and §IV-A1's noise "
              "scale",
    ),
    Finding(
        id="li_song-action-neighbours",
        statement=("Definition 1's histories differ in 'one position', an action-reward "
                   "pair; with the action changed, a sample moves between two arms' epoch "
                   "means, two coordinates of one message shift by up to 1/n_r each, and "
                   "the message is up to 2Mε-DP (at least Mε(2n_1+1)/(n_1+1)), not Mε; "
                   "App. B's proof covers only a changed reward."),
        claims=("li_song/cdp-mab/messages/action-changed",),
        where="§III-B (H_i(t) of action-reward pairs), Definition 1, App. B (proof of "
              "Theorem 1)",
        audit_claims=(),
    ),
    Finding(
        id="gossip_fed_ucb-tree-budget",
        statement=("Fed_UCB's per-node budget ε' = ε/⌈log T⌉ counts the p-sums of one prefix, "
                   "not the released nodes that hold a record. On the view (messages "
                   "ϑ̃(t−1) and actions, t = 1..T: tree prefixes 1..T−1) a record sits in "
                   "⌈log₂T⌉ nodes, so under ⌈log T⌉ read as ⌈ln T⌉ the true ε is "
                   "ε⌈log₂T⌉/⌈ln T⌉: 4/3·ε at T = 16, 10/7·ε at T = 1024 and 600 000 "
                   "(≈1.44ε = ε/ln 2 is only the large-T limit, not a bound: 5/3·ε at "
                   "T = 17-20); under log₂ the view spends "
                   "exactly ε at every T. Under the second reading, where the final "
                   "estimate ϑ̃(T) is published too (prefixes 1..T, ⌊log₂T⌋+1 nodes), "
                   "log₂ gives 5/4·ε at T = 16 and 11/10·ε at T = 1024 (ε at 600 000) and "
                   "ln gives 5/3·ε, 11/7·ε and 10/7·ε."),
        claims=("gossip_fed_ucb/gossip-fed-ucb/paper-loge/*",
                "gossip_fed_ucb/gossip-fed-ucb/paper-log2-final/T16/*",
                "gossip_fed_ucb/gossip-fed-ucb/paper-log2-final/T1024/*",
                "gossip_fed_ucb/gossip-fed-ucb/paper-loge-final/*"),
        where="§4.1 ('no more than ⌈log t⌉ partial sums', 'Set ε' := ε/⌈log T⌉'), Alg. 2-3, "
              "Alg. 4 lines 9 and 19 (outputs ϑ̃(t−1)), Definition 1",
    ),
    Finding(
        id="gossip_fed_ucb-raw-initial-pulls",
        statement=("Fed_UCB releases the initial pulls X(0) raw: the first gossip message "
                   "carries them and the shared counts follow actions chosen on them, a "
                   "leak of private data that Definition 1's stream (t = 1..T) leaves "
                   "outside the claim, and a violation of it under the abstract's reading "
                   "('ε-differential privacy of their local data'), which covers X(0)."),
        claims=("gossip_fed_ucb/gossip-fed-ucb/paper/initial-pulls",
                "gossip_fed_ucb/gossip-fed-ucb/paper/shared-counts",
                "gossip_fed_ucb/gossip-fed-ucb/paper/initial-pulls/local-data",
                "gossip_fed_ucb/gossip-fed-ucb/paper/shared-counts/local-data"),
        where="Alg. 4 line 1 ('Set ϑ̃_i,k(0) = X̃_i,k(0) = X_i,k(0)') and line 19, §4.1, "
              "Definition 1, abstract",
    ),
    Finding(
        id="gossip_fed_ucb-unbounded-rewards",
        statement=("The synthetic experiment feeds rewards μ + N(0, 1) to a tree calibrated "
                   "for rewards in [0, 1], so the sensitivity is unbounded and no finite ε "
                   "holds for the runs behind Fig. 2."),
        claims=("gossip_fed_ucb/gossip-fed-ucb/paper/unbounded-rewards",
                "gossip_fed_ucb/gossip-fed-ucb/paper/fig2b/unbounded-rewards/*"),
        where="§5 synthetic data (rewards μ + N(0, 1)), Fig. 2 caption, §4.1 (rewards in "
              "[0, 1], sensitivity 1)",
    ),
    Finding(
        id="dubey_aamas-raw-own-term",
        statement=("Cooperative UCB as written acts on the agent's raw own mean and "
                   "broadcasts its un-noised pull counts, so every message reveals raw "
                   "rewards (ε = ∞) whatever reconstruction of the lost formulas is used."),
        claims=("dubey_aamas/private-coop-ucb/own-raw/*",
                "dubey_aamas/private-coop-ucb/fig1a/*/own-raw/*"),
        where="§3.3 (own term), Lemma 'Privacy of Outgoing Messages', Remark 'Robustness "
              "to Strategy' (§3.3; the lemma's proof omits the un-noised counts)",
    ),
    Finding(
        id="dubey_aamas-counts-compose",
        statement=("Open, not shown: each message of private cooperative UCB carries pull "
                   "counts that follow the agent's earlier noisy releases, so under the "
                   "adaptive reading of the relation (one reward changed, later actions "
                   "re-derived) message n is priced by the composition of releases 1..n, "
                   "whose upper bound exceeds the per-message claim; no lower bound does "
                   "(the audit's is below the claim), so the rows are unresolved. With the "
                   "actions held fixed, message n costs release n alone."),
        claims=("dubey_aamas/private-coop-ucb/own-noisy/per-message",
                "dubey_aamas/private-coop-ucb/own-noisy/fixed-rule/per-message",
                "dubey_aamas/private-coop-ucb/fig1a/*/own-noisy/per-message"),
        where="Lemma 'Privacy of Outgoing Messages' (§3.2), message contents eq. (6) "
              "(fedpriv's adaptive reading: one reward changed, actions re-derived)",
        proved=False,
        audit_claims=(),
    ),
    Finding(
        id="dubey_aamas-byzantine-not-private",
        statement=("The Byzantine-proof algorithm broadcasts individual raw rewards; the "
                   "paper disclaims privacy for it, so the title's 'private and "
                   "Byzantine-proof' names two separate algorithms, not one."),
        claims=("dubey_aamas/byzantine-coop-ucb/*",),
        where="title, abstract, Alg. 3 / eq. 7, Remark 'Simultaneous Privacy and "
              "Robustness' (§4.2)",
    ),
)
"""Every finding, in report order."""


def finding_ids(key: str) -> tuple[str, ...]:
    """Ids of the findings that affect the register key ``key``.

    Parameters
    ----------
    key : str
        A register key.

    Returns
    -------
    tuple of str
        In the order of :data:`FINDINGS`.
    """
    return tuple(f.id for f in FINDINGS if f.affects(key))


def _shown_by_audit(result) -> bool:
    """True if ``result``'s audit lower bound exceeds the row's reference ε."""
    if result.audit is None:
        return False
    lower = result.audit.epsilon_lower_bound
    if result.claim.coverage == "claim":
        return lower > float(result.claim.claimed.epsilon)
    reference = result.mechanism_epsilon or 0.0
    return math.isfinite(lower) and lower > reference


def audited(finding: Finding, results: Iterable) -> bool:
    """True if some affected row of ``results`` shows the finding in its audit.

    Parameters
    ----------
    finding : Finding
        One finding.
    results : iterable of ClaimResult
        The register rows.

    Returns
    -------
    bool
    """
    return any(_shown_by_audit(r) for r in results if r.key and finding.audited_by(r.key))


def _evidence(finding: Finding, shown: bool) -> str:
    """``both``, ``proved``, ``audited`` or ``open`` (neither a lower bound nor a proof)."""
    if finding.proved:
        return "both" if shown else "proved"
    return "audited" if shown else "open"


def findings_records(results) -> list[dict]:
    """The ``findings.json`` records for the findings that affect some row of ``results``.

    Parameters
    ----------
    results : iterable of ClaimResult
        The register rows.

    Returns
    -------
    list of dict
        ``id``, ``statement``, ``claims`` (the affected keys), ``evidence`` and
        ``where`` of each finding that affects a row.
    """
    results = tuple(results)
    records = []
    for finding in FINDINGS:
        keys = [r.key for r in results if r.key and finding.affects(r.key)]
        if not keys:
            continue
        records.append({"id": finding.id, "statement": finding.statement, "claims": keys,
                        "evidence": _evidence(finding, audited(finding, results)),
                        "where": finding.where})
    return records


def as_written(result) -> bool:
    """True for a row of the paper's algorithm as written (mode ``paper...``); False
    for fedpriv's corrected variants (mode ``corrected...``).

    Parameters
    ----------
    result : ClaimResult
        One register row.

    Returns
    -------
    bool
    """
    return not result.claim.mode.startswith("corrected")


def verdict_counts(results) -> dict[str, dict[str, int]]:
    """Rows per verdict, apart for the papers' claims as written and fedpriv's corrected
    variants: ``{"as_written": {verdict: n}, "corrected": {verdict: n}}``.

    Parameters
    ----------
    results : iterable of ClaimResult
        The register rows.

    Returns
    -------
    dict of str to dict of str to int
    """
    out: dict[str, dict[str, int]] = {"as_written": {}, "corrected": {}}
    for result in results:
        side = out["as_written" if as_written(result) else "corrected"]
        side[result.verdict] = side.get(result.verdict, 0) + 1
    return out


def _counted(counts: dict[str, int], order) -> str:
    return ", ".join(f"{counts[v]} {v}" for v in order if counts.get(v))


def headline(results) -> str:
    """The headline, computed from the findings and the verdicts: findings are counted
    once each (never a sum of rows restating a defect), and the papers' claims as
    written are counted apart from fedpriv's corrected variants.

    Parameters
    ----------
    results : iterable of ClaimResult
        The register rows.

    Returns
    -------
    str
        One paragraph, no trailing newline.
    """
    results = tuple(results)
    records = findings_records(results)
    shown = [r for r in records if r["evidence"] != "open"]
    both = sum(r["evidence"] == "both" for r in records)
    open_ = len(records) - len(shown)
    counts = verdict_counts(results)
    written, corrected = counts["as_written"], counts["corrected"]
    claims = ("violated", "holds", "unresolved")
    n_written = sum(written.get(v, 0) for v in claims)
    n_corrected = sum(corrected.get(v, 0) for v in claims)
    text = (f"{len(shown)} findings ({both} shown by the audit as well as by analysis)"
            + (f" and {open_} open question{'s' if open_ != 1 else ''} (an upper bound "
               "above the claim, no lower bound)" if open_ else "")
            + f". The papers' claims as written, per setting and reading: "
            f"{_counted(written, claims) or 'none'} of {n_written}")
    outside = {v: written.get(v, 0) + corrected.get(v, 0) for v in ("outside-claim", "no-claim")}
    if sum(outside.values()):
        text += (f"; besides, {sum(outside.values())} rows outside any claim "
                 f"({_counted(outside, ('outside-claim', 'no-claim'))})")
    if n_corrected:
        text += (f". fedpriv's corrected variants: {_counted(corrected, claims)} "
                 f"of {n_corrected}")
    return text + "."
