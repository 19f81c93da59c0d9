"""Dubey & Pentland (AAMAS 2020) Figure 1 (a)–(c), at horizons that run in minutes.

The paper's experimental numbers were lost with its formulas (§5: only
"100 trials" for Fig. 1(c) survives); every setting here is *our* choice, following
fedpriv's reproduction protocol, and is written next to the figure:

* Bernoulli arms, means U[0, 1] ("randomly initialized"), homogeneous over agents;
  Fig. 1(b) constrains them to [0.2, 0.8] (the paper's range is lost, §5).
* Erdős–Rényi G(M, p) redrawn until connected (:func:`fedpriv.algorithms.networks.graphs.make_graph`),
  a new graph and new means per trial ("randomly initialized trials").
* Private runs: ε = 0.1, ϑ = 1.1 (Tossou & Dimitrakakis' experiments), decaying
  noise rule, own term noisy, count field "release" (fedpriv's defaults).
* Byzantine runs: every agent byzantine (the algorithm's own model), ε_c = 0.1 with
  Q = Bernoulli(1 - μ_k) (our choice), δ_t = t^-4 (reconstructed with low confidence); a δ_t = t^-2 curve shows
  the sensitivity to that lost constant.

Each figure plots the group regret R_G(t) (eq. 2), mean over trials with the min–max
band; Fig. 1(c) plots R_G(T) against γ. :mod:`fedpriv.audit.families.dubey_aamas.report`
writes them atomically (a temporary folder, then renames) as
``<out>/dubey_aamas/<name>.png``, ``.csv`` and ``.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import networkx as nx
import numpy as np
import pandas as pd
from fedpriv.algorithms.dubey_aamas.baselines import run_dp_ucb_int, run_ucb1
from fedpriv.algorithms.dubey_aamas.byzantine import run_byzantine_coop_ucb
from fedpriv.algorithms.dubey_aamas.cooperative import run_coop_ucb_nonprivate, run_private_coop_ucb
from fedpriv.algorithms.dubey_aamas.robust import Contamination
from fedpriv.algorithms.environments.bernoulli import homogeneous_bandit
from fedpriv.algorithms.networks.graphs import make_graph
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, child_seed, stream_rng

__all__ = ["EXPERIMENTS", "ExperimentConfig", "default_config", "run_experiment"]

EXPERIMENTS = ("dubey-aamas-fig1a", "dubey-aamas-fig1b", "dubey-aamas-fig1c")
PAPER = "dubey_aamas"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ExperimentConfig:
    """Settings of one figure (defaults: a few minutes on 2 cores; the paper's are lost).

    Attributes
    ----------
    n_agents, n_arms, horizon, n_trials : int
    p : float
        Erdős–Rényi edge probability.
    gamma : int
        Message life γ (Fig. 1(a), (b)); Fig. 1(c) sweeps ``1..max_gamma``.
    max_gamma : int
    epsilon, theta : float
        Privacy input ε and ϑ.
    contamination : float
        ε_c of Fig. 1(b).
    seed : int
    """

    n_agents: int = 20
    n_arms: int = 5
    horizon: int = 2000
    n_trials: int = 8
    p: float = 0.2
    gamma: int = 2
    max_gamma: int = 5
    epsilon: float = 0.1
    theta: float = 1.1
    contamination: float = 0.1
    seed: int = 0


def _trial_world(config: ExperimentConfig, trial: int, mean_range: tuple[float, float]):
    root = as_seed_sequence(config.seed)
    env = homogeneous_bandit(
        config.n_agents,
        config.n_arms,
        stream_rng(root, trial=trial, agent=0, stream=Stream.ENVIRONMENT),
        mean_range=mean_range,
    )
    graph = make_graph(
        "erdos_renyi",
        config.n_agents,
        p=config.p,
        rng=stream_rng(root, trial=trial, agent=0, stream=Stream.NETWORK),
    )
    run_seed = child_seed(root, trial, 1)
    return env, graph, run_seed


def _band(curves: dict[str, list[np.ndarray]], x_name: str, x: np.ndarray) -> pd.DataFrame:
    """Mean, min and max over trials; round axes thinned to about 250 points."""
    keep = np.arange(x.size)
    if x_name == "t" and x.size > 250:
        keep = np.unique(np.r_[0, np.arange(x.size // 250 - 1, x.size, x.size // 250), x.size - 1])
    x = x[keep]
    rows = []
    for name, values in curves.items():
        stack = np.stack(values)[:, keep]
        rows.append(
            pd.DataFrame(
                {
                    "algorithm": name,
                    x_name: x,
                    "mean": stack.mean(axis=0),
                    "min": stack.min(axis=0),
                    "max": stack.max(axis=0),
                    "n_trials": stack.shape[0],
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def _fig1a(config: ExperimentConfig, say: Callable[[str], None]) -> pd.DataFrame:
    c = config
    curves: dict[str, list[np.ndarray]] = {}
    for j in range(c.n_trials):
        env, graph, seed = _trial_world(c, j, (0.0, 1.0))
        runs = {
            "Private MA-UCB": run_private_coop_ucb(
                env,
                graph,
                horizon=c.horizon,
                epsilon=c.epsilon,
                theta=c.theta,
                gamma=c.gamma,
                seed=seed,
            ),
            "Non-private cooperative UCB": run_coop_ucb_nonprivate(
                env, graph, horizon=c.horizon, gamma=c.gamma, seed=seed
            ),
            "UCB1 (isolated)": run_ucb1(env, horizon=c.horizon, seed=seed),
            "DP-UCB-INT (isolated)": run_dp_ucb_int(
                env, horizon=c.horizon, epsilon=c.epsilon, theta=c.theta, seed=seed
            ),
        }
        for name, run in runs.items():
            curves.setdefault(name, []).append(run.group_regret[0])
        say(f"fig1a trial {j + 1}/{c.n_trials}")
    return _band(curves, "t", np.arange(1, c.horizon + 1))


def _byzantine(
    env, graph, c: ExperimentConfig, seed, *, rate: float, gamma: int, exponent: float = 4.0
):
    return run_byzantine_coop_ucb(
        env,
        graph,
        horizon=c.horizon,
        gamma=gamma,
        seed=seed,
        contamination=Contamination(rate=rate, kind="complement"),
        confidence_exponent=exponent,
    )


def _fig1b(config: ExperimentConfig, say: Callable[[str], None]) -> pd.DataFrame:
    c = config
    curves: dict[str, list[np.ndarray]] = {}
    for j in range(c.n_trials):
        env, graph, seed = _trial_world(c, j, (0.2, 0.8))
        runs = {
            f"Byzantine MA-UCB (ε_c = {c.contamination:g})": _byzantine(
                env, graph, c, seed, rate=c.contamination, gamma=c.gamma
            ),
            "Byzantine MA-UCB (ε_c = 0)": _byzantine(env, graph, c, seed, rate=0.0, gamma=c.gamma),
            f"Byzantine MA-UCB (ε_c = {c.contamination:g}, δ_t = t^-2)": _byzantine(
                env, graph, c, seed, rate=c.contamination, gamma=c.gamma, exponent=2.0
            ),
            "UCB1 (isolated)": run_ucb1(env, horizon=c.horizon, seed=seed),
        }
        for name, run in runs.items():
            curves.setdefault(name, []).append(run.group_regret[0])
        say(f"fig1b trial {j + 1}/{c.n_trials}")
    return _band(curves, "t", np.arange(1, c.horizon + 1))


def _fig1c(config: ExperimentConfig, say: Callable[[str], None]) -> pd.DataFrame:
    c = config
    gammas = np.arange(1, c.max_gamma + 1)
    curves: dict[str, list[np.ndarray]] = {}
    for j in range(c.n_trials):
        env, graph, seed = _trial_world(c, j, (0.2, 0.8))
        private, byzantine = [], []
        for gamma in gammas.tolist():
            g = min(gamma, nx.diameter(graph))  # γ beyond the diameter changes nothing
            private.append(
                run_private_coop_ucb(
                    env,
                    graph,
                    horizon=c.horizon,
                    epsilon=c.epsilon,
                    theta=c.theta,
                    gamma=g,
                    seed=seed,
                ).group_regret[0, -1]
            )
            byzantine.append(
                _byzantine(env, graph, c, seed, rate=c.contamination, gamma=g).group_regret[0, -1]
            )
        curves.setdefault("Private MA-UCB", []).append(np.array(private))
        curves.setdefault(f"Byzantine MA-UCB (ε_c = {c.contamination:g})", []).append(
            np.array(byzantine)
        )
        curves.setdefault("UCB1 (isolated, γ = 0)", []).append(
            np.full(gammas.size, run_ucb1(env, horizon=c.horizon, seed=seed).group_regret[0, -1])
        )
        say(f"fig1c trial {j + 1}/{c.n_trials}")
    return _band(curves, "gamma", gammas)


_RUNNERS = {"dubey-aamas-fig1a": _fig1a, "dubey-aamas-fig1b": _fig1b, "dubey-aamas-fig1c": _fig1c}

_DEFAULTS = {
    "dubey-aamas-fig1a": ExperimentConfig(),
    "dubey-aamas-fig1b": ExperimentConfig(),
    "dubey-aamas-fig1c": ExperimentConfig(horizon=1000, n_trials=5),
}


def default_config(name: str) -> ExperimentConfig:
    """The documented default settings of experiment ``name``.

    Parameters
    ----------
    name : str
        An experiment name (``dubey-aamas-fig1a`` ...).

    Returns
    -------
    ExperimentConfig

    Raises
    ------
    ValueError
        On an unknown experiment.
    """
    return _DEFAULTS[_check_name(name)]


def _check_name(name: str) -> str:
    if name not in EXPERIMENTS:
        raise ValueError(f"`name` must be one of {EXPERIMENTS}, got {name!r}.")
    return name


def run_experiment(
    name: str,
    config: ExperimentConfig | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """The numbers of one figure: one row per (algorithm, x) with mean, min, max.

    Parameters
    ----------
    name : str
        An experiment name.
    config : ExperimentConfig, optional
        Settings; default :func:`default_config`.
    progress : callable, optional
        Receives one line per finished step.

    Returns
    -------
    pandas.DataFrame
        Columns ``algorithm``, the x variable, ``mean``, ``min``, ``max``.

    Raises
    ------
    ValueError
        On an unknown experiment or invalid settings (from the algorithms).
    """
    config = default_config(name) if config is None else config
    return _RUNNERS[_check_name(name)](config, progress or (lambda _: None))
