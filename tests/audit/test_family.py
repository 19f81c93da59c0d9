"""The family registry: one registration per paper, found in the package, entry points and files."""

from __future__ import annotations

import re
import textwrap

import pytest
from fedpriv.audit.claims import family as registry
from fedpriv.audit.claims.family import (
    Command,
    Family,
    FamilyError,
    builtin_families,
    families,
    family,
)


def test_builtin_families_in_register_order() -> None:
    built_in = builtin_families()
    assert built_in  # the packages of fedpriv.audit.families
    assert families()[: len(built_in)] == built_in  # first, in (order, key) order
    assert list(built_in) == sorted(built_in, key=lambda f: (f.order, f.key))
    for fam in built_in:
        assert fam.origin == f"fedpriv.audit.families.{fam.key}"


def test_every_claim_key_starts_with_its_family_key() -> None:
    for fam in families():
        rows = fam.claims()
        assert rows, fam.key
        assert all(row.key.startswith(fam.key + "/") for row in rows)


ALIASES = [(alias, fam.key) for fam in builtin_families() for alias in fam.aliases]


@pytest.mark.parametrize(("alias", "key"), ALIASES, ids=[a for a, _ in ALIASES])
def test_aliases_resolve(alias: str, key: str) -> None:
    for spelling in (alias, alias.upper(), alias.replace("_", "-"), alias.replace("-", "_")):
        assert family(spelling).key == key
    assert family(key.upper()).key == key


def test_unknown_name_lists_the_keys() -> None:
    keys = ", ".join(f.key for f in families())
    with pytest.raises(ValueError, match=re.escape(keys)):
        family("nope")


@pytest.mark.parametrize("key", ["", "Feducb", "1paper", "a-b", "a b", None])
def test_bad_keys_are_refused(key) -> None:
    with pytest.raises(FamilyError, match="`key`"):
        Family(key=key, title="t", claims=tuple)


def test_experiment_names_carry_the_key() -> None:
    with pytest.raises(FamilyError, match="must start with 'my-paper'"):
        Family(key="my_paper", title="t", claims=tuple, experiments={"fig1": Command("m", "h")})


def test_claims_file_registers_and_collisions_are_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(registry, "_files", {})
    good = tmp_path / "mine.py"
    good.write_text(
        textwrap.dedent("""
        from fedpriv.audit.claims.family import Family
        FAMILY = Family(key="mine", title="My paper", claims=tuple)
    """)
    )
    (loaded,) = registry.load_claims_file(good)
    assert loaded.key == "mine" and loaded.origin.startswith("claims file")
    assert families()[-1].key == "mine"
    assert registry.load_claims_file(good) == (loaded,)  # loaded once
    clash = tmp_path / "clash.py"
    clash.write_text(
        textwrap.dedent("""
        from fedpriv.audit.claims.family import Family
        FAMILY = Family(key="other", title="x", claims=tuple, aliases=("zhu",))
    """)
    )
    with pytest.raises(FamilyError, match="'zhu' is registered twice"):
        registry.load_claims_file(clash)
    assert [f.key for f in families()][-1] == "mine"  # the refused file left nothing behind
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(FamilyError, match="must define FAMILY"):
        registry.load_claims_file(empty)
    with pytest.raises(FileNotFoundError, match="`claims` file not found"):
        registry.load_claims_file(tmp_path / "missing.py")


def test_command_declares_its_tables_from_a_closed_set() -> None:
    assert Command("m", "h", tables="contexts").tables == "contexts"
    with pytest.raises(FamilyError, match="`tables` must be '', 'rewards' or 'contexts'"):
        Command("m", "h", tables="matrices")


def _one_row_family(key: str, setting: dict, fields: dict) -> Family:
    import dataclasses

    from fedpriv.audit.claims.register import REGISTER

    row = next(e for e in REGISTER if e.paper == "li_song")
    claim = dataclasses.replace(row.claim, setting=tuple(setting.items()))
    mine = dataclasses.replace(row, key=f"{key}/x", claim=claim)
    return Family(key=key, title="t", claims=lambda: (mine,), setting_fields=fields)


@pytest.mark.parametrize(
    ("setting", "fields", "message"),
    [
        ({"horizon": 10, "knob": 1}, {}, "setting entry 'knob' is not declared"),
        ({"horizon": 10.0}, {}, "'horizon' must be int, got float"),
        ({"n_agents": True}, {}, "'n_agents' must be int, got bool"),
        ({"knob": "a"}, {"knob": int}, "'knob' must be int, got str"),
    ],
)
def test_settings_are_typed(setting, fields, message) -> None:
    from fedpriv.audit.claims.register import _rows

    with pytest.raises(FamilyError, match=message):
        _rows((_one_row_family("typed", setting, fields),), set())
    ok = _one_row_family("typed", {"horizon": 10, "knob": 1}, {"knob": int})
    assert len(_rows((ok,), set())) == 1


def test_every_builtin_setting_entry_is_declared() -> None:
    from fedpriv.audit.claims.entry import SETTING_TYPES, check_setting

    for fam in builtin_families():
        for row in fam.claims():
            check_setting(row.claim.setting, fam.setting_fields, where=row.key)
        used = {name for row in fam.claims() for name, _ in row.claim.setting}
        assert set(fam.setting_fields) <= used  # no stale declaration
        assert not set(fam.setting_fields) & set(SETTING_TYPES)


def test_builtin_families_declare_their_algorithms_and_calibration() -> None:
    import importlib

    import fedpriv.algorithms as flat

    for fam in builtin_families():
        package = importlib.import_module(fam.algorithms)
        assert package.__all__, fam.key
        assert set(package.__all__) <= set(flat.__all__)  # exported flat
        calibration = importlib.import_module(fam.calibration)
        assert calibration.__all__, fam.key
        # the key names the folders: algorithms/<key>/, privacy/calibrations/<key>.py
        assert fam.algorithms.endswith("." + fam.key)
        assert fam.calibration.endswith("." + fam.key)
