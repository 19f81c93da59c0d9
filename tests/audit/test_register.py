"""The claims register: completeness, sources, lookup, claim types."""

from __future__ import annotations

import dataclasses
import math

import pytest
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import (
    check_shared_audit,
    ignores_setting,
    reads_setting,
    setting_reads,
)
from fedpriv.audit.claims.register import PAPERS, REGISTER, RegisteredClaim, claims_for, paper_of
from fedpriv.privacy import ApproxDP, NeighboringRelation, PureDP


def _find(**wanted) -> list[RegisteredClaim]:
    out = []
    for entry in REGISTER:
        s = entry.claim.setting_dict()
        fields = {"algorithm": entry.claim.algorithm, "mode": entry.claim.mode, **s}
        if all(str(fields.get(k)).startswith(str(v)) for k, v in wanted.items()):
            out.append(entry)
    return out


@pytest.mark.parametrize(
    "wanted",
    [
        # FedUCB centralized and decentralized, adaptive and fixed schedule
        {"algorithm": "feducb", "structure": "centralized", "schedule": "adaptive"},
        {"algorithm": "feducb", "structure": "centralized", "schedule": "fixed"},
        {"algorithm": "feducb-decentralized", "schedule": "adaptive"},
        {"algorithm": "feducb-decentralized", "schedule": "fixed"},
        # Li & Song: CDP/DDP/HDP, with and without partial participation
        {"algorithm": "cdp-mab", "structure": "cdp"},
        {"algorithm": "ce-cdp-mab", "structure": "cdp-partial"},
        {"algorithm": "ddp-mab", "mode": "paper"},
        {"algorithm": "hdp-mab", "mode": "paper"},
        # Fed_UCB in both modes and log bases
        {"algorithm": "gossip-fed-ucb", "mode": "paper", "log_base": "2"},
        {"algorithm": "gossip-fed-ucb", "mode": "paper", "log_base": "e"},
        {"algorithm": "gossip-fed-ucb", "mode": "corrected", "log_base": "2"},
        # Private and Byzantine-proof cooperative UCB, own term noisy and raw
        {"algorithm": "private-coop-ucb", "own_term": "noisy"},
        {"algorithm": "private-coop-ucb", "own_term": "raw"},
        {"algorithm": "byzantine-coop-ucb"},
    ],
)
def test_register_covers_every_algorithm_and_mode(wanted):
    assert _find(**wanted), f"no registered claim for {wanted}"


def test_communication_constrained_claims_use_p_below_one_or_r_rounds():
    # §IV-B: CE-CDP-MAB is participation p < 1 and/or R rounds (Fig. 6 is p = 1, R rounds)
    partial = _find(algorithm="ce-cdp-mab")
    assert partial and all(
        e.claim.setting_dict().get("participation_rate", 1.0) < 1
        or "rounds" in e.claim.setting_dict()
        for e in partial
    )
    full = _find(algorithm="cdp-mab")
    assert all(
        "participation_rate" not in e.claim.setting_dict()
        and "rounds" not in e.claim.setting_dict()
        for e in full
    )


def test_every_claim_has_a_source_a_relation_and_a_typed_guarantee():
    keys = [entry.key for entry in REGISTER]
    assert len(keys) == len(set(keys)), "register keys must be unique"
    for entry in REGISTER:
        claim = entry.claim
        assert claim.source.strip(), entry.key
        assert isinstance(claim.neighboring_relation, NeighboringRelation)
        assert isinstance(claim.claimed, (PureDP, ApproxDP))
        assert claim.paper == PAPERS[entry.paper]
        assert callable(entry.accountant)
        audited = entry.audit is not None or entry.shared_audit is not None
        assert audited == (not entry.channel.startswith("accountant only")), entry.key


def test_shared_audits_point_at_an_audited_row_of_the_same_algorithm():
    entries = {entry.key: entry for entry in REGISTER}
    shared = [entry for entry in REGISTER if entry.shared_audit]
    assert shared
    for entry in shared:
        source = entries[entry.shared_audit]
        assert entry.audit is None and source.audit is not None
        check_shared_audit(entry, source)  # the declared differences are checked


def _fig2b_shared_row():
    entries = {entry.key: entry for entry in REGISTER}
    entry = entries["gossip_fed_ucb/gossip-fed-ucb/paper-log2/fig2b/eps1"]
    return entry, entries[entry.shared_audit]


def test_a_shared_audit_across_an_entry_the_audit_reads_fails():
    entry, source = _fig2b_shared_row()
    assert "horizon" in source.audit.setting_reads
    # deliberately wrong: the row moved to another horizon, which the tree audit reads
    setting = tuple((k, 1024 if k == "horizon" else v) for k, v in entry.claim.setting)
    wrong = dataclasses.replace(
        entry,
        claim=dataclasses.replace(entry.claim, setting=setting),
        shared_audit_differs=(*entry.shared_audit_differs, "horizon"),
    )
    with pytest.raises(ValueError, match="the audit reads \\['horizon'\\]"):
        check_shared_audit(wrong, source)
    # ... and a statement that leaves the differing entry out fails too
    with pytest.raises(ValueError, match="exactly the differing setting entries"):
        check_shared_audit(dataclasses.replace(wrong, shared_audit_differs=()), source)


