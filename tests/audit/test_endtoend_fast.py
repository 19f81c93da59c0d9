"""The fast path of whole-Fed_UCB audits (issue 11 item 4): stop each run early.

:class:`fedpriv.audit.families.gossip_fed_ucb.initial.GossipFedUcbMeansSampler` with ``fast=True`` stops
every run after the observed round; ``fast=False`` simulates the whole horizon (the
reference path of ``benchmarks/bench_endtoend.py``). The observable and the audit's
bound must be bit-identical. Deterministic (no statistical assertion).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from fedpriv.algorithms.networks.graphs import make_graph
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.engine.coupled import AuditBudget, search_and_confirm
from fedpriv.audit.families.gossip_fed_ucb.initial import GossipFedUcbMeansSampler
from fedpriv.audit.families.gossip_fed_ucb.recipes import FixedTableBandit

__all__: list[str] = []


def _sampler(
    *,
    n_agents: int,
    n_arms: int,
    horizon: int,
    kind: str,
    mode: str,
    log_base: str,
    round_: int,
    fast: bool,
) -> GossipFedUcbMeansSampler:
    """Two fixed Bernoulli tables that differ in agent 0's row ``round_``."""
    rng = np.random.default_rng(child_seed(7, n_agents, n_arms))
    base = (rng.random((n_agents, horizon + 1, n_arms)) < 0.5).astype(np.float64)
    envs = []
    for value in (1.0, 0.0):
        table = base.copy()
        table[0, round_, :] = value
        envs.append(FixedTableBandit(table=table, arm_means=np.full((n_agents, n_arms), 0.5)))
    return GossipFedUcbMeansSampler(
        envs=(envs[0], envs[1]),
        graph=make_graph(kind, n_agents),
        horizon=horizon,
        epsilon=1.0,
        mode=mode,
        log_base=log_base,
        agent=0,
        round=round_,
        fast=fast,
    )


_SETTINGS = [
    pytest.param(
        {
            "n_agents": 3,
            "n_arms": 5,
            "horizon": 128,
            "kind": "complete",
            "mode": "corrected",
            "log_base": "2",
            "round_": 1,
        },
        id="K3-round1",
    ),
    pytest.param(
        {
            "n_agents": 4,
            "n_arms": 3,
            "horizon": 64,
            "kind": "ring",
            "mode": "paper",
            "log_base": "e",
            "round_": 5,
        },
        id="ring4-paper-round5",
    ),
    pytest.param(
        {
            "n_agents": 3,
            "n_arms": 2,
            "horizon": 30,
            "kind": "path",
            "mode": "corrected",
            "log_base": "2",
            "round_": 30,
        },
        id="path3-last-round",
    ),
]


@pytest.mark.parametrize("setting", _SETTINGS)
def test_fast_and_reference_samplers_give_identical_observables(setting: dict) -> None:
    fast = _sampler(**setting, fast=True)
    reference = dataclasses.replace(fast, fast=False)
    for world in (0, 1):
        for seed in (0, 1, 12345):
            address = child_seed(seed, world)
            got, want = fast(world, 7, address), reference(world, 7, address)
            assert got.shape == (7, setting["n_arms"])
            np.testing.assert_array_equal(got, want)


def test_fast_and_reference_audits_give_the_identical_bound() -> None:
    setting = {
        "n_agents": 3,
        "n_arms": 5,
        "horizon": 256,
        "kind": "complete",
        "mode": "corrected",
        "log_base": "2",
        "round_": 1,
    }
    results = [
        search_and_confirm(
            {"round 1": _sampler(**setting, fast=fast)},
            budget=AuditBudget(pilot_samples=40, samples=60),
            seed=3,
            delta=0.0,
            channel="agent 0's means after round 1",
            batch_size=25,
        )
        for fast in (True, False)
    ]
    assert results[0].event == results[1].event
    assert results[0].bound == results[1].bound
