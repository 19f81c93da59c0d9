"""The fused round loop of Gossip_UCB / Fed_UCB equals the step-by-step loop bit for bit.

Issue 23: :mod:`fedpriv.algorithms.gossip_fed_ucb.fused` plays a batch with few array
passes per round (per-count radius tables, pulled cells only, the tree counter's
:meth:`~fedpriv.privacy.LaplaceTreeCounter.step_release_rows`). Every output must be the
one of the loop it replaced, kept as the oracle in ``_gossip_reference``: the actions, the
counts, ϑ and the means of every round, the out-of-range counts and every ledger row (the
same noise draws in the same order). All checks are exact and deterministic (no false
alarms).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from fedpriv.algorithms.environments.heterogeneous import paper_synthetic_bandit
from fedpriv.algorithms.gossip_fed_ucb.fused import _forced_arms, _radius, _radius_table
from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import run_gossip_fed_ucb, run_gossip_ucb
from fedpriv.algorithms.gossip_fed_ucb.rounds import confidence_radius, pick_uniform
from fedpriv.algorithms.networks.graphs import make_graph
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.algorithms._gossip_reference import reference_run

__all__: list[str] = []

HORIZON, TRIALS = 300, 4


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and bytes (so -0.0 differs from 0.0 and NaN payloads count)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _assert_run_is_reference(run, ref) -> None:
    assert _same(run.actions, ref["actions"])
    assert _same(run.counts, ref["counts"])
    assert _same(run.trace["theta"], ref["theta"])
    assert _same(run.trace["means"], ref["means"])
    assert run.n_out_of_bounds == ref["n_out_of_bounds"]
    if ref["accountant"] is None:
        assert run.accountant is None
        return
    pd.testing.assert_frame_equal(
        run.accountant.ledger.draws, ref["accountant"].ledger.draws, check_exact=True
    )
    pd.testing.assert_frame_equal(
        run.accountant.ledger.charges, ref["accountant"].ledger.charges, check_exact=True
    )
    assert run.accountant.ledger.n_draws == ref["accountant"].ledger.n_draws


def _paper_env(n_agents: int = 3, seed: int = 0):
    """Zhu et al. §5's synthetic setting: U[0,1) means, rewards μ + N(0, 1) (leave [0, 1])."""
    return paper_synthetic_bandit(n_agents, 5, rng=np.random.default_rng(seed), noise="gaussian")


@pytest.mark.parametrize("mode", ["paper", "corrected"])
@pytest.mark.parametrize("epsilon", [1.0, math.inf])
@pytest.mark.parametrize("log_base", ["2", "e"])
def test_fed_ucb_equals_the_step_by_step_loop(mode: str, epsilon: float, log_base: str) -> None:
    env, graph = _paper_env(), make_graph("complete", 3)
    options = {"epsilon": epsilon, "mode": mode, "log_base": log_base}
    run = run_gossip_fed_ucb(
        env, graph, horizon=HORIZON, n_trials=TRIALS, seed=11, record=True, **options
    )
    ref = reference_run(
        env, graph, horizon=HORIZON, n_trials=TRIALS, seed=11, private=True, **options
    )
    _assert_run_is_reference(run, ref)
    assert ref["n_out_of_bounds"] > 0  # the Gaussian rewards exercise ignore / clip


def test_gossip_ucb_equals_the_step_by_step_loop() -> None:
    env, graph = _paper_env(), make_graph("complete", 3)
    run = run_gossip_ucb(env, graph, horizon=HORIZON, n_trials=TRIALS, seed=5, record=True)
    ref = reference_run(env, graph, horizon=HORIZON, n_trials=TRIALS, seed=5)
    _assert_run_is_reference(run, ref)


@pytest.mark.parametrize(
    "options",
    [
        {"noise_on_empty_nodes": True},
        {"publish_final": True, "mode": "paper"},
        {"secure_noise": True},
        {"rounds": 37},
    ],
    ids=["noise-on-empty-nodes", "publish-final", "secure-noise", "stopped-early"],
)
def test_fed_ucb_options_equal_the_step_by_step_loop(options: dict) -> None:
    env, graph = _paper_env(4, seed=3), make_graph("ring", 4)
    kwargs = {"epsilon": 2.0, "mode": "corrected", **options}
    run = run_gossip_fed_ucb(env, graph, horizon=120, n_trials=3, seed=7, record=True, **kwargs)
    ref = reference_run(env, graph, horizon=120, n_trials=3, seed=7, private=True, **kwargs)
    _assert_run_is_reference(run, ref)


@settings(deadline=None, max_examples=12, database=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["complete", "ring", "star", "path"]),
    n_agents=st.integers(3, 5),
    private=st.booleans(),
)
def test_bernoulli_ties_and_graphs_equal_the_step_by_step_loop(seed, kind, n_agents, private):
    # Bernoulli rewards make equal indices (ties) common; sparse graphs make lagging arms.
    env = paper_synthetic_bandit(n_agents, 3, rng=np.random.default_rng(seed), noise="bernoulli")
    graph = make_graph(kind, n_agents)
    horizon = 60
    if private:
        run = run_gossip_fed_ucb(
            env, graph, horizon=horizon, n_trials=3, seed=seed, epsilon=1.0, record=True
        )
        ref = reference_run(
            env,
            graph,
            horizon=horizon,
            n_trials=3,
            seed=seed,
            epsilon=1.0,
            private=True,
            mode="corrected",
        )
    else:
        run = run_gossip_ucb(env, graph, horizon=horizon, n_trials=3, seed=seed, record=True)
        ref = reference_run(env, graph, horizon=horizon, n_trials=3, seed=seed)
    _assert_run_is_reference(run, ref)


@settings(deadline=None, max_examples=60, database=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_agents=st.integers(1, 40),
    horizon=st.integers(2, 10**6),
    epsilon=st.sampled_from([0.1, 1.0, 2.0, 5.0, math.inf]),
)
def test_radius_tables_give_confidence_radius_bit_for_bit(seed, n_agents, horizon, epsilon):
    rng = np.random.default_rng(seed)
    rounds = int(rng.integers(1, 3000))
    counts = rng.integers(1, rounds + 2, size=(3, max(n_agents, 1), 4))
    t = int(rng.integers(1, rounds + 1))
    table = _radius_table(rounds, n_agents=n_agents, epsilon=epsilon)
    fused = _radius(table, counts, t, n_agents=n_agents, horizon=horizon)
    direct = confidence_radius(counts, t, n_agents=n_agents, horizon=horizon, epsilon=epsilon)
    assert _same(fused, direct)


@settings(deadline=None, max_examples=100, database=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rows=st.integers(1, 12),
    n_arms=st.integers(1, 7),
    density=st.floats(0.0, 1.0),
)
def test_forced_arms_are_pick_on_the_lagging_rows(seed, rows, n_arms, density) -> None:
    rng = np.random.default_rng(seed)
    behind = rng.random((rows, n_arms)) < density
    rounds = 5
    uniforms = rng.random((rows, rounds))
    uniforms[0, :] = np.nextafter(1.0, 0.0)  # the largest u: rank capped at count - 1
    t = int(rng.integers(1, rounds + 1))
    picked_rows, arms = _forced_arms(np.flatnonzero(behind), n_arms, uniforms, t)
    lagging = np.flatnonzero(behind.any(axis=-1))
    assert picked_rows == lagging.tolist()
    assert arms == pick_uniform(behind, uniforms[:, t - 1])[lagging].tolist()
