"""The bulk reward reads of Li & Song's loop (``RewardTable.pull_sums``) are bit-exact.

Issue 23 item 4: the loop reads each epoch's rewards through ``pull_sums`` (the hash's
trial/agent/arm part once per (agent, arm), the pull's mix per entry, the integer form
of ``U < mean``). It must read the very same table entries as ``rewards``, so every run
is bit for bit the run of the entry-by-entry loop; deterministic, no false alarms.
"""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB, RewardTable, homogeneous_bandit
from fedpriv.algorithms.li_song import core
from fedpriv.algorithms.li_song.mab import run_cdp_mab, run_ddp_mab
from fedpriv.algorithms.networks.graphs import make_graph
from hypothesis import given, settings
from hypothesis import strategies as st


def _entry_by_entry(table, trials, agents, arms, start, length):
    out = np.zeros(agents.shape)
    for p in range(agents.shape[0]):
        pulls = start[p] + np.arange(length[p])
        out[p] = table.rewards(trials[p], agents[p][:, None], arms[p], pulls[None, :]).sum(axis=1)
    return out


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_pairs=st.integers(1, 5),
    length=st.integers(1, 70),
    offset=st.integers(0, 2**40),
    chunk=st.sampled_from([1, 7, 1 << 15]),
)
def test_pull_sums_equal_the_sum_of_the_entries(seed, n_pairs, length, offset, chunk) -> None:
    rng = np.random.default_rng(seed)
    means = rng.random((3, 4))
    means[0, 0], means[0, 1], means[1, 0] = 0.0, 1.0, 0.5  # the edges of U < mean
    table = BernoulliMAB(means).reward_table(seed)
    trials = rng.integers(0, 1000, n_pairs)
    agents = np.stack([rng.permutation(3)[:2] for _ in range(n_pairs)])
    arms = rng.integers(0, 4, n_pairs)
    start = offset + rng.integers(0, 100, n_pairs)
    lengths = rng.integers(1, length + 1, n_pairs)
    fast = table.pull_sums(trials, agents, arms, start, lengths, chunk_elements=chunk)
    assert np.array_equal(fast, _entry_by_entry(table, trials, agents, arms, start, lengths))


def test_overrides_and_subclasses_fall_back_to_the_entries() -> None:
    table = homogeneous_bandit(2, 3, np.random.default_rng(0)).reward_table(5)
    args = (np.array([0]), np.array([[0, 1]]), np.array([2]), np.array([0]), np.array([9]))
    assert table.pull_sums(*args) is not None
    changed = table.with_override(agent=0, arm=2, pull=3, value=0.25)
    assert changed.pull_sums(*args) is None
    # epoch_sums then reads entry by entry: the override is seen
    assert core.epoch_sums(changed, *args)[0, 0] == pytest.approx(
        float(changed.rewards(0, 0, 2, np.arange(9)).sum())
    )

    class Pinned(RewardTable):
        def uniforms(self, trial, agent, arm, pull):
            return RewardTable.uniforms(self, 0 * np.asarray(trial), agent, arm, pull)

    pinned = Pinned(table.arm_means, table.key)
    assert pinned.pull_sums(*args) is None


@pytest.mark.parametrize("runner", ["cdp", "ddp"])
def test_runs_are_bit_for_bit_those_of_the_entry_by_entry_loop(runner, monkeypatch) -> None:
    env = homogeneous_bandit(6, 8, np.random.default_rng(1))

    def run():
        if runner == "cdp":
            return run_cdp_mab(env, horizon=20_000, epsilon=1.0, n_trials=3, seed=4)
        return run_ddp_mab(
            env, make_graph("ring", 6), horizon=20_000, epsilon=1.0, n_trials=3, seed=4
        )

    fast = run()
    monkeypatch.setattr(RewardTable, "pull_sums", lambda self, *a, **k: None)
    slow = run()
    for name in (
        "counts",
        "total_regret",
        "final_regret",
        "regret_eq1",
        "rounds",
        "active",
        "checkpoint_regret",
    ):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert fast.accountant.ledger.draws.equals(slow.accountant.ledger.draws)