def test_a_shared_audit_whose_recipe_declares_no_reads_fails():
    entries = {entry.key: entry for entry in REGISTER}
    source = entries["feducb/feducb/fig1a/eps1"]  # its audit declares nothing
    regime = entries["feducb/feducb/fig1b/MlogT"]
    borrowed = dataclasses.replace(
        regime,
        claim=dataclasses.replace(regime.claim, mode=source.claim.mode),
        shared_audit=source.key,
        shared_audit_differs=("regime", "target_syncs", "threshold"),
    )
    with pytest.raises(ValueError, match="declares no setting reads"):
        check_shared_audit(borrowed, source)


def test_declared_reads_are_enforced_when_the_recipe_runs():
    entry, _ = _fig2b_shared_row()

    @reads_setting("horizon")
    def reads_more(claim):
        return claim.setting_dict()["epsilon"]

    @ignores_setting("epsilon")
    def reads_ignored(claim):
        return claim.setting_dict()["epsilon"]

    @reads_setting("horizon", "epsilon")
    def reads_declared(claim):
        return claim.setting_dict()["epsilon"]

    for recipe in (reads_more, reads_ignored):
        with pytest.raises(KeyError, match="epsilon"):
            recipe(entry.claim)
    assert reads_declared(entry.claim) == entry.claim.setting_dict()["epsilon"]
    assert setting_reads(reads_more, {"horizon": 1, "graph": 2}) == {"horizon"}
    assert setting_reads(reads_ignored, {"epsilon": 1, "graph": 2}) == {"graph"}


def test_every_accountant_only_row_states_why_more_compute_would_not_help():
    unaudited = [e for e in REGISTER if e.audit is None and e.shared_audit is None]
    assert unaudited  # claims whose claimed δ leaves nothing to bracket
    for entry in unaudited:
        reason = entry.channel.removeprefix("accountant only").strip(": ")
        assert len(reason) > 40, entry.key
    tree_rows = [e for e in REGISTER if "/T600000/" in e.key]
    assert tree_rows and all(e.audit is not None for e in tree_rows)


def test_the_headline_channels_have_end_to_end_audits():
    audited = {entry.key for entry in REGISTER if entry.audit is not None}
    for key in (
        "feducb/feducb/adaptive",
        "feducb/feducb/fixed",
        "li_song/ddp-mab/actions",
        "li_song/hdp-mab/actions",
        "gossip_fed_ucb/gossip-fed-ucb/paper/initial-pulls",
        "gossip_fed_ucb/gossip-fed-ucb/paper/unbounded-rewards",
        "dubey_aamas/private-coop-ucb/own-raw/per-message",
        "li_song/cdp-mab/fig4/eps0.1",
        "li_song/cdp-mab/fig4/eps1",
    ):
        assert key in audited


def test_claims_for_partitions_the_register_and_accepts_aliases():
    parts = [claims_for(paper) for paper in PAPERS]
    assert sum(len(p) for p in parts) == len(REGISTER)
    assert claims_for(None) == REGISTER
    assert paper_of("byzantine") == "dubey_aamas" and paper_of("Fed_UCB") == "gossip_fed_ucb"
    assert claims_for("li-song") == claims_for("li_song")


def test_unknown_paper_names_the_allowed_ones():
    with pytest.raises(ValueError, match="`paper` must be one of feducb, li_song"):
        claims_for("nonsense")


def test_claim_rejects_an_untyped_guarantee():
    with pytest.raises(TypeError, match="`claimed` must be PureDP or ApproxDP"):
        Claim(
            paper="p",
            algorithm="a",
            mode="m",
            setting=(),
            neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
            claimed=1.0,
            source="s",
        )


def test_claimed_delta_is_part_of_the_record():
    feducb = claims_for("feducb")[0].claim
    assert feducb.claimed_delta == 0.1
    li_song = claims_for("li_song")[0].claim
    assert li_song.claimed_delta == 0.0


def test_li_song_claims_are_m_epsilon_not_the_input_epsilon():
    for entry in claims_for("li_song"):
        s = entry.claim.setting_dict()
        if entry.claim.reading.startswith("ε read as the guarantee"):
            # the reading of the abstract and Fig. 4's caption, labelled as one
            assert math.isclose(entry.claim.claimed.epsilon, s["epsilon"]), entry.key
            continue
        assert math.isclose(entry.claim.claimed.epsilon, s["n_agents"] * s["epsilon"])


