"""What each claim of Zhu et al. (2021) protects: the observer of the paper's privacy
definition and exactly the outputs it receives (:class:`fedpriv.audit.engine.views.View`).

Declared through the family's registration (``Family(views=...)``); each view quotes the
definition it comes from, so a reader can check it against the paper.
"""

from __future__ import annotations

from fedpriv.audit.engine.views import View

__all__ = ["VIEWS"]

_ZHU_DEFINITION = (
    "Zhu et al., Definition 1 (§4): algorithm B over adjacent streams {X_i,k(t)} that "
    "'differ at a particular t', 'guaranteed on every T'"
)

_ZHU_ABSTRACT = (
    "Zhu et al., abstract: 'the agents preserve ε-differential privacy of their local data' "
    "(§1 contribution (3), §6), read as covering the initial pulls X(0) that Definition 1's "
    "stream t = 1..T leaves out"
)


#: ``(key pattern, view)`` in match order: the first pattern that matches a key wins.
VIEWS: tuple[tuple[str, View], ...] = (
    (
        "gossip_fed_ucb/*/initial-pulls/local-data",
        View(
            observer="agent i's neighbours",
            outputs=(
                "the first gossip message ϑ_i(0), built from the initial pulls X(0) "
                "(Alg. 4 line 1, sent by line 19)",
            ),
            definition=_ZHU_ABSTRACT,
        ),
    ),
    (
        "gossip_fed_ucb/*/shared-counts/local-data",
        View(
            observer="agent i's neighbours",
            outputs=(
                "the counts ñ_i(t) sent each round (Alg. 4 line 19), which follow "
                "agent i's actions, chosen on the initial pulls X(0) first",
            ),
            definition=_ZHU_ABSTRACT,
        ),
    ),
    (
        "gossip_fed_ucb/*/initial-pulls",
        View(
            observer="agent i's neighbours",
            outputs=(
                "the first gossip message ϑ_i(0), built from the initial pulls X(0) "
                "(Alg. 4 line 1)",
            ),
            definition=_ZHU_DEFINITION + "; the initial pulls precede the protected stream",
        ),
    ),
    (
        "gossip_fed_ucb/*/shared-counts",
        View(
            observer="agent i's neighbours",
            outputs=(
                "the counts ñ_i(t) sent each round (Alg. 4 line 19), which follow "
                "agent i's actions",
            ),
            definition=_ZHU_DEFINITION + "; counts are not the protected stream's sums",
        ),
    ),
    (
        "gossip_fed_ucb/*-final/*",
        View(
            observer="agent i's neighbours",
            outputs=(
                "the gossip messages ϑ̃_i(t−1), t = 1..T (Alg. 4 line 19): the tree "
                "counter's prefixes 1..T−1",
                "the final estimate ϑ̃_i(T), read as published: the prefix at T",
                "the counts ñ_i(t) sent with them",
            ),
            definition=_ZHU_DEFINITION + "; the '-final' reading publishes ϑ̃_i(T) too",
        ),
    ),
    (
        "gossip_fed_ucb/*",
        View(
            observer="agent i's neighbours",
            outputs=(
                "the gossip messages ϑ̃_i(t−1), t = 1..T (Alg. 4 line 19): the tree "
                "counter's prefixes 1..T−1, never the prefix at T",
                "the counts ñ_i(t) sent with them",
            ),
            definition=_ZHU_DEFINITION,
        ),
    ),
)
