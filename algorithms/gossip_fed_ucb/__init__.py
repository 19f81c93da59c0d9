"""Gossip_UCB and Fed_UCB (Zhu, Zhu, Liu & Liu, SIGMETRICS 2021).

The public names below are also importable flat, ``from fedpriv.algorithms import
run_gossip_fed_ucb``; each is imported on first use (:mod:`fedpriv.algorithms.exports`).
"""

from fedpriv.algorithms.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {"gossip_ucb": ("run_gossip_ucb", "run_gossip_fed_ucb", "GossipRun", "draw_active_edges")},
)
