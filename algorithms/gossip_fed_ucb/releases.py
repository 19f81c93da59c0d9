"""Fed_UCB's releases (Zhu et al. 2021, Alg. 4 line 1 and Alg. 2–3), opened before round 1.

Split from :mod:`fedpriv.algorithms.gossip_fed_ucb.gossip_ucb` (which re-exports
:func:`open_gossip_fed_ucb_releases`); the modes are documented there.
"""

from __future__ import annotations

import numpy as np
from fedpriv.privacy import Accountant, LaplaceTreeCounter, laplace_release, raw_release
from fedpriv.privacy.calibrations import gossip_fed_ucb_released_prefixes, gossip_fed_ucb_scale

__all__ = ["open_gossip_fed_ucb_releases"]

_PHASE_INIT, _PHASE_STREAM = "init", "stream"


def open_gossip_fed_ucb_releases(
    initial_rewards: np.ndarray,
    *,
    horizon: int,
    epsilon: float,
    mode: str,
    log_base: str,
    rng,
    noise_on_empty_nodes: bool = False,
    reward_bounds: tuple[float, float] | None = (0.0, 1.0),
    secure_noise: bool = False,
    publish_final: bool = False,
) -> tuple[Accountant, np.ndarray, LaplaceTreeCounter, int]:
    """Open Fed_UCB's releases: a fresh accountant, the initial-pull release, the trees.

    This is everything Fed_UCB charges before round 1, so calling it alone gives the
    accountant's view of a deployment (used for horizons too long to simulate).

    Parameters
    ----------
    initial_rewards : ndarray of float64, shape (n_trials, n_agents, n_arms)
        ``X_{i,k}(0)`` of every trial.
    horizon, epsilon, mode, log_base, noise_on_empty_nodes, secure_noise, publish_final
        As in :func:`run_gossip_fed_ucb`. The trees are charged for the prefixes that reach
        the view: ``1..T−1`` (Algorithm 4 sends ϑ̃(t−1), line 19, and acts on
        ϑ̃(t−1), line 9), ``1..T`` with ``publish_final``
        (:func:`fedpriv.privacy.calibrations.gossip_fed_ucb_released_prefixes`).
    rng : object ndarray of Generator, shape (n_trials, n_agents)
        Privacy-noise streams.
    reward_bounds : (float, float) or None
        The environment's declared reward support (``None``: unbounded). In paper
        mode rewards enter the tree unclipped, so if the support is not inside
        [0, 1] the tree's sensitivity of 1 does not hold and no finite ε does: the
        stream cells are then also charged ``events.NonPrivate`` (the §5 synthetic
        rewards μ + N(0, 1) against §4.1's [0, 1] sensitivity). The decision uses
        the declared support, never the realised data.

    Returns
    -------
    accountant : Accountant
        Disjoint levels ``("trial", "agent", "arm", "phase")``; phase ``"init"`` holds
        the round-0 records, ``"stream"`` the rounds ``1..T`` (Definition 1's stream).
    initial_means : ndarray, shape (n_trials, n_agents, n_arms)
        ``X̃(0)`` as released: raw (paper mode, ε = ∞) or with ``Lap(b)`` (corrected).
    counter : LaplaceTreeCounter
        One tree per (trial, agent, arm), capacity ``horizon``, charged for its
        ``released_prefixes``.
    n_clipped : int
        Initial rewards outside [0, 1] that were clipped (corrected mode).
    """
    B, N, M = initial_rewards.shape
    scale = gossip_fed_ucb_scale(
        epsilon, horizon, mode=mode, log_base=log_base, publish_final=publish_final
    )
    accountant = Accountant(disjoint=("trial", "agent", "arm", "phase"))
    keys = {
        "trial": np.arange(B)[:, None, None],
        "agent": np.arange(N)[None, :, None],
        "arm": np.arange(M)[None, None, :],
    }
    x0 = initial_rewards
    n_clipped = 0
    if mode == "corrected":
        n_clipped = int(((x0 < 0.0) | (x0 > 1.0)).sum())
        x0 = np.clip(x0, 0.0, 1.0)
    if mode == "corrected" and scale > 0:
        init = laplace_release(
            x0,
            scale=scale,
            l1_sensitivity=1.0,
            accountant=accountant,
            keys={**keys, "phase": _PHASE_INIT},
            rng=rng,
            secure=secure_noise,
        )
    else:
        reason = (
            "initial pulls released raw (Zhu et al. Alg. 4 line 1)"
            if scale > 0
            else "epsilon = inf: no noise"
        )
        init = raw_release(
            x0, accountant=accountant, keys={**keys, "phase": _PHASE_INIT}, reason=reason
        )
    if mode == "paper" and (
        reward_bounds is None or reward_bounds[0] < 0.0 or reward_bounds[1] > 1.0
    ):
        raw_release(
            np.zeros((B, N, M)),
            accountant=accountant,
            keys={**keys, "phase": _PHASE_STREAM},
            reason=(
                "rewards outside the declared [0, 1] fed unclipped (Zhu et al. §5 "
                "synthetic data; §4.1 assumes sensitivity 1)"
            ),
        )
    counter = LaplaceTreeCounter(
        stream_shape=(B, N, M),
        horizon=horizon,
        scale=scale,
        accountant=accountant,
        keys={**keys, "phase": _PHASE_STREAM},
        rng=rng,
        out_of_bounds="clip" if mode == "corrected" else "ignore",
        noise_on_empty_nodes=noise_on_empty_nodes,
        secure=secure_noise,
        released_prefixes=gossip_fed_ucb_released_prefixes(horizon, publish_final=publish_final),
    )
    return accountant, init, counter, n_clipped
