"""Write verification reports: Fed_UCB's folder and the claims register.

Fed_UCB: a :class:`~fedpriv.audit.families.gossip_fed_ucb.regret.VerifyReport` goes to ``<out>/gossip_fed_ucb/``.

Files: ``report.md`` (readable table with the evidence), ``claims.json`` (the claims
schema), ``ledger.csv`` (one row per noise draw), ``regret.png``. Everything is written
into a temporary folder beside the target and moved into place at the end, so a failure
never leaves a half-written report.

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
- ``mechanism_epsilon``: ε of the noise mechanisms alone at the claimed δ (``null`` when
  no noise mechanism covers the row's outputs); ``raw_channel``: string or ``null``;
- ``delta_vacuous``, ``"epsilon_at_1e-6"``, ``"mechanism_epsilon_at_1e-6"``: present only
  where the claimed δ is vacuous for the mechanism (mechanism ε = 0 there): end-to-end ε
  (the view's, adaptivity charged; ``"inf"`` on a raw channel) and mechanism ε at
  δ = 10⁻⁶;
- ``audit``: ``null`` or ``{epsilon_lower_bound, confidence, samples[, delta, channel,
  event, seconds, "epsilon_lower_bound_at_1e-6", "at_1e-6"]}``; ``"at_1e-6"``:
  ``{epsilon_lower_bound, confidence, samples, event}`` where a second audit made for
  δ = 10⁻⁶ gives the bound there (FedUCB's fixed schedule: the view's Privatizer nodes
  fed the adaptive stream);
- ``"tightness_at_1e-6"``: where the claimed δ is vacuous, the audit's bound at
  δ = 10⁻⁶ / ``"epsilon_at_1e-6"`` when both are finite and positive;
- ``tightness``: audit lower bound / accountant ε where both are finite and positive,
  else ``null``;
- ``verdict``: one of ``violated``, ``holds``, ``outside-claim``, ``no-claim`` (``error``
  if a recipe raised); ``coverage``: ``claim``, ``outside-claim`` or ``no-claim``;
- ``reading``: ``"as written"`` or the alternative reading used; ``reading_support``:
  which reading the paper's own algorithm supports, with the line;
- ``evidence`` (sentence), ``finding_ids`` (list of finding ids), ``notes`` (list of
  strings), ``initial_pulls_epsilon`` (Fed_UCB grid only).

``findings.json``: a list of ``{id, statement, claims, evidence, where}`` (see
:mod:`fedpriv.audit.claims.findings`); written with ``claims.md`` by a run over every paper.

Length: one writer for claims.md, claims.json, findings.json and the per-paper pages,
which must agree row for row; split with the paper families of issue 21.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from fedpriv.audit.families.gossip_fed_ucb.regret import VerifyReport
from fedpriv.privacy import format_epsilon

__all__ = [
    "REPORT_FOLDER",
    "claims_records",
    "claims_register_markdown",
    "claims_table",
    "regret_table",
    "write_claims_report",
    "write_report",
]

REPORT_FOLDER = "gossip_fed_ucb"


def claims_records(report: VerifyReport) -> list[dict]:
    """The ``claims.json`` list.

    Parameters
    ----------
    report : VerifyReport
        Fed_UCB's verification.

    Returns
    -------
    list of dict
        One JSON-ready record per claim.
    """
    return [result.to_dict() for result in report.claims]


def claims_table(report: VerifyReport) -> str:
    """Plain-text table: claimed ε, accountant ε, audit lower bound, verdict.

    Parameters
    ----------
    report : VerifyReport
        Fed_UCB's verification.

    Returns
    -------
    str
        One line per claim under a header, no trailing newline.
    """
    header = (
        f"{'variant':<22}{'T':>8}{'claimed ε':>11}{'accountant ε':>14}{'route':>7}"
        f"{'audit LB (95%, n/world)':>28}  verdict"
    )
    lines = [header, "-" * len(header)]
    for result in report.claims:
        setting = result.claim.setting_dict()
        audit = result.audit
        lower = "-" if audit is None else f"{audit.epsilon_lower_bound:.4f} (n={audit.n_samples:.0e})"
        lines.append(
            f"{_variant(result):<22}{setting['horizon']:>8}"
            f"{setting['epsilon']:>11g}{format_epsilon(result.accountant_epsilon):>14}"
            f"{result.accountant_route:>7}{lower:>28}  {result.verdict}"
        )
    return "\n".join(lines)


def _variant(result) -> str:
    """``mode/log base`` and, for the second reading, ``+ϑ̃(T)`` (final estimate published)."""
    s = result.claim.setting_dict()
    final = s["horizon"] > 1 and s.get("released_prefixes") == s["horizon"]
    return f"{result.claim.mode}/log{s['log_base']}" + (" +ϑ̃(T)" if final else "")


def regret_table(report: VerifyReport) -> str:
    """Plain-text table of the regret at the horizon.

    Parameters
    ----------
    report : VerifyReport
        Fed_UCB's verification.

    Returns
    -------
    str
        No trailing newline.
    """
    frame = report.regret
    lines = [f"{'algorithm':<16}{'mode':<14}{'ε':>6}{'regret (mean)':>15}{'min':>10}{'max':>10}"]
    for row in frame.itertuples():
        lines.append(
            f"{row.algorithm:<16}{row.mode:<14}{format_epsilon(row.epsilon):>6}"
            f"{row.regret_mean:>15.1f}{row.regret_min:>10.1f}{row.regret_max:>10.1f}"
        )
    return "\n".join(lines)


def _markdown(report: VerifyReport) -> str:
    config = report.config
    lines = [
        "# Fed_UCB (Zhu et al. 2021): privacy claim verification",
        "",
        "Generated by `fedpriv verify`" + (" --quick" if config.quick else "")
        + f" (seed {config.seed}, SeedSequence entropy {report.seed_entropy}) "
        f"in {report.seconds:.0f} s. Do not edit by hand.",
        "",
        ("**Claim.** Fed_UCB is ε-DP for each agent's reward stream {X_i,k(t)}, t = 1..T, "
        "under the relation *one reward changed* (rewards in [0, 1]); Definition 1, §4.1."),
        "",
        (f"**Setting.** {config.n_agents} agents on the complete graph K{config.n_agents} "
        f"(λ₂ = {report.lambda2:.4g}), {config.n_arms} arms; environment: {report.environment}."),
        "",
        ("**View.** Definition 1 protects 'all possible outputs by Algorithm ℬ'. Algorithm 4 "
        "sends ϑ̃(t−1) (line 19) and acts on ϑ̃(t−1) (line 9) for t = 1..T, so the tree "
        "prefixes 1..T−1 reach the view and the prefix of round T does not: a record sits "
        "in ⌊log₂(T−1)⌋+1 = ⌈log₂T⌉ released nodes. The rows marked *1..T* are the second "
        "reading, where the final estimate ϑ̃(T) is published too (⌊log₂T⌋+1 nodes)."),
        "",
        ("**Verdicts.** `violated` when the audit's lower bound exceeds the claim or the "
        "accountant proves more than the claim is spent (the pure Laplace composition is "
        "exact at round 1); `holds` when the accountant's ε (tightest valid route, δ = 0) "
        "on the row's view is within the claim. The audit distinguishes the worst-case "
        "neighboring pair (round 1 changed 0 ↔ 1) from the released prefixes only: it "
        "thresholds the exact Laplace log-likelihood ratio of the released nodes covering "
        "round 1 (Clopper–Pearson), and bounds the same top atom node by node (product "
        "audit); the stronger is reported."),
        "",
        ("| mode | log base | released prefixes | T | node scale b | claimed ε | "
        "accountant ε (route) | ε of round-0 records | audit lower bound (confidence, "
        "samples/world) | verdict | evidence |"),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for result in report.claims:
        s = result.claim.setting_dict()
        audit = result.audit
        lower = "not audited" if audit is None else (
            f"{audit.epsilon_lower_bound:.4f} ({audit.confidence:.0%}, {audit.n_samples:,})"
        )
        lines.append(
            f"| {result.claim.mode} | {s['log_base']} "
            f"| {'1..T' if _variant(result).endswith('ϑ̃(T)') else '1..T−1'} "
            f"| {s['horizon']:,} | {s['node_scale']:.4g} "
            f"| {s['epsilon']:g} | {format_epsilon(result.accountant_epsilon)} "
            f"({result.accountant_route}) | {format_epsilon(result.initial_pulls_epsilon)} "
            f"| {lower} | **{result.verdict}** | {result.evidence} |"
        )
    notes = sorted({f for result in report.claims for f in result.notes})
    lines += ["", "## Notes beyond the table", ""]
    lines += [f"- {f}" for f in notes] or ["- none"]
    lines += [
        "",
        f"## Regret at T = {config.regret_horizon:,} ({config.n_trials} trials)",
        "",
        ("Per-agent pseudo-regret Σ_t (μ₁ − μ_{a_i(t)}) against the global means, averaged "
        "over agents; mean, min and max over trials."),
        "",
        "| algorithm | mode | ε | regret (mean) | min | max | rewards outside [0, 1] |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report.regret.itertuples():
        lines.append(
            f"| {row.algorithm} | {row.mode} | {format_epsilon(row.epsilon)} | "
            f"{row.regret_mean:.1f} | {row.regret_min:.1f} | {row.regret_max:.1f} | "
            f"{row.n_out_of_bounds:,} |"
        )
    lines += [
        "",
        "![regret](regret.png)",
        "",
        (f"`ledger.csv`: the accountant's ledger (one row per noise draw) of one Fed_UCB run per "
        f"variant at T = {config.ledger_horizon}, ε = 1 ({len(report.ledger):,} rows)."),
        "",
    ]
    return "\n".join(lines)


def _plot(report: VerifyReport, path: Path) -> None:
    modes = sorted({key.split("|")[0] for key in report.curves} - {"gossip-ucb"})
    fig, axes = plt.subplots(1, len(modes), figsize=(5.5 * len(modes), 4), sharey=True, squeeze=False)
    for ax, mode in zip(axes[0], modes):
        for key, curve in report.curves.items():
            label, eps = key.split("|")
            if label not in (mode, "gossip-ucb"):
                continue
            name = "ε = ∞ (Gossip_UCB)" if label == "gossip-ucb" else f"ε = {eps}"
            (line,) = ax.plot(curve[0], curve[1], label=name)
            ax.fill_between(curve[0], curve[2], curve[3], color=line.get_color(), alpha=0.2)
        ax.set_title(f"Fed_UCB, {mode}")
        ax.set_xlabel("round t")
        ax.grid(alpha=0.3)
        ax.legend()
    axes[0][0].set_ylabel("cumulative regret per agent")
    fig.suptitle(f"{report.environment}; band: min–max over {report.config.n_trials} trials",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(report: VerifyReport, out_dir: str | os.PathLike) -> Path:
    """Write the report files to ``out_dir/gossip_fed_ucb`` atomically; return that path.

    Parameters
    ----------
    report : VerifyReport
        Fed_UCB's verification.
    out_dir : str or PathLike
        The reports folder (created if needed).

    Returns
    -------
    Path
        ``out_dir/gossip_fed_ucb``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / REPORT_FOLDER
    staging = Path(tempfile.mkdtemp(prefix=f".{REPORT_FOLDER}-", dir=out_dir))
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)  # mkdtemp makes 0700; a report folder is ordinary
    try:
        (staging / "report.md").write_text(_markdown(report), encoding="utf-8")
        (staging / "claims.json").write_text(
            json.dumps(claims_records(report), indent=2, allow_nan=False) + "\n", encoding="utf-8"
        )
        report.ledger.to_csv(staging / "ledger.csv", index=False)
        _plot(report, staging / "regret.png")
        old = None
        if target.exists():
            old = out_dir / f".{REPORT_FOLDER}-old-{os.getpid()}"
            target.rename(old)
        staging.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target



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
    text = (f"{audit.epsilon_lower_bound:.4g} ({audit.confidence:.0%}{delta}, "
            f"{audit.n_samples:,}/world)")
    return text + _bracket_text(result)


