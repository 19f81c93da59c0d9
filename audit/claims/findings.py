"""Findings: one entry per distinct defect of the four papers, as data.

A finding is a defect, not a row: one defect read under two log bases, at three values of
ε or under two reconstructions of a lost formula is one finding (DESIGN.md, "Verdict
semantics"). Each :class:`Finding` names the register keys it affects (``fnmatch``
patterns), says where in the paper it lives, and whether the analysis proves it (the
accountant's end-to-end ε or a derivation in the per-paper reference report). Whether the
audit shows it too is computed from a run's results (:func:`audited`): some affected row
has an audit lower bound above the row's reference, which is the claimed ε for a row
under the paper's claim (the audit refutes it) and the mechanism-only ε (0 without a noise
mechanism) for a row outside the claim or without one (more leaks than the noise
accounts for).

``findings.json`` holds one record per finding: ``{id, statement, claims, evidence,
where}`` with ``evidence`` one of ``proved``, ``audited``, ``both`` (``claims``: the keys of
the run's rows it affects).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from collections.abc import Iterable

__all__ = ["FINDINGS", "Finding", "audited", "finding_ids", "findings_records", "headline"]


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
        True when the analysis shows it (accountant or derivation).
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
        """True if the audit of row ``key`` targets this defect."""
        patterns = self.claims if self.audit_claims is None else self.audit_claims
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in patterns)

    def affects(self, key: str) -> bool:
        """True if the register key ``key`` matches one of :attr:`claims`."""
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.claims)


FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="feducb-raw-sync-trigger",
        statement=("FedUCB's adaptive synchronisation is decided by a log-det test on each "
                   "agent's raw local Gram matrix, so the sync and request times the "
                   "controller or neighbours see are un-noised functions of the data "
                   "(ε = ∞ under Definition 1)."),
        claims=("feducb/*/adaptive", "feducb/feducb/fig1a/*"),
        where="Alg. 1 line 12, Alg. 3 line 6, Definition 1, Prop. 3 (feducb.md §3.6 item 11)",
    ),
    Finding(
        id="feducb-sensitivity",
        statement=("The Privatizer is calibrated to the add/remove sensitivity L²+1 of one "
                   "(x, y) pair, but Definition 1 replaces a pair, which moves the released "
                   "Gram matrix by up to √2(L²+1) in Frobenius norm; the calibration's "
                   "slack absorbs the factor, so no verdict changes."),
        claims=("feducb/*",),
        where="§4.3 Privatizer calibration, Prop. 3, Definition 1 (feducb.md §3.6 items 4-5)",
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
        where="local exploitation during t_delay, Definition 1 (li_song.md §3.5 P7)",
    ),
    Finding(
        id="gossip_fed_ucb-tree-budget",
        statement=("Fed_UCB's per-node budget ε' = ε/⌈log T⌉ counts the p-sums of one prefix, "
                   "not the ⌊log₂T⌋+1 released nodes that hold a record, so the true ε is "
                   "ε(⌊log₂T⌋+1)/⌈log₂T⌉ under log₂ (above ε at powers of two) and up to "
                   "≈1.44ε under ln."),
        claims=("gossip_fed_ucb/gossip-fed-ucb/paper-log2/T16/*",
                "gossip_fed_ucb/gossip-fed-ucb/paper-log2/T1024/*",
                "gossip_fed_ucb/gossip-fed-ucb/paper-loge/*"),
        where="§4.1 ('no more than ⌈log t⌉ partial sums', ε' := ε/⌈log T⌉), Alg. 3-4 "
              "(gossip.md §3.4 items 1-2)",
    ),
    Finding(
        id="gossip_fed_ucb-raw-initial-pulls",
        statement=("Fed_UCB releases the initial pulls X(0) raw: the first gossip message "
                   "carries them and the shared counts follow actions chosen on them, a "
                   "leak of private data that Definition 1's stream (t = 1..T) leaves "
                   "outside the claim."),
        claims=("gossip_fed_ucb/gossip-fed-ucb/paper/initial-pulls",
                "gossip_fed_ucb/gossip-fed-ucb/paper/shared-counts"),
        where="Alg. 4 line 1, §4.1, Definition 1, abstract (gossip.md §3.4 item 3)",
    ),
    Finding(
        id="gossip_fed_ucb-unbounded-rewards",
        statement=("The synthetic experiment feeds rewards μ + N(0, 1) to a tree calibrated "
                   "for rewards in [0, 1], so the sensitivity is unbounded and no finite ε "
                   "holds for the runs behind Fig. 2."),
        claims=("gossip_fed_ucb/gossip-fed-ucb/paper/unbounded-rewards",),
        where="§5 synthetic data, Fig. 2 caption (gossip.md §3.4 item 4)",
    ),
    Finding(
        id="dubey_aamas-raw-own-term",
        statement=("Cooperative UCB as written acts on the agent's raw own mean and "
                   "broadcasts its un-noised pull counts, so every message reveals raw "
                   "rewards (ε = ∞) whatever reconstruction of the lost formulas is used."),
        claims=("dubey_aamas/private-coop-ucb/own-raw/*",),
        where="§3.3 (own term), Lemma 'Privacy of Outgoing Messages', Remark 'Robustness "
              "to Strategy' (byzantine.md §3.4, §3.7, E4)",
    ),
    Finding(
        id="dubey_aamas-counts-compose",
        statement=("Each message of private cooperative UCB carries pull counts that follow "
                   "the agent's earlier noisy releases, so message n costs the composition "
                   "of releases 1..n, not the ε of release n alone that the per-message "
                   "lemma prices."),
        claims=("dubey_aamas/private-coop-ucb/own-noisy/per-message",
                "dubey_aamas/private-coop-ucb/own-noisy/fixed-rule/per-message"),
        where="Lemma 'Privacy of Outgoing Messages', §3.3 message contents (byzantine.md "
              "§3.4; relation N2: one reward changed, actions re-derived)",
        audit_claims=(),
    ),
    Finding(
        id="dubey_aamas-byzantine-not-private",
        statement=("The Byzantine-proof algorithm broadcasts individual raw rewards; the "
                   "paper disclaims privacy for it, so the title's 'private and "
                   "Byzantine-proof' names two separate algorithms, not one."),
        claims=("dubey_aamas/byzantine-coop-ucb/*",),
        where="title, abstract, Alg. 3 / eq. 7, Remark 'Simultaneous Privacy and "
              "Robustness' (byzantine.md §3.7, §4.2)",
    ),
)
"""Every finding, in report order."""


def finding_ids(key: str) -> tuple[str, ...]:
    """Ids of the findings that affect the register key ``key``."""
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
    """True if some affected row of ``results`` shows the finding in its audit."""
    return any(_shown_by_audit(r) for r in results if r.key and finding.audited_by(r.key))


def findings_records(results) -> list[dict]:
    """The ``findings.json`` records for the findings that affect some row of ``results``."""
    results = tuple(results)
    records = []
    for finding in FINDINGS:
        keys = [r.key for r in results if r.key and finding.affects(r.key)]
        if not keys:
            continue
        shown = audited(finding, results)
        evidence = ("both" if finding.proved and shown
                    else "proved" if finding.proved else "audited")
        records.append({"id": finding.id, "statement": finding.statement, "claims": keys,
                        "evidence": evidence, "where": finding.where})
    return records


def headline(results) -> str:
    """One sentence computed from the findings: never a sum of rows restating a defect."""
    results = tuple(results)
    records = findings_records(results)
    both = sum(r["evidence"] == "both" for r in records)
    under_claim = [r for r in results if r.claim.coverage == "claim"]
    holds = sum(r.verdict == "holds" for r in under_claim)
    return (f"{len(records)} findings, {both} of them shown by the audit as well as by "
            f"analysis; {holds} of the {len(under_claim)} claims under the papers' own "
            "definitions hold (a claim is counted once per setting and reading).")
