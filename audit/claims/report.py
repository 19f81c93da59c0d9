"""Write verification reports: the claims register and every family's folder.

Attachments (:mod:`fedpriv.audit.claims.attachment`): each one that ran writes its
tables and plots into its family's folder ``<out>/<key>/`` through a staging folder
beside it, its files moved into place only when every attachment's are written, so a
failure never leaves a half-written report (:func:`write_attachment`); a user's
family's ``write`` runs in a forked, timed worker
(:mod:`fedpriv.audit.claims.attachment_calls`). The family's page links the
file its attachment names as ``index``.

Register: a :class:`~fedpriv.audit.claims.verify.ClaimsReport` goes to ``<out>/claims.md``
(headline and findings first, then one short line per row: key, its sentence, claimed ε,
verdict, end-to-end ε, audit lower bound; then one anchored "Row details" section per
row with the evidence), ``<out>/claims.json``, ``<out>/findings.json`` and
``<out>/<paper>.md`` per paper, each written atomically (:func:`write_claims_report`).

``claims.json`` schema (one record per row, :meth:`~fedpriv.audit.claims.claim.ClaimResult.to_dict`;
∞ is the string ``"inf"``):

- ``key``, ``paper``, ``algorithm``, ``mode``, ``setting`` (dict), ``neighboring_relation``, ``source``
  (the exact statement the claim rests on, or "inferred from Theorem N");
- ``statement``: the row in one plain-language sentence
  (:mod:`fedpriv.audit.claims.statements`; register rows only);
- ``claimed``: ``{epsilon, delta}`` (``null`` on a ``no-claim`` row: nothing is claimed);
- ``accountant``: ``{epsilon, delta, route}``, the **end-to-end** ε at the claimed δ of
  everything the claim covers (``"inf"`` with ``raw_channel`` naming the channel when raw
  data reaches a covered output);
- ``lower_bound``: ``null`` or ``{epsilon, delta, source, where}``, the strongest lower
  bound on the view's ε the verdict weighed (:meth:`~fedpriv.audit.claims.claim.ClaimResult.lower_bound`):
  ``source`` is ``"audit"`` (``delta`` the δ the audit's bound holds at; ``where`` its
  channel and event), ``"un-noised channel"`` (ε ``"inf"`` at the claimed δ; ``where``
  the channel) or ``"analytic"`` (the register's exact analytic ε at the claimed δ);
- ``mechanism_epsilon``: ε of the noise mechanisms alone at the claimed δ (``null`` when
  no noise mechanism covers the row's outputs); ``raw_channel``: string or ``null``;
- ``delta_vacuous``, ``"epsilon_at_1e-6"``, ``"mechanism_epsilon_at_1e-6"``: present only
  where the claimed δ is vacuous for the mechanism (mechanism ε = 0 there): end-to-end ε
  (the view's, adaptivity charged; ``"inf"`` on a raw channel) and mechanism ε at
  δ = 10⁻⁶;
- ``audit``: ``null`` or ``{epsilon_lower_bound, confidence, samples[, delta, channel,
  event, seconds, "epsilon_lower_bound_at_1e-6", "at_1e-6"]}``; ``"at_1e-6"``:
  ``{epsilon_lower_bound, confidence, samples, event}`` where a second audit made for
  δ = 10⁻⁶ gives the bound there (a row whose claimed δ is vacuous);
- ``"tightness_at_1e-6"``: where the claimed δ is vacuous, the audit's bound at
  δ = 10⁻⁶ / ``"epsilon_at_1e-6"`` when both are finite and positive;
- ``tightness``: audit lower bound / accountant ε where both are finite and positive,
  else ``null``;
- ``verdict``: one of ``violated``, ``holds``, ``outside-claim``, ``no-claim`` (``error``
  if a recipe raised); ``coverage``: ``claim``, ``outside-claim`` or ``no-claim``;
- ``reading``: ``"as written"`` or the alternative reading used; ``reading_support``:
  which reading the paper's own algorithm supports, with the line;
- ``evidence`` (sentence), ``finding_ids`` (list of finding ids), ``notes`` (list of
  strings), and one key per named quantity of the row's ``extras`` (a family's own,
  e.g. the ε of records outside the claimed stream).

``findings.json``: a list of ``{id, statement, claims, evidence, where}`` (see
:mod:`fedpriv.audit.claims.findings`); written with ``claims.md`` by a run over every paper.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from fedpriv.audit.claims.attachment import AttachmentResult
from fedpriv.audit.claims.attachment_calls import write_attachments
from fedpriv.privacy import format_epsilon

__all__ = ["claims_register_markdown", "write_attachment", "write_claims_report"]


def write_attachment(run: AttachmentResult, out_dir: str | os.PathLike) -> Path:
    """Write one attachment's files into its family's folder ``out_dir/<key>/``.

    The attachment's ``write`` fills a staging folder; only when it has finished are its
    files moved into ``<key>/`` (one atomic rename each), so a failure leaves the previous
    files intact, no staging folder behind and no folder this call created. Other files
    of the folder (experiment outputs) are left alone. The staging is the shared
    :func:`fedpriv.audit.reporting.files.staged_files`, as every family's figures use.
    The ``write`` of a user's family (``run.origin``) runs in a forked worker stopped
    after ``run.timeout`` seconds
    (:func:`~fedpriv.audit.claims.attachment_calls.write_attachments`).

    Parameters
    ----------
    run : AttachmentResult
        The attachment's run within ``fedpriv verify``.
    out_dir : str or PathLike
        The reports folder (created if needed).

    Returns
    -------
    Path
        ``out_dir/<key>``.

    Raises
    ------
    UserCodeAbortedError
        If a user's ``write`` exits, dies or runs past its timeout.
    AttachmentError
        If a user's ``write`` raises.
    """
    return write_attachments((run,), out_dir)[0]


# ---------------------------------------------------------------------------------
# The claims register: reports/claims.md, reports/claims.json, reports/<paper>.md
# ---------------------------------------------------------------------------------


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o666 & ~umask)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise


def _eps(value) -> str:
    return format_epsilon(value) if isinstance(value, float) else str(value)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _audit_cell(result) -> str:
    audit = result.audit
    if audit is None:
        return "— (accountant only)"
    delta = f", δ={audit.delta:g}" if audit.delta else ""
    text = (
        f"{audit.epsilon_lower_bound:.4g} ({audit.confidence:.0%}{delta}, "
        f"{audit.n_samples:,}/world)"
    )
    return text + _bracket_text(result)


def _bracket_text(result) -> str:
    """``"; at δ=1e-6: audit ≥ x (...), accountant y, tightness z"`` where reported."""
    lower = result.audit_epsilon_at_1e6
    if not result.delta_is_vacuous or lower is None:
        return ""
    text = f"; at δ=1e-6: audit ≥ {lower:.4g}"
    if result.audit_at_1e6 is not None:
        text += f" ({result.audit_at_1e6.confidence:.0%}, {result.audit_at_1e6.n_samples:,}/world)"
    text += f", accountant {_eps(float(result.epsilon_at_1e6))}"
    if result.tightness_at_1e6 is not None:
        text += f", tightness {result.tightness_at_1e6:.2f}"
    return text


def _setting_cell(result) -> str:
    shown = {k: v for k, v in result.claim.setting if k not in ("node_scale",)}
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in shown.items())


def _accountant_cell(result) -> str:
    text = f"{_eps(result.accountant_epsilon)} ({result.accountant_route})"
    if result.raw_channel and result.accountant_epsilon == float("inf"):
        text += f": {result.raw_channel}"
    return text


def _mechanism_cell(result) -> str:
    if result.mechanism_epsilon is None:
        return "— (no noise)"
    text = _eps(float(result.mechanism_epsilon))
    if result.delta_is_vacuous:
        text += f"; δ vacuous, at δ=1e-6: {_eps(float(result.mechanism_epsilon_at_1e6))}"
    return text


def _claimed_cell(claim) -> str:
    """Claimed ε (δ), or "— (no claim)" where the paper claims nothing."""
    if claim.coverage == "no-claim":
        return "— (no claim)"
    return f"{_eps(float(claim.claimed.epsilon))} ({claim.claimed_delta:g})"


def _anchor(key: str) -> str:
    """The id of a row's detail heading (``row-`` and the key, one dash per run of
    non-alphanumerics)."""
    out, dash = [], False
    for char in key.lower():
        if char.isalnum():
            out.append(char)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    return "row-" + "".join(out).strip("-")


def _short_audit(result) -> str:
    audit = result.audit
    if audit is None:
        return "—"
    text = f"{audit.epsilon_lower_bound:.4g}"
    if result.delta_is_vacuous and result.audit_epsilon_at_1e6 is not None:
        text += f" (at δ=1e-6: {result.audit_epsilon_at_1e6:.4g})"
    return text


def _claims_rows(results) -> list[str]:
    """One short line per row: key, statement, claimed, verdict, accountant ε, audit."""
    from fedpriv.audit.claims.statements import statement

    lines = [
        (
            "| key | what is claimed, in words | claimed ε (δ) | verdict | accountant ε, "
            "end to end | audit lower bound |"
        ),
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        c = r.claim
        key = r.key or c.algorithm
        lines.append(
            f"| `{key}` [details](#{_anchor(key)}) | {_cell(statement(c, r.key))} "
            f"| {_claimed_cell(c)} | **{r.verdict}** | {_cell(_eps(r.accountant_epsilon))} "
            f"| {_short_audit(r)} |"
        )
    return lines


def _claims_details(results) -> list[str]:
    """One anchored section per row with the evidence the short line leaves out."""
    lines = ["## Row details", ""]
    for r in results:
        c = r.claim
        key = r.key or c.algorithm
        tight = "—" if r.tightness is None else f"{r.tightness:.2f}"
        reading = c.reading + (f" ({c.reading_support})" if c.reading_support else "")
        lines += [
            f'### <a id="{_anchor(key)}"></a>`{key}`',
            "",
            f"- **verdict**: **{r.verdict}**; findings: {', '.join(r.finding_ids) or '—'}",
            f"- **mode**: {c.mode}; **reading**: {reading}",
            f"- **setting**: {_setting_cell(r)}; **relation**: {c.neighboring_relation.value}",
            f"- **claimed ε (δ)**: {_claimed_cell(c)}; **source**: {c.source}",
            f"- **accountant ε, end to end (route)**: {_accountant_cell(r)}",
            f"- **mechanism ε**: {_mechanism_cell(r)}",
            f"- **audit lower bound (confidence, samples)**: {_audit_cell(r)}; "
            f"**tightness**: {tight}",
            f"- **view (observer: outputs)**: {r.view.describe() if r.view else '-'}",
            f"- **audit channel**: {r.channel or '-'}",
            f"- **evidence**: {r.evidence}",
            "",
        ]
    return lines


def _findings_section(results) -> list[str]:
    from fedpriv.audit.claims.findings import findings_records

    lines = [
        "## Findings",
        "",
        (
            "One entry per distinct defect; the rows below restate each under its "
            "readings, ε values and channels."
        ),
        "",
        "| id | statement | evidence | where | rows |",
        "|---|---|---|---|---|",
    ]
    for f in findings_records(results):
        lines.append(
            f"| `{f['id']}` | {_cell(f['statement'])} | {f['evidence']} "
            f"| {_cell(f['where'])} | {len(f['claims'])} |"
        )
    return lines


def _verdict_lines() -> list[str]:
    from fedpriv.audit.claims.claim import VERDICT_DEFINITIONS

    return ["**Verdicts** (docs/reference/verdicts.md):", ""] + [
        f"- `{verdict}`: {text};" for verdict, text in VERDICT_DEFINITIONS.items()
    ]


def claims_register_markdown(report, *, paper: str | None = None) -> str:
    """``claims.md`` (all papers) or one paper's page (``paper`` = ``--paper`` name).

    Parameters
    ----------
    report : ClaimsReport
        The run.
    paper : str, optional
        A ``--paper`` name; None for every paper.

    Returns
    -------
    str
        A Markdown page.
    """
    from fedpriv.audit.claims.findings import headline

    config = report.config
    results = report.results if paper is None else report.for_paper(paper)
    title = (
        f"# {_register_title(report)}: register and verdicts"
        if paper is None
        else f"# {_family_title(paper)}: privacy claims and verdicts"
    )
    errors = sum(r.verdict == "error" for r in results)
    budget = config.budget
    lines = [
        title,
        "",
        "Generated by `fedpriv verify`"
        + (" --quick" if config.quick else "")
        + (f" --paper {paper}" if config.papers else "")
        + "".join(f" --claims {Path(f).name}" for f in getattr(config, "claims_files", ()))
        + f" (seed {config.seed}, SeedSequence entropy {report.seed_entropy}) in "
        f"{report.seconds:.0f} s. Do not edit by hand.",
        "",
        headline(results) + (f" Not evaluated (recipe error): {errors}." if errors else ""),
        "",
    ]
    lines += (
        _findings_section(results)
        + [""]
        + _verdict_lines()
        + [
            "",
            (
                "The accountant column is the end-to-end ε at the claimed δ of everything the "
                "claim covers (∞ with the channel named when raw data reaches a covered output); "
                "the mechanism column prices the noise alone. Statistical evidence is a "
                "Clopper–Pearson lower bound at the stated confidence with the claimed δ "
                "subtracted (ε_lb = ln((p_low − δ)/q_up)); a lower bound can refute a claim, never "
                "certify it. Tightness = audit lower bound / accountant ε. End-to-end audits "
                f"choose their distinguishing event on a pilot sample ({budget.pilot_samples} runs "
                "per world) and confirm it on fresh runs."
            ),
            "",
            f"## Rows ({len(results)}: one per claim, setting, reading and channel)",
            "",
            (
                "One line per row; each key links to its details below (reading, setting, "
                "mechanism ε, tightness, view, audit channel and the evidence)."
            ),
            "",
        ]
    )
    lines += _claims_rows(results) + [""] + _claims_details(results)
    claims_of: dict[str, list[str]] = {}
    for r in results:
        for note in r.notes:
            claims_of.setdefault(note, []).append(f"`{r.key or r.claim.algorithm}`")
    notes = [f"- {note} ({', '.join(keys)})" for note, keys in claims_of.items()]
    lines += ["", "## Notes of the recipes", ""] + (notes or ["- none"])
    audited = [r for r in results if r.audit is not None]
    lines += [
        "",
        (
            f"Audited end to end or at the mechanism: {len(audited)} of "
            f"{len(results)} rows; the others rest on the accountant alone (each "
            "says why in its notes)."
        ),
        "",
    ]
    return "\n".join(lines)


def _family_title(paper: str) -> str:
    """The title of the family ``paper`` (its registration's, for families outside)."""
    from fedpriv.audit.claims.family import family
    from fedpriv.audit.claims.register import PAPERS

    return PAPERS[paper] if paper in PAPERS else family(paper).title


def _run_papers(report) -> tuple[str, ...]:
    """The family keys of a run's pages: ``--paper``'s; else (``--claims`` alone) those
    of its rows; else every registered family and any other family with rows."""
    from fedpriv.audit.claims.register import PAPERS

    if report.config.papers:
        return tuple(report.config.papers)
    rows = dict.fromkeys(r.key.split("/", 1)[0] for r in report.results if r.key)
    if getattr(report.config, "claims_files", ()):  # --claims alone: the files' families
        return tuple(rows)
    return tuple(dict.fromkeys([*PAPERS, *rows]))


def _register_title(report) -> str:
    """``claims.md``'s title: the titles of the families the run covers, in register
    order (from their registrations)."""
    return "Privacy claims of " + "; ".join(_family_title(p) for p in _run_papers(report))


def _paper_page(report, paper: str, out_dir: Path) -> str:
    text = claims_register_markdown(report, paper=paper)
    folder = out_dir / paper
    figures = sorted(folder.glob("*.png")) if folder.is_dir() else []
    extra = ["## Figures", ""]
    extra += [f"![{p.stem}]({paper}/{p.name})" for p in figures] or [f"- none yet in `{paper}/`"]
    for attachment in _family(paper).attachments:
        if attachment.index and (folder / attachment.index).exists():
            link = f"{paper}/{attachment.index}"
            extra += ["", f"{attachment.index_text}: [{link}]({link})"]
    return text + "\n" + "\n".join(extra) + "\n"


def _family(paper: str):
    from fedpriv.audit.claims.family import family

    return family(paper)


def write_claims_report(report, out_dir: str | os.PathLike) -> list[Path]:
    """Write ``claims.md``, ``claims.json``, ``findings.json`` and the paper pages.

    Every file is written atomically (temporary file, then rename). With a
    ``--paper`` run only that paper's page is rewritten and ``claims.json`` /
    ``claims.md`` are merged: the records of the other papers are kept.
    Each attachment that ran writes its files into its family's folder
    (:func:`write_attachment`), before anything else: if one fails (a user's ``write``
    that raises, exits, dies or hangs), no file is written and no folder is left
    created.

    Parameters
    ----------
    report : ClaimsReport
        The run.
    out_dir : str or PathLike
        The reports folder (created if needed).

    Returns
    -------
    list of Path
        Every file or folder written.

    Raises
    ------
    UserCodeAbortedError
        If a user's attachment ``write`` exits, dies or runs past its timeout.
    AttachmentError
        If a user's attachment ``write`` raises.
    """
    out_dir = Path(out_dir)
    # The attachments first: one that fails (a user's write that exits or raises)
    # leaves no file and no folder behind, and nothing else is written.
    written = write_attachments(report.attachments, out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    from fedpriv.audit.claims.statements import statement

    records = [{**r.to_dict(), "statement": statement(r.claim, r.key)} for r in report.results]
    path = out_dir / "claims.json"
    if report.config.papers is not None and path.exists():
        fresh = {r["paper"] for r in records}
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = []
        records = [r for r in old if isinstance(r, dict) and r.get("paper") not in fresh] + records
    _atomic_write(path, json.dumps(records, indent=2, allow_nan=False) + "\n")
    written.append(path)
    if report.config.papers is None:
        from fedpriv.audit.claims.findings import findings_records

        findings = findings_records(report.results)
        _atomic_write(
            out_dir / "findings.json",
            json.dumps(findings, indent=2, allow_nan=False, ensure_ascii=False) + "\n",
        )
        _atomic_write(out_dir / "claims.md", claims_register_markdown(report))
        written += [out_dir / "findings.json", out_dir / "claims.md"]
    papers = _run_papers(report)
    for paper in papers:
        page = out_dir / f"{paper}.md"
        _atomic_write(page, _paper_page(report, paper, out_dir))
        written.append(page)
    from fedpriv.audit.claims.html import index_html  # index.html: the same records

    _atomic_write(out_dir / "index.html", index_html(records, out_dir, report=report))
    written.append(out_dir / "index.html")
    return written
