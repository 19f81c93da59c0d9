"""Stream addresses: the batched constructors give numpy's own generators bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.algorithms.seeding import (
    Stream,
    child_seed,
    spawn_stream_rngs,
    stream_rng,
    stream_rngs,
)
from hypothesis import given, settings
from hypothesis import strategies as st

_ROOTS = st.builds(
    lambda entropy, key: np.random.SeedSequence(entropy, spawn_key=tuple(key)),
    st.integers(min_value=0, max_value=2**160),
    st.lists(st.integers(min_value=0, max_value=2**40), max_size=3),
)


def _state(generator: np.random.Generator) -> dict:
    return generator.bit_generator.state


@settings(max_examples=40, deadline=None)
@given(
    root=_ROOTS,
    n_trials=st.integers(0, 4),
    n_agents=st.integers(0, 3),
    side=st.integers(0, 1),
    stream=st.sampled_from(list(Stream)),
)
def test_stream_rngs_are_stream_rng(root, n_trials, n_agents, side, stream):
    out = stream_rngs(root, n_trials=n_trials, n_agents=n_agents, side=side, stream=stream)
    assert out.shape == (n_trials, n_agents)
    for j in range(n_trials):
        for i in range(n_agents):
            ref = stream_rng(root, trial=j, side=side, agent=i, stream=stream)
            assert _state(out[j, i]) == _state(ref)
            assert np.array_equal(out[j, i].standard_normal(7), ref.standard_normal(7))


@settings(max_examples=40, deadline=None)
@given(
    root=_ROOTS,
    n_trials=st.integers(0, 3),
    n_agents=st.integers(0, 3),
    n_children=st.integers(0, 3),
    side=st.integers(0, 1),
)
def test_spawn_stream_rngs_are_the_spawned_children(root, n_trials, n_agents, n_children, side):
    out = spawn_stream_rngs(
        root,
        n_trials=n_trials,
        n_agents=n_agents,
        n_children=n_children,
        side=side,
        stream=Stream.NOISE,
    )
    assert out.shape == (n_trials, n_agents, n_children)
    for j in range(n_trials):
        for i in range(n_agents):
            parent = stream_rng(root, trial=j, side=side, agent=i, stream=Stream.NOISE)
            for k, ref in enumerate(parent.spawn(n_children)):
                assert _state(out[j, i, k]) == _state(ref)
                assert np.array_equal(out[j, i, k].standard_normal(5), ref.standard_normal(5))


@pytest.mark.parametrize("fast_root", [True, False])
def test_batched_generators_behave_as_seed_sequences(fast_root):
    """``seed_seq`` of a batched generator answers as numpy's SeedSequence does."""
    root = np.random.SeedSequence(2020 if fast_root else 2**300, spawn_key=(4,))
    generator = stream_rngs(root, n_trials=2, n_agents=1, side=1, stream=Stream.NOISE)[1, 0]
    ref = stream_rng(root, trial=1, side=1, agent=0, stream=Stream.NOISE)
    seq, ref_seq = generator.bit_generator.seed_seq, ref.bit_generator.seed_seq
    assert seq.entropy == ref_seq.entropy
    assert tuple(seq.spawn_key) == tuple(ref_seq.spawn_key)
    assert np.array_equal(seq.generate_state(3), ref_seq.generate_state(3))
    assert np.array_equal(seq.generate_state(4, np.uint64), ref_seq.generate_state(4, np.uint64))
    assert _state(generator.spawn(2)[1]) == _state(ref.spawn(2)[1])


@settings(max_examples=40, deadline=None)
@given(root=_ROOTS, index=st.integers(0, 6), tail=st.lists(st.integers(0, 2**40), max_size=3))
def test_child_seed_is_numpy_spawn_and_keeps_the_parents_key(root, index, tail):
    # child_seed(root, i) is root.spawn(i + 1)[i] (NumPy's own addressing), and a child of
    # a child extends the child's key: the parent's key is never dropped.
    child = child_seed(root, index)
    spawned = np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key).spawn(index + 1)
    assert child.spawn_key == spawned[index].spawn_key == (*root.spawn_key, index)
    assert np.array_equal(child.generate_state(4), spawned[index].generate_state(4))
    grandchild = child_seed(child, *tail)
    assert grandchild.spawn_key == (*root.spawn_key, index, *tail)
    assert grandchild.entropy == root.entropy
    assert child_seed(root, index, *tail).spawn_key == grandchild.spawn_key


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**63), keys=st.lists(st.integers(0, 2**32), max_size=4))
def test_child_seed_of_an_int_is_the_addressed_seed_sequence(seed, keys):
    # For an int root (spawn key ()), the one helper addresses what the inline forms
    # SeedSequence(seed, spawn_key=keys) did: no committed stream moves.
    want = np.random.SeedSequence(seed, spawn_key=tuple(keys))
    got = child_seed(seed, *keys)
    assert (got.entropy, got.spawn_key) == (want.entropy, want.spawn_key)
    assert np.array_equal(got.generate_state(8), want.generate_state(8))


def test_stream_rng_is_child_seed_at_its_address():
    root = np.random.SeedSequence(11, spawn_key=(5,))
    got = stream_rng(root, trial=2, side=1, agent=3, stream=Stream.NOISE)
    want = np.random.default_rng(child_seed(root, 2, 1, 3, int(Stream.NOISE)))
    assert _state(got) == _state(want)


@pytest.mark.parametrize(
    ("seed", "keys", "error", "match"),
    [
        (-1, (0,), ValueError, "`seed` must be >= 0"),
        (1.5, (0,), TypeError, "`seed` must be an int or a SeedSequence"),
        (3, (0, -2), ValueError, "`keys` must be integers >= 0"),
    ],
)
def test_child_seed_refuses_bad_input(seed, keys, error, match):
    with pytest.raises(error, match=match):
        child_seed(seed, *keys)
