"""Which module registers each ``run`` and ``experiment`` command: a static table.

``fedpriv --help``, ``fedpriv run --help`` and ``fedpriv experiment --help`` list the
commands from here, without importing the family modules (which import NumPy, pandas,
matplotlib and the algorithms); a command's own module is imported only when that
command is asked for. ``tests/test_cli_startup.py`` checks that this table equals what
the family modules register, so the two cannot drift apart.
"""

from __future__ import annotations

__all__ = [
    "EXIT_CODES",
    "EXPERIMENT_COMMANDS",
    "FAMILIES",
    "PAPER_NAMES",
    "RUN_COMMANDS",
    "family_of",
]

#: The exit statuses ``fedpriv verify``, ``account`` and ``audit`` share (each ends its
#: ``--help`` with this; ``tests/test_exit_codes.py`` runs every one of them).
EXIT_CODES = (
    "Exit status: 0 nothing refuted; 1 a claim or budget violated; 2 bad input "
    "(the message names the parameter; nothing is written)."
)

#: Modules that add ``run`` and ``experiment`` subcommands through ``register``.
FAMILIES = (
    "fedpriv.cli.gossip",
    "fedpriv.cli.feducb",
    "fedpriv.cli.linucb",
    "fedpriv.cli.li_song",
    "fedpriv.cli.coop",
)

#: The ``--paper`` names of ``fedpriv verify`` (the register's ``PAPERS`` keys).
PAPER_NAMES = ("feducb", "li_song", "gossip_fed_ucb", "dubey_aamas")

#: ``fedpriv run NAME`` -> (family module, one-line help).
RUN_COMMANDS: dict[str, tuple[str, str]] = {
    "gossip-ucb": ("gossip", "non-private Gossip_UCB (Zhu et al. 2021)"),
    "gossip-fed-ucb": ("gossip", "private Fed_UCB (Zhu et al. 2021, Alg. 3-4)"),
    "feducb": ("feducb", "centralized FedUCB (Alg. 1 + Privatizer), adaptive syncs"),
    "feducb-fixed": ("feducb", "FedUCB with a fixed sync schedule (every B rounds)"),
    "feducb-nonprivate": ("feducb", "non-private FedUCB (H = λI, no noise)"),
    "feducb-decentralized": (
        "linucb",
        "decentralized FedUCB on a graph (Dubey & Pentland 2020, Alg. 3; --schedule fixed: data-independent releases every B rounds)",
    ),
    "linucb": (
        "linucb",
        "non-private OFUL/LinUCB run by every agent alone (M = 1: single agent)",
    ),
    "linucb-independent-private": (
        "linucb",
        "M private LinUCB learners, own Privatizer each, no communication",
    ),
    "linucb-pooled": (
        "linucb",
        "one non-private LinUCB learner that sees every agent's data",
    ),
    "cdp-mab": ("li_song", "CDP-MAB, master-worker (Li & Song Alg. 1)"),
    "ce-cdp-mab": (
        "li_song",
        "CDP-MAB with R rounds and participation p (Li & Song §IV-B)",
    ),
    "ddp-mab": ("li_song", "DDP-MAB, decentralized with GIS (Li & Song Alg. 3)"),
    "hdp-mab": (
        "li_song",
        "HDP-MAB, hybrid with sink agents (Li & Song Alg. 5, Table II)",
    ),
    "single-mab": (
        "li_song",
        "Single-MAB baseline: Alg. 1 per agent (Li & Song Remark 2)",
    ),
    "private-coop-ucb": (
        "coop",
        "Private Multi-Agent UCB (Dubey & Pentland Alg. 1-2, interval mechanism)",
    ),
    "byzantine-coop-ucb": (
        "coop",
        "Byzantine-Proof Multi-Agent UCB (Alg. 3, trimmed mean)",
    ),
    "coop-ucb-nonprivate": (
        "coop",
        "cooperative UCB with raw means (the paper's non-private version)",
    ),
    "ucb1": ("coop", "UCB1 on every agent in isolation (Auer et al. 2002)"),
    "dp-ucb-int": (
        "coop",
        "DP-UCB-INT on every agent in isolation (Tossou & Dimitrakakis 2016)",
    ),
}

#: ``fedpriv experiment NAME`` -> (family module, one-line help).
EXPERIMENT_COMMANDS: dict[str, tuple[str, str]] = {
    "feducb-fig1a": (
        "linucb",
        "FedUCB Fig. 1A: per-agent regret at T vs ε for several M",
    ),
    "feducb-fig1b": (
        "linucb",
        "FedUCB Fig. 1B: regret curves for three communication regimes",
    ),
    "feducb-fig1c": ("linucb", "FedUCB Fig. 1C: regret curves for varying d"),
    "feducb-fig2": (
        "linucb",
        "FedUCB Fig. 2 (appendix): regret vs the minimum gap for several ε",
    ),
    "feducb-decentralized-schedules": (
        "linucb",
        "decentralized FedUCB (Alg. 3): regret curves of the adaptive schedule beside fixed ones",
    ),
    "li-song-fig4": ("li_song", "Li & Song Fig. 4"),
    "li-song-fig5": ("li_song", "Li & Song Fig. 5"),
    "li-song-fig6": ("li_song", "Li & Song Fig. 6"),
    "li-song-fig7": ("li_song", "Li & Song Fig. 7"),
    "li-song-fig8": ("li_song", "Li & Song Fig. 8"),
    "li-song-fig9": ("li_song", "Li & Song Fig. 9"),
    "li-song-fig10": ("li_song", "Li & Song Fig. 10"),
    "li-song-fig11": ("li_song", "Li & Song Fig. 11"),
    "li-song-fig12": ("li_song", "Li & Song Fig. 12"),
    "dubey-aamas-fig1a": ("coop", "Dubey & Pentland AAMAS 2020 Figure 1a"),
    "dubey-aamas-fig1b": ("coop", "Dubey & Pentland AAMAS 2020 Figure 1b"),
    "dubey-aamas-fig1c": ("coop", "Dubey & Pentland AAMAS 2020 Figure 1c"),
}


def family_of(argv: list[str]) -> str | None:
    """The family module that registers the command ``argv`` asks for, if any.

    ``["run", "cdp-mab", ...]`` -> ``"fedpriv.cli.li_song"``; anything else (another
    command, ``--help``, an unknown name) -> None.

    Parameters
    ----------
    argv : list of str
        The command line, without the program name.

    Returns
    -------
    str or None
    """
    words = [word for word in argv if not word.startswith("-")][:2]
    if len(words) < 2:
        return None
    table = {"run": RUN_COMMANDS, "experiment": EXPERIMENT_COMMANDS}.get(words[0], {})
    entry = table.get(words[1])
    return None if entry is None else f"fedpriv.cli.{entry[0]}"