def _bracket_text(result) -> str:
    """``"; at δ=1e-6: audit ≥ x (...), accountant y, tightness z"`` where reported."""
    lower = result.audit_epsilon_at_1e6
    if not result.delta_is_vacuous or lower is None:
        return ""
    text = f"; at δ=1e-6: audit ≥ {lower:.4g}"
    if result.audit_at_1e6 is not None:
        text += (f" ({result.audit_at_1e6.confidence:.0%}, "
                 f"{result.audit_at_1e6.n_samples:,}/world)")
    text += f", accountant {_eps(float(result.epsilon_at_1e6))}"
    if result.tightness_at_1e6 is not None:
        text += f", tightness {result.tightness_at_1e6:.2f}"
    return text


def _setting_cell(result) -> str:
    shown = {k: v for k, v in result.claim.setting if k not in ("node_scale",)}
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in shown.items())


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
        text += (f"; δ vacuous, at δ=1e-6: {_eps(float(result.mechanism_epsilon_at_1e6))}")
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
        ("| key | what is claimed, in words | claimed ε (δ) | verdict | accountant ε, "
         "end to end | audit lower bound |"),
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
            f'### <a id="{_anchor(key)}"></a>`{key}`', "",
            f"- **verdict**: **{r.verdict}**; findings: {', '.join(r.finding_ids) or '—'}",
            f"- **mode**: {c.mode}; **reading**: {reading}",
            f"- **setting**: {_setting_cell(r)}; "
            f"**relation**: {c.neighboring_relation.value}",
            f"- **claimed ε (δ)**: {_claimed_cell(c)}; **source**: {c.source}",
            f"- **accountant ε, end to end (route)**: {_accountant_cell(r)}",
            f"- **mechanism ε**: {_mechanism_cell(r)}",
            f"- **audit lower bound (confidence, samples)**: {_audit_cell(r)}; "
            f"**tightness**: {tight}",
            f"- **view (observer: outputs)**: {r.view.describe() if r.view else '-'}",
            f"- **audit channel**: {r.channel or '-'}",
            f"- **evidence**: {r.evidence}", "",
        ]
    return lines


