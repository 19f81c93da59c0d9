"""The one verdict rule (:func:`fedpriv.privacy.accounting.verdicts.judge`): evidence, not numbers.

``violated`` needs a lower bound above the claim, ``holds`` a certified upper bound within
it, and anything else is ``unresolved``; an upper bound above a claim never violates it.
"""

from __future__ import annotations

import math

import pytest
from fedpriv.privacy.accounting.guarantees import RELATIVE_TOLERANCE
from fedpriv.privacy.accounting.verdicts import (
    LOWER_BOUND_KINDS,
    VERDICT_DEFINITIONS,
    VERDICTS,
    LowerBoundEvidence,
    judge,
)
from hypothesis import given
from hypothesis import strategies as st

_lowers = st.lists(
    st.builds(
        LowerBoundEvidence,
        epsilon=st.floats(0, 1e3) | st.just(math.inf),
        kind=st.sampled_from(LOWER_BOUND_KINDS),
        description=st.just("test"),
    ),
    max_size=3,
)


@given(claimed=st.floats(0, 100), upper=st.floats(0, 1e6) | st.just(math.inf), lowers=_lowers)
def test_each_verdict_rests_on_its_evidence(claimed, upper, lowers):
    verdict, evidence = judge(claimed, upper, lowers)
    limit = claimed * (1 + RELATIVE_TOLERANCE)
    best = max((b.epsilon for b in lowers), default=0.0)
    if verdict == "violated":
        assert best > limit and "lower bound" in evidence
    elif verdict == "holds":
        assert upper <= limit and best <= limit
    else:
        assert verdict == "unresolved" and upper > limit and best <= limit
        assert "no lower bound exceeds the claim" in evidence


def test_an_upper_bound_above_the_claim_alone_is_unresolved():
    # The cooperative UCB's per-message case: basic composition 5.92 > 0.683, audit 0.52.
    audit = LowerBoundEvidence(epsilon=0.52, kind="audit", description="95% audit")
    verdict, evidence = judge(0.683, 5.92, [audit])
    assert verdict == "unresolved"
    assert "5.92" in evidence and "0.52" in evidence


def test_an_unnoised_channel_violates_any_claim():
    channel = LowerBoundEvidence(epsilon=math.inf, kind="channel", description="raw sync times")
    assert judge(1e9, math.inf, [channel])[0] == "violated"


def test_a_lower_bound_above_a_certified_upper_bound_is_flagged():
    audit = LowerBoundEvidence(epsilon=1.5, kind="audit", description="95% audit")
    verdict, evidence = judge(1.0, 0.9, [audit])
    assert verdict == "violated" and "CONTRADICTION" in evidence


@pytest.mark.parametrize("coverage", ["outside-claim", "no-claim"])
def test_rows_outside_a_claim_take_no_claimed_epsilon(coverage):
    verdict, evidence = judge(None, math.inf, [], coverage=coverage)
    assert verdict == coverage and "claimed" not in evidence


def test_bad_input_is_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match="`coverage` must be one of"):
        judge(1.0, 1.0, coverage="maybe")
    with pytest.raises(ValueError, match="`upper` must be >= 0"):
        judge(1.0, math.nan)
    with pytest.raises(ValueError, match="`claimed_epsilon` must be a finite float"):
        judge(None, 1.0)
    with pytest.raises(ValueError, match="`epsilon` must be >= 0"):
        LowerBoundEvidence(epsilon=-1.0, kind="audit", description="")
    with pytest.raises(ValueError, match="`kind` must be one of"):
        LowerBoundEvidence(epsilon=1.0, kind="guess", description="")


def test_every_verdict_is_defined():
    assert set(VERDICT_DEFINITIONS) == set(VERDICTS)
