"""Zhou & Chowdhury Fig. 2a-b (synthetic): time-averaged regret of Private-FedLinUCB, smaller.

Fig. 2a compares the shuffle model by amplification (``protocol="sdp-amp"``, Thm. 5.3)
with silo-level LDP (``"ldp"``, Thm. 5.1) at ε = 10⁻⁴ and 10⁻³ (δ = 10⁻⁴); Fig. 2b
silo-level LDP with the vector-sum protocol (``"sdp-vecsum"``, Thm. 5.5) at ε = 0.2
(δ = 0.1); both beside the non-private FedLinUCB, every run through
:func:`~fedpriv.algorithms.zhou_chowdhury.run_private_fedlinucb` on the synthetic instance
(:class:`fedpriv.algorithms.zhou_chowdhury.environment.SyntheticEnvironment`). The paper's
body cannot be read here; its settings come from the authors' experiment code: M = 100
silos, K = 100 arms, d = 10, T = 10⁴, B = 25, α = 0.01, 25 runs. Every run of one panel
shares the instance and the root seed; a trial's streams do not depend on the number of
trials.

The paper plots the time-averaged regret ``R(t)/t`` summed over silos (its code's
``cum_regret/t``); here the mean over silos (the sum divided by M), whose ratios between
runs are the same, with the mean over trials and a min–max band. Every run is inside the
accountant: the note carries each run's own ledger ε at its δ beside the target (each
silo's tree charged for the ``B`` pairs one user moves through the silo's raw batch data
between syncs, as the paper's silos act; the verdicts are the family's register rows).
Fig. 2c (MSLR-WEB10K, real data) is not run: the data set is not on this machine, and no
other data set stands in for it.

Defaults (:data:`DEFAULTS`) are sized to finish in about a minute or two on 2 idle cores:
M = 100, K = 100, d = 10 and B = 25 as in the paper, T = 2000 rounds and 3 trials (paper
10⁴ and 25); ``horizon``, ``n_trials`` and ``n_agents`` scale them up.

Outputs: ``<out>/zhou_chowdhury/fig2a.png``, ``fig2a.csv`` (one row per run and trial),
``fig2a_curves.csv`` (mean/min/max of ``R(t)/t``) and ``fig2a.md`` (and ``fig2b.*``),
written to a staging folder and moved into place
(:func:`fedpriv.audit.reporting.figures.write_figure`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from fedpriv.audit.families.zhou_chowdhury.figure import ZCFigure, figure_note
from fedpriv.audit.reporting.figures import figure_stem, write_figure
from fedpriv.privacy.checks import check_int_at_least

__all__ = ["BATCH_SIZE", "DEFAULTS", "EXPERIMENTS", "FIGURES", "run_figure"]

#: ``B`` of every run (Fig. 2, experiment code).
BATCH_SIZE = 25
_ARMS, _DIM, _ALPHA = 100, 10, 0.01
_PAPER_AGENTS, _PAPER_HORIZON = 100, 10_000

#: name -> (caption, runs); each run is (label, protocol, ε, δ).
FIGURES: dict[str, tuple[str, tuple[tuple[str, str, float | None, float | None], ...]]] = {
    "zhou-chowdhury-fig2a": (
        "time-averaged regret, silo-level LDP vs the shuffle model by amplification "
        "(ε = 1e-4, 1e-3, δ = 1e-4)",
        (
            ("non-private", "non-private", None, None),
            ("LDP ε=1e-4", "ldp", 1e-4, 1e-4),
            ("SDP-Amp ε=1e-4", "sdp-amp", 1e-4, 1e-4),
            ("LDP ε=1e-3", "ldp", 1e-3, 1e-4),
            ("SDP-Amp ε=1e-3", "sdp-amp", 1e-3, 1e-4),
        ),
    ),
    "zhou-chowdhury-fig2b": (
        "time-averaged regret, silo-level LDP vs the shuffle model by vector sum "
        "(ε = 0.2, δ = 0.1)",
        (
            ("non-private", "non-private", None, None),
            ("LDP ε=0.2", "ldp", 0.2, 0.1),
            ("SDP-VecSum ε=0.2", "sdp-vecsum", 0.2, 0.1),
        ),
    ),
}
#: Experiment names of the CLI.
EXPERIMENTS = tuple(FIGURES)
#: name -> (horizon, trials, n_agents) at the default (documented, smaller) scale.
DEFAULTS = {name: (2000, 3, 100) for name in FIGURES}

_PAPER = {
    "zhou-chowdhury-fig2a": "LDP and SDP-Amp at ε = 10⁻⁴, 10⁻³, δ = 10⁻⁴; non-private",
    "zhou-chowdhury-fig2b": "LDP and SDP-VecSum at ε = 0.2, δ = 0.1; non-private",
}


def _settings(name: str, horizon: int, n_trials: int, n_agents: int) -> list[tuple[str, str, str]]:
    """``(setting, paper, here)`` rows of the note."""
    return [
        ("M silos", "100", str(n_agents)),
        ("K arms per round, d", f"{_ARMS}, {_DIM}", f"{_ARMS}, {_DIM}"),
        ("T", "10^4", str(horizon)),
        ("B (rounds per batch)", str(BATCH_SIZE), f"{BATCH_SIZE} ({horizon // BATCH_SIZE} syncs)"),
        ("α (confidence)", str(_ALPHA), str(_ALPHA)),
        ("runs", "25", f"{n_trials} trials (band = min-max over trials)"),
        (
            "instance",
            "synthetic, 'similar to Vaswani et al. (2020)': fresh unit-norm arms each "
            "round, θ* of radius 0.5 with bias 0.5, N(0, 0.5²) reward noise",
            "the same generator (SyntheticEnvironment, instance seed 2); rewards clipped "
            "to [-1, 1] before they reach the statistics",
        ),
        ("protocols", _PAPER[name], "the same, σ and λ as the experiment code computes them"),
        (
            "local step",
            "each silo acts on its raw data of the current batch between syncs",
            "the same (each silo's tree charged B pairs per leaf)",
        ),
        (
            "plotted",
            "R(t)/t summed over silos (the code's cum_regret/t)",
            "R(t)/t per silo: the sum divided by M, the same ratios between curves",
        ),
    ]


def _regularizers(name: str, frame: pd.DataFrame, horizon: int, n_agents: int) -> str:
    """λ of every private run here and at the paper's scale, against the pairs ``M·T``."""
    from fedpriv.algorithms.zhou_chowdhury import zc_calibration

    here = frame[frame["protocol"] != "non-private"].groupby("label", sort=False).first()
    paper = []
    for label, protocol, epsilon, delta in FIGURES[name][1]:
        if protocol == "non-private":
            continue
        cal = zc_calibration(
            protocol=protocol,
            epsilon=epsilon,
            delta=delta,
            horizon=_PAPER_HORIZON,
            batch_size=BATCH_SIZE,
            n_agents=_PAPER_AGENTS,
            dim=_DIM,
            alpha=_ALPHA,
        )
        paper.append(f"{label}: {cal.regularizer:.3g}")
    over = [label for label, row in here.iterrows() if row["regularizer"] > horizon * n_agents]
    return (
        "Every feature has norm 1, so the data's Gram matrix has trace at most M·T, the "
        f"number of pairs all silos see (here {n_agents * horizon}). The regulariser λ "
        "of the private runs here: "
        + "; ".join(f"{label}: {row['regularizer']:.3g}" for label, row in here.iterrows())
        + "; above M·T (the data cannot outweigh it by T): "
        + (", ".join(over) if over else "none")
        + f". At the paper's scale (M = {_PAPER_AGENTS}, T = {_PAPER_HORIZON}, M·T = "
        f"{_PAPER_AGENTS * _PAPER_HORIZON}) the same calibration gives λ = "
        + "; ".join(paper)
        + "."
    )


