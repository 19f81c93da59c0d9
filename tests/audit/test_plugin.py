"""Tests of the pytest plugin (fedpriv_pytest): the dp_audit marker and fixtures.

The plugin is loaded for our own suite through ``pytest_plugins`` in
tests/conftest.py; the pytester runs load it with ``-p fedpriv_pytest`` as the
``pytest11`` entry point does for an installed fedpriv. They run in subprocesses: an
in-process run restores ``sys.modules`` afterwards, dropping numpy extension modules the
inner run imported first, which cannot be loaded again in this process (a later test
importing ``numpy.fft`` then failed, in file order test_plugin → test_plugin_loading).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import zlib

import fedpriv.audit as audit
import pytest
from fedpriv.audit.regression.auditor import Auditor
from fedpriv.audit.regression.corpus_mechanisms import laplace_count
from fedpriv.privacy import PureDP
from fedpriv.privacy.errors import PrivacyViolationError

__all__: list[str] = []

pytest_plugins = ["pytester"]

PAIR = audit.NeighboringPair(1.0, 0.0)


@pytest.mark.dp_audit(samples=20_000, seed=7)
def test_marker_configures_the_fixture(dp_audit: Auditor, request: pytest.FixtureRequest) -> None:
    assert dp_audit.samples == 20_000 and dp_audit.seed == 7
    assert dp_audit.options["executor"] == "serial"
    assert request.node.get_closest_marker("statistical") is not None
    result = dp_audit.assert_private(
        functools.partial(laplace_count, scale=1.0), PAIR, claim=PureDP(1.0)
    )
    assert result.n_samples == 20_000 and not result.violated
    assert request.node.user_properties[-1][0] == "dp_audit"
    assert (
        dp_audit.audit(
            functools.partial(laplace_count, scale=1.0), PAIR, claim=PureDP(1.0)
        ).seed_entropy
        == 7
    )


@pytest.mark.dp_audit(samples=10_000)
def test_assert_violated_and_assert_private(dp_audit: Auditor) -> None:
    broken = functools.partial(laplace_count, scale=0.25)
    dp_audit.assert_violated(broken, PAIR, claim=PureDP(1.0))
    with pytest.raises(PrivacyViolationError, match="VIOLATED"):
        dp_audit.assert_private(broken, PAIR, claim=PureDP(1.0))
    with pytest.raises(AssertionError, match="expected a privacy violation"):
        dp_audit.assert_violated(
            functools.partial(laplace_count, scale=1.0), PAIR, claim=PureDP(1.0)
        )


def test_seed_defaults_to_a_stable_hash_of_the_node_id(
    dp_audit: Auditor, dp_audit_seed: int, request: pytest.FixtureRequest
) -> None:
    assert dp_audit_seed == zlib.crc32(request.node.nodeid.encode()) == dp_audit.seed
    assert dp_audit.samples == 100_000


_INNER = """
import functools
import os
import subprocess
import sys
import pytest
import fedpriv.audit as audit
from fedpriv.audit.regression.corpus_mechanisms import laplace_count
from fedpriv.privacy import PureDP

PAIR = audit.NeighboringPair(1.0, 0.0)

@pytest.mark.dp_audit(samples=5_000, seed=1)
def test_correct(dp_audit):
    dp_audit.assert_private(functools.partial(laplace_count, scale=1.0), PAIR,
                            claim=PureDP(1.0))

@pytest.mark.dp_audit(samples=5_000, seed=1)
def test_broken(dp_audit):
    dp_audit.assert_private(functools.partial(laplace_count, scale=0.25), PAIR,
                            claim=PureDP(1.0))
"""


@pytest.mark.statistical
def test_plugin_in_a_fresh_pytest_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=_INNER)
    result = pytester.runpytest_subprocess(
        "-p", "fedpriv_pytest", "-p", "no:cacheprovider", "--dp-audit-samples-factor", "2"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*PrivacyViolationError: VIOLATED*10000 samples per world*"])
    markers = pytester.runpytest_subprocess("-p", "fedpriv_pytest", "--markers")
    markers.stdout.fnmatch_lines(["*dp_audit(samples=*"])


def test_entry_point_and_conftest_registration_coexist(pytester: pytest.Pytester) -> None:
    """``-p fedpriv_pytest`` registers under the same name as the pytest11 entry
    point; a conftest that also lists the plugin must not double-register it."""
    pytester.makeconftest('pytest_plugins = ["fedpriv_pytest"]\n')
    pytester.makepyfile(test_one="def test_fixture(dp_audit):\n    assert dp_audit.samples\n")
    result = pytester.runpytest_subprocess("-p", "fedpriv_pytest", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_loading_the_plugin_does_not_import_the_audit_package() -> None:
    """pytest loads entry-point plugins before collection; if that imported ``audit``
    from site-packages, ``--doctest-modules`` on a source checkout would fail with
    "import file mismatch" (seen in a clean-clone CI run). The plugin must stay light."""
    code = (
        "import sys, fedpriv_pytest\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('audit', 'privacy', 'algorithms'))\n"
        "print(leaked); sys.exit(1 if leaked else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


_DECLINED = """
import functools
import os

import pytest
from fedpriv.audit import NeighboringPair
from fedpriv.audit.regression.corpus_mechanisms import laplace_count
from fedpriv.privacy import ApproxDP


