"""Lazily built streams of the cooperative UCB family give the eager streams' draws.

The eager forms (:class:`PolicyUniforms` over every generator) are the oracles: the
lazy ones must read the same values at the same rounds, and whole runs must be equal
bit for bit, ties and all.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from fedpriv.algorithms.dubey_aamas import cooperative
from fedpriv.algorithms.dubey_aamas.baselines import PolicyUniforms
from fedpriv.algorithms.dubey_aamas.uniforms import LazyUniforms
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB
from fedpriv.algorithms.seeding import Stream, spawn_stream_rngs, stream_rng, stream_rngs
from hypothesis import given, settings
from hypothesis import strategies as st


def _lazy(root, n_trials, n_agents, horizon, chunk):
    return LazyUniforms(
        n_trials * n_agents,
        horizon,
        build_one=lambda row: stream_rng(
            root, trial=row // n_agents, agent=row % n_agents, stream=Stream.POLICY
        ),
        build_all=lambda: stream_rngs(
            root, n_trials=n_trials, n_agents=n_agents, stream=Stream.POLICY
        ),
        chunk=chunk,
    )


@settings(max_examples=40, deadline=None)
@given(
    n_trials=st.integers(1, 12),
    n_agents=st.integers(1, 4),
    horizon=st.integers(1, 40),
    chunk=st.integers(1, 9),
    start=st.integers(1, 40),
    data=st.data(),
)
def test_lazy_uniforms_read_the_eager_draws(n_trials, n_agents, horizon, chunk, start, data):
    """Any rows read at any rounds (from the first call on, every round) equal
    ``PolicyUniforms``' draws, across block boundaries and the batch build."""
    start = min(start, horizon)
    root = np.random.SeedSequence(data.draw(st.integers(0, 2**32 - 1)), spawn_key=(3,))
    rows = n_trials * n_agents
    eager = PolicyUniforms(
        stream_rngs(root, n_trials=n_trials, n_agents=n_agents, stream=Stream.POLICY),
        horizon,
        chunk,
    )
    lazy = _lazy(root, n_trials, n_agents, horizon, chunk)
    for t in range(start, horizon + 1):
        expected = eager.at(t).reshape(-1)
        reader = lazy.at(t)
        asked = data.draw(st.lists(st.integers(0, rows - 1), max_size=2 * rows))
        asked = np.array(asked, dtype=np.int64)
        np.testing.assert_array_equal(reader(asked), expected[asked])


def test_lazy_uniforms_batch_build_keeps_rows_already_drawn():
    """Past the batch threshold the rest is built at once; rows read before keep their
    position (their own generators), so every draw is still the eager one."""
    root = np.random.SeedSequence(11)
    eager = PolicyUniforms(stream_rngs(root, n_trials=40, n_agents=2, stream=Stream.POLICY), 9)
    lazy = _lazy(root, 40, 2, 9, 512)
    first = np.array([5, 7], dtype=np.int64)
    np.testing.assert_array_equal(lazy.at(1)(first), eager.at(1).reshape(-1)[first])
    every = np.arange(80)
    for t in range(2, 10):
        np.testing.assert_array_equal(lazy.at(t)(every), eager.at(t).reshape(-1))


def test_lazy_uniforms_refuse_a_passed_draw():
    lazy = _lazy(np.random.SeedSequence(1), 1, 1, 5, 512)
    lazy.at(1)
    lazy.at(2)(np.array([0]))  # draw 1 of the block of rounds 1..5
    with pytest.raises(ValueError, match="was passed"):
        lazy.at(1)(np.array([0]))  # draw 0 of the same block: already skipped


def _eager_policy(n_rows, horizon, build_one, build_all, chunk=512):
    """The code before lazy streams: every generator built, every row drawn."""
    return PolicyUniforms(build_all(), horizon, chunk)


