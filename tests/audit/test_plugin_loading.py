"""Loading installed ``fedpriv.papers`` entry points cannot break fedpriv.

Each distribution here is installed for real (a module and its ``*.dist-info`` on
``sys.path``, found by ``importlib.metadata``; :mod:`tests.audit._plugins`):

- one that reads the registry at import (``REGISTER``, ``families()``) loads, and the
  load does not start again inside itself;
- one that raises, calls ``sys.exit`` or ``os._exit``, is killed, hangs, names no
  Family or takes a built-in name is skipped with a warning naming it (each entry
  point is loaded first in a forked worker, and in this process only if it loaded
  there); ``fedpriv --help`` and the commands that do not need it still work, and
  ``fedpriv verify --paper <it>`` exits 2 naming it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fedpriv.audit.claims import family as registry
from fedpriv.audit.claims import register
from fedpriv.audit.claims.family import PluginWarning, builtin_families, families
from fedpriv.cli.main import main

from tests.audit._plugins import install_distribution

ROOT = Path(__file__).resolve().parents[2]

READS_REGISTRY = """
    import dataclasses

    from fedpriv.audit.claims.family import Family, families
    from fedpriv.audit.claims.register import REGISTER

    BUILT_IN = len(REGISTER)  # read at import: the registry answers without this plugin
    SEEN = tuple(f.key for f in families())
    FAMILY = Family(key="reads_at_import", title="Reads the register at import", claims=tuple)
