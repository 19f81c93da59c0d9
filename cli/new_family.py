"""``fedpriv new-family NAME``: a working paper family with one claim and its test.

Two layouts, the same files (:mod:`fedpriv.cli.family_template`):

in the repository (default; ``--root`` is the checkout, default the current folder)
    ``algorithms/<key>/__init__.py`` and ``core.py`` (the algorithm),
    ``privacy/calibrations/<key>.py`` (the noise formula),
    ``audit/families/<key>/__init__.py`` (the registration) and ``claims.py`` (the
    claim, its view and recipes), ``cli/<key>.py`` (``fedpriv run <key>``) and
    ``tests/audit/test_family_<key>.py``. The registry, the flat exports of
    :mod:`fedpriv.algorithms` and :mod:`fedpriv.privacy.calibrations`, the register
    and the command tables find them; no existing file changes.
as a package of its own (``--package DIR``)
    ``DIR/pyproject.toml`` (distribution ``fedpriv-<key>``, the entry point
    ``<key> = "fedpriv_<key>:FAMILY"`` in the group ``fedpriv.papers``),
    ``DIR/fedpriv_<key>/`` with the same modules (``algorithm.py``, ``calibration.py``,
    ``claims.py``, ``cli.py``) and ``DIR/tests/test_<key>.py``; ``pip install -e DIR``
    registers it.

Nothing is half-written: every file is written into a staging folder first (and
formatted there by ruff when it is installed, under the target's configuration) and
moved into place only when none of the targets exists; a refused name or an existing
file writes nothing.
"""

from __future__ import annotations

import argparse
import re
import shutil
import string
import tempfile
from pathlib import Path

from fedpriv.cli import family_template as template

__all__ = ["MAX_KEY_LENGTH", "MAX_TITLE_LENGTH", "create_family", "register_new_family"]

#: Longest family key (the generated lines stay within the line length).
MAX_KEY_LENGTH = 30
#: Longest title.
MAX_TITLE_LENGTH = 60
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
_TITLE = re.compile(r"^[A-Za-z0-9 &.,:;()/+'-]+$")


