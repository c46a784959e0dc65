"""`dkg eval …`: each stage measured against ground truth."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dkg.errors import DkgError
from dkg.settings import Settings, load_settings
from dkg_cli.app import app
from dkg_cli.output import err, out, print_table2

eval_app = typer.Typer(help="Measure a stage against ground truth.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@eval_app.command("ingest")
def eval_ingest_cmd(
    pdf: Annotated[Path, typer.Argument(help="Guideline PDF to parse.")],
    truth: Annotated[Path, typer.Option("--truth", help="Ground truth in the shared/reference format.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Box-text accuracy, edge precision/recall/F1, footnote and link resolution against truth."""
    from dkg.pdf import ingest_pdf
    from dkg.pdf.evaluate import load_truth, score

    scores = score(ingest_pdf(pdf), load_truth(truth))
    if as_json:
        print(scores.model_dump_json())
        return
    table = Table("measure", "value")
    for k, v in scores.model_dump().items():
        table.add_row(k, f"{v:.4f}" if isinstance(v, float) else str(v))
    out.print(table)


@eval_app.command("matrix")
def eval_matrix_cmd(
    truth: Annotated[list[Path] | None, typer.Option("--truth", help="truth.json to draw (repeatable); default: the "
                                                     "latest version of every sample guideline.")] = None,
    style: Annotated[list[str] | None, typer.Option("--style", help="Style name (repeatable); default: all.")] = None,
    vector: Annotated[bool, typer.Option("--vector/--no-vector", help="Score the vector copies.")] = True,
    scan: Annotated[bool, typer.Option("--scan/--no-scan", help="Score the scanned copies.")] = True,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Keep the drawn PDFs and truths here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Ingestion over the style matrix: each guideline drawn in many house styles, vector and scanned.

    One row per style and copy: box, arrow and page-link precision/recall/F1, the box-text character error rate
    and seconds per page; styles
    kept out of development are marked. The worst cell is named.
    """
    import tempfile

    from rich.progress import Progress

    from dkg.pdf.stylematrix import STYLES, latest_truths, run_matrix, style_named, worst

    root = Path(os.environ.get("DKG_SAMPLES_DIR", Path(__file__).resolve().parents[1].parent / "shared/reference"))
    truths = truth or latest_truths(root / "guidelines")
    if not truths:
        raise typer.BadParameter("no truth.json found (give --truth or set DKG_SAMPLES_DIR)")
    styles = [style_named(n) for n in style] if style else list(STYLES)
    with tempfile.TemporaryDirectory() as tmp, Progress(console=err, transient=True) as progress:
        n = len(styles) * len(truths) * (int(vector) + int(scan))
        bar = progress.add_task("style matrix", total=n)

        def step(what: str) -> None:
            progress.update(bar, description=what)
            progress.advance(bar)

        cells = run_matrix(truths, styles, out_dir or Path(tmp), vector=vector, scanned=scan, progress=step)
    bad = worst(cells)
    if as_json:
        print(json.dumps({"cells": [c.as_dict() for c in cells], "worst": bad.as_dict() if bad else None}))
        return
    t = Table("style", "copy", "held out", "box P/R/F1", "arrow P/R/F1", "page link P/R", "box-text CER", "s/page")
    for c in cells:
        t.add_row(c.style, "scan" if c.scanned else "vector", "yes" if c.held_out else "",
                  f"{c.boxes.precision:.3f} / {c.boxes.recall:.3f} / {c.boxes.f1:.3f}",
                  f"{c.arrows.precision:.3f} / {c.arrows.recall:.3f} / {c.arrows.f1:.3f}",
                  f"{c.links.precision:.3f} / {c.links.recall:.3f}", f"{c.cer:.2%}", f"{c.seconds_per_page:.2f}")
    out.print(t)
    if bad is not None:
        out.print(f"worst cell: {bad.style} {'scan' if bad.scanned else 'vector'} "
                  f"(arrow F1 {bad.arrows.f1:.3f}, box F1 {bad.boxes.f1:.3f})")


@eval_app.command("constraints")
def eval_constraints_cmd(
    csv_path: Annotated[Path, typer.Argument(help="constraints.csv to score.")],
    truth: Annotated[Path, typer.Option("--truth", help="Ground truth in the shared/reference format.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    naming_blind: Annotated[bool, typer.Option(
        "--naming-blind", help="Pair attribute names first (operators, values and units must still agree).")] = False,
) -> None:
    """Precision, recall and F1 of constraints per attribute and overall; whole-box exact share."""
    from dkg.constraints.evaluate import score_constraints
    from dkg.pdf.evaluate import load_truth

    scores = score_constraints(csv_path, load_truth(truth), naming_blind=naming_blind)
    if as_json:
        print(scores.model_dump_json())
        return
    table = Table("attribute", "tp", "fp", "fn", "precision", "recall", "F1")
    for name, s in [*scores.per_attribute.items(), ("OVERALL", scores.overall)]:
        table.add_row(name, str(s.tp), str(s.fp), str(s.fn), f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}")
    out.print(table)
    out.print(f"boxes whose whole constraint set is right: {scores.box_exact:.3f} "
              f"({scores.boxes_matched}/{scores.boxes} boxes matched)")


@eval_app.command("criteria")
def eval_criteria_cmd(
    folder: Annotated[Path, typer.Argument(help="A folder of brat .txt/.ann pairs (LCT scheme), recursively.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON object.")] = False,
    misses: Annotated[int, typer.Option("--misses", help="Show this many missed gold comparisons.")] = 0,
) -> None:
    """Open-vocabulary comparisons against LCT-style eligibility criteria: P/R/F1 by gold type.

    The last line is always one JSON object with value_op, end_to_end, by_type and lines.
    """
    from dkg.constraints.criteria_eval import evaluate_criteria

    report = evaluate_criteria(folder)
    result = report.as_json()
    if not as_json:
        table = Table("gold type", "level", "predicted", "gold", "matched", "precision", "recall", "F1")
        rows = [(t, lvl, s) for t, d in report.by_type.items() for lvl, s in d.items()]
        rows += [("ALL", "value_op", report.value_op), ("ALL", "end_to_end", report.end_to_end)]
        for t, lvl, score in rows:
            d = score.as_dict()
            table.add_row(t, lvl, str(d["predicted"]), str(d["gold"]), str(d["tp"]), f"{d['precision']:.3f}",
                          f"{d['recall']:.3f}", f"{d['f1']:.3f}")
        out.print(table)
        out.print(f"{report.documents} documents, {report.lines} criterion lines")
        for g in report.misses[:misses]:
            out.print(f"  missed {g.doc}:{g.line + 1} {g.type} {g.op} {list(g.values)} {escape(repr(g.text))}")
    print(json.dumps(result))


@eval_app.command("qa")
def eval_qa_cmd(
    questions: Annotated[Path | None, typer.Argument(
        help="Clinician questions (JSONL, the qa-dev format); without it: Table 2 on the test split.")] = None,
    run: Annotated[Path | None, typer.Option("--run", help="A model run folder (default: the promoted).")] = None,
    handwritten: Annotated[Path | None, typer.Option("--handwritten", help="JSONL of hand-written cases.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N test questions.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Table 2 on the test split (with the DKG and, if trained, the baseline), beside the paper."""
    from dkg.qa import registry, store
    from dkg.qa.answer import Answerer
    from dkg.qa.evaluate import evaluate_baseline, evaluate_dkg, table
    from dkg.qa.model import Seq2Seq
    from dkg.qa.training import items_from_export, load_hand_cases, score_hand_cases

    settings = load_settings()
    run_dir = run or Path(registry.promoted_model_dir(settings)).parent
    if questions is not None:
        _eval_clinician_questions(settings, run_dir, questions, limit, as_json)
        return
    manifest = store.load_manifest(settings.qa_path / "current")
    if manifest is None or not manifest.export:
        raise DkgError(f"no QA dataset in {settings.qa_path / 'current'}; run `dkg qa build` first")
    test = items_from_export(Path(manifest.export))["test"][:limit]
    answerer = Answerer(settings, Seq2Seq(run_dir / "cypher"))
    with_dkg, _ = evaluate_dkg(answerer, test)
    without = evaluate_baseline(Seq2Seq(run_dir / "baseline"), test) if (run_dir / "baseline").exists() else None
    rows = table(with_dkg, without)
    hand = None
    if handwritten:
        acc, results = score_hand_cases(answerer, load_hand_cases(handwritten))
        hand = {"accuracy": round(acc, 4), "n": len(results),
                "wrong": [r.model_dump() for r in results if not r.correct]}
    if as_json:
        print(json.dumps({"run": str(run_dir), "dataset_version": manifest.dataset_version, "table": rows,
                          "handwritten": hand}))
        return
    print_table2(rows)
    if hand:
        out.print(f"hand-written questions: accuracy {hand['accuracy']} over {hand['n']}")


def _eval_clinician_questions(settings: Settings, run_dir: Path, path: Path, limit: int | None,
                              as_json: bool) -> None:
    """Accuracy by type and guideline, wrong answers, refusal precision/recall and the misses."""
    from dkg.qa.answer import Answerer
    from dkg.qa.clinician_eval import load_questions, score
    from dkg.qa.model import Seq2Seq

    qs = load_questions(path)[:limit]
    report = score(qs, Answerer(settings, Seq2Seq(run_dir / "cypher")).ask_many)
    if as_json:
        print(report.model_dump_json())
        return
    t = Table("", "correct", "n", "accuracy", title=f"{path.name}: {report.correct}/{report.n} correct")
    for name, groups in (("type", report.by_type), ("guideline", report.by_guideline)):
        for k, r in groups.items():
            t.add_row(f"{name} {k}", str(r.correct), str(r.n), f"{r.accuracy:.3f}")
    t.add_row("all", str(report.correct), str(report.n), f"{report.accuracy:.3f}")
    out.print(t)
    out.print(f"wrong answers (answered, not right): {report.wrong} ({report.wrong_rate:.1%}); "
              f"refusal precision {report.refusal_precision:.3f}, recall {report.refusal_recall:.3f}; "
              f"statuses {report.statuses}")
    m = Table("id", "type", "status", "got", "expected", title="misses")
    for o in report.misses:
        got = o.answer if o.status == "answered" else f"{o.answer} {o.message}".strip()
        if o.advisable is not None:
            got = f"[advisable={o.advisable}] {got}"
        m.add_row(o.id, o.type, o.status + (" WRONG" if o.wrong else ""), got[:110], (o.expected or "-")[:80])
    out.print(m)


@eval_app.command("rag")
def eval_rag_cmd(
    questions: Annotated[Path, typer.Argument(help="JSONL: question, in_scope, optional expected_url and answer "
                                                   "(the gold answer text).")],
    site: Annotated[str | None, typer.Option("--site", help="A kept site.")] = None,
    mode: Annotated[str, typer.Option("--mode", help="both (default: protocol and best in one run), best or "
                                                     "protocol.")] = "both",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object only.")] = False,
) -> None:
    """Both modes side by side: reference recall, answered in scope, refused out of scope, answer-span recall,
    token F1, grounding, latency; the last line is one JSON object."""
    from dkg.web.evaluate import compare, load_questions
    from dkg.web.rag import index_site, load_site

    if mode not in ("both", "best", "protocol"):
        raise typer.BadParameter(f"--mode must be both, best or protocol, not {mode!r}")
    settings = load_settings()
    modes = ("protocol", "best") if mode == "both" else (mode,)
    report = compare(settings, index_site(load_site(settings, site)), load_questions(questions), modes)
    if as_json:
        print(report.model_dump_json())
        return
    t = Table("mode", "scope", "questions", "reference recall", "answered %", "refused %", "span recall",
              "token F1", "grounding", "pages referenced", "p50 / p95 ms")
    for name, ev in report.modes.items():
        for scope, g in (("in", ev.in_scope), ("out", ev.out_of_scope)):
            if g:
                t.add_row(name, scope, str(g.questions), str(g.hit_rate), str(g.answered_pct), str(g.refused_pct),
                          str(g.span_recall), str(g.token_f1), str(g.grounding_mean), str(g.referenced_pages_mean),
                          f"{ev.latency_ms_p50} / {ev.latency_ms_p95}")
    out.print(t)
    print(report.model_dump_json())

