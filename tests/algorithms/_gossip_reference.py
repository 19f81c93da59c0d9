"""The step-by-step round loop of Gossip_UCB / Fed_UCB before issue 23: the test oracle of
:mod:`fedpriv.algorithms.gossip_fed_ucb.fused`.

:func:`choose_arms`, :func:`updated_means` and :func:`gossip_step` are the steps the runs
used until the fused loop replaced them (Zhu et al. 2021, Alg. 1 lines 5–22, Alg. 4 lines
5–22), one array pass per operation on every (trial, agent, arm) cell; Fed_UCB's release
goes through the tree counter's dense :meth:`~fedpriv.privacy.LaplaceTreeCounter.step` and
:meth:`~fedpriv.privacy.LaplaceTreeCounter.release`. :func:`reference_run` opens a batch as
the runs do and plays it with these steps, so a run must equal it bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import _validate_common
from fedpriv.algorithms.gossip_fed_ucb.rounds import (
    OpenedBatch,
    confidence_radius,
    open_batch,
    pick_uniform,
)
from fedpriv.algorithms.seeding import as_seed_sequence

__all__ = ["choose_arms", "gossip_step", "reference_run", "updated_means"]


def choose_arms(counts, n_tilde, theta, u, t, *, neighbor_mask, horizon, radius_epsilon):
    """Alg. 1 lines 5–13 at round ``t``: the pulled arms ``(B, N)`` and ñ(t+1)."""
    N = counts.shape[1]
    # Lines 5-6: consistency set with ñ(t), then ñ(t+1) from neighbors' ñ(t).
    behind = counts < n_tilde - N
    neighbors_max = np.where(neighbor_mask, n_tilde[:, None, :, :], 0).max(axis=2)
    n_tilde = np.maximum(counts, neighbors_max)
    forced = behind.any(axis=-1)
    # Lines 7-13: UCB argmax (uniform tie-break) or a uniform pick from 𝒜_i.
    q = theta + confidence_radius(counts, t, n_agents=N, horizon=horizon, epsilon=radius_epsilon)
    arm = q.argmax(axis=-1)
    best = q == q.max(axis=-1, keepdims=True)  # the value at ``arm``: same ties
    if best.sum(axis=-1).max() > 1:  # a tie somewhere: break it uniformly
        arm = pick_uniform(best, u)
    if forced.any():
        arm = np.where(forced, pick_uniform(behind, u), arm)
    return arm, n_tilde


def updated_means(opened: OpenedBatch, arm, t, counts, means):
    """Lines 14/16: pull, count (in place) and release the pulled arm's (noisy) mean."""
    B, N, M = counts.shape
    pulled = arm[..., None] == np.arange(M)
    reward = opened.rewards[np.arange(B)[:, None], np.arange(N)[None, :], t, arm]
    counts += pulled
    if opened.counter is not None:
        opened.counter.step(np.where(pulled, reward[..., None], 0.0), pulled)
        total = opened.counter.release(pulled)
    else:
        opened.running += np.where(pulled, reward[..., None], 0.0)
        total = opened.running
    return np.where(pulled, (opened.init + np.where(pulled, total, 0.0)) / counts, means)


def gossip_step(theta, means, new_means, edge):
    """Lines 17–22: average ϑ over each trial's active edge ``edge`` (B, 2), track the means."""
    step = new_means - means
    new_theta = theta + step
    u_e, v_e = edge[:, 0], edge[:, 1]
    rows = np.arange(theta.shape[0])
    average = 0.5 * (theta[rows, u_e] + theta[rows, v_e])
    new_theta[rows, u_e] = average + step[rows, u_e]
    new_theta[rows, v_e] = average + step[rows, v_e]
    return new_theta


def reference_run(
    env,
    graph,
    *,
    horizon: int,
    n_trials: int,
    seed,
    epsilon: float = math.inf,
    private: bool = False,
    mode: str = "paper",
    log_base: str = "2",
    noise_on_empty_nodes: bool = False,
    secure_noise: bool = False,
    publish_final: bool = False,
    rounds: int | None = None,
) -> dict:
    """A batch opened as the runs open it, played with the steps above.

    Returns
    -------
    dict
        ``actions`` (B, N, rounds) int16, ``counts``, ``theta`` and ``means`` of every
        round (rounds + 1, B, N, M), ``accountant`` (None for Gossip_UCB) and
        ``n_out_of_bounds``.
    """
    adjacency = _validate_common(env, graph, horizon, n_trials)
    rounds = horizon if rounds is None else rounds
    opened = open_batch(
        env,
        graph,
        as_seed_sequence(seed),
        horizon=horizon,
        n_trials=n_trials,
        epsilon=epsilon,
        private=private,
        mode=mode,
        log_base=log_base,
        noise_on_empty_nodes=noise_on_empty_nodes,
        rounds=rounds,
        secure_noise=secure_noise,
        publish_final=publish_final,
    )
    counts = np.ones(opened.init.shape, dtype=np.int64)
    n_tilde = np.ones(opened.init.shape, dtype=np.int64)
    means = opened.init / counts
    theta = means.copy()
    actions = np.empty(opened.init.shape[:2] + (rounds,), dtype=np.int16)
    trace = {name: np.empty((rounds + 1,) + opened.init.shape) for name in ("theta", "means")}
    trace["theta"][0], trace["means"][0] = theta, means
    for t in range(1, rounds + 1):
        arm, n_tilde = choose_arms(
            counts,
            n_tilde,
            theta,
            opened.uniforms[:, :, t - 1],
            t,
            neighbor_mask=adjacency[None, :, :, None],
            horizon=horizon,
            radius_epsilon=epsilon if private else math.inf,
        )
        actions[:, :, t - 1] = arm
        new_means = updated_means(opened, arm, t, counts, means)
        theta, means = gossip_step(theta, means, new_means, opened.edges[:, t - 1]), new_means
        trace["theta"][t], trace["means"][t] = theta, means
    counter_out = opened.counter.n_out_of_bounds if opened.counter is not None else 0
    return {
        "actions": actions,
        "counts": counts,
        "theta": trace["theta"],
        "means": trace["means"],
        "accountant": opened.accountant,
        "n_out_of_bounds": opened.n_out_of_bounds + counter_out,
    }