def _findings_section(results) -> list[str]:
    from fedpriv.audit.claims.findings import findings_records

    lines = ["## Findings", "",
             ("One entry per distinct defect; the rows below restate each under its "
              "readings, ε values and channels."), "",
             "| id | statement | evidence | where | rows |", "|---|---|---|---|---|"]
    for f in findings_records(results):
        lines.append(f"| `{f['id']}` | {_cell(f['statement'])} | {f['evidence']} "
                     f"| {_cell(f['where'])} | {len(f['claims'])} |")
    return lines


def _verdict_lines() -> list[str]:
    from fedpriv.audit.claims.claim import VERDICT_DEFINITIONS

    return ["**Verdicts** (docs/reference/verdicts.md):", ""] + [
        f"- `{verdict}`: {text};" for verdict, text in VERDICT_DEFINITIONS.items()]


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
    title = (f"# {_register_title(report)}: register and verdicts" if paper is None
             else f"# {_family_title(paper)}: privacy claims and verdicts")
    errors = sum(r.verdict == "error" for r in results)
    budget = config.budget
    lines = [
        title, "",
        "Generated by `fedpriv verify`" + (" --quick" if config.quick else "")
        + (f" --paper {paper}" if config.papers else "")
        + "".join(f" --claims {Path(f).name}" for f in getattr(config, "claims_files", ()))
        + f" (seed {config.seed}, SeedSequence entropy {report.seed_entropy}) in "
        f"{report.seconds:.0f} s. Do not edit by hand.", "",
        headline(results) + (f" Not evaluated (recipe error): {errors}." if errors else ""), "",
    ]
    lines += _findings_section(results) + [""] + _verdict_lines() + [
        "",
        ("The accountant column is the end-to-end ε at the claimed δ of everything the "
         "claim covers (∞ with the channel named when raw data reaches a covered output); "
         "the mechanism column prices the noise alone. Statistical evidence is a "
         "Clopper–Pearson lower bound at the stated confidence with the claimed δ "
         "subtracted (ε_lb = ln((p_low − δ)/q_up)); a lower bound can refute a claim, never "
         "certify it. Tightness = audit lower bound / accountant ε. End-to-end audits "
         f"choose their distinguishing event on a pilot sample ({budget.pilot_samples} runs "
         "per world) and confirm it on fresh runs."), "",
        f"## Rows ({len(results)}: one per claim, setting, reading and channel)", "",
        ("One line per row; each key links to its details below (reading, setting, "
         "mechanism ε, tightness, view, audit channel and the evidence)."), "",
    ]
    lines += _claims_rows(results) + [""] + _claims_details(results)
    claims_of: dict[str, list[str]] = {}
    for r in results:
        for note in r.notes:
            claims_of.setdefault(note, []).append(f"`{r.key or r.claim.algorithm}`")
    notes = [f"- {note} ({', '.join(keys)})" for note, keys in claims_of.items()]
    lines += ["", "## Notes of the recipes", ""] + (notes or ["- none"])
    audited = [r for r in results if r.audit is not None]
    lines += ["", (f"Audited end to end or at the mechanism: {len(audited)} of "
                   f"{len(results)} rows; the others rest on the accountant alone (each "
                   "says why in its notes)."), ""]
    return "\n".join(lines)


