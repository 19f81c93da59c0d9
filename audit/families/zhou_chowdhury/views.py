"""What each claim of Zhou & Chowdhury (ICLR 2024) protects: the observer and its outputs.

Declared through the family's registration (``Family(views=...)``). Silo-level LDP (§2)
protects each silo's users against the server and the other silos, who see what the silo
sends; the shuffle model (§2, §5.2) protects every user against the server, who sees the
shuffled messages of all silos.
"""

from __future__ import annotations

from fedpriv.audit.engine.views import View

__all__ = ["VIEWS"]

_LDP = (
    "Zhou & Chowdhury, silo-level LDP (§2; abstract: 'privacy and regret guarantees under "
    "silo-level local differential privacy'): each silo's messages are (ε, δ)-DP in its "
    "users' data"
)
_SDP = (
    "Zhou & Chowdhury, shuffle model (§2, §5.2; abstract: 'shuffle model of differential "
    "privacy ... without a trusted server'): the shuffled messages of all silos are "
    "(ε, δ)-DP in all users' data"
)

#: ``(key pattern, view)`` in match order.
VIEWS: tuple[tuple[str, View], ...] = (
    (
        "zhou_chowdhury/private-fedlinucb/ldp*",
        View(
            observer="the server (and any colluding silos)",
            outputs=(
                "every silo's noisy p-sums (Gram matrix and reward vector) at every batch "
                "end (Alg. 1; the privacy protocol's randomizer R at each silo)",
            ),
            definition=_LDP,
        ),
    ),
    (
        "zhou_chowdhury/private-fedlinucb/sdp-vecsum*",
        View(
            observer="the server",
            outputs=(
                "the shuffled multiset of every user's randomized messages (its "
                "per-coordinate counts of ones) for the p-sum node released at every "
                "batch end (the vector-sum protocol's shuffler, Thm. 5.5)",
            ),
            definition=_SDP,
        ),
    ),
    (
        "zhou_chowdhury/private-fedlinucb/sdp*",
        View(
            observer="the server",
            outputs=(
                "the shuffled multiset of all silos' noisy p-sums at every batch end "
                "(the protocol's shuffler S)",
            ),
            definition=_SDP,
        ),
    ),
)
