"""Plain-language statements of the register rows (fedpriv.audit.claims.statements)."""

from __future__ import annotations

import collections

import pytest
from fedpriv.audit.claims.register import REGISTER
from fedpriv.audit.claims.statements import (
    QUIET_SETTINGS,
    algorithm_names,
    statement,
    statement_of_record,
)


def _inputs(entry) -> tuple:
    """What a statement is built from (paper, algorithm, mode, setting, relation, claimed
    guarantee, coverage), the derived setting values left out."""
    claim = entry.claim
    setting = tuple((k, v) for k, v in claim.setting if k not in QUIET_SETTINGS)
    return (
        claim.paper,
        claim.algorithm,
        claim.mode,
        setting,
        claim.neighboring_relation,
        claim.claimed,
        claim.coverage,
    )


def test_every_register_row_gets_a_one_sentence_statement():
    for entry in REGISTER:
        text = statement(entry.claim, entry.key)
        assert text.strip() and text.endswith(".") and text.count(": ") >= 1, entry.key
        assert "\n" not in text, entry.key
        # Named in words, not by its slug or the CLI name.
        assert entry.key not in text
        assert algorithm_names().get(entry.claim.algorithm, "?") in text, entry.key


def test_rows_with_different_settings_never_share_a_statement():
    by_text = collections.defaultdict(set)
    for entry in REGISTER:
        by_text[statement(entry.claim, entry.key)].add(_inputs(entry))
    shared = {text: inputs for text, inputs in by_text.items() if len(inputs) > 1}
    assert not shared, next(iter(shared))


def test_statement_of_a_record_matches_the_claims():
    for entry in REGISTER[:5]:
        claim = entry.claim
        record = {
            "algorithm": claim.algorithm,
            "mode": claim.mode,
            "setting": claim.setting_dict(),
            "neighboring_relation": claim.neighboring_relation.value,
            "coverage": claim.coverage,
            "key": entry.key,
            "claimed": {"epsilon": float(claim.claimed.epsilon), "delta": claim.claimed_delta},
        }
        assert statement_of_record(record) == statement(claim, entry.key)
        # a register written before dp-accounting's name says `relation`
        old = dict(record, relation=record.pop("neighboring_relation"))
        assert statement_of_record(old) == statement(claim, entry.key)


@pytest.mark.parametrize(
    "coverage, words",
    [
        ("claim", "claimed ε = 1-DP for one changed reward"),
        ("outside-claim", "outside the paper's claim"),
        ("no-claim", "the paper claims no privacy"),
    ],
)
def test_the_coverage_is_said_in_words(coverage, words):
    record = {
        "algorithm": "gossip-fed-ucb",
        "mode": "paper",
        "setting": {"horizon": 16, "epsilon": 1.0, "log_base": "2"},
        "neighboring_relation": "replace_one_reward",
        "coverage": coverage,
        "claimed": None if coverage == "no-claim" else {"epsilon": 1.0, "delta": 0.0},
        "key": "gossip_fed_ucb/gossip-fed-ucb/paper-log2/T16/eps1",
    }
    text = statement_of_record(record)
    assert words in text and "T = 16" in text and "log₂ tree" in text
    assert "as seen by agent i's neighbours" in text or "to agent i's neighbours" in text


def test_records_missing_fields_still_get_a_sentence():
    assert statement_of_record({}).endswith(".")
    text = statement_of_record({"algorithm": "new-algo", "setting": {"weird_knob": 3}})
    assert "new-algo" in text and "weird_knob = 3" in text