def _extra(name: str, frame: pd.DataFrame, regularizers: str, seconds: float, seed: int) -> str:
    """The note's closing paragraphs: what the accountant ε covers, Fig. 2c, observations."""
    means = frame.groupby("label", sort=False)["avg_regret_per_silo"].mean()
    private = frame[frame["protocol"] != "non-private"]
    above = sorted(
        set(private.loc[private["accountant_epsilon"] > private["target_epsilon"], "label"])
    )
    vecsum = (
        " SDP-VecSum's ledger is one shuffled binomial vector-sum tree per trial for all "
        "silos together (its B·M users per leaf), priced from the binomial pmfs "
        "(BinomialVectorSumTree)."
        if name.endswith("fig2b")
        else " SDP-Amp's ledger bounds the shuffled view by each silo's own tree (the "
        "shuffled multiset is a function of the silos' messages); the family's rows add "
        "the shuffle route, which credits no amplification to Gaussian silos."
    )
    return (
        "The accountant's ε is each run's own ledger at the run's δ, end to end on the "
        "silos' messages: each silo acts on its raw batch data between syncs, so one "
        f"changed user moves up to B = {BATCH_SIZE} pairs of a leaf and every leaf is "
        "charged for them (group privacy over the batch)." + vecsum + " Runs whose ledger "
        "exceeds the target here: " + (", ".join(above) if above else "none") + ". The "
        "verdicts of the paper's claims at its own settings (T = 10^4) are the family's "
        "register rows (reports/zhou_chowdhury.md), with exact lower bounds.\n\n"
        "Fig. 2c (MSLR-WEB10K, real data) is not run: the data set is not on this "
        "machine, and no other data set stands in for it.\n\n"
        "Observed here (mean R(T)/T per silo): "
        + "; ".join(f"{label}: {value:.4g}" for label, value in means.items())
        + ".\n\n"
        + regularizers
        + f"\n\nRun time: {seconds:.0f} s (seed {seed})."
    )


