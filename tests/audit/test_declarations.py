"""Declarations checked by coupled runs (privacy/mechanisms/recording.py,
audit/engine/declarations.py): the check mode records every release's pre-noise
statistic, replays one world's outputs in the other, and a contradicted sensitivity,
``disjoint`` level or release schedule keeps a row from ``holds``.

Every test here is deterministic (coupled runs compare pre-noise statistics; no
confidence level is involved).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from fedpriv.audit.claims import verify
from fedpriv.audit.claims.family import builtin_families
from fedpriv.audit.claims.register import claims_for
from fedpriv.audit.claims.verify import assemble_result, check_entry_declarations, evaluate_entry
from fedpriv.audit.engine.coupled import AuditBudget
from fedpriv.audit.engine.declarations import DeclarationCheck, check_declarations
from fedpriv.audit.engine.neighbor_search import NeighborSearch, searched_pairs
from fedpriv.audit.engine.neighbors import NeighboringPair
from fedpriv.privacy import Accountant, NeighboringRelation, laplace_release
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


def test_the_check_tries_the_searchs_candidates() -> None:
    """One pair generator: at one seed, the check runs exactly the pairs the
    worst-neighbour search would (``searched_pairs``), in the same order."""
    table = np.full((2, 12), 0.5)
    seen = []

    def run(rewards, n, seed):
        seen.append(np.asarray(rewards).copy())
        return corpus.epoch_sums(rewards.reshape(2, 3, 4), seed, n)[0]

    arguments = dict(domain=(0.0, 1.0), records=[(0,), (1,)], boundaries=[4, 8], n_random=2)
    check = check_declarations(run, table, seed=5, **arguments)
    expected = searched_pairs(table, seed=5, **arguments)
    assert check.pairs == tuple(expected) and not check.contradicted
    for index, pair in enumerate(expected.values()):
        np.testing.assert_array_equal(seen[2 * index], pair.dataset)
        np.testing.assert_array_equal(seen[2 * index + 1], pair.dataset_prime)
    search = NeighborSearch(run=run, table=table, **arguments)
    assert list(search.pairs(5)) == list(expected)
    assert check_declarations(**search.arguments, seed=5).pairs == check.pairs


def test_bad_inputs_to_the_check_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        check_declarations(lambda *a: None, np.zeros(3), domain=(0.0, 1.0), seed=0, pairs={})
    with pytest.raises(ValueError, match="`domain`"):
        check_declarations(lambda *a: None, np.zeros(3), domain=(1.0, 0.0), seed=0)
    with pytest.raises(ValueError, match="`boundaries`"):
        check_declarations(lambda *a: None, np.zeros(3), domain=(0.0, 1.0), seed=0, boundaries=[3])
    with pytest.raises(TypeError, match="`run`"):
        NeighborSearch(run=None, table=np.zeros(3), domain=(0.0, 1.0))
    with pytest.raises(ValueError, match="`n_random`"):
        NeighborSearch(run=print, table=np.zeros(3), domain=(0.0, 1.0), n_random=-1)


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
    check = check_entry_declarations(row, np.random.SeedSequence(0))  # derived from `search`
    assert declaration in [c.declaration for c in check.contradictions]
    result = assemble_result(row, *row.accountant(row.claim), declarations=check)
    assert result.verdict != "holds"
    assert declaration in result.evidence
    assert result.to_dict()["declarations"]["contradicted"]


def test_one_pair_may_not_show_a_late_misdeclaration() -> None:
    entry = corpus.ENTRIES["late-mean-slip"]
    first = NeighboringPair(
        *corpus.guide_pair(entry),
        neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
        description="agent 0, first reward: 0 -> 1",
    )
    first_only = check_declarations(
        lambda rewards, n, seed: entry.run(rewards, seed, n)[0],
        None,
        domain=(0.0, 1.0),
        seed=0,
        pairs={"first": first},
    )
    assert not first_only.contradicted  # hence the several pairs of the row's check


@pytest.mark.parametrize("entry", [e for e in corpus.CORPUS if not e.leaky], ids=lambda e: e.name)
def test_the_corpus_correct_algorithms_are_not_flagged(entry) -> None:
    row = corpus.row(entry)
    check = check_entry_declarations(row, np.random.SeedSequence(0))
    assert isinstance(check, DeclarationCheck) and not check.contradicted, check.describe()
    assert len(check.pairs) >= 3 and check.releases >= len(check.pairs)


@given(
    table=st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=12, max_size=12),
    position=st.integers(0, 11),
)
def test_correct_per_epoch_sums_are_never_flagged(table, position) -> None:
    rewards = np.asarray(table).reshape(2, 3, 2)
    agent, epoch, _ = np.unravel_index(position, rewards.shape)

    def run(worlds, n, seed):
        return corpus.epoch_sums(worlds, seed, n)[0]

    # Both pulls of the (agent, epoch) stream, first and last: `position` is one of them.
    check = check_declarations(
        run, rewards, domain=(0.0, 1.0), records=[(agent, epoch)], n_random=0, seed=0
    )
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


QUICK = AuditBudget(pilot_samples=100, samples=1_000, batch_size=1_000)


def test_a_user_row_holds_only_once_its_declarations_are_checked() -> None:
    """A correct user row (accountant ε = 1 = the claim) without a check is
    ``unresolved``, its evidence saying why and how to add one; with the check derived
    from its ``search``, or written as a ``declarations`` recipe, it ``holds``."""
    row = dataclasses.replace(corpus.row(corpus.ENTRIES["epoch-sums"]), audit=None)
    seed = np.random.SeedSequence(0)
    unchecked = evaluate_entry(dataclasses.replace(row, search=None), QUICK, seed)
    assert unchecked.verdict == "unresolved" and unchecked.declarations is None
    assert unchecked.accountant_epsilon <= row.claim.claimed.epsilon  # would hold if checked
    assert "not checked" in unchecked.evidence and "NeighborSearch" in unchecked.evidence
    derived = evaluate_entry(row, QUICK, seed)
    assert derived.verdict == "holds", derived.evidence
    assert not derived.declarations.contradicted and "declarations:" in derived.evidence
    explicit = dataclasses.replace(
        row,
        search=None,
        declarations=lambda claim, seed: check_declarations(
            **row.search(claim).arguments, seed=seed
        ),
    )
    result = evaluate_entry(explicit, QUICK, seed)
    assert result.verdict == "holds" and result.declarations.pairs == derived.declarations.pairs


def test_an_unchecked_user_row_is_still_violated_by_a_lower_bound() -> None:
    row = dataclasses.replace(corpus.row(corpus.ENTRIES["epoch-sums"]), audit=None, search=None)
    lower = LowerBoundEvidence(epsilon=3.0, kind="analytic", description="exact")
    result = assemble_result(
        dataclasses.replace(row, analytic_lower=lambda claim: lower.epsilon),
        *row.accountant(row.claim),
    )
    assert result.verdict == "violated" and "not checked" in result.evidence


@given(claimed=st.floats(0.01, 10), upper=st.floats(0, 10), lower=st.floats(0, 10))
def test_unchecked_declarations_never_hold(claimed, upper, lower) -> None:
    lowers = [LowerBoundEvidence(epsilon=lower, kind="audit", description="a")]
    verdict, evidence = judge(claimed, upper, lowers, unchecked="no check")
    assert verdict in ("violated", "unresolved") and "not checked (no check)" in evidence
    plain, _ = judge(claimed, upper, lowers)
    assert (verdict == "violated") == (plain == "violated")


def test_built_in_rows_run_no_declaration_check() -> None:
    """The built-in families' rows charge through fedpriv's own, tested algorithms: no
    check runs for them and the unchecked rule never applies, so their verdicts and
    every committed report number stay as they were."""
    builtin = {fam.key for fam in builtin_families()}
    rows = [e for e in claims_for(None) if e.paper in builtin]
    assert rows
    for entry in rows:
        assert entry.declarations is None and entry.search is None, entry.key
        assert not verify._outside(entry), entry.key
        assert check_entry_declarations(entry, np.random.SeedSequence(0)) is None
