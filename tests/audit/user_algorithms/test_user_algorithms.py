"""The users' algorithms corpus (``corpus.py``) gets its stated verdicts at ``--quick`` budgets.

Each row is evaluated as ``fedpriv verify --claims corpus.py --quick --seed 0`` evaluates
it: its accountant recipe, its audit at 100 pilot and 1,000 confirming runs per world
(95% family-wise confidence) under the row's key-addressed seed, and the one verdict
rule (:func:`fedpriv.audit.claims.verify.assemble_result`).

- A correct algorithm is ``holds`` or ``unresolved``, never ``violated``: a ``violated``
  needs an audit lower bound above the claim, which for an algorithm whose true ε is
  within the claim happens with probability <= 5% per row over seeds (the audit's
  confidence); at the pinned seed it does not.
- A leaky algorithm is never ``holds``, and ``violated`` wherever its true ε is at
  least twice the claim. The audit searches the neighbour and reads the whole view
  (``corpus.audit``); with the guide's single pair (``corpus.guide_audit``) the re-used
  noise and the late slip stay hidden, which
  ``test_the_guides_single_pair_misses_the_late_leaks`` records. A ``violated`` at a
  true ε of ∞ or 8–10 fails to appear with probability far below 1e-6 once the audit
  reads the leaking statistic.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fedpriv.audit.claims.verify import claim_seed, evaluate_entry
from fedpriv.audit.engine.coupled import AuditBudget

from tests.audit.user_algorithms import corpus

QUICK = AuditBudget(pilot_samples=100, samples=1_000, batch_size=1_000)
#: Assertions that fail today, by (entry, assertion), with the work they wait for.
PENDING: dict[tuple[str, str], str] = {}


@functools.cache
def evaluated(name: str):
    """The row of corpus entry ``name`` evaluated at the ``--quick`` budget, seed 0."""
    row = corpus.row(corpus.ENTRIES[name])
    seed = claim_seed(np.random.SeedSequence(0), row.key)
    return evaluate_entry(row, QUICK, seed)


def _cases(assertion: str, entries):
    out = []
    for entry in entries:
        reason = PENDING.get((entry.name, assertion))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(entry.name, id=entry.name, marks=marks))
    return out


CORRECT = [e for e in corpus.CORPUS if not e.leaky]
LEAKY = [e for e in corpus.CORPUS if e.leaky]


def test_the_corpus_covers_the_issue() -> None:
    assert len(CORRECT) >= 4 and len(LEAKY) >= 8
    leaks = {e.leak for e in LEAKY}
    for leak in (
        "noise sized for one release of many",
        "a mis-declared disjoint level",
        "re-used noise",
        "a data-dependent send/skip decision",
        "a raw index released",
        "a leak only through differences of messages",
        "a leak at a late position only",
        "a leak only in a vector's joint distribution",
    ):
        assert leak in leaks
    for entry in corpus.CORPUS:
        assert entry.run.__doc__ and "true ε" in entry.run.__doc__.lower()


@pytest.mark.statistical
@pytest.mark.parametrize("name", _cases("correct", CORRECT))
def test_a_correct_algorithm_is_never_violated(name: str) -> None:
    result = evaluated(name)
    assert result.verdict in corpus.ENTRIES[name].expected, result.evidence
    assert result.verdict != "violated"


@pytest.mark.statistical
@pytest.mark.parametrize("name", _cases("never_holds", LEAKY))
def test_a_leaky_algorithm_never_holds(name: str) -> None:
    result = evaluated(name)
    assert result.verdict != "holds", result.evidence


@pytest.mark.statistical
@pytest.mark.parametrize(
    "name", _cases("violated", [e for e in LEAKY if e.true_epsilon >= 2 * corpus.EPSILON])
)
def test_a_leak_of_twice_the_claim_is_violated(name: str) -> None:
    result = evaluated(name)
    assert result.verdict == "violated", result.evidence


def test_the_corpus_is_a_claims_file() -> None:
    rows = corpus.FAMILY.claims()
    assert [r.key for r in rows] == [f"user_corpus/{e.name}/eps1" for e in corpus.CORPUS]
    assert all(r.key.startswith(corpus.FAMILY.key + "/") for r in rows)


def test_the_guides_single_pair_misses_the_late_leaks() -> None:
    """With agent 0's first reward as the only pair, re-used noise shows ε <= 1 (every
    message moves by the same 1) and the late slip nothing: the search is what finds them
    (deterministic, seed 0)."""
    for name in ("reused-noise", "late-mean-slip"):
        row = corpus.row(corpus.ENTRIES[name])
        seed = claim_seed(np.random.SeedSequence(0), row.key)
        bound = corpus.guide_audit(row.claim, QUICK, seed)
        assert bound.epsilon_lower_bound < 1.0, name
