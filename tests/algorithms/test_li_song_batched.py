"""Li & Song's loop charges and draws in batches, bit for bit as row by row (issue 23).

The epoch loop releases the epoch means of consecutive rows with the same ``n_r`` in
one :func:`fedpriv.privacy.laplace_release` call and charges every row's exploitation
actions in one ``spend`` of key arrays; a single-world audit table sums its rewards by prefix
sums (``SingleWorldTable.pull_sums``). Each must give the very runs of the row-by-row
loop and of the entry-by-entry reads: same regret, same messages and actions, same
ledger and charges (rows, order, dtypes). Deterministic comparisons, no false alarms.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB
from fedpriv.algorithms.li_song import core, epochs
from fedpriv.algorithms.li_song.epochs import _EXPLOIT_REASON, EpochLoop
from fedpriv.algorithms.li_song.mab import run_cdp_mab, run_ddp_mab, run_hdp_mab, run_single_mab
from fedpriv.algorithms.networks.graphs import make_graph
from fedpriv.audit.engine.neighbors import SingleWorldTable, table_reward_pair
from fedpriv.privacy.accounting.events import NonPrivate
from hypothesis import given, settings
from hypothesis import strategies as st


def _exploit_by_row(self, r: int, full: np.ndarray) -> None:
    """The loop's exploitation step as it was: one charge per row (the reference)."""
    a_range, active, n_ag = self.a_range, self.active, self.n_ag
    d = np.minimum(self.plan.delay, self.horizon - self.t[full])
    best = np.argmax(np.where(active[full][:, None, :], self.local[full], -np.inf), axis=2)
    self.counts[full[:, None], a_range[None, :], best] += d[:, None]
    self.exploit_regret[full] += d * self.gaps[best].sum(axis=1)
    for m, b in enumerate(full):
        arms = np.flatnonzero(active[b])
        self.accountant.spend(
            NonPrivate(reason=_EXPLOIT_REASON),
            key={
                "trial": np.full(n_ag * arms.size, int(self.trial_of[b])),
                "agent": np.repeat(self.agents[b], arms.size),
                "arm": np.tile(arms, n_ag),
                "epoch": r,
                "channel": "action",
            },
        )
        if self.record_actions and d[m] > 0:
            self.segment(b, self.t[b], self.t[b] + d[m], "exploit", best[m])
    self.t[full] += d
    self.checkpoint()


def _run(structure: str, env: BernoulliMAB, *, epsilon: float, seed: int, table=None, record=True):
    common = {
        "horizon": 20_000,
        "epsilon": epsilon,
        "n_trials": 7,
        "seed": seed,
        "table": table,
        "record": record,
    }
    if structure == "cdp":
        return run_cdp_mab(env, **common)
    if structure == "ce-cdp":
        return run_cdp_mab(env, participation_rate=0.5, n_rounds=3, gap=0.25, **common)
    if structure == "ddp":
        return run_ddp_mab(env, make_graph("path", env.n_agents), **common)
    if structure == "hdp":
        graphs = [make_graph("path", 2), make_graph("path", env.n_agents - 2)]
        return run_hdp_mab(env, graphs, **common)
    return run_single_mab(env, **common)


def _assert_same_runs(fast, slow) -> None:
    for name in (
        "counts",
        "total_regret",
        "final_regret",
        "regret_eq1",
        "exploitation_regret",
        "rounds",
        "active",
        "committed_arm",
        "checkpoint_times",
        "checkpoint_regret",
    ):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    pd.testing.assert_frame_equal(fast.accountant.ledger.draws, slow.accountant.ledger.draws)
    pd.testing.assert_frame_equal(fast.accountant.ledger.charges, slow.accountant.ledger.charges)
    pd.testing.assert_frame_equal(fast.messages, slow.messages)
    pd.testing.assert_frame_equal(fast.actions, slow.actions)
    assert fast.message_epsilon() == slow.message_epsilon()


def _both(monkeypatch, run):
    fast = run()
    with monkeypatch.context() as patch:
        patch.setattr(EpochLoop, "_release", EpochLoop._release_by_row)
        patch.setattr(EpochLoop, "exploit", _exploit_by_row)
        slow = run()
    return fast, slow


SPREAD = BernoulliMAB([[0.6, 0.55, 0.5, 0.2, 0.1]] * 5)


@pytest.mark.parametrize("structure", ["cdp", "ce-cdp", "ddp", "hdp", "single"])
@pytest.mark.parametrize("epsilon", [0.05, 0.1, float("inf")])
def test_batched_runs_are_the_row_by_row_runs(structure, epsilon, monkeypatch) -> None:
    # Rows eliminate different arms: at ε = 0.05 later epochs mix rows with different
    # active sets and one n_r (the flat release), at ε = 0.1 rows with different n_r.
    fast, slow = _both(monkeypatch, lambda: _run(structure, SPREAD, epsilon=epsilon, seed=11))
    _assert_same_runs(fast, slow)


