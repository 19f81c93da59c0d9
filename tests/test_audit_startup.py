"""``from fedpriv import audit_mechanism`` imports what a black-box audit needs, no more.

Start-up time is measured by ``benchmarks/bench_verify.py`` (never by a timed
assertion); what this checks is its cause, in fresh interpreters: importing the audit
entry point imports none of SciPy, pandas, matplotlib or dp-accounting, nor the
accounting rooms an audit does not use (conversions, routes, ledger, calibrations,
mechanisms). Since :mod:`fedpriv.privacy` now imports its rooms on first use, it also
checks that every public name still resolves and that the event types whose modules
register their own handlers are found by type and by name in a process that never
imported those modules.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

HEAVY = ("scipy", "pandas", "matplotlib", "dp_accounting")
#: fedpriv modules a black-box audit does not import until it uses them.
DEFERRED = (
    "fedpriv.privacy.accounting.conversions",
    "fedpriv.privacy.accounting.routes",
    "fedpriv.privacy.accounting.handlers",
    "fedpriv.privacy.accounting.events",
    "fedpriv.privacy.ledger",
    "fedpriv.privacy.calibrations",
    "fedpriv.privacy.mechanisms",
    "fedpriv.audit.estimators.one_run",
    "fedpriv.audit.estimators.sequential",
    "fedpriv.audit.claims",
    "fedpriv.cli",
)


def _modules_after(code: str, tmp_path) -> list[str]:
    """Every module in ``sys.modules`` after a fresh interpreter runs ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    "code",
    [
        "from fedpriv import audit_mechanism",
        "import fedpriv; fedpriv.audit_mechanism, fedpriv.NeighboringPair, fedpriv.PureDP",
        "from fedpriv.audit import assert_private, AuditResult",
        "import fedpriv.privacy",
        "from fedpriv.privacy.accounting.guarantees import ApproxDP, GaussianDP, PureDP",
    ],
)
def test_the_audit_entry_point_imports_no_heavy_library(code: str, tmp_path) -> None:
    modules = _modules_after(code, tmp_path)
    tops = {m.split(".")[0] for m in modules}
    assert not set(HEAVY) & tops, f"{code!r} imported {sorted(set(HEAVY) & tops)}"
    deferred = sorted(m for m in modules if m.startswith(DEFERRED))
    assert not deferred, f"{code!r} imported {deferred}"


def test_a_guarantee_imports_scipy_only_when_it_converts(tmp_path) -> None:
    code = (
        "import sys\n"
        "from fedpriv import GaussianDP, PureDP\n"
        "assert PureDP(1.0).get_epsilon(0.0) == 1.0\n"
        "assert 'scipy' not in sys.modules\n"
        "assert GaussianDP(1.0).get_epsilon(1e-5) > 0\n"
    )
    modules = _modules_after(code, tmp_path)
    assert "fedpriv.privacy.accounting.conversions" in modules  # used, so imported
    assert "scipy.special" in modules


@pytest.mark.parametrize(
    "package",
    [
        "fedpriv",
        "fedpriv.privacy",
        "fedpriv.audit",
        "fedpriv.audit.estimators",
        "fedpriv.privacy.accounting.guarantees",
    ],
)
def test_every_public_name_resolves_and_is_listed(package: str) -> None:
    module = importlib.import_module(package)
    names = module.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert getattr(module, name) is not None, name
    assert set(names) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018


def test_the_privacy_names_are_the_objects_of_their_rooms() -> None:
    import fedpriv.privacy as privacy
    from fedpriv.privacy.accounting import events, guarantees
    from fedpriv.privacy.ledger.accountant import Accountant
    from fedpriv.privacy.mechanisms.interval import IntervalRelease

    assert privacy.events is events
    assert privacy.PureDP is guarantees.PureDP
    assert privacy.Accountant is Accountant
    assert privacy.IntervalRelease is IntervalRelease
    assert (
        guarantees.gaussian_dp_epsilon
        is importlib.import_module("fedpriv.privacy.accounting.conversions").gaussian_dp_epsilon
    )


def test_self_registering_events_are_found_before_their_modules_are_imported(tmp_path) -> None:
    # A nested Composed is priced by the handler table itself, and the codec resolves a
    # stored IntervalRelease by name in a process that never imported its module,
    # without importing the mechanisms room (the event lives in the accounting core).
    from fedpriv.privacy.ledger.codec import encode_event
    from fedpriv.privacy.mechanisms.interval import make_interval_release

    record = encode_event(make_interval_release(1.0, 16, theta=1.1))
    code = (
        "import sys\n"
        "from fedpriv.privacy.accounting.events import Composed, Laplace\n"
        "from fedpriv.privacy.accounting.handlers import handlers_for\n"
        "handlers_for(Composed(events=(Laplace(scale=1.0, l1_sensitivity=1.0),)))\n"
        "assert 'fedpriv.privacy.accounting.interval' not in sys.modules\n"
        "from fedpriv.privacy.ledger.codec import decode_event\n"
        f"event = decode_event({record!r})\n"
        "assert type(event).__name__ == 'IntervalRelease', type(event)\n"
    )
    modules = _modules_after(code, tmp_path)
    assert "fedpriv.privacy.accounting.interval" in modules
    assert not [m for m in modules if m.startswith("fedpriv.privacy.mechanisms")]
