"""What each claim of Li & Song protects: the observer of the paper's privacy
definition and exactly the outputs it receives (:class:`fedpriv.audit.engine.views.View`).

Declared through the family's registration (``Family(views=...)``); each view quotes the
definition it comes from, so a reader can check it against the paper.
"""

from __future__ import annotations

from fedpriv.audit.engine.views import View

__all__ = ["VIEWS"]

_LI_SONG_DEFINITION = (
    "Li & Song, Definition 1: a mechanism f(H_i(t)) is ε-DP for all times t when "
    "communication occurs, for adjacent histories that 'differ in at most one position'"
)


#: ``(key pattern, view)`` in match order: the first pattern that matches a key wins.
VIEWS: tuple[tuple[str, View], ...] = (
    (
        "li_song/*/actions",
        View(
            observer="anyone who sees agent i's actions (not an observer of Definition 1)",
            outputs=("agent i's arm choices during t_delay",),
            definition=_LI_SONG_DEFINITION + "; actions are not messages, so outside it",
        ),
    ),
    (
        "li_song/*",
        View(
            observer="the receiver of agent i's messages (server, neighbour or sink agent)",
            outputs=("every message ȳ agent i sends, at every communication time t",),
            definition=_LI_SONG_DEFINITION,
        ),
    ),
)
