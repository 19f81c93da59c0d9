"""``stream_rngs`` gives ``stream_rng``'s generator at every address (issue 23).

The batch construction must give the same state, the same draws and the same spawned
children at every address, for any root (entropy of one or many words, or a list;
spawn keys of any size). Deterministic, no false alarms.
"""

from __future__ import annotations

import numpy as np
from fedpriv.algorithms.seeding import Stream, stream_rng, stream_rngs
from hypothesis import given, settings
from hypothesis import strategies as st

_ENTROPY = st.one_of(
    st.integers(0, 2**32 - 1),
    st.integers(2**32, 2**256),
    st.lists(st.integers(0, 2**70), min_size=1, max_size=5),
)


@settings(max_examples=60, deadline=None)
@given(
    entropy=_ENTROPY,
    key=st.lists(st.integers(0, 2**40), max_size=6),
    n_trials=st.integers(1, 4),
    n_agents=st.integers(1, 4),
    side=st.integers(0, 1),
    stream=st.sampled_from(list(Stream)),
)
def test_every_address_is_stream_rng_s(entropy, key, n_trials, n_agents, side, stream) -> None:
    root = np.random.SeedSequence(entropy, spawn_key=tuple(key))
    fast = stream_rngs(root, n_trials=n_trials, n_agents=n_agents, side=side, stream=stream)
    assert fast.shape == (n_trials, n_agents)
    for (j, i), rng in np.ndenumerate(fast):
        slow = stream_rng(root, trial=j, side=side, agent=i, stream=stream)
        assert rng.bit_generator.state == slow.bit_generator.state
        children, slow_children = rng.spawn(2), slow.spawn(2)
        for a, b in zip(children, slow_children, strict=True):
            assert a.bit_generator.state == b.bit_generator.state
        assert np.array_equal(rng.laplace(0.0, 1.0, 5), slow.laplace(0.0, 1.0, 5))
