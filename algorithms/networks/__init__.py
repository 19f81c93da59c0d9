"""Communication graphs and message protocols shared by the papers.

The public names below are also importable flat, ``from fedpriv.algorithms import
make_graph``; each is imported on first use (:mod:`fedpriv.algorithms.exports`).
"""

from fedpriv.algorithms.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "graphs": (
            "make_graph",
            "gossip_matrix",
            "second_eigenvalue",
            "graph_distances",
            "neighbor_matrix",
            "sample_active_edges",
            "check_connected",
        ),
        "flooding": ("FloodingSchedule", "make_schedule", "flood_messages"),
    },
)
