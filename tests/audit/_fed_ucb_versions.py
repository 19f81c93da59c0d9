"""Issue 33's four versions of a small federated UCB, written through the public API only.

M agents, K arms, R epochs. In every epoch each agent pulls each arm ``pulls`` times
(reward table ``(M, K, R * pulls)``, rewards in [0, 1]) and sends the server, for each
arm, its *cumulative* sum of that arm's rewards so far, through
:func:`fedpriv.privacy.laplace_release`. The server's UCB index is a function of the
messages (post-processing), so the view is agent 0's R messages of K sums,
``(n, R, K)``. The claim: each agent's rewards are ε = 1-DP to the server.

- ``correct``: Laplace scale R/ε per release, the epoch level declared sequential (a
  reward enters up to R cumulative sums): true ε = 1, accountant 1.
- ``one-of-ten-disjoint``: scale 1/ε (sized for one release of R), the epoch level
  declared disjoint: true ε = R, accountant 1 (the declaration is wrong).
- ``one-of-ten-honest``: the same noise, epochs declared sequential: true ε = R,
  accountant R.
- ``reused-noise``: one Laplace(1/ε) draw per (agent, arm), charged once (epoch 0),
  added to every later message too: consecutive differences are exact, true ε = ∞
  for a reward after the first message, accountant 1.
"""

from __future__ import annotations

import numpy as np
from fedpriv.privacy import Accountant, NeighboringRelation, laplace_release

__all__ = ["VERSIONS", "fed_ucb", "reward_table"]

VERSIONS = ("correct", "one-of-ten-disjoint", "one-of-ten-honest", "reused-noise")
N_AGENTS, N_ARMS, N_EPOCHS, PULLS, EPSILON = 2, 2, 10, 2, 1.0


def reward_table(seed: int = 7) -> np.ndarray:
    """Bernoulli(0.6, 0.4) rewards, shape (M, K, R * pulls)."""
    rng = np.random.default_rng(seed)
    means = np.array([0.6, 0.4])[None, :, None]
    return (rng.random((N_AGENTS, N_ARMS, N_EPOCHS * PULLS)) < means).astype(np.float64)


def fed_ucb(version: str, rewards: np.ndarray, seed, n_trials: int = 1):
    """``(messages (n_trials, R, M, K), accountant)`` of one version."""
    sequential = version != "one-of-ten-disjoint"
    accountant = Accountant(
        neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
        disjoint=("trial", "agent", "arm") + (() if sequential else ("epoch",)),
        sequential=("epoch",) if sequential else (),
    )
    rng = np.random.default_rng(seed)
    scale = N_EPOCHS / EPSILON if version == "correct" else 1.0 / EPSILON
    cumulative = np.cumsum(np.asarray(rewards).reshape(N_AGENTS, N_ARMS, N_EPOCHS, PULLS), axis=3)
    sums = cumulative[..., -1].cumsum(axis=2)  # (M, K, R): cumulative per-arm sums
    keys = {
        "trial": np.arange(n_trials)[:, None, None],
        "agent": np.arange(N_AGENTS)[None, :, None],
        "arm": np.arange(N_ARMS)[None, None, :],
    }
    messages = np.empty((n_trials, N_EPOCHS, N_AGENTS, N_ARMS))
    noise = None
    for r in range(N_EPOCHS):
        true = np.broadcast_to(sums[:, :, r], (n_trials, N_AGENTS, N_ARMS))
        if version == "reused-noise" and noise is not None:
            messages[:, r] = true + noise  # the epoch-0 draw again, uncharged
            continue
        messages[:, r] = laplace_release(
            true,
            scale=scale,
            l1_sensitivity=1.0,
            accountant=accountant,
            rng=rng,
            keys={**keys, "epoch": r},
        )
        noise = messages[:, r] - true
    return messages, accountant


def view(version: str):
    """``run(table, n, seed) -> (n, R, K)``: agent 0's messages."""

    def run(table, n, seed):
        return fed_ucb(version, table, seed, n)[0][:, :, 0, :]

    return run
