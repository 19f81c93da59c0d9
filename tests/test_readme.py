"""Every Python example in the README runs as written.

The ```python blocks are executed in order in one namespace (later examples reuse the
names of earlier ones, as a reader pasting them into one session would); a block that
defines pytest tests is run by pytest itself, with the installed ``fedpriv_pytest``
plugin. Blocks run in a temporary working directory, so nothing lands in the checkout.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _is_pytest_file(block: str) -> bool:
    return "@pytest.mark" in block or "\ndef test_" in block


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


def test_python_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme"}
    for index, block in enumerate(BLOCKS):
        if _is_pytest_file(block):
            continue
        code = compile(block, f"README.md python block {index + 1}", "exec")
        exec(code, namespace)


@pytest.mark.parametrize("index", [i for i, b in enumerate(BLOCKS) if _is_pytest_file(b)])
def test_pytest_examples_pass(index: int, tmp_path: Path) -> None:
    path = tmp_path / f"test_readme_block_{index + 1}.py"
    path.write_text(BLOCKS[index], encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
