"""MkDocs hooks: the reference pages that are generated from the code.

A page holds a marker ``<!-- fedpriv:NAME -->`` and the hook replaces it with text built
from the installed package at build time, so the documentation cannot drift from the
code it describes:

- ``cli``: every command's ``--help``, from :func:`fedpriv.cli.main.build_parser`;
- ``verdicts``: the verdict taxonomy, from :data:`fedpriv.privacy.accounting.verdicts.VERDICT_DEFINITIONS`;
- ``events``: every event a deployment file may name, with its fields, from the
  dataclasses of :mod:`fedpriv.privacy.accounting.events`;
- ``calibrations``: the paper calibrations a deployment file may call.

The committed figures the guides show (``reports/**.png``) are added to the site as
files, so that the pages can show them without copying them into ``docs/``.

MkDocs loads this file through ``hooks:`` in ``mkdocs.yml``; it is not part of the
installed package.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent
#: The package as it is installed (``fedpriv/`` with ``privacy/`` ... beneath it), built of
#: symbolic links to the repository's folders, for the API reference's static analysis
#: (``paths`` in ``mkdocs.yml``): the repository's folder names are not the package's
#: (``[tool.setuptools] package-dir``), which no source finder can map.
SOURCE_TREE = ROOT / ".docs_build" / "src"
SUBPACKAGES = ("privacy", "algorithms", "audit", "cli")
MARKER = re.compile(r"<!-- fedpriv:([a-z-]+) -->")
#: Committed figures the pages link to (``../reports/...`` from a guide).
FIGURES = ("reports/feducb/fig1b.png", "reports/index.png")


def _link_source_tree() -> None:
    package = SOURCE_TREE / "fedpriv"
    package.mkdir(parents=True, exist_ok=True)
    wanted = {p.name: p for p in (ROOT / "api").iterdir() if p.suffix == ".py"}
    wanted.update({name: ROOT / name for name in SUBPACKAGES})
    for name, target in wanted.items():
        link = package / name
        if link.is_symlink() and link.resolve() == target.resolve():
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)


_link_source_tree()  # at import: before mkdocstrings reads `paths`


def on_files(files, config):
    for path in FIGURES:
        if (ROOT / path).is_file():
            files.append(
                File(
                    path,
                    src_dir=str(ROOT),
                    dest_dir=config["site_dir"],
                    use_directory_urls=config["use_directory_urls"],
                )
            )
    return files


def on_page_markdown(markdown, page, config, files):
    return MARKER.sub(lambda m: GENERATORS[m.group(1)](), markdown)


def _help_blocks(parser: argparse.ArgumentParser, prefix: str, depth: int) -> list[str]:
    """``parser``'s help and, recursively, that of each subcommand."""
    out = [f"{'#' * depth} `{prefix}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _help_blocks(sub, f"{prefix} {name}", min(depth + 1, 4))
    return out


def cli_reference() -> str:
    from fedpriv.cli.main import build_parser

    parser = build_parser()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    return "\n".join(_help_blocks(parser, "fedpriv", 2))


def verdicts() -> str:
    from fedpriv.privacy.accounting.verdicts import VERDICT_DEFINITIONS

    rows = ["| verdict | meaning |", "|---|---|"]
    rows += [f"| `{name}` | {text} |" for name, text in VERDICT_DEFINITIONS.items()]
    return "\n".join(rows)


def _type_name(annotation) -> str:
    text = (
        annotation
        if isinstance(annotation, str)
        else getattr(annotation, "__name__", str(annotation))
    )
    return text.replace("|", "or")


def event_fields() -> str:
    from fedpriv.privacy.accounting import events
    from fedpriv.privacy.deployment import _event_classes

    out = []
    for name, cls in sorted(_event_classes().items()):
        if not dataclasses.is_dataclass(cls):
            continue
        doc = inspect.getdoc(cls) or ""
        out += [
            f"### `{name}`",
            "",
            doc.split("\n\n")[0].replace("\n", " "),
            "",
            "| field | type | default |",
            "|---|---|---|",
        ]
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            if field.default is not dataclasses.MISSING:
                default = f"`{field.default!r}`"
            elif field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                default = "(computed)"
            else:
                default = "required"
            out.append(f"| `{field.name}` | `{_type_name(field.type)}` | {default} |")
        out.append("")
    del events
    return "\n".join(out)


def calibrations() -> str:
    from fedpriv.privacy.deployment import CALIBRATIONS

    rows = ["| `function` | calibration | parameters |", "|---|---|---|"]
    for name, function in sorted(CALIBRATIONS.items()):
        summary = (inspect.getdoc(function) or "").split("\n\n")[0].replace("\n", " ")
        params = ", ".join(f"`{p}`" for p in inspect.signature(function).parameters)
        rows.append(f"| `{name}` | {summary} | {params} |")
    return "\n".join(rows)


GENERATORS = {
    "cli": cli_reference,
    "verdicts": verdicts,
    "events": event_fields,
    "calibrations": calibrations,
}