@pytest.mark.dp_audit(samples=10_000, seed=3, reading="gaussian")
def test_laplace_under_the_gaussian_reading(dp_audit):
    dp_audit.assert_private(functools.partial(laplace_count, scale=1.0),
                            NeighboringPair(1.0, 0.0), claim=ApproxDP(1.0, 1e-5))
"""


def test_declined_gaussian_reading_is_reported(pytester: pytest.Pytester) -> None:
    """Issue 38 item 4: a correct Laplace(1) under reading="gaussian" passes (the pilot
    rejects the Gaussian shape; p below 1e-15 at this pinned seed) and the run's summary
    says the reading was declined, what was tested and at which level."""
    pytester.makepyfile(test_declined=_DECLINED)
    result = pytester.runpytest_subprocess("-p", "fedpriv_pytest", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*fedpriv dp_audit: declined Gaussian-DP readings*",
            "*test_laplace_under_the_gaussian_reading: Gaussian-DP reading declined*"
            "Gaussian shape rejected at level*",
        ]
    )


_USER_CODE = """
import functools
import os
import os
import sys
import time

import pytest
from fedpriv.audit import NeighboringPair
from fedpriv.audit.regression.corpus_mechanisms import laplace_count
from fedpriv.privacy import PureDP
from fedpriv.privacy.errors import PrivacyViolationError

PAIR = NeighboringPair(1.0, 0.0)
GOOD = functools.partial(laplace_count, scale=1.0)


def exits(dataset, n_samples, rng):
    os._exit(0)


def calls_sys_exit(dataset, n_samples, rng):
    sys.exit(0)


def hangs(dataset, n_samples, rng):
    while True:
        time.sleep(0.05)


@pytest.mark.dp_audit(samples=5_000, seed=1)
def test_os_exit(dp_audit):
    dp_audit.assert_private(exits, PAIR, claim=PureDP(1.0))


@pytest.mark.dp_audit(samples=5_000, seed=1)
def test_sys_exit(dp_audit):
    dp_audit.audit(calls_sys_exit, PAIR, claim=PureDP(1.0))


@pytest.mark.dp_audit(samples=5_000, seed=1, timeout=2)
def test_hang(dp_audit):
    dp_audit.assert_violated(hangs, PAIR, claim=PureDP(1.0))


@pytest.mark.dp_audit(samples=5_000, seed=1, isolate=False)
def test_sys_exit_not_isolated(dp_audit):
    dp_audit.assert_private(calls_sys_exit, PAIR, claim=PureDP(1.0))


@pytest.mark.dp_audit(samples=5_000, seed=1)
def test_good(dp_audit):
    calls = []

    def counted(dataset, n_samples, rng):
        calls.append(os.getpid())
        return GOOD(dataset, n_samples, rng)

    assert not dp_audit.assert_private(counted, PAIR, claim=PureDP(1.0)).violated
    assert calls == []  # it ran in the forked worker only


@pytest.mark.dp_audit(samples=5_000, seed=1)
def test_broken_is_refuted_here(dp_audit):
    broken = functools.partial(laplace_count, scale=0.25)
    with pytest.raises(PrivacyViolationError, match="VIOLATED") as caught:
        dp_audit.assert_private(broken, PAIR, claim=PureDP(1.0))
    assert caught.value.result.violated  # decided in this process, result attached
    dp_audit.assert_violated(broken, PAIR, claim=PureDP(1.0))


@pytest.mark.dp_audit(samples=5_000, seed=1, isolate=False)
def test_good_not_isolated(dp_audit):
    calls = []

    def counted(dataset, n_samples, rng):
        calls.append(os.getpid())
        return GOOD(dataset, n_samples, rng)

    dp_audit.assert_private(counted, PAIR, claim=PureDP(1.0))
    assert calls and set(calls) == {os.getpid()}  # today's behaviour: this process
"""


@pytest.mark.statistical
@pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation forks a worker")
def test_a_mechanism_that_exits_or_hangs_fails_its_test(pytester: pytest.Pytester) -> None:
    """A real pytest run (a subprocess: ``os._exit`` would end an in-process one).

    Before isolation, ``test_os_exit`` ended pytest with status 0 and the other tests
    unrun. The good and broken mechanisms' verdicts are those of ``_INNER`` above
    (pinned seed 1; each correct-mechanism audit's false-alarm probability is at most
    1 - confidence = 5%, and at this seed it does not alarm)."""
    pytester.makepyfile(test_user_code=_USER_CODE)
    result = pytester.runpytest_subprocess("-p", "fedpriv_pytest", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.assert_outcomes(passed=3, failed=4)
    failed = ("test_os_exit", "test_sys_exit", "test_hang", "test_sys_exit_not_isolated")
    result.stdout.fnmatch_lines_random([f"FAILED test_user_code.py::{name} - *" for name in failed])
    mechanism = "*UserCodeAbortedError: the audited mechanism test_user_code"
    result.stdout.fnmatch_lines_random(
        [
            f"{mechanism}.exits in test test_user_code.py::test_os_exit exited with status 0*",
            f"{mechanism}.calls_sys_exit in test test_user_code.py::test_sys_exit called "
            "sys.exit(0)*",
            f"{mechanism}.hangs in test test_user_code.py::test_hang ran past its timeout of 2 s*",
        ]
    )


def test_auditor_refuses_bad_isolation_settings() -> None:
    with pytest.raises(TypeError, match="`isolate`"):
        Auditor(isolate="yes")
    with pytest.raises(ValueError, match="`timeout`"):
        Auditor(timeout=0)
