"""`fedpriv run` and `fedpriv verify` decide the same claim with the same rule.

Issue 18 case 5: `fedpriv run feducb --agents 10 --horizon 2000 --epsilon 1 --delta 0.1`
printed "holds" (the Privatizer's ε at δ = 0.1 is 0) for the claim that `verify` rules
violated (the adaptive sync requests are an un-noised channel). Both now judge the
end-to-end ledger with :func:`fedpriv.privacy.accounting.verdicts.judge`.
"""

from __future__ import annotations

import json

from fedpriv.audit.claims.register import REGISTER
from fedpriv.audit.claims.verify import assemble_result
from fedpriv.cli.main import main


def _verify_row(key: str):
    entry = next(e for e in REGISTER if e.key == key)
    route, epsilon, notes = entry.accountant(entry.claim)
    return assemble_result(entry, route, epsilon, notes)


def test_run_and_verify_agree_on_feducb_adaptive(capsys):
    code = main(
        [
            "run",
            "feducb",
            "--agents",
            "10",
            "--horizon",
            "2000",
            "--epsilon",
            "1",
            "--delta",
            "0.1",
            "--json",
        ]
    )
    assert code == 1  # violated, as verify judges it: run exits 1 like verify
    record = json.loads(capsys.readouterr().out)
    guarantee = record["guarantee"]
    row = _verify_row("feducb/feducb/adaptive")
    assert guarantee["verdict"] == row.verdict == "violated"
    assert guarantee["end_to_end"]["epsilon"] == "inf"
    assert "un-noised" in guarantee["evidence"]
