"""pytest plugin of fedpriv: privacy regression tests with a marker and a pinned seed.

Registered through the ``pytest11`` entry point ``fedpriv_pytest`` when fedpriv is
installed, and through ``pytest_plugins = ["fedpriv_pytest"]`` in our own
``tests/conftest.py`` (the same name, so the two resolve to one plugin).

It lives outside the ``audit`` package on purpose: pytest loads entry-point plugins
before it collects anything, and importing ``audit`` from site-packages at that point
would make ``--doctest-modules`` collection of a source checkout fail with "import file
mismatch". The fixtures import :mod:`audit` only when a test asks for them.

Usage::

    import fedpriv.privacy as privacy
    import pytest
    from fedpriv.audit import NeighboringPair

    @pytest.mark.dp_audit(samples=10**5, seed=7)
    def test_my_laplace_is_private(dp_audit):
        dp_audit.assert_private(my_mechanism, NeighboringPair(1.0, 0.0),
                                claim=privacy.PureDP(1.0))

The ``dp_audit`` fixture is an :class:`fedpriv.audit.regression.auditor.Auditor`: its ``samples``,
``seed``, ``confidence`` and other :func:`audit.audit_mechanism` options come from the
marker; without a marker the seed is pinned to a stable hash of the test's node id
(never a random seed), so a verdict is reproducible run after run. A test with the
marker is also marked ``statistical``. Each audit's evidence is attached to the test
report (``user_properties``, visible in JUnit XML); an audit whose Gaussian-DP reading
(``reading="gaussian"``) was declined because its pilot rejected the Gaussian shape
also gets a ``dp_audit_reading`` property saying what was tested, at which level and
why, and the terminal summary lists them. ``--dp-audit-samples-factor`` scales every
audit's sample count (e.g. 10 for a nightly run).

The mechanism is a user's code, so each audit runs in a forked worker process by
default (``isolate=True``; :func:`fedpriv.audit.engine.isolation.run_isolated`): a
mechanism that calls ``os._exit(0)`` or ``sys.exit``, dies, or runs past the marker's
``timeout=`` seconds (default 3600,
:data:`fedpriv.audit.regression.auditor.DEFAULT_AUDIT_TIMEOUT`; the worker is killed
then) fails its test with ``UserCodeAbortedError`` naming the mechanism and the test,
and pytest runs the other tests and exits non-zero; without isolation ``os._exit(0)``
ended pytest with status 0 and the remaining tests unrun. The worker returns the
``AuditResult`` and the verdict is decided in the test's process, so a refuted claim
raises ``PrivacyViolationError`` with its ``result`` as before. Contained: the audit
(every call of the mechanism it makes). Not contained: the test body outside the
``dp_audit`` calls, and with ``isolate=False`` (the audit in the test's process; what
the mechanism changes in its process is then seen by the test) or where ``os.fork``
does not exist (Windows: the audit runs in the test's process and only ``SystemExit``
is caught). In the worker the audit's samples are drawn serially by default
(``executor="serial"``), which composes with pytest-xdist; pass ``executor=...`` in the
marker to change that.

Marker example::

    @pytest.mark.dp_audit(samples=10**5, timeout=600)   # or isolate=False
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from fedpriv.audit.regression.api import AuditResult
    from fedpriv.audit.regression.auditor import Auditor

__all__ = ["dp_audit", "dp_audit_seed"]


def _stable_seed(nodeid: str) -> int:
    return zlib.crc32(nodeid.encode("utf-8"))


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--dp-audit-samples-factor``: scale the sample count of every dp_audit."""
    group = parser.getgroup("dp_audit", "fedpriv privacy audits")
    group.addoption(
        "--dp-audit-samples-factor",
        type=float,
        default=1.0,
        help="multiply the samples of every dp_audit fixture (default 1.0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers (harmless if the project registers them too)."""
    config.addinivalue_line(
        "markers",
        "dp_audit(samples=100000, seed=<hash of node id>, confidence=0.95, isolate=True, "
        "timeout=3600, **options): configure the dp_audit fixture (an empirical privacy "
        "audit, pinned seed, run in a forked worker stopped after timeout seconds)",
    )
    config.addinivalue_line(
        "markers", "statistical: seeded Monte-Carlo test with a stated false-failure probability"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests with the dp_audit marker are statistical tests too."""
    for item in items:
        if item.get_closest_marker("dp_audit") is not None:
            item.add_marker(pytest.mark.statistical)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """List the audits whose Gaussian-DP reading was declined, with the reason."""
    lines = [
        f"{report.nodeid}: {value}"
        for reports in terminalreporter.stats.values()
        for report in reports
        for name, value in getattr(report, "user_properties", ())
        if name == "dp_audit_reading"
    ]
    if lines:
        terminalreporter.section("fedpriv dp_audit: declined Gaussian-DP readings")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture
def dp_audit_seed(request: pytest.FixtureRequest) -> int:
    """The pinned seed: the marker's ``seed`` or a stable hash of the node id."""
    marker = request.node.get_closest_marker("dp_audit")
    if marker is not None and "seed" in marker.kwargs:
        return int(marker.kwargs["seed"])
    return _stable_seed(request.node.nodeid)


@pytest.fixture
def dp_audit(request: pytest.FixtureRequest, dp_audit_seed: int) -> Auditor:
    """An :class:`Auditor` configured by the test's ``dp_audit`` marker."""
    from fedpriv.audit.regression.auditor import Auditor

    marker = request.node.get_closest_marker("dp_audit")
    kwargs = dict(marker.kwargs) if marker is not None else {}
    if marker is not None and marker.args:
        raise pytest.UsageError("dp_audit takes keyword arguments only, e.g. samples=10**5.")
    kwargs.pop("seed", None)
    factor = float(request.config.getoption("--dp-audit-samples-factor", 1.0))
    samples = max(1, round(int(kwargs.pop("samples", Auditor.samples)) * factor))
    confidence = float(kwargs.pop("confidence", 0.95))
    isolation = {name: kwargs.pop(name) for name in ("isolate", "timeout") if name in kwargs}
    kwargs.setdefault("executor", "serial")

    def record(result: AuditResult) -> None:
        request.node.user_properties.append(("dp_audit", result.evidence))
        shape = result.details.get("shape_test")
        if result.details.get("reading_verdict") == "unresolved" and shape is not None:
            request.node.user_properties.append(
                (
                    "dp_audit_reading",
                    "Gaussian-DP reading declined (unresolved, it refutes nothing): "
                    f"{shape.description}",
                )
            )

    return Auditor(
        samples=samples,
        seed=dp_audit_seed,
        confidence=confidence,
        options=kwargs,
        record=record,
        where=f"test {request.node.nodeid}",
        **isolation,
    )
