"""What each claim of Dubey & Pentland (AAMAS 2020) protects: the observer of the paper's privacy
definition and exactly the outputs it receives (:class:`fedpriv.audit.engine.views.View`).

Declared through the family's registration (``Family(views=...)``); each view quotes the
definition it comes from, so a reader can check it against the paper.
"""

from __future__ import annotations

from fedpriv.audit.engine.views import View

__all__ = ["VIEWS"]

_AAMAS_DEFINITION = (
    "Dubey & Pentland (AAMAS 2020), Definition 'ε-differentially private message "
    "protocol': each message, for histories that 'differ in at most one reward sample'"
)


#: ``(key pattern, view)`` in match order: the first pattern that matches a key wins.
VIEWS: tuple[tuple[str, View], ...] = (
    (
        "dubey_aamas/byzantine-coop-ucb/*",
        View(
            observer="agent i's neighbours",
            outputs=("every message agent i sends: (arm, reward) pairs (Alg. 3, eq. 7)",),
            definition=_AAMAS_DEFINITION + "; the paper claims no privacy here",
        ),
    ),
    (
        "dubey_aamas/*",
        View(
            observer="agent i's neighbours (any recipient of its messages)",
            outputs=(
                "every message agent i sends: per-arm noisy means and pull counts "
                "(Alg. 1, SendMessages)",
            ),
            definition=_AAMAS_DEFINITION,
        ),
    ),
)
