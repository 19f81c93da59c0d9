"""Verdict taxonomy, end-to-end accountant column and findings, checked on the register.

Every row is assembled from its accountant recipe (no audit: deterministic and fast) with
the same function ``fedpriv verify`` uses, so these tests see the register as it is.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from fedpriv.audit.claims.claim import COVERAGES, VERDICTS, decide_verdict
from fedpriv.audit.claims.findings import (
    FINDINGS,
    as_written,
    findings_records,
    headline,
    verdict_counts,
)
from fedpriv.audit.claims.register import REGISTER
from fedpriv.audit.claims.report import write_claims_report
from fedpriv.audit.claims.verify import ClaimsConfig, ClaimsReport, assemble_result
from fedpriv.audit.estimators import EpsilonLowerBound
from hypothesis import given
from hypothesis import strategies as st


def _bound(value: float) -> EpsilonLowerBound:
    return EpsilonLowerBound(
        epsilon_lower_bound=value,
        confidence=0.95,
        n_samples=100,
        n_samples_d=100,
        n_samples_d_prime=100,
        threshold=1.0,
        direction="D>D'",
        n_tests=2,
        delta=0.0,
        count_d=50,
        count_d_prime=10,
    )


@pytest.fixture(scope="module")
def rows():
    """Every register row, accountant side only (as ``verify`` assembles it)."""
    out = []
    for entry in REGISTER:
        route, epsilon, notes = entry.accountant(entry.claim)
        out.append((entry, epsilon, assemble_result(entry, route, epsilon, notes)))
    return out


def test_every_row_has_a_verdict_reading_mechanism_and_finding_ids(rows):
    known = {f.id for f in FINDINGS}
    for entry, _, result in rows:
        record = result.to_dict()
        assert record["verdict"] in VERDICTS, entry.key
        assert record["coverage"] in COVERAGES and record["reading"].strip(), entry.key
        assert "mechanism_epsilon" in record and "tightness" in record, entry.key
        assert set(record["finding_ids"]) <= known, entry.key
        if result.verdict == "violated" or math.isinf(result.accountant_epsilon):
            assert record["finding_ids"], entry.key  # every defect shown is a named finding
        json.dumps(record, allow_nan=False)


def test_no_violated_row_without_a_claim_under_the_papers_definition(rows):
    for entry, _, result in rows:
        if result.verdict in ("violated", "holds", "unresolved"):
            assert entry.claim.coverage == "claim", entry.key
        else:
            assert result.verdict == entry.claim.coverage, entry.key


@given(
    claimed=st.floats(0.01, 100),
    accountant=st.floats(0, 1e6) | st.just(math.inf),
    lower=st.none() | st.floats(0, 1e3),
    coverage=st.sampled_from(["outside-claim", "no-claim"]),
)
def test_rows_outside_a_claim_are_never_compared_with_it(claimed, accountant, lower, coverage):
    bound = None if lower is None else _bound(lower)
    verdict, evidence = decide_verdict(claimed, accountant, bound, coverage=coverage)
    assert verdict == coverage and "claimed" not in evidence


def test_decide_verdict_rejects_an_unknown_coverage():
    with pytest.raises(ValueError, match="`coverage` must be one of claim, outside-claim"):
        decide_verdict(1.0, 1.0, None, coverage="maybe")


def test_accountant_column_is_end_to_end_with_the_channel_named(rows):
    for entry, recipe_epsilon, result in rows:
        if math.isinf(recipe_epsilon):  # no unnamed infinity
            # a raw channel (∞ both ways), or an unpriced channel named in the notes (∞
            # as an upper bound only: no lower bound from it)
            unpriced = result.accountant_route == "unpriced" and any(
                n.startswith("upper bound ∞:") for n in result.notes
            )
            assert entry.raw_channel or unpriced, entry.key
        if entry.raw_channel:
            assert math.isinf(result.accountant_epsilon), entry.key
            assert entry.raw_channel in result.evidence or result.verdict != "violated"
        else:
            assert result.accountant_epsilon == recipe_epsilon, entry.key
        if result.mechanism_epsilon is not None:
            assert result.mechanism_epsilon <= result.accountant_epsilon, entry.key


def test_feducb_raw_channels_match_the_algorithms_own_ledger(rows):
    # The centralized algorithm's ledger names the sync channel exactly when the register
    # declares it (adaptive schedule), so the declaration is not hand-waved. The Fig. 1
    # rows (T = 10⁷) are priced from the calibration, not from a run's ledger.
    for entry, _, result in rows:
        if entry.key.startswith("feducb/feducb/") and "/fig1" not in entry.key:
            named = any("unpriced channel" in note for note in result.notes)
            assert named == bool(entry.raw_channel), entry.key


def test_vacuous_delta_reports_epsilon_at_1e6(rows):
    vacuous = [r for _, _, r in rows if r.delta_is_vacuous]
    assert any(r.key == "feducb/feducb/fixed" for r in vacuous)
    for result in vacuous:
        record = result.to_dict()
        mech = record["mechanism_epsilon_at_1e-6"]
        assert isinstance(mech, float) and 0 < mech < math.inf, result.key
        # end to end: ∞ on a raw channel; otherwise the view's accountant, which charges
        # adaptivity (FedUCB's fixed schedule: B pairs per leaf) and is never below the
        # mechanism's one-pair price
        if result.raw_channel or result.accountant_route == "unpriced":
            assert record["epsilon_at_1e-6"] == "inf", result.key
        else:
            assert record["epsilon_at_1e-6"] >= mech, result.key
        assert "vacuous" in result.evidence
    by_key = {r.key: r for r in vacuous}
    for key in ("feducb/feducb/fixed", "feducb/feducb-decentralized/fixed"):
        row = by_key[key]
        assert row.epsilon_at_1e6 > row.mechanism_epsilon_at_1e6, key
    assert by_key["feducb/feducb/fixed"].mechanism_epsilon_at_1e6 == pytest.approx(0.327, abs=1e-3)
    assert by_key["feducb/feducb/fixed"].epsilon_at_1e6 == pytest.approx(3.1025, abs=1e-3)
    for _, _, result in rows:
        if not result.delta_is_vacuous:
            assert "epsilon_at_1e-6" not in result.to_dict()


def test_tightness_is_bound_over_end_to_end_epsilon(rows):
    by_key = {r.key: r for _, _, r in rows}
    # The final-estimate reading of T = 16 (5 nodes, b = 4): end-to-end ε 1.25.
    fixed = dataclasses.replace(
        by_key["gossip_fed_ucb/gossip-fed-ucb/paper-log2-final/T16/eps1"], audit=_bound(1.0)
    )
    assert fixed.tightness == pytest.approx(1.0 / 1.25)
    view = dataclasses.replace(
        by_key["gossip_fed_ucb/gossip-fed-ucb/paper-log2/T16/eps1"], audit=_bound(0.9)
    )
    assert view.tightness == pytest.approx(0.9)  # the view spends exactly ε = 1
    raw = dataclasses.replace(
        by_key["dubey_aamas/private-coop-ucb/own-raw/per-message"], audit=_bound(5.0)
    )
    assert raw.tightness is None  # end-to-end ε is ∞
    assert dataclasses.replace(fixed, audit=_bound(0.0)).tightness is None


def test_every_finding_affects_a_registered_claim():
    keys = [entry.key for entry in REGISTER]
    for finding in FINDINGS:
        assert any(finding.affects(key) for key in keys), finding.id
    assert len({f.id for f in FINDINGS}) == len(FINDINGS)


def test_headline_counts_findings_not_rows(rows):
    results = [r for _, _, r in rows]
    records = findings_records(results)
    text = headline(results)
    shown = [r for r in records if r["evidence"] != "open"]
    assert text.startswith(f"{len(shown)} findings")
    # A row restating a defect under another reading adds no finding.
    extra = dataclasses.replace(results[0], key="feducb/feducb-decentralized/adaptive/copy")
    assert extra.key and any(f.affects(extra.key) for f in FINDINGS)
    assert len(findings_records(results + [extra])) == len(records)
    for record in records:
        assert len(record["claims"]) == len(set(record["claims"]))


def test_evidence_is_both_only_when_the_targeted_audit_shows_it(rows):
    results = {r.key: r for _, _, r in rows}
    key = "gossip_fed_ucb/gossip-fed-ucb/paper-loge/T16/eps1"  # 4/3 on the view
    without = findings_records(results.values())
    tree = next(f for f in without if f["id"] == "gossip_fed_ucb-tree-budget")
    assert tree["evidence"] == "proved"
    results[key] = dataclasses.replace(results[key], audit=_bound(1.2))
    shown = next(
        f for f in findings_records(results.values()) if f["id"] == "gossip_fed_ucb-tree-budget"
    )
    assert shown["evidence"] == "both"
    # Under log2 the view holds: its rows are not the finding's.
    tree = next(f for f in FINDINGS if f.id == "gossip_fed_ucb-tree-budget")
    assert not tree.affects("gossip_fed_ucb/gossip-fed-ucb/paper-log2/T16/eps1")
    assert not tree.affects("gossip_fed_ucb/gossip-fed-ucb/paper-log2/T1024/eps1")
    assert tree.affects("gossip_fed_ucb/gossip-fed-ucb/paper-log2-final/T16/eps1")
    assert "4/3·ε" in tree.statement and "10/7·ε" in tree.statement
    # The sensitivity finding is not what the sync-time audit targets.
    sync = "feducb/feducb/adaptive"
    results[sync] = dataclasses.replace(results[sync], audit=_bound(7.0))
    sens = next(f for f in findings_records(results.values()) if f["id"] == "feducb-sensitivity")
    assert sens["evidence"] == "proved"


def test_report_writes_findings_json_and_findings_first(rows, tmp_path):
    results = tuple(r for _, _, r in rows)
    report = ClaimsReport(
        config=ClaimsConfig(workers=1), seed_entropy=0, results=results, seconds=0.0
    )
    write_claims_report(report, tmp_path)
    findings = json.loads((tmp_path / "findings.json").read_text())
    assert findings and all(
        set(f) == {"id", "statement", "claims", "evidence", "where"} for f in findings
    )
    assert all(f["evidence"] in ("proved", "audited", "both", "open") for f in findings)
    text = (tmp_path / "claims.md").read_text()
    assert text.index("## Findings") < text.index("## Rows")
    assert headline(results) in text
    records = json.loads((tmp_path / "claims.json").read_text())
    assert len(records) == len(results)


def test_claims_md_keeps_one_short_line_per_row_and_the_evidence_below(rows, tmp_path):
    import re

    from fedpriv.audit.claims.statements import statement

    results = tuple(r for _, _, r in rows)
    report = ClaimsReport(
        config=ClaimsConfig(workers=1), seed_entropy=0, results=results, seconds=0.0
    )
    write_claims_report(report, tmp_path)
    text = (tmp_path / "claims.md").read_text()
    table = text[text.index("## Rows") : text.index("## Row details")]
    lines = [l for l in table.splitlines() if l.startswith("| `")]
    assert len(lines) == len(results)
    details = text[text.index("## Row details") :]
    for result, line in zip(results, lines):
        cells = line.split(" | ")
        assert len(cells) == 6, line  # key, statement, claimed, verdict, accountant, audit
        assert line.startswith(f"| `{result.key}`") and f"**{result.verdict}**" in line
        assert statement(result.claim, result.key) in line
        assert len(line) < 700, (result.key, len(line))  # the evidence is not in the table
        assert result.evidence not in line
        # The key links to its anchored detail section, which holds the evidence.
        anchor = re.search(r"\(#(row-[a-z0-9-]+)\)", line).group(1)
        heading = f'### <a id="{anchor}"></a>`{result.key}`'
        assert heading in details, heading
        section = details[details.index(heading) :].split("\n### ")[0]
        assert result.evidence in section
    anchors = re.findall(r'<a id="(row-[a-z0-9-]+)">', details)
    assert len(anchors) == len(set(anchors)) == len(results)
    records = json.loads((tmp_path / "claims.json").read_text())
    assert all(r["statement"] == statement(res.claim, res.key) for r, res in zip(records, results))


def test_headline_counts_the_papers_claims_apart_from_corrected_variants(rows):
    results = [r for _, _, r in rows]
    counts = verdict_counts(results)
    text = headline(results)
    claims = ("violated", "holds", "unresolved")
    written = [r for r in results if as_written(r) and r.verdict in claims]
    corrected = [r for r in results if not as_written(r) and r.verdict in claims]
    assert written and corrected  # both kinds are registered
    assert all(r.claim.mode.startswith("paper") for r in written)
    assert all(r.claim.mode.startswith("corrected") for r in corrected)
    assert "as written, per setting and reading: " in text
    assert f" of {len(written)}" in text and f" of {len(corrected)}." in text
    for verdict in claims:
        n = counts["as_written"].get(verdict, 0)
        assert sum(r.verdict == verdict for r in written) == n
    # A corrected variant that holds is never counted as a paper's claim that holds.
    held = counts["as_written"].get("holds", 0)
    assert f"{held} holds of {len(written)}" in text or f"{held} holds, " in text


def test_no_claim_rows_print_no_claimed_epsilon(rows, tmp_path):
    results = tuple(r for _, _, r in rows)
    no_claim = [r for r in results if r.claim.coverage == "no-claim"]
    assert no_claim
    for result in no_claim:
        assert result.to_dict()["claimed"] is None
        assert "claimed" not in result.evidence
    report = ClaimsReport(
        config=ClaimsConfig(workers=1), seed_entropy=0, results=results, seconds=0.0
    )
    write_claims_report(report, tmp_path)
    text = (tmp_path / "claims.md").read_text()
    for result in no_claim:
        line = next(l for l in text.splitlines() if l.startswith(f"| `{result.key}`"))
        assert "— (no claim)" in line


def test_per_message_coop_rows_are_unresolved_on_an_upper_bound_alone(rows):
    # Basic composition gives 5.92 > 0.683; an audit bound below the claim (0.52) does not
    # make it violated: an upper bound above a claim shows nothing.
    by_key = {r.key: r for _, _, r in rows}
    key = "dubey_aamas/private-coop-ucb/own-noisy/per-message"
    entry = next(e for e, _, _ in rows if e.key == key)
    route, epsilon, notes = entry.accountant(entry.claim)
    from fedpriv.audit.claims.verify import assemble_result

    result = assemble_result(entry, route, epsilon, notes, bound=_bound(0.52))
    assert result.accountant_epsilon > result.claim.claimed.epsilon
    assert result.verdict == "unresolved"
    assert "relation read as adaptive" in by_key[key].claim.reading


def test_every_row_declares_the_view_it_protects(rows):
    from fedpriv.audit.claims.register import view_of

    for entry, _, result in rows:
        view = view_of(entry.key)  # raises KeyError for a row without a view
        assert result.view is view, entry.key
        record = result.to_dict()["view"]
        assert record["observer"] and record["outputs"] and record["definition"], entry.key
    # Fed_UCB's neighbours see the prefixes 1..T-1 only (Alg. 4 sends ϑ̃(t−1)).
    fed = view_of("gossip_fed_ucb/gossip-fed-ucb/paper-log2/T16/eps1")
    assert "never the prefix at T" in fed.outputs[0]


def test_every_decided_row_records_the_lower_bound_it_rests_on(rows):
    # violated needs a lower bound above the claim: claims.json carries it as a field
    for entry, _, result in rows:
        record = json.loads(json.dumps(result.to_dict()))
        lower = record["lower_bound"]
        if result.verdict == "violated":
            assert lower is not None, entry.key
            epsilon = math.inf if lower["epsilon"] == "inf" else lower["epsilon"]
            assert epsilon > entry.claim.claimed.epsilon, entry.key
        if lower is not None:
            assert lower["source"] in ("audit", "un-noised channel", "analytic")
            assert lower["where"] and 0 <= lower["delta"] < 1
        if entry.raw_channel and math.isinf(result.accountant_epsilon):
            assert lower == {
                "epsilon": "inf",
                "delta": entry.claim.claimed_delta,
                "source": "un-noised channel",
                "where": entry.raw_channel,
            }
    analytic = [r for e, _, r in rows if e.analytic_lower is not None and not e.raw_channel]
    assert analytic and all(r.to_dict()["lower_bound"]["source"] == "analytic" for r in analytic)


def test_the_audit_is_the_lower_bound_when_it_is_the_strongest(rows):
    _, _, plain = next(
        (e, eps, r)
        for e, eps, r in rows
        if e.raw_channel is None and e.analytic_lower is None and r.verdict != "error"
    )
    result = dataclasses.replace(plain, audit=_bound(0.7), channel="c", audit_event="ev")
    assert result.to_dict()["lower_bound"] == {
        "epsilon": 0.7,
        "delta": 0.0,
        "source": "audit",
        "where": "c; ev",
    }
    assert dataclasses.replace(plain, audit=None).to_dict()["lower_bound"] is None
