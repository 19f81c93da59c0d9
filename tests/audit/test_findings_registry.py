"""Findings are declared by the families and generated in family order."""

from __future__ import annotations

import dataclasses

import pytest
from fedpriv.audit.claims import findings as findings_module
from fedpriv.audit.claims.family import Family, FamilyError, families
from fedpriv.audit.claims.findings import FINDINGS, Finding, build_findings


def test_findings_are_the_families_in_family_order() -> None:
    registered = families()
    assert tuple(f for fam in registered for f in fam.findings()) == FINDINGS
    owners = [
        next(fam.key for fam in registered if f.id.startswith(fam.key + "-")) for f in FINDINGS
    ]
    runs = [k for i, k in enumerate(owners) if i == 0 or owners[i - 1] != k]
    assert runs == [fam.key for fam in registered if fam.findings()]


def test_every_finding_id_starts_with_its_family_key() -> None:
    for fam in families():
        for finding in fam.findings():
            assert finding.id.startswith(fam.key + "-"), (fam.key, finding.id)
    assert len({f.id for f in FINDINGS}) == len(FINDINGS)


def _with_extra(monkeypatch, extra: Family) -> None:
    from fedpriv.audit.claims import family as registry

    monkeypatch.setattr(registry, "_files", {"test": (extra,)})


def test_a_finding_outside_its_family_is_refused(monkeypatch) -> None:
    stray = Finding(id="feducb-stray", statement="s", claims=("mine/*",), where="w")
    _with_extra(
        monkeypatch, Family(key="mine", title="Mine", claims=tuple, findings=lambda: (stray,))
    )
    with pytest.raises(FamilyError, match="finding id 'feducb-stray' must start with 'mine-'"):
        build_findings()


def test_a_user_family_adds_its_findings_last(monkeypatch) -> None:
    own = Finding(id="mine-leak", statement="s", claims=("mine/*",), where="w")
    _with_extra(
        monkeypatch, Family(key="mine", title="Mine", claims=tuple, findings=lambda: (own,))
    )
    built = build_findings()
    assert built[-1] == own and built[:-1] == FINDINGS
    assert built == findings_module.FINDINGS  # read again: the new family's too
    assert findings_module.finding_ids("mine/a/b") == ("mine-leak",)


def test_finding_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        FINDINGS[0].id = "x"  # type: ignore[misc]
