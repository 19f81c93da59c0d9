"""Fed_UCB's arm choice in the step-by-step oracle (``_gossip_reference.choose_arms``): the
tie set read from the row maximum is the one read at the argmax (the reference before
issue 23), so the pulled arms are the same."""

from __future__ import annotations

import numpy as np
from fedpriv.algorithms.gossip_fed_ucb.rounds import confidence_radius, pick_uniform
from hypothesis import given
from hypothesis import strategies as st

from tests.algorithms._gossip_reference import choose_arms

__all__: list[str] = []


def _reference(counts, n_tilde, theta, u, t, *, neighbor_mask, horizon, radius_epsilon):
    n = counts.shape[1]
    behind = counts < n_tilde - n
    neighbors_max = np.where(neighbor_mask, n_tilde[:, None, :, :], 0).max(axis=2)
    new_tilde = np.maximum(counts, neighbors_max)
    q = theta + confidence_radius(counts, t, n_agents=n, horizon=horizon, epsilon=radius_epsilon)
    arm = q.argmax(axis=-1)
    best = q == np.take_along_axis(q, arm[..., None], axis=-1)
    if best.sum(axis=-1).max() > 1:
        arm = pick_uniform(best, u)
    if behind.any(axis=-1).any():
        arm = np.where(behind.any(axis=-1), pick_uniform(behind, u), arm)
    return arm, new_tilde


@given(
    seed=st.integers(0, 2**32 - 1),
    shape=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5)),
    t=st.integers(1, 50),
    epsilon=st.sampled_from([1.0, 5.0, float("inf")]),
    levels=st.integers(1, 4),
)
def test_choose_arms_equals_the_argmax_reference(seed, shape, t, epsilon, levels):
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 4, size=shape)
    n_tilde = counts + rng.integers(0, 2 * shape[1] + 2, size=shape)
    theta = rng.integers(0, levels, size=shape) / levels  # few values: ties are common
    u = rng.random(shape[:2])
    mask = rng.random((shape[1], shape[1])) < 0.6
    np.fill_diagonal(mask, True)
    kwargs = {"neighbor_mask": mask[None, :, :, None], "horizon": 64, "radius_epsilon": epsilon}
    arm, tilde = choose_arms(counts, n_tilde, theta, u, t, **kwargs)
    ref_arm, ref_tilde = _reference(counts, n_tilde, theta, u, t, **kwargs)
    np.testing.assert_array_equal(arm, ref_arm)
    np.testing.assert_array_equal(tilde, ref_tilde)
