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
  Q = Bernoulli(1 - μ_k) (our choice), δ_t = t^-4 (R-l); a δ_t = t^-2 curve shows
  the sensitivity to that lost constant.

Each figure plots the group regret R_G(t) (eq. 2), mean over trials with the min–max
band; Fig. 1(c) plots R_G(T) against γ. Outputs are written atomically (a temporary
folder, then renames) as ``<out>/dubey_aamas/<name>.png``, ``.csv`` and ``.md``.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from fedpriv.algorithms.dubey_aamas.baselines import run_dp_ucb_int, run_ucb1
from fedpriv.algorithms.dubey_aamas.byzantine import run_byzantine_coop_ucb
from fedpriv.algorithms.dubey_aamas.cooperative import run_coop_ucb_nonprivate, run_private_coop_ucb
from fedpriv.algorithms.dubey_aamas.robust import Contamination
from fedpriv.algorithms.environments.bernoulli import homogeneous_bandit
from fedpriv.algorithms.networks.graphs import make_graph
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng

__all__ = [
    "EXPERIMENTS",
    "ExperimentConfig",
    "default_config",
    "paper_checks",
    "run_experiment",
    "write_experiment",
]

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
    run_seed = np.random.SeedSequence(root.entropy, spawn_key=(trial, 1))
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

_PAPER_SETTINGS = {
    "dubey-aamas-fig1a": "group regret of M agents over N randomly initialized trials; Private "
    "MA-UCB vs UCB1 and DP-UCB-INT run per agent ('exact setup for ε and v' of Tossou & "
    "Dimitrakakis), and the non-private version. K, p, γ, M, T, trials: lost (§5, 'Testing Private Multiagent UCB').",
    "dubey-aamas-fig1b": "same setup, arm means constrained to a lost range, contamination "
    "probability lost; Byzantine MA-UCB vs UCB1 per agent and Byzantine MA-UCB with ε = 0; "
    "Q not stated (§5, 'Testing Byzantine-Proof Multiagent UCB').",
    "dubey-aamas-fig1c": "group regret at a lost T against γ, 100 random Erdős–Rényi graphs, "
    "both algorithms (§5, 'Testing the effect of γ').",
}

_NOTES = {
    "dubey-aamas-fig1a": "The non-private version here is MP-UCB-like (raw means and counts "
    "every round, own raw term, f = 1): its agents act on nearly the same information and "
    "explore in lockstep. Private MA-UCB pays K f round-robin rounds up front (the jump at "
    "t <= K f) and then explores on noisy, stale means, less in sync. "
    "`run_coop_ucb_nonprivate(interval=f, own_term='noisy', count_field='release')` is the "
    "literal 'Alg. 1 + 2 without noise' (§5 never defines 'the non-private version').",
    "dubey-aamas-fig1b": "The trimmed mean is undefined until τ(n, ε_c, δ_t) < 1/2, i.e. "
    "n >~ 10 ln(1/δ_t) samples per half (fedpriv's derivation from τ < 1/2); until then every agent "
    "pulls the undefined arm with the fewest samples (the paper is silent). With δ_t = t^-4 "
    "that is about 550 samples per arm at t = 1000, a forced exploration that can cost more "
    "than cooperation saves at short horizons; the δ_t = t^-2 curve shows the sensitivity "
    "to this lost constant.",
    "dubey-aamas-fig1c": "γ beyond a graph's diameter changes nothing, so γ is capped at each "
    "graph's diameter; UCB1 (γ = 0, no communication) is the flat reference.",
}

