"""``stream_rngs`` builds every address's generator from its assembled entropy words.

Issue 23: building ``SeedSequence(e, spawn_key=k)`` per (trial, agent) converted the
spawn key every time; ``stream_rngs`` now gives SeedSequence the words it would have
assembled. The generators must be those of ``stream_rng`` at every address: the same
state, the same draws and the same spawned children. Deterministic, no false alarms.
"""

from __future__ import annotations

import numpy as np
from fedpriv.algorithms import seeding
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


def test_words_follow_seed_sequence_and_fall_back_otherwise(monkeypatch) -> None:
    root = np.random.SeedSequence(0, spawn_key=(7, 3))
    words = seeding._address_words(root, n_trials=2, n_agents=3, side=1, stream=Stream.NOISE)
    # entropy 0 padded to the pool size (4 words), then the key, trial, side, agent, stream
    assert words.tolist() == [0, 0, 0, 0, 7, 3, 0, 1, 0, int(Stream.NOISE)]
    assert seeding._uint32_words(2**32 + 5) == [5, 1]
    assert seeding._uint32_words(-1) is None
    # an entropy this reading does not cover (an array) is built address by address
    odd = np.random.SeedSequence(np.array([1, 2], dtype=np.uint32))
    assert seeding._address_words(odd, n_trials=1, n_agents=1, side=0, stream=Stream.NOISE) is None
    built = stream_rngs(odd, n_trials=2, n_agents=1, stream=Stream.NOISE)
    slow = stream_rng(odd, trial=1, agent=0, stream=Stream.NOISE)
    assert built[1, 0].bit_generator.state == slow.bit_generator.state
    # a SeedSequence that assembled its entropy otherwise is caught by the check
    monkeypatch.setattr(seeding, "_uint32_words", lambda value: [1])
    assert seeding._address_words(root, n_trials=1, n_agents=1, side=0, stream=Stream.NOISE) is None
    assert stream_rngs(root, n_trials=1, n_agents=1, stream=Stream.NOISE)[
        0, 0
    ].bit_generator.state == (
        stream_rng(root, trial=0, agent=0, stream=Stream.NOISE).bit_generator.state
    )