"""

BROKEN = {
    "raises": "raise ImportError('no module named nope')\n",
    "exits": "import sys\nsys.exit(3)\n",
    "not_a_family": "FAMILY = 42\n",
    "collides": """
        from fedpriv.audit.claims.family import Family
        FAMILY = Family(key="li_song", title="Mine", claims=tuple)
    """,
    "reenters": """
        from fedpriv.audit.claims.family import family
        TITLE = family("reenters").title  # itself, while it loads: not registered yet
    """,
    "os_exits": "import os\nos._exit(0)\n",
    "killed": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
    "hangs": "import time\nwhile True:\n    time.sleep(0.05)\n",
}
REASONS = {
    "raises": "ImportError: no module named nope",
    "exits": "sys.exit(3)",
    "not_a_family": "must define FAMILY",
    "collides": "'li_song' is already registered",
    "reenters": "`paper` must be one of",
    "os_exits": "exited with status 0 (os._exit or a crash) while loading",
    "killed": "was killed by signal SIGKILL while loading",
    "hangs": "did not finish loading within 2 s (ENTRY_POINT_LOAD_TIMEOUT)",
}
#: Cases that end or stall the process loading them: only a forked probe survives them.
FATAL = {"os_exits", "killed", "hangs"}


@pytest.fixture
def clean_registry(monkeypatch):
    """A registry that reads the entry points again (restored afterwards)."""
    monkeypatch.setattr(registry, "_files", {})
    monkeypatch.setattr(registry, "_entry_point_cache", None)
    monkeypatch.setattr(registry, "_skipped", {})
    monkeypatch.setattr(registry, "_origins", {})
    monkeypatch.setattr(register, "_outside_cache", [(), ()])


def test_a_plugin_reading_the_registry_at_import_loads(
    tmp_path, clean_registry, monkeypatch
) -> None:
    install_distribution(tmp_path, "reads_registry_plugin", READS_REGISTRY, point="reads")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(register.__dict__, "REGISTER", raising=False)  # built on demand
    keys = [f.key for f in families()]
    assert keys[-1] == "reads_at_import"
    plugin = sys.modules["reads_registry_plugin"]
    built_in = [f.key for f in builtin_families()]
    assert list(plugin.SEEN) == built_in  # what it saw while it loaded
    assert len(register.REGISTER) == plugin.BUILT_IN
    assert registry.skipped_entry_points() == {}
    assert main(["--help"]) == 0


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_plugin_is_named_and_skipped(
    case, tmp_path, clean_registry, monkeypatch, capsys
) -> None:
    if case in FATAL and not hasattr(os, "fork"):
        pytest.skip("only a forked probe contains an exit, a death or a hang")
    module = f"broken_plugin_{case}"
    install_distribution(tmp_path, module, BROKEN[case], point=case)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "ENTRY_POINT_LOAD_TIMEOUT", 2.0 if case == "hangs" else 600.0)
    with pytest.warns(PluginWarning, match=f"entry point '{case}'"):
        registered = families()
    assert registered == builtin_families()  # the built-in families are all there
    if hasattr(os, "fork"):  # it failed in the probe: never imported in this process
        assert module not in sys.modules
    (why,) = registry.skipped_entry_points().values()
    assert REASONS[case] in why and module in why, why
    # every command that does not need it works, and says which plugin it skipped
    for argv in (["--help"], ["run", "--help"], ["verify", "--help"]):
        assert main(argv) == 0, argv
        err = capsys.readouterr().err
        assert f"fedpriv: warning: entry point '{case}'" in err and "Traceback" not in err
    # asked for by name, nothing can be checked: exit 2 naming it, nothing written
    out = tmp_path / "out"
    assert main(["verify", "--paper", case, "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"entry point '{case}'" in err and REASONS[case] in err, err
    assert not out.exists()


def test_help_and_account_work_beside_a_broken_installed_plugin(tmp_path) -> None:
    """The console entry in a fresh process, the plugin found through PYTHONPATH."""
    install_distribution(tmp_path, "broken_plugin_process", BROKEN["raises"], point="broken")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path)]))}
    command = [sys.executable, "-m", "fedpriv.cli.main"]
    for argv in (["--help"], ["account", str(ROOT / "examples" / "feducb.toml")]):
        done = subprocess.run(
            [*command, *argv], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        assert "fedpriv: warning: entry point 'broken'" in done.stderr
        assert "ImportError: no module named nope" in done.stderr
        assert "Traceback" not in done.stderr


def test_a_plugin_whose_command_module_is_missing_fails_only_that_command(
    tmp_path, clean_registry, monkeypatch, capsys
) -> None:
    body = """
        from fedpriv.audit.claims.family import Command, Family
        FAMILY = Family(key="lost_commands", title="Lost", claims=tuple,
                        run_commands={"lost-run": Command("no_such_module_35", "gone")})
    """
    install_distribution(tmp_path, "lost_commands_plugin", body, point="lost")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["--help"]) == 0  # listed by its registration, not imported
    assert main(["run", "lost-run"]) == 2
    err = capsys.readouterr().err
    assert "fedpriv: error: No module named 'no_such_module_35'" in err and "Traceback" not in err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the probe forks a worker")
def test_a_plugin_calling_os_exit_cannot_end_fedpriv(tmp_path) -> None:
    """Before the probe, ``os._exit(0)`` at import ended every command with status 0."""
    install_distribution(tmp_path, "os_exit_plugin", BROKEN["os_exits"], point="gone")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    command = [sys.executable, "-m", "fedpriv.cli.main"]
    run = {"capture_output": True, "text": True, "timeout": 600, "env": env, "cwd": tmp_path}
    done = subprocess.run([*command, "--help"], **run)
    assert done.returncode == 0 and "usage: fedpriv" in done.stdout, done.stderr
    assert "fedpriv: warning: entry point 'gone'" in done.stderr
    assert REASONS["os_exits"] in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run([*command, "verify", "--paper", "gone", "--quick"], **run)
    assert done.returncode == 2, done.stderr
    assert "fedpriv: error: `paper` 'gone'" in done.stderr
    assert "entry point 'gone'" in done.stderr and REASONS["os_exits"] in done.stderr


def test_nothing_is_forked_without_an_installed_entry_point(clean_registry, monkeypatch) -> None:
    from importlib import metadata

    from fedpriv.audit.engine import isolation

    if metadata.entry_points(group=registry.ENTRY_POINT_GROUP):
        pytest.skip("a fedpriv.papers distribution is installed in this environment")

    def refuse(*args, **kwargs):
        raise AssertionError("forked a probe with no entry point installed")

    monkeypatch.setattr(isolation, "run_isolated", refuse)
    assert families() == builtin_families()
    assert registry.skipped_entry_points() == {}


def test_a_good_plugin_is_probed_then_loaded_here(tmp_path, clean_registry, monkeypatch) -> None:
    """The probe runs in a worker; the families come from the in-process load."""
    body = """
        import os
        from fedpriv.audit.claims.family import Family
        LOADED_IN = os.getpid()
        FAMILY = Family(key="probed_ok", title="Probed", claims=tuple)
    """
    install_distribution(tmp_path, "probed_ok_plugin", body, point="probed")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert [f.key for f in families()][-1] == "probed_ok"
    assert os.getpid() == sys.modules["probed_ok_plugin"].LOADED_IN
    assert registry.skipped_entry_points() == {}