def _family_title(paper: str) -> str:
    """The title of the family ``paper`` (its registration's, for families outside)."""
    from fedpriv.audit.claims.family import family
    from fedpriv.audit.claims.register import PAPERS

    return PAPERS[paper] if paper in PAPERS else family(paper).title


def _run_papers(report) -> tuple[str, ...]:
    """The family keys of a run's pages: ``--paper``'s; else (``--claims`` alone) those
    of its rows; else the four papers and any family registered outside with rows."""
    from fedpriv.audit.claims.register import PAPERS

    if report.config.papers:
        return tuple(report.config.papers)
    rows = dict.fromkeys(r.key.split("/", 1)[0] for r in report.results if r.key)
    if getattr(report.config, "claims_files", ()):  # --claims alone: the files' families
        return tuple(rows)
    return tuple(dict.fromkeys([*PAPERS, *rows]))


def _register_title(report) -> str:
    """``claims.md``'s title: the four seed papers, or the families the run covers."""
    from fedpriv.audit.claims.register import PAPERS

    papers = _run_papers(report)
    if all(p in PAPERS for p in papers):
        return "Privacy claims of the four seed papers"
    return "Privacy claims of " + "; ".join(_family_title(p) for p in papers)


def _paper_page(report, paper: str, out_dir: Path) -> str:
    text = claims_register_markdown(report, paper=paper)
    folder = out_dir / paper
    figures = sorted(folder.glob("*.png")) if folder.is_dir() else []
    extra = ["## Figures", ""]
    extra += [f"![{p.stem}]({paper}/{p.name})" for p in figures] or [
        f"- none yet in `{paper}/`"]
    if paper == "gossip_fed_ucb" and (out_dir / REPORT_FOLDER / "report.md").exists():
        extra += ["", (f"Full Fed_UCB report: [{REPORT_FOLDER}/report.md]"
                       f"({REPORT_FOLDER}/report.md)")]
    return text + "\n" + "\n".join(extra) + "\n"


def write_claims_report(report, out_dir: str | os.PathLike) -> list[Path]:
    """Write ``claims.md``, ``claims.json``, ``findings.json`` and the paper pages.

    Every file is written atomically (temporary file, then rename). With a
    ``--paper`` run only that paper's page is rewritten and ``claims.json`` /
    ``claims.md`` are merged: the records of the other papers are kept.
    Fed_UCB's own folder (``gossip_fed_ucb/``) is written when the Fed_UCB job ran.

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
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if report.fed_ucb is not None:
        written.append(write_report(report.fed_ucb, out_dir))
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
        _atomic_write(out_dir / "findings.json",
                      json.dumps(findings, indent=2, allow_nan=False, ensure_ascii=False)
                      + "\n")
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
