"""What each claim of FedUCB (Dubey & Pentland, NeurIPS 2020) protects: the observer of the paper's privacy
definition and exactly the outputs it receives (:class:`fedpriv.audit.engine.views.View`).

Declared through the family's registration (``Family(views=...)``); each view quotes the
definition it comes from, so a reader can check it against the paper.
"""

from __future__ import annotations

from fedpriv.audit.engine.views import View

__all__ = ["VIEWS"]

_FEDUCB_DEFINITION = (
    "FedUCB, Definition 1 (federated DP): for any agents i ≠ j and t-neighbouring "
    "histories S_i, S'_i, every subset S_j of agent j's actions; Prop. 3 reduces it to "
    "the releases (Z_i,t, z_i,t) at the synchronisation rounds"
)


#: ``(key pattern, view)`` in match order: the first pattern that matches a key wins.
VIEWS: tuple[tuple[str, View], ...] = (
    (
        "feducb/feducb-decentralized/*",
        View(
            observer="any other agent j ≠ i (the neighbours that relay agent i's messages)",
            outputs=(
                "agent j's actions, which see agent i's data only through what i sends: "
                "the Privatizer releases (Z_i, z_i) at each synchronisation",
                "the times of agent i's synchronisation requests (Alg. 3)",
            ),
            definition=_FEDUCB_DEFINITION,
        ),
    ),
    (
        "feducb/*",
        View(
            observer="any other agent j ≠ i (through the controller)",
            outputs=(
                "agent j's actions, which see agent i's data only through what i sends: "
                "the Privatizer releases (Z_i, z_i) at each synchronisation",
                "the synchronisation times agent i's requests set (Alg. 1)",
            ),
            definition=_FEDUCB_DEFINITION,
        ),
    ),
)
