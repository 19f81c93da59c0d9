"""Decentralized FedUCB with a fixed schedule (issue 10 §6): a clock, not line 6's test."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from fedpriv.algorithms.environments.linear import LinearBandit
from fedpriv.algorithms.feducb.decentralized import run_feducb_decentralized
from fedpriv.algorithms.networks.graphs import make_graph
from fedpriv.privacy.accounting.tree import tree_depth
from hypothesis import given, settings
from hypothesis import strategies as st


def _tables(n_agents=4, horizon=24, n_trials=2, dim=3, seed=0):
    spec = LinearBandit(n_agents=n_agents, n_arms=5, dim=dim)
    return spec.sample(seed, n_trials=n_trials, horizon=horizon)


def _fixed(tables, graph, *, gamma=2, sync_every=6, epsilon=1.0, seed=0, **kw):
    return run_feducb_decentralized(
        tables,
        graph,
        gamma=gamma,
        epsilon=epsilon,
        delta=0.1,
        schedule="fixed",
        sync_every=sync_every,
        record=True,
        seed=seed,
        **kw,
    )


def test_every_agent_releases_every_set_at_each_tick_and_requests_nothing():
    tables = _tables(horizon=26)
    run = _fixed(tables, nx.path_graph(4), gamma=2, sync_every=6)
    releases = run.transcript.releases
    ticks = [5, 11, 17, 23]  # end of rounds B-1, 2B-1, ... (0-based)
    assert sorted(releases["t"].unique()) == ticks
    per_tick = releases.groupby(["trial", "t"]).size()
    assert (per_tick == 4 * 2).all()  # every agent, every set
    assert set(releases["cause"]) == {"schedule"}
    assert run.n_requests.tolist() == [0, 0] and len(run.transcript.requests) == 0
    assert (run.transcript.messages["kind"] == "release").all()
    assert run.schedule == "fixed" and run.sync_every == 6 and math.isnan(run.threshold)
    n_leaves = 26 // 6
    assert run.tree_depth == tree_depth(run.capacity) and run.capacity >= n_leaves
    assert run.calibration.tree_depth == 1 + math.ceil(math.log2(n_leaves))


def test_no_raw_data_channel_is_charged_and_the_adaptive_one_still_is():
    tables = _tables()
    fixed = _fixed(tables, nx.path_graph(4))
    assert fixed.accountant.ledger.non_private_reasons() == []
    assert fixed.accountant.get_epsilon(0.1) == fixed.accountant_epsilon(0.1)[1]
    adaptive = run_feducb_decentralized(tables, nx.path_graph(4), gamma=2, epsilon=1.0, delta=0.1)
    assert math.isinf(adaptive.accountant.get_epsilon(0.1))


def test_a_set_released_since_its_last_use_restarts_its_leaf():
    """After a tick every (agent, set) leaf is empty, so the next release of a set that
    was not used in between carries no new data: the released statistic only changes
    by the fresh tree noise (noise-free run: it is unchanged)."""
    tables = _tables(horizon=12)
    run = _fixed(tables, nx.complete_graph(4), gamma=4, sync_every=2, epsilon=math.inf)
    rel = run.transcript.releases
    own = rel[(rel["trial"] == 0) & (rel["agent"] == 0) & (rel["subset"] == 3)].sort_values("t")
    grams = run.transcript.release_gram[own["release_id"].to_numpy()]
    # set 3 is used at rounds 3, 7, 11; ticks at 1, 3, 5, 7, 9, 11
    assert own["t"].tolist() == [1, 3, 5, 7, 9, 11]
    assert np.array_equal(grams[1], grams[2]) and np.array_equal(grams[3], grams[4])
    assert not np.array_equal(grams[0], grams[1])


@settings(max_examples=15)
@given(
    horizon=st.integers(4, 30),
    sync_every=st.integers(1, 12),
    gamma=st.integers(1, 3),
    kind=st.sampled_from(["path", "ring", "star", "complete"]),
    seed=st.integers(0, 50),
)
def test_release_times_do_not_depend_on_the_data(horizon, sync_every, gamma, kind, seed):
    """Two unrelated worlds (and noise seeds) give the same release and delivery log,
    and every tree gets exactly max(1, ⌊T/B⌋) leaves when T >= B."""
    graph = make_graph(kind, 4)
    logs = []
    for world in (seed, seed + 1000):
        run = _fixed(
            _tables(horizon=horizon, seed=world),
            graph,
            gamma=gamma,
            sync_every=sync_every,
            seed=world,
        )
        rel = run.transcript.releases[["trial", "agent", "subset", "t"]]
        msg = run.transcript.messages.drop(columns=["release_id"])
        logs.append((rel.to_numpy(), msg.to_numpy(), run.n_transmissions.tolist()))
        per_tree = rel.groupby(["trial", "agent", "subset"]).size()
        expected = horizon // sync_every
        if expected:
            assert len(per_tree) == 2 * 4 * gamma and (per_tree == expected).all()
        else:
            assert per_tree.empty
    assert np.array_equal(logs[0][0], logs[1][0])
    assert np.array_equal(logs[0][1], logs[1][1]) and logs[0][2] == logs[1][2]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"schedule": "daily"}, r"`schedule` must be one of \('adaptive', 'fixed'\)"),
        ({"schedule": "fixed"}, r"`sync_every` \(B >= 1\) is required with schedule='fixed'"),
        ({"schedule": "fixed", "sync_every": 0}, "`sync_every` must be >= 1, got 0"),
        ({"sync_every": 4}, "`sync_every` applies to schedule='fixed' only"),
        (
            {"schedule": "fixed", "sync_every": 4, "threshold": 1.0},
            "`threshold` applies to schedule='adaptive' only",
        ),
    ],
)
def test_bad_schedule_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_feducb_decentralized(
            _tables(), nx.path_graph(4), gamma=2, epsilon=1.0, delta=0.1, **kwargs
        )