def run_figure(
    name: str,
    *,
    out: Path,
    horizon: int | None = None,
    n_trials: int | None = None,
    n_agents: int | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Run one panel of Fig. 2 and write it to ``<out>/zhou_chowdhury/``.

    Parameters
    ----------
    name : {"zhou-chowdhury-fig2a", "zhou-chowdhury-fig2b"}
        The panel (:data:`FIGURES`).
    out : Path
        Report root; files go to ``out/zhou_chowdhury/<figure>.*`` (``fig2a``, ``fig2b``).
    horizon : int, optional
        ``T`` >= ``B`` = 25 rounds (default 2000; paper 10⁴).
    n_trials : int, optional
        Trials per run, >= 1 (default 3; paper 25).
    n_agents : int, optional
        Silos ``M`` >= 1 (default 100, the paper's).
    seed : int
        Root of the reward and noise streams, >= 0.
    progress : callable, optional
        Called with a short message before and after every run.

    Returns
    -------
    Path
        The folder ``out/zhou_chowdhury``.

    Raises
    ------
    ValueError
        On an unknown name or an out-of-range size (named in the message); nothing is
        run or written then.

    References
    ----------
    .. [1] Zhou & Chowdhury, "On Differentially Private Federated Linear Contextual
       Bandits", ICLR 2024 (arXiv 2302.13945), Fig. 2a-b, Thm. 5.1, 5.3, 5.5.
    """
    from fedpriv.algorithms.zhou_chowdhury import SyntheticEnvironment, run_private_fedlinucb

    if name not in FIGURES:
        raise ValueError(f"`name` must be one of {EXPERIMENTS}, got {name!r}.")
    default_horizon, default_trials, default_agents = DEFAULTS[name]
    horizon = check_int_at_least(
        "horizon", default_horizon if horizon is None else horizon, BATCH_SIZE
    )
    n_trials = check_int_at_least("n_trials", default_trials if n_trials is None else n_trials, 1)
    n_agents = check_int_at_least("n_agents", default_agents if n_agents is None else n_agents, 1)
    seed = check_int_at_least("seed", seed, 0)
    say = progress or (lambda message: None)
    stem = figure_stem(name, "zhou_chowdhury")
    caption, runs = FIGURES[name]
    env = SyntheticEnvironment(n_agents=n_agents, n_arms=_ARMS, dim=_DIM)
    fig = ZCFigure()
    started = time.perf_counter()
    for label, protocol, epsilon, delta in runs:
        say(f"{stem}: {label}")
        run = run_private_fedlinucb(
            env,
            horizon=horizon,
            batch_size=BATCH_SIZE,
            protocol=protocol,
            epsilon=epsilon,
            delta=delta,
            n_trials=n_trials,
            seed=seed,
            alpha=_ALPHA,
        )
        fig.add_run(label, run, epsilon=epsilon, delta=delta)
        say(f"{stem}: {label}: R(T)/T per silo {np.mean(run.regret_curve[:, -1]) / horizon:.4g}")
    frame = fig.frame()
    title = (
        f"Zhou & Chowdhury Fig. {stem.removeprefix('fig')} (M = {n_agents}, T = {horizon}, "
        f"{n_trials} trial(s))\n{caption}"
    )
    folder = Path(out) / "zhou_chowdhury"
    seconds = time.perf_counter() - started
    extra = _extra(name, frame, _regularizers(name, frame, horizon, n_agents), seconds, seed)
    write_figure(
        folder,
        stem,
        fig.plot(title),
        table=frame,
        curves=fig.curve_frame(),
        note=figure_note(name, caption, _settings(name, horizon, n_trials, n_agents), frame, extra),
    )
    return folder
