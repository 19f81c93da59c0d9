"""What each claim protects: the observer and the outputs the paper's definition names.

A verdict is about a *view* (docs/reference/verdicts.md): the observer of the
paper's privacy definition and exactly the outputs it receives. The accountant is
charged for every release that reaches the view and nothing else, and the audits
distinguish the two worlds from those outputs only, never from a component that
releases more (a tree counter that publishes every prefix, a Privatizer fed an oblivious
stream). Every register row names its view here, by the pattern of its key; the
view is printed in ``claims.json`` and ``claims.md`` beside the audit's channel.

Each view quotes the definition it comes from, so a reader can check it against the
paper; where the row reads the paper one way among several, the row's ``reading`` says so.
"""

from __future__ import annotations

import dataclasses
import fnmatch

__all__ = ["VIEWS", "View", "view_of"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class View:
    """The observer of a privacy definition and the outputs it receives.

    Attributes
    ----------
    observer : str
        Who sees the outputs (the adversary of the definition).
    outputs : tuple of str
        Exactly the outputs that observer receives and the definition protects.
    definition : str
        The definition it comes from, cited in the paper's own terms.
    """

    observer: str
    outputs: tuple[str, ...]
    definition: str

    def __post_init__(self) -> None:
        if not self.observer.strip() or not self.outputs or not self.definition.strip():
            raise ValueError("a View needs an observer, at least one output and a definition.")

    def describe(self) -> str:
        """One line: ``observer: output; output``."""
        return f"{self.observer}: " + "; ".join(self.outputs)

    def to_dict(self) -> dict[str, object]:
        """The ``claims.json`` record."""
        return {
            "observer": self.observer,
            "outputs": list(self.outputs),
            "definition": self.definition,
        }


_FEDUCB_DEFINITION = (
    "FedUCB, Definition 1 (federated DP): for any agents i ≠ j and t-neighbouring "
    "histories S_i, S'_i, every subset S_j of agent j's actions; Prop. 3 reduces it to "
    "the releases (Z_i,t, z_i,t) at the synchronisation rounds"
)
_LI_SONG_DEFINITION = (
    "Li & Song, Definition 1: a mechanism f(H_i(t)) is ε-DP for all times t when "
    "communication occurs, for adjacent histories that 'differ in at most one position'"
)
_ZHU_DEFINITION = (
    "Zhu et al., Definition 1 (§4): algorithm B over adjacent streams {X_i,k(t)} that "
    "'differ at a particular t', 'guaranteed on every T'"
)
_ZHU_ABSTRACT = (
    "Zhu et al., abstract: 'the agents preserve ε-differential privacy of their local data' "
    "(§1 contribution (3), §6), read as covering the initial pulls X(0) that Definition 1's "
    "stream t = 1..T leaves out"
)
_AAMAS_DEFINITION = (
    "Dubey & Pentland (AAMAS 2020), Definition 'ε-differentially private message "
    "protocol': each message, for histories that 'differ in at most one reward sample'"
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


def view_of(key: str) -> View:
    """The view of the register row ``key`` (first matching pattern of :data:`VIEWS`).

    Parameters
    ----------
    key : str
        A register key.

    Returns
    -------
    View
        What the row's claim protects.

    Raises
    ------
    KeyError
        If no pattern matches: every row must declare what it protects.
    """
    for pattern, view in VIEWS:
        if fnmatch.fnmatchcase(key, pattern):
            return view
    raise KeyError(f"register key {key!r} has no view: add one to fedpriv.audit.engine.views.")