def test_the_comparisons_reach_every_release_path(monkeypatch) -> None:
    seen = set()
    entries_of = EpochLoop._release_entries

    def spy(self, full, pb, pairs, m0, m1):
        entries, agents, rng = entries_of(self, full, pb, pairs, m0, m1)
        seen.add("per (row, agent)" if entries.ndim == 3 else "per entry")
        seen.add("all rows" if m1 - m0 == full.size else "a run of rows")
        return entries, agents, rng

    monkeypatch.setattr(EpochLoop, "_release_entries", spy)
    for epsilon in (0.05, 0.1):
        _run("cdp", SPREAD, epsilon=epsilon, seed=11)
    assert seen == {"per (row, agent)", "per entry", "all rows", "a run of rows"}


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    structure=st.sampled_from(["cdp", "ddp", "hdp"]),
    flip=st.booleans(),
)
def test_audit_tables_give_the_row_by_row_runs(seed, structure, flip) -> None:
    # The audits' single-world tables (every trial one world, one reward changed):
    # equal active sets across rows (the per-(row, agent) release) and the prefix sums.
    env = BernoulliMAB(np.tile([0.5, 0.45, 0.4], (4, 1)))
    tables = table_reward_pair(env.reward_table(seed), agent=0, arm=0, pull=0)
    table = tables[int(flip)]
    fast = _run(structure, env, epsilon=0.5, seed=seed, table=table)
    saved = (EpochLoop._release, EpochLoop.exploit, SingleWorldTable.pull_sums)
    try:
        EpochLoop._release = EpochLoop._release_by_row
        EpochLoop.exploit = _exploit_by_row
        SingleWorldTable.pull_sums = lambda self, *a, **k: None
        slow = _run(structure, env, epsilon=0.5, seed=seed, table=table)
    finally:
        EpochLoop._release, EpochLoop.exploit, SingleWorldTable.pull_sums = saved
    _assert_same_runs(fast, slow)


def _entry_by_entry(table, agents, arms, start, length):
    out = np.zeros(agents.shape)
    for p in range(agents.shape[0]):
        pulls = start[p] + np.arange(length[p])
        out[p] = table.rewards(0, agents[p][:, None], arms[p], pulls[None, :]).sum(axis=1)
    return out


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_pairs=st.integers(1, 40),
    world=st.integers(0, 5),
    override=st.sampled_from([None, 0.0, 1.0]),
)
def test_single_world_prefix_sums_equal_the_entries(seed, n_pairs, world, override) -> None:
    rng = np.random.default_rng(seed)
    means = rng.random((3, 4))
    means[0, 0], means[0, 1] = 0.0, 1.0
    table = SingleWorldTable(BernoulliMAB(means).reward_table(seed), world)
    if override is not None:
        table = table.with_override(agent=1, arm=2, pull=3, value=override)
    agents = np.stack([rng.permutation(3)[:2] for _ in range(n_pairs)])
    arms = rng.integers(0, 4, n_pairs)
    start = rng.integers(0, 30, n_pairs)
    length = rng.integers(0, 30, n_pairs)
    trials = rng.integers(0, 1000, n_pairs)
    fast = table.pull_sums(trials, agents, arms, start, length)
    if fast is None:  # the prefixes would read more entries than the pairs ask for
        assert 3 * 4 * int((start + length).max()) > int(length.sum()) * 2
        return
    assert np.array_equal(fast, _entry_by_entry(table, agents, arms, start, length))


def test_single_world_prefix_sums_fall_back_where_not_whole_or_not_cheaper() -> None:
    env = BernoulliMAB(np.full((2, 3), 0.5))
    table = SingleWorldTable(env.reward_table(3))
    agents = np.tile([[0, 1]], (50, 1))
    arms, start, length = np.zeros(50, dtype=np.int64), np.zeros(50, dtype=np.int64), np.full(50, 9)
    trials = np.arange(50)
    assert table.pull_sums(trials, agents, arms, start, length) is not None
    halves = table.with_override(agent=0, arm=0, pull=2, value=0.5)
    assert halves.pull_sums(trials, agents, arms, start, length) is None
    # the loop then reads entry by entry and sees the override
    sums = core.epoch_sums(halves, trials, agents, arms, start, length)
    assert sums[0, 0] == float(halves.rewards(0, 0, 0, np.arange(9)).sum())
    # one pair, a long read far out: the prefixes would hash far more than asked
    far = table.pull_sums(np.array([0]), agents[:1], arms[:1], np.array([10_000]), np.array([5]))
    assert far is None


@pytest.mark.parametrize("structure", ["cdp", "ce-cdp", "ddp", "hdp", "single"])
def test_one_transcript_is_the_whole_run_s(structure) -> None:
    # The audits keep only the transcript they observe; it is the one record=True keeps.
    both = _run(structure, SPREAD, epsilon=0.1, seed=3)
    messages = _run(structure, SPREAD, epsilon=0.1, seed=3, record="messages")
    actions = _run(structure, SPREAD, epsilon=0.1, seed=3, record="actions")
    assert messages.actions is None and actions.messages is None
    pd.testing.assert_frame_equal(messages.messages, both.messages)
    pd.testing.assert_frame_equal(actions.actions, both.actions)
    assert np.array_equal(messages.counts, both.counts)
    pd.testing.assert_frame_equal(actions.accountant.ledger.draws, both.accountant.ledger.draws)


def test_record_names_a_transcript() -> None:
    with pytest.raises(ValueError, match="`record` must be a bool, 'messages' or 'actions'"):
        _run("cdp", SPREAD, epsilon=0.1, seed=3, record="message")


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 10**6),
            st.integers(0, 99),
            st.integers(0, 10**7),
            st.integers(0, 10**7),
            st.sampled_from(["explore", "exploit", "commit"]),
            st.lists(st.integers(0, 99), min_size=1, max_size=4).map(tuple),
        ),
        max_size=30,
    )
)
def test_action_frame_is_the_frame_of_the_rows_as_dicts(rows) -> None:
    # The loop keeps action segments as tuples; its frame must be pandas' frame of dicts.
    expected = pd.DataFrame([dict(zip(epochs._ACTION_COLUMNS, row, strict=True)) for row in rows])
    got = epochs._action_frame(rows)
    pd.testing.assert_frame_equal(got, expected)
    assert list(got.columns) == list(expected.columns)