@pytest.mark.parametrize(
    ("own_term", "count_field", "private"),
    [("raw", "current", False), ("noisy", "release", False), ("noisy", "current", True)],
)
def test_coop_runs_equal_the_eager_tie_breaks(monkeypatch, own_term, count_field, private):
    """Whole runs (actions, rewards, transcripts) with lazy tie-break streams equal the
    eager ones, in settings that tie often (non-private, equal means) and never."""
    env = BernoulliMAB(np.full((3, 3), 0.5))
    graph = nx.path_graph(3)

    def run():
        if private:
            return cooperative.run_private_coop_ucb(
                env, graph, horizon=40, epsilon=0.5, gamma=1, own_term=own_term,
                count_field=count_field, n_trials=50, seed=5, record=True,
            )  # fmt: skip
        return cooperative.run_coop_ucb_nonprivate(
            env, graph, horizon=40, gamma=2, own_term=own_term, count_field=count_field,
            n_trials=50, seed=5, record=True,
        )  # fmt: skip

    lazy = run()
    monkeypatch.setattr(cooperative, "LazyUniforms", _eager_policy)
    eager = run()
    np.testing.assert_array_equal(lazy.actions, eager.actions)
    np.testing.assert_array_equal(lazy.rewards, eager.rewards)
    for name in eager.transcript.content:
        np.testing.assert_array_equal(lazy.transcript.content[name], eager.transcript.content[name])
    assert lazy.accountant.ledger.draws.equals(eager.accountant.ledger.draws)


class _EagerDraws:
    """The draws as before lazy streams: every generator built, every row drawn each
    round (``PolicyUniforms``), read through the lazy interface."""

    def __init__(self, lazy: LazyUniforms, horizon: int) -> None:
        self.eager = PolicyUniforms(np.asarray(lazy.build_all()), horizon)

    def at(self, t):
        full = self.eager.at(t).reshape(-1)
        return lambda rows: full[rows]


@pytest.mark.parametrize("kind", ["uniform", "complement", "point"])
def test_byzantine_runs_equal_the_eager_contamination_draws(monkeypatch, kind):
    """Byzantine runs whose Q is drawn (uniform, complement) or not (point) send the
    same messages with lazily built draw streams as with every stream drawn."""
    from fedpriv.algorithms.dubey_aamas import byzantine
    from fedpriv.algorithms.dubey_aamas.robust import Contamination

    env = BernoulliMAB(np.array([[0.3, 0.6, 0.5]] * 3))
    options = {"kind": kind, "value": 0.5} if kind == "point" else {"kind": kind}

    def run():
        return byzantine.run_byzantine_coop_ucb(
            env, nx.complete_graph(3), horizon=30, gamma=1, n_trials=40, seed=9, record=True,
            contamination=Contamination(rate=0.2, **options),
        )  # fmt: skip

    lazy = run()
    streams = byzantine._contamination_streams

    def eager_streams(root, n_trials, n_agents, horizon):
        flips, draws = streams(root, n_trials, n_agents, horizon)
        return flips, _EagerDraws(draws, horizon)

    monkeypatch.setattr(byzantine, "_contamination_streams", eager_streams)
    eager = run()
    assert lazy.transcript.content["corrupted"].any()
    for name in eager.transcript.content:
        np.testing.assert_array_equal(lazy.transcript.content[name], eager.transcript.content[name])
    np.testing.assert_array_equal(lazy.actions, eager.actions)


def test_policy_uniforms_are_each_generators_consecutive_draws():
    """Round ``t``'s draw of row (b, v) is draw ``t - first`` of generator (b, v), over
    blocks, for a strided generator array (a slice of spawned children) too."""
    root = np.random.SeedSequence(17)
    children = spawn_stream_rngs(root, n_trials=4, n_agents=3, n_children=2, stream=Stream.POLICY)
    reference = spawn_stream_rngs(root, n_trials=4, n_agents=3, n_children=2, stream=Stream.POLICY)
    uniforms = PolicyUniforms(children[:, :, 1], horizon=30, chunk=7)
    expected = np.stack([[g.random(28) for g in row] for row in reference[:, :, 1]])
    for t in range(3, 31):
        np.testing.assert_array_equal(uniforms.at(t), expected[:, :, t - 3])
