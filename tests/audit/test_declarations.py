"""Declarations checked by coupled runs (privacy/mechanisms/recording.py,
audit/engine/declarations.py): the check mode records every release's pre-noise
statistic, replays one world's outputs in the other, and a contradicted sensitivity,
``disjoint`` level or release schedule keeps a row from ``holds``.

Every test here is deterministic (coupled runs compare pre-noise statistics; no
confidence level is involved).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.audit.claims.verify import assemble_result
from fedpriv.audit.engine.declarations import (
    DeclarationCheck,
    check_declarations,
    neighbouring_pairs,
)
from fedpriv.privacy import Accountant, laplace_release
from fedpriv.privacy.accounting.verdicts import LowerBoundEvidence, judge
from fedpriv.privacy.mechanisms import LaplaceTreeCounter, raw_release
from fedpriv.privacy.mechanisms.recording import active_recorder, compare_releases, record_releases
from hypothesis import given
from hypothesis import strategies as st

from tests.audit.user_algorithms import corpus


def _release(values, *, sensitivity=1.0, disjoint=("cell",), keys=None, seed=0):
    accountant = Accountant(disjoint=disjoint)
    values = np.asarray(values, dtype=np.float64)
    keys = {"cell": np.arange(values.size)} if keys is None else keys
    return laplace_release(
        values,
        scale=1.0,
        l1_sensitivity=sensitivity,
        accountant=accountant,
        keys=keys,
        rng=np.random.default_rng(seed),
    )


def test_check_mode_is_off_by_default_and_changes_no_output() -> None:
    assert active_recorder() is None
    plain = _release([1.0, 2.0])
    with record_releases() as recorder:
        assert active_recorder() is recorder
        recorded = _release([1.0, 2.0])
    assert active_recorder() is None
    np.testing.assert_array_equal(plain, recorded)
    (release,) = recorder.releases
    np.testing.assert_array_equal(release.values, [1.0, 2.0])
    np.testing.assert_array_equal(release.keys["cell"], [0, 1])
    assert release.parallel_levels == ("cell",) and release.l1_sensitivity == 1.0


def test_the_replayed_world_gets_the_other_worlds_outputs() -> None:
    with record_releases() as world_d:
        out_d = _release([1.0, 2.0], seed=1)
    with record_releases(replay=world_d.releases) as world_d_prime:
        out_d_prime = _release([1.0, 3.0], seed=2)  # another noise: the replay wins
    np.testing.assert_array_equal(out_d, out_d_prime)
    assert world_d_prime.divergence is None
    np.testing.assert_array_equal(world_d_prime.releases[0].values, [1.0, 3.0])


def test_a_statistic_moved_beyond_its_sensitivity_is_a_witness() -> None:
    with record_releases() as d:
        _release([1.0, 2.0], sensitivity=0.25)
    with record_releases(replay=d.releases) as dp:
        _release([1.0, 3.0], sensitivity=0.25)
    (found,) = compare_releases(d.releases, dp.releases, pair="cell 1: 2 -> 3")
    assert found.declaration == "l1_sensitivity 0.25"
    assert "moved by 1 = 4 x" in found.witness and "cell: 1" in found.witness


def test_a_record_in_two_disjoint_cells_is_a_witness() -> None:
    with record_releases() as d:
        _release([1.0, 1.0])
    with record_releases(replay=d.releases) as dp:
        _release([2.0, 2.0])
    (found,) = compare_releases(d.releases, dp.releases, pair="one reward in both")
    assert found.declaration == "disjoint level(s) 'cell'"
    assert "2 cells" in found.witness


def test_changes_inside_one_cell_or_within_sensitivity_are_not_witnesses() -> None:
    keys = {"cell": np.zeros(2, dtype=np.int64)}
    with record_releases() as d:
        _release([1.0, 1.0], keys=keys)
    with record_releases(replay=d.releases) as dp:
        _release([2.0, 0.0], keys=keys)
    assert compare_releases(d.releases, dp.releases, pair="same cell") == ()


def test_a_schedule_raw_data_decides_is_a_witness() -> None:
    def run(total: float) -> None:
        if total >= 1:  # sends only when the raw total is high
            _release([total])

    with record_releases() as d:
        run(0.0)
    with record_releases(replay=d.releases) as dp:
        run(1.0)
    (found,) = compare_releases(d.releases, dp.releases, pair="p", divergence=dp.divergence)
    assert found.declaration == "release schedule"
    assert "beyond the 0 releases of D" in found.witness


def test_fewer_releases_in_the_replayed_world_are_a_divergence() -> None:
    with record_releases() as d:
        _release([1.0])
    with record_releases(replay=d.releases) as dp:
        pass
    assert "D' made 0 releases where D made 1" in dp.divergence


def test_raw_releases_and_tree_counters_are_recorded() -> None:
    accountant = Accountant(disjoint=("stream",))
    with record_releases() as recorder:
        raw_release([4.0], accountant=accountant, keys={"stream": 0}, reason="raw")
        tree = LaplaceTreeCounter(
            stream_shape=(2,),
            horizon=4,
            scale=1.0,
            accountant=accountant,
            keys={"stream": np.arange(2)},
            rng=np.random.default_rng(0),
        )
        tree.step([1.0, 0.0], [True, True])
        tree.release(np.array([True, False]))
        tree.step_release_rows(np.array(1), np.array(1.0))
    raw, prefix, rows = recorder.releases
    assert raw.kind == "raw" and raw.l1_sensitivity is None
    np.testing.assert_array_equal(prefix.values, [1.0])
    np.testing.assert_array_equal(prefix.keys["stream"], [0])
    assert rows.kind == "tree" and rows.l1_sensitivity == 1.0
    np.testing.assert_array_equal(rows.values, [1.0])
    np.testing.assert_array_equal(rows.keys["stream"], [1])


def test_neighbouring_pairs_change_one_entry_between_the_domain_ends() -> None:
    table = np.full((2, 3, 4), 0.5)
    pairs = neighbouring_pairs(table, domain=(0.0, 1.0))
    assert list(pairs) == [
        "entry (0, 0, 0): 0 -> 1",
        "entry (0, 2, 3): 0 -> 1",
        "entry (1, 2, 3): 0 -> 1",
    ]
    for d, dp in pairs.values():
        assert np.count_nonzero(d != dp) == 1 and d.min() == 0.0 and dp.max() == 1.0
    pairs = neighbouring_pairs(table, domain=(0.0, 1.0), positions=[(0, -1, 0)])
    assert list(pairs) == ["entry (0, 2, 0): 0 -> 1"]
    with pytest.raises(ValueError, match="`positions` must index"):
        neighbouring_pairs(table, domain=(0.0, 1.0), positions=[(0, 3, 0)])
    with pytest.raises(ValueError, match="`domain` must satisfy"):
        neighbouring_pairs(table, domain=(1.0, 0.0))
    with pytest.raises(ValueError, match="at least one"):
        check_declarations({}, seed=0)


@pytest.mark.parametrize(
    ("name", "declaration"),
    [
        ("misdeclared-disjoint", "disjoint level(s) 'epoch'"),
        ("late-mean-slip", "l1_sensitivity 0.125"),
        ("send-if-high", "release schedule"),
    ],
)
def test_the_corpus_misdeclarations_are_flagged(name: str, declaration: str) -> None:
    row = corpus.row(corpus.ENTRIES[name])
    check = row.declarations(row.claim, np.random.SeedSequence(0))
    assert declaration in [c.declaration for c in check.contradictions]
    result = assemble_result(row, *row.accountant(row.claim), declarations=check)
    assert result.verdict != "holds"
    assert declaration in result.evidence
    assert result.to_dict()["declarations"]["contradicted"]


def test_one_pair_may_not_show_a_late_misdeclaration() -> None:
    entry = corpus.ENTRIES["late-mean-slip"]
    worlds = corpus.guide_pair(entry)
    first_only = check_declarations(
        {"first": lambda world, n, seed: entry.run(worlds[world], seed, n)}, seed=0
    )
    assert not first_only.contradicted  # hence the several pairs of the row's check


@pytest.mark.parametrize("entry", [e for e in corpus.CORPUS if not e.leaky], ids=lambda e: e.name)
def test_the_corpus_correct_algorithms_are_not_flagged(entry) -> None:
    row = corpus.row(entry)
    check = row.declarations(row.claim, np.random.SeedSequence(0))
    assert isinstance(check, DeclarationCheck) and not check.contradicted, check.describe()
    assert len(check.pairs) >= 3 and check.releases >= len(check.pairs)


@given(
    table=st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=12, max_size=12),
    position=st.integers(0, 11),
)
def test_correct_per_epoch_sums_are_never_flagged(table, position) -> None:
    rewards = np.asarray(table).reshape(2, 3, 2)
    index = np.unravel_index(position, rewards.shape)
    pairs = neighbouring_pairs(rewards, domain=(0.0, 1.0), positions=[index])

    def sampler(worlds):
        return lambda world, n, seed: corpus.epoch_sums(worlds[world], seed, n)[0]

    check = check_declarations({k: sampler(w) for k, w in pairs.items()}, seed=0)
    assert not check.contradicted, check.describe()


@given(claimed=st.floats(0.01, 10), upper=st.floats(0, 10), lower=st.floats(0, 10))
def test_a_contradicted_declaration_never_holds(claimed, upper, lower) -> None:
    lowers = [LowerBoundEvidence(epsilon=lower, kind="audit", description="a")]
    verdict, evidence = judge(claimed, upper, lowers, contradicted="disjoint 'epoch'")
    assert verdict in ("violated", "unresolved")
    assert "disjoint 'epoch'" in evidence
    plain, _ = judge(claimed, upper, lowers)
    assert (verdict == "violated") == (plain == "violated")  # a lower bound still refutes
    assert not math.isnan(upper)