def test_register_is_the_families_claims_in_family_order():
    """Audit seeds are addressed by register index: the register is each family's rows,
    contiguous, with the families in their registration order."""
    from fedpriv.audit.claims.family import builtin_families

    registered = builtin_families()
    keys = [entry.paper for entry in REGISTER]
    runs = [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]
    assert runs == [fam.key for fam in registered]  # contiguous, in family order
    assert [fam.order for fam in registered] == sorted(fam.order for fam in registered)
    assert tuple(row for fam in registered for row in fam.claims()) == REGISTER
    assert len({entry.key for entry in REGISTER}) == len(REGISTER)


def _user_family(key: str, row_key: str):
    from fedpriv.audit.claims.entry import RegisteredClaim, make_claim
    from fedpriv.audit.claims.family import Family

    def claims():
        claim = make_claim(
            key,
            "mine-ucb",
            "paper",
            {"epsilon": 1.0},
            NeighboringRelation.REPLACE_ONE_REWARD,
            PureDP(1.0),
            "my note",
        )
        return (
            RegisteredClaim(
                key=row_key,
                claim=claim,
                accountant=lambda c: ("pure", 1.0, ()),
                audit=None,
                channel="accountant only",
            ),
        )

    return Family(key=key, title="My paper", claims=claims)


def test_families_from_outside_follow_the_builtin_rows(monkeypatch):
    from fedpriv.audit.claims import family as registry
    from fedpriv.audit.claims import register

    monkeypatch.setattr(registry, "_files", {"f": (_user_family("mine", "mine/mine-ucb/eps1"),)})
    rows = claims_for(None)
    assert rows[: len(REGISTER)] == REGISTER  # no built-in row moves: seeds stay
    assert [r.key for r in rows[len(REGISTER) :]] == ["mine/mine-ucb/eps1"]
    assert claims_for("mine") == rows[len(REGISTER) :]
    assert rows[-1].claim.paper == "My paper" == register.PAPERS["mine"]


@pytest.mark.parametrize(
    ("row_key", "message"),
    [("other/mine-ucb/eps1", "claim key 'other/mine-ucb/eps1' must start with 'mine/'")],
)
def test_outside_rows_are_checked(monkeypatch, row_key, message):
    from fedpriv.audit.claims import family as registry
    from fedpriv.audit.claims.family import FamilyError

    monkeypatch.setattr(registry, "_files", {"f": (_user_family("mine", row_key),)})
    with pytest.raises(FamilyError, match=message):
        claims_for(None)


def test_papers_and_aliases_come_from_the_registrations():
    from fedpriv.audit.claims import register
    from fedpriv.audit.claims.family import families

    assert {fam.key: fam.title for fam in families()} == register.PAPERS
    assert {a: fam.key for fam in families() for a in fam.aliases} == register.PAPER_ALIASES
    for entry in REGISTER:
        assert entry.claim.paper == register.PAPERS[entry.paper]


def test_dubey_pentland_is_not_an_alias():
    """Both FedUCB and the AAMAS paper are by Dubey & Pentland: the name is ambiguous."""
    with pytest.raises(
        ValueError,
        match="`paper` must be one of feducb, li_song, "
        "gossip_fed_ucb, dubey_aamas, zhou_chowdhury; got 'dubey_pentland'",
    ):
        paper_of("dubey_pentland")


def test_verify_refuses_dubey_pentland_listing_the_keys(tmp_path, capsys):
    from fedpriv.cli.main import main

    code = main(["verify", "--quick", "--paper", "dubey_pentland", "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "feducb, li_song, gossip_fed_ucb, dubey_aamas" in err and "dubey_pentland" in err
    assert not any(tmp_path.iterdir())  # nothing written


def test_make_claim_takes_the_title_from_the_registry():
    from fedpriv.audit.claims.entry import make_claim
    from fedpriv.audit.claims.family import family

    claim = make_claim(
        "li_song",
        "cdp-mab",
        "paper",
        {"epsilon": 1.0},
        NeighboringRelation.REPLACE_ONE_REWARD,
        PureDP(1.0),
        "Theorem 1",
    )
    assert claim.paper == family("li_song").title
    with pytest.raises(ValueError, match="`paper` must be one of"):
        make_claim(
            "nope", "a", "paper", {}, NeighboringRelation.REPLACE_ONE_REWARD, PureDP(1.0), "s"
        )


def test_recipes_return_typed_results_that_unpack_as_tuples():
    from fedpriv.audit.claims.entry import AccountantResult, MechanismResult

    entry = next(
        e for e in REGISTER if e.key == "gossip_fed_ucb/gossip-fed-ucb/paper/unbounded-rewards"
    )
    result = entry.accountant(entry.claim)
    assert isinstance(result, AccountantResult)
    route, epsilon, findings = result
    assert (route, epsilon, findings) == (result.route, result.epsilon, result.findings)
    mechanism = entry.mechanism(entry.claim)
    assert isinstance(mechanism, MechanismResult)
    assert math.isfinite(mechanism.epsilon) and mechanism.epsilon > 0