_EXPECTED = {
    "dubey-aamas-fig1a": "Private MA-UCB below UCB1 and DP-UCB-INT, above the non-private version.",
    "dubey-aamas-fig1b": "Byzantine MA-UCB far below UCB1; the ε = 0 run lower still.",
    "dubey-aamas-fig1c": "regret falls sharply with γ and reaches its optimum at γ = d*(G).",
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


def _observed(name: str, frame: pd.DataFrame) -> str:
    if name == "dubey-aamas-fig1c":
        last = frame.groupby("algorithm")["mean"].agg(["first", "last"])
        return "; ".join(
            f"{a}: R_G(T) {r['first']:.0f} at γ = 1 → {r['last']:.0f} at γ = max"
            for a, r in last.iterrows()
        )
    final = frame[frame["t"] == frame["t"].max()].set_index("algorithm")["mean"].sort_values()
    return "; ".join(f"{a}: {v:.0f}" for a, v in final.items())


def _final(frame: pd.DataFrame) -> dict[str, float]:
    return frame[frame["t"] == frame["t"].max()].set_index("algorithm")["mean"].to_dict()


def paper_checks(
    name: str, frame: pd.DataFrame, config: ExperimentConfig
) -> list[tuple[str, bool]]:
    """The paper's qualitative statements about a figure, each with what we observe.

    Parameters
    ----------
    name : str
        An experiment name.
    frame : pandas.DataFrame
        From :func:`run_experiment`.
    config : ExperimentConfig
        Its settings.

    Returns
    -------
    list of (str, bool)
        Each statement and whether the numbers agree with it.
    """
    if name == "dubey-aamas-fig1c":
        out = []
        for algorithm, part in frame.groupby("algorithm", sort=False):
            if algorithm.startswith("UCB1"):
                continue
            means = part.sort_values("gamma")["mean"].to_numpy()
            out.append(
                (
                    f"{algorithm}: R_G(T) falls from γ = 1 to γ = {config.max_gamma}",
                    bool(means[-1] < means[0]),
                )
            )
        return out
    final = _final(frame)
    if name == "dubey-aamas-fig1a":
        p = final["Private MA-UCB"]
        return [
            ("Private MA-UCB below UCB1 (isolated)", bool(p < final["UCB1 (isolated)"])),
            (
                "Private MA-UCB below DP-UCB-INT (isolated)",
                bool(p < final["DP-UCB-INT (isolated)"]),
            ),
            (
                "Private MA-UCB above the non-private version",
                bool(p > final["Non-private cooperative UCB"]),
            ),
        ]
    byz = final[f"Byzantine MA-UCB (ε_c = {config.contamination:g})"]
    return [
        (
            f"Byzantine MA-UCB (ε_c = {config.contamination:g}, δ_t = t^-4) below UCB1 (isolated)",
            bool(byz < final["UCB1 (isolated)"]),
        ),
        (
            "Byzantine MA-UCB with ε_c = 0 below the contaminated run",
            bool(final["Byzantine MA-UCB (ε_c = 0)"] < byz),
        ),
    ]


def _markdown(name: str, config: ExperimentConfig, frame: pd.DataFrame, seconds: float) -> str:
    settings = "\n".join(f"| {k} | {v} |" for k, v in dataclasses.asdict(config).items())
    return (
        f"# {name} (Dubey & Pentland, AAMAS 2020, Figure 1)\n\n"
        f"Generated by `fedpriv experiment {name}` in {seconds:.0f} s; see "
        f"`audit/families/dubey_aamas/experiments.py` for every choice and its source.\n\n"
        f"## Paper\n\n{_PAPER_SETTINGS[name]}\n\nExpected (paper's text): {_EXPECTED[name]}\n\n"
        f"## Our settings (the paper's numbers are lost, §5; fedpriv's choices)\n\n"
        f"| setting | value |\n|---|---|\n{settings}\n\n"
        "Means U[0, 1] (Fig. 1(a)) or U[0.2, 0.8] (Fig. 1(b), (c)); new Erdős–Rényi graph "
        "(redrawn until connected) and means per trial; private: decaying rule, own term "
        "noisy, count field 'release'; Byzantine: all agents byzantine, Q = Bernoulli(1 − μ_k), "
        "δ_t = t^-4 unless stated, σ = 1/2, c1 = 4, c2 = 2 (constants lost, our choice).\n\n"
        f"## Observed group regret at the horizon (mean over trials)\n\n{_observed(name, frame)}\n\n"
        "## The paper's statements against this run\n\n"
        + "\n".join(
            f"- {text}: {'yes' if ok else '**no**'}"
            for text, ok in paper_checks(name, frame, config)
        )
        + "\n\nEvery curve's band is the min–max over trials; with few trials the "
        "orderings above are indications, not tests.\n\n"
        f"## Notes\n\n{_NOTES[name]}\n"
    )


def _plot(name: str, frame: pd.DataFrame, path: Path, config: ExperimentConfig) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = "gamma" if name == "dubey-aamas-fig1c" else "t"
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for algorithm, part in frame.groupby("algorithm", sort=False):
        (line,) = ax.plot(
            part[x], part["mean"], label=algorithm, marker="o" if x == "gamma" else None
        )
        ax.fill_between(part[x], part["min"], part["max"], color=line.get_color(), alpha=0.2)
    ax.set_xlabel("γ" if x == "gamma" else "round t")
    ax.set_ylabel(f"group regret R_G({'T' if x == 'gamma' else 't'})")
    ax.set_title(
        f"{name}: M={config.n_agents}, K={config.n_arms}, T={config.horizon}, "
        f"{config.n_trials} trials (band: min–max)",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_experiment(
    name: str,
    out: Path,
    config: ExperimentConfig | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run experiment ``name`` and write ``<out>/dubey_aamas/<name>.{png,csv,md}`` atomically.

    Parameters
    ----------
    name : str
        An experiment name.
    out : Path
        Report root; files go to ``out/dubey_aamas/``.
    config : ExperimentConfig, optional
        Settings; default :func:`default_config`.
    progress : callable, optional
        Receives one line per finished step.

    Returns
    -------
    dict
        ``folder``, ``files`` and ``seconds``.
    """
    import time

    config = default_config(name) if config is None else config
    started = time.perf_counter()
    frame = run_experiment(name, config, progress=progress)
    seconds = time.perf_counter() - started
    folder = Path(out) / PAPER
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=folder))
    try:
        frame.to_csv(staging / f"{name}.csv", index=False)
        (staging / f"{name}.md").write_text(
            _markdown(name, config, frame, seconds), encoding="utf-8"
        )
        _plot(name, frame, staging / f"{name}.png", config)
        files = []
        for suffix in (".csv", ".md", ".png"):
            target = folder / f"{name}{suffix}"
            (staging / f"{name}{suffix}").replace(target)
            files.append(str(target))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {
        "folder": str(folder),
        "files": files,
        "seconds": seconds,
        "final": _observed(name, frame),
    }