def register_new_family(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``new-family`` subcommand to ``sub``; its handler is ``args.handler``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``fedpriv`` subcommands.

    Returns
    -------
    argparse.ArgumentParser
        The ``new-family`` parser.
    """
    p = sub.add_parser(
        "new-family",
        help="create a working paper family (one claim and its test) to edit",
        description="Write a paper family with one claim, its audit, a run command and "
        "its test: in the repository's folders (default) or as a package with the "
        "fedpriv.papers entry point (--package). See CONTRIBUTING.md, Add a paper family.",
        epilog="Exit status: 0 written; 2 bad input (a refused NAME, an existing file; "
        "nothing is written).",
    )
    p.add_argument("name", help="the family key: lower-case letters, digits, underscores")
    p.add_argument("--title", default=None, help="the family's title (default from NAME)")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--root", type=Path, default=None, help="repository checkout (default: this folder)"
    )
    where.add_argument(
        "--package", type=Path, default=None, metavar="DIR", help="write a package into DIR"
    )
    p.set_defaults(handler=_handle)
    return p


def _handle(args: argparse.Namespace) -> int:
    written = create_family(args.name, title=args.title, root=args.root, package=args.package)
    for path in written:
        print(path)
    return 0


def _fields(key: str, title: str, package: bool) -> dict[str, str]:
    """The placeholders of the templates for ``key`` in one layout."""
    top = f"fedpriv_{key}" if package else None
    fields = {
        "key": key,
        "cli": key.replace("_", "-"),
        "title": title,
        "camel": "".join(part.capitalize() for part in key.split("_")),
        "algorithms_package": f"{top}.algorithm" if top else f"fedpriv.algorithms.{key}",
        "algorithm_module": f"{top}.algorithm" if top else f"fedpriv.algorithms.{key}.core",
        "calibration_module": f"{top}.calibration"
        if top
        else f"fedpriv.privacy.calibrations.{key}",
        "claims_module": f"{top}.claims" if top else f"fedpriv.audit.families.{key}.claims",
        "cli_module": f"{top}.cli" if top else f"fedpriv.cli.{key}",
    }
    return fields


def _files(key: str, fields: dict[str, str], package: bool) -> dict[str, str]:
    """Relative path -> template text, for one layout."""
    if package:
        top = f"fedpriv_{key}"
        return {
            f"{top}/__init__.py": template.FAMILY,
            f"{top}/algorithm.py": template.ALGORITHM,
            f"{top}/calibration.py": template.CALIBRATION,
            f"{top}/claims.py": template.CLAIMS,
            f"{top}/cli.py": template.CLI,
            f"tests/test_{key}.py": template.TEST,
            "pyproject.toml": template.PYPROJECT,
        }
    return {
        f"algorithms/{key}/__init__.py": template.ALGORITHM_PACKAGE,
        f"algorithms/{key}/core.py": template.ALGORITHM,
        f"privacy/calibrations/{key}.py": template.CALIBRATION,
        f"audit/families/{key}/__init__.py": template.FAMILY,
        f"audit/families/{key}/claims.py": template.CLAIMS,
        f"cli/{key}.py": template.CLI,
        f"tests/audit/test_family_{key}.py": template.TEST,
    }


def _check_name(key: str, title: str | None) -> str:
    """Validate the key (and title); return the title to use."""
    from fedpriv.audit.claims.family import families

    if not isinstance(key, str) or not _KEY.match(key) or len(key) > MAX_KEY_LENGTH:
        raise ValueError(
            "`name` must be lower-case letters, digits and underscores, starting with a "
            f"letter, at most {MAX_KEY_LENGTH} characters; got {key!r}."
        )
    taken = {name.replace("-", "_") for f in families() for name in (f.key, *f.aliases)}
    if key in taken:
        raise ValueError(f"`name` {key!r} is already a registered family name or alias.")
    if title is None:
        title = " ".join(part.capitalize() for part in key.split("_"))
    if not _TITLE.match(title) or len(title) > MAX_TITLE_LENGTH:
        raise ValueError(
            f"`title` must be 1 to {MAX_TITLE_LENGTH} letters, digits, spaces or "
            f"& . , : ; ( ) / + ' -; got {title!r}."
        )
    return title


def _format(folder: Path) -> None:
    """Format the staged files with ruff, under the target's configuration, if ruff is
    installed (line breaks depend on the names' lengths); else leave them as they are."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("ruff") is not None:
        ruff = [sys.executable, "-m", "ruff"]
    elif shutil.which("ruff"):
        ruff = [str(shutil.which("ruff"))]
    else:  # pragma: no cover - ruff is in the test extra
        return
    for command in (["check", "--fix", "--select", "I"], ["format"]):
        command += ["--quiet", "--no-cache", "."]
        subprocess.run([*ruff, *command], cwd=folder, capture_output=True, check=False)


def create_family(
    name: str, *, title: str | None = None, root: Path | None = None, package: Path | None = None
) -> list[Path]:
    """Write a working family ``name`` with one claim and its test.

    Parameters
    ----------
    name : str
        The family key: lower-case letters, digits and underscores, starting with a
        letter, at most :data:`MAX_KEY_LENGTH` characters; no registered family's key
        or alias.
    title : str, optional
        The family's title (the ``paper`` of its claims), at most
        :data:`MAX_TITLE_LENGTH` characters. Default: the key, capitalised.
    root : Path, optional
        The repository checkout to write into (default: the current folder); it must
        hold ``pyproject.toml`` and the folders ``algorithms``, ``privacy/calibrations``,
        ``audit/families``, ``cli`` and ``tests/audit``.
    package : Path, optional
        Write a package of its own into this folder instead (created if needed).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    ValueError
        If ``name`` or ``title`` is refused, ``root`` is not a checkout, both ``root``
        and ``package`` are given, or a target file exists (nothing is written).
    """
    if root is not None and package is not None:
        raise ValueError("`root` and `package` are exclusive: give one.")
    title = _check_name(name, title)
    fields = _fields(name, title, package is not None)
    if package is not None:
        base = Path(package)
    else:
        base = Path.cwd() if root is None else Path(root)
        needed = ("algorithms", "privacy/calibrations", "audit/families", "cli", "tests/audit")
        missing = [d for d in needed if not (base / d).is_dir()]
        if missing or not (base / "pyproject.toml").is_file():
            raise ValueError(
                f"`root` {base} is not a fedpriv checkout (missing: "
                f"{', '.join(missing) or 'pyproject.toml'}); pass --root or --package."
            )
    files = {
        rel: string.Template(text).substitute(fields)
        for rel, text in _files(name, fields, package is not None).items()
    }
    existing = [rel for rel in files if (base / rel).exists()]
    if package is not None and (base / f"fedpriv_{name}").exists():
        existing.append(f"fedpriv_{name}/")
    if existing:
        raise ValueError(f"refusing to overwrite {', '.join(existing)} in {base}.")
    base.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".new-family-", dir=base))
    try:
        for rel, text in files.items():
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_text(text, encoding="utf-8")
        _format(staging)
        written: list[Path] = []
        try:
            for rel in files:
                (base / rel).parent.mkdir(parents=True, exist_ok=True)
                (staging / rel).replace(base / rel)
                written.append(base / rel)
        except OSError:
            for path in written:  # all or nothing
                path.unlink(missing_ok=True)
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return written
