"""Entry point of the ``dkg`` command."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from dkg.errors import DkgError
from dkg.settings import Settings, load_settings
from dkg_cli.env import configure_prefect

if TYPE_CHECKING:  # the services package imports the Neo4j driver (seconds): only commands that need it load it
    from dkg.services.status import ServiceStatus

app = typer.Typer(help="Decision Knowledge Graphs from clinical practice guidelines.", no_args_is_help=True)
services_app = typer.Typer(help="Start, stop and inspect the local Neo4j and CoreNLP services.",
                           no_args_is_help=True)
app.add_typer(services_app, name="services")
eval_app = typer.Typer(help="Measure a stage against ground truth.", no_args_is_help=True)
graph_app = typer.Typer(help="Versions, differences and rollback of the Decision Knowledge Graph.",
                        no_args_is_help=True)
app.add_typer(graph_app, name="graph")
app.add_typer(eval_app, name="eval")

out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)
_state = {"debug": False}


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    """Decision Knowledge Graphs from clinical practice guidelines."""
    _state["debug"] = debug


def _table(statuses: list[ServiceStatus]) -> Table:
    table = Table("service", "address", "health", "version", "pid", "started", "startup s", "peak MiB")
    for s in statuses:
        table.add_row(
            s.name, s.address, "[green]healthy[/]" if s.healthy else f"[red]down[/] {s.detail}",
            s.version or "-", str(s.pid or "-"), "yes" if s.started else "no",
            f"{s.startup_s:.1f}" if s.startup_s is not None else "-",
            f"{s.peak_rss_mib:.0f}" if s.peak_rss_mib else "-",
        )
    return table


@services_app.command("up")
def services_up_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Start Neo4j and CoreNLP (idempotent) and wait until both answer."""
    settings = load_settings()
    with err.status("starting services…") as spinner:
        from dkg.services import services_up

        statuses = services_up(settings, progress=lambda msg: spinner.update(msg))
    if as_json:
        print(json.dumps([s.model_dump() for s in statuses]))
        return
    out.print(_table(statuses))
    for s in statuses:
        verb = "started" if s.started else "already running" if s.managed else "external"
        out.print(f"{s.name} {verb}, listening on {s.address}")


@services_app.command("status")
def services_status_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Report each service's health, version and memory; exit 1 when one is down."""
    from dkg.services import services_status

    statuses = services_status(load_settings())
    if as_json:
        print(json.dumps([s.model_dump() for s in statuses]))
    else:
        out.print(_table(statuses))
    if not all(s.healthy for s in statuses):
        raise typer.Exit(1)


@services_app.command("down")
def services_down_cmd() -> None:
    """Stop only the processes this project started (by their recorded PID)."""
    from dkg.services import services_down

    stopped = services_down(load_settings())
    for name, was in stopped.items():
        out.print(f"{name}: {'stopped' if was else 'not running (nothing of ours to stop)'}")


cluster_app = typer.Typer(help="The production topology: PostgreSQL, Prefect server and workers, Dask, "
                          "Neo4j and CoreNLP as separate processes.", no_args_is_help=True)
app.add_typer(cluster_app, name="cluster")


def _print_statuses(statuses: list[ServiceStatus], as_json: bool) -> None:
    if as_json:
        print(json.dumps([s.model_dump() for s in statuses]))
    else:
        out.print(_table(statuses))
        for s in statuses:
            if not s.healthy:
                out.print(f"[red]{escape(s.name)}[/]: {escape(s.detail)}")


@cluster_app.command("up")
def cluster_up_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Start every process of the topology that is not running (idempotent) and wait until each is healthy."""
    from dkg import cluster

    settings = load_settings()
    with err.status("starting the cluster…") as spinner:
        statuses = cluster.up(settings, progress=lambda msg: spinner.update(msg))
    _print_statuses(statuses, as_json)
    if not as_json:
        out.print(f"Prefect UI and API: {cluster.api_url(settings).removesuffix('/api')}  (database "
                  f"{cluster.database_url(settings)})")
        out.print(f"use it: export PREFECT_API_URL={cluster.api_url(settings)}")


@cluster_app.command("status")
def cluster_status_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Every process of the topology with its address and health; exit 1 when one is down."""
    from dkg import cluster

    statuses = cluster.status(load_settings())
    _print_statuses(statuses, as_json)
    if not all(s.healthy for s in statuses):
        raise typer.Exit(1)


@cluster_app.command("down")
def cluster_down_cmd(
    purge: Annotated[bool, typer.Option("--purge", help="Also delete Prefect's database and the shared "
                                        "results.")] = False,
) -> None:
    """Stop what `dkg cluster up` started (Neo4j and CoreNLP only if it started them)."""
    from dkg import cluster

    with err.status("stopping the cluster…") as spinner:
        stopped = cluster.down(load_settings(), purge=purge, progress=lambda msg: spinner.update(msg))
    for name, was in stopped.items():
        out.print(f"{name}: {'stopped' if was else 'not running'}")


@app.command("health")
def health_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run the health-check flow (a Prefect flow run) against the configured services."""
    settings = load_settings()
    configure_prefect(settings)
    from flows.healthcheck import healthcheck

    report = healthcheck()
    if as_json:
        print(report.model_dump_json())
    else:
        out.print(_table(report.services))
        out.print("[green]healthy[/]" if report.healthy else "[red]unhealthy[/]")
    if not report.healthy:
        raise typer.Exit(1)


def _run_ingest(source: str, out_dir: Path | None) -> object:
    from rich.progress import Progress

    from dkg.pdf import read_document_info
    from flows.ingest_guideline import ingest_guideline
    from tasks.ingest import add_page_listener

    total = read_document_info(Path(source)).page_count if not source.startswith("http") else None
    with Progress(console=err, transient=True) as progress:
        bar = progress.add_task(f"ingesting {Path(source).name}", total=total)
        remove = add_page_listener(lambda page: progress.advance(bar))
        from tasks.runners import configured_runner

        runner = configured_runner(load_settings())
        flow_fn = ingest_guideline.with_options(task_runner=runner) if runner is not None else ingest_guideline
        try:
            return flow_fn(source, str(out_dir) if out_dir else None)
        finally:
            remove()


@app.command("ingest")
def ingest_cmd(
    pdf: Annotated[str, typer.Argument(help="Guideline PDF: a path or an http(s) URL.")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="Folder for edges.csv and graph.json.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Parse a guideline PDF's flowcharts into edges.csv and graph.json (a Prefect flow run)."""
    configure_prefect(load_settings())
    result = _run_ingest(pdf, out_dir)
    if as_json:
        print(result.model_dump_json())  # type: ignore[attr-defined]
        return
    out.print(result)


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

    One row per style and copy: box, arrow and page-link precision/recall/F1 and seconds per page; styles
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
    t = Table("style", "copy", "held out", "box P/R/F1", "arrow P/R/F1", "page link P/R", "s/page")
    for c in cells:
        t.add_row(c.style, "scan" if c.scanned else "vector", "yes" if c.held_out else "",
                  f"{c.boxes.precision:.3f} / {c.boxes.recall:.3f} / {c.boxes.f1:.3f}",
                  f"{c.arrows.precision:.3f} / {c.arrows.recall:.3f} / {c.arrows.f1:.3f}",
                  f"{c.links.precision:.3f} / {c.links.recall:.3f}", f"{c.seconds_per_page:.2f}")
    out.print(t)
    if bad is not None:
        out.print(f"worst cell: {bad.style} {'scan' if bad.scanned else 'vector'} "
                  f"(arrow F1 {bad.arrows.f1:.3f}, box F1 {bad.boxes.f1:.3f})")


@app.command("extract")
def extract_cmd(
    edges: Annotated[Path, typer.Argument(help="edges.csv from `dkg ingest` (graph.json beside it adds footnotes).")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="Folder for constraints.csv and GX Data Docs.")] = None,
    paper_format: Annotated[bool, typer.Option("--paper-format", help="Comma-separated constraints, as the paper "
                                               "prints them (an export; not validated).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Extract patient constraints with CoreNLP and validate the CSV with Great Expectations."""
    configure_prefect(load_settings())
    from flows.extract_constraints import extract_constraints

    with err.status("extracting constraints…"):
        result = extract_constraints(str(edges), str(out_dir) if out_dir else None, paper_format)
    if as_json:
        print(result.model_dump_json())
        return
    out.print(f"constraints: {result.constraints_csv} ({result.rows} rows, {result.expectations} expectations passed)")
    if result.data_docs:
        out.print(f"GX Data Docs: {result.data_docs}")


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


@app.command("build")
def build_cmd(
    pdfs: Annotated[list[str], typer.Argument(help="Guideline PDFs (paths or URLs), loaded in the order given.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per PDF.")] = False,
) -> None:
    """Ingest → extract → GX gate → load/update the DKG, one Prefect flow run per PDF."""
    configure_prefect(load_settings())
    from flows.build_dkg import build_dkg

    for pdf in pdfs:
        result = build_dkg(pdf)
        if as_json:
            print(result.model_dump_json())
        else:
            out.print(f"{result.message}")


@graph_app.command("versions")
def graph_versions_cmd(code: Annotated[str, typer.Argument(help="Guideline code, e.g. ALL.")]) -> None:
    """Every version loaded for a guideline, oldest first."""
    from dkg.graph import loader

    table = Table("seq", "version", "kind", "loaded at", "current")
    for v in loader.versions(load_settings(), code):
        table.add_row(str(v["seq"]), v["version"], str(v.get("kind") or ""), str(v["loadedAt"]),
                      "yes" if v["current"] else "")
    out.print(table)


@graph_app.command("diff")
def graph_diff_cmd(
    code: Annotated[str, typer.Argument(help="Guideline code, e.g. ALL.")],
    v1: Annotated[str, typer.Argument(help="Older version, e.g. 1.2022.")],
    v2: Annotated[str, typer.Argument(help="Newer version, e.g. 2.2022.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Boxes changed, added and removed between two loaded versions, and the decision paths affected."""
    from dkg.graph import loader

    d = loader.diff_versions(load_settings(), code, v1, v2)
    if as_json:
        print(d.model_dump_json())
        return
    for kind, items in (("changed", d.changed), ("added", d.added), ("removed", d.removed)):
        for c in items:
            out.print(f"[bold]{kind}[/] {c.page} {c.uid}: {c.text_before or ''} → {c.text_after or ''}")
            if c.constraints_before != c.constraints_after:
                out.print(f"    constraints {json.dumps(c.constraints_before)} → {json.dumps(c.constraints_after)}")
    out.print(f"{len(d.changed_paths)} decision path(s) lead patients elsewhere now")


@graph_app.command("rollback")
def graph_rollback_cmd(
    code: Annotated[str, typer.Argument(help="Guideline code, e.g. ALL.")],
    version: Annotated[str, typer.Argument(help="A version loaded before.")],
) -> None:
    """Restore a guideline to an earlier loaded version (recorded as a change, reversible)."""
    from dkg.graph import loader

    out.print(loader.rollback(load_settings(), code, version).message)


constraint_app = typer.Typer(help="Insert, delete or update constraints on a decision node (recorded).",
                              no_args_is_help=True)
graph_app.add_typer(constraint_app, name="constraint")


def _edit(action: str, code: str, uid: str, items: str) -> None:
    from dkg.graph import loader

    try:
        payload = json.loads(items)
    except ValueError as e:
        raise typer.BadParameter(f"not JSON: {e}") from e
    payload = payload if isinstance(payload, list) else [payload]
    out.print(loader.edit_constraints(load_settings(), code, uid, action, payload).message)


@constraint_app.command("add")
def constraint_add_cmd(code: str, uid: str, items: Annotated[str, typer.Argument(
        help='JSON constraint or list, e.g. \'{"attr": "age", "op": "<", "value": 60, "unit": "years"}\'')]) -> None:
    """Add constraints to a box's decision node."""
    _edit("add", code, uid, items)


@constraint_app.command("remove")
def constraint_remove_cmd(code: str, uid: str, items: Annotated[str, typer.Argument(
        help="JSON constraint or list to remove (must be present).")]) -> None:
    """Remove constraints from a box's decision node."""
    _edit("remove", code, uid, items)


@constraint_app.command("set")
def constraint_set_cmd(code: str, uid: str, items: Annotated[str, typer.Argument(
        help="JSON list that replaces all of the box's constraints.")]) -> None:
    """Replace a box's constraints."""
    _edit("set", code, uid, items)


@graph_app.command("render")
def graph_render_cmd(
    code: Annotated[str, typer.Argument(help="Guideline code, e.g. ALL.")],
    out_file: Annotated[Path, typer.Option("--out", help="SVG file to write.")] = Path("dkg.svg"),
    patient: Annotated[str | None, typer.Option("--patient", help='Facts as JSON, e.g. \'{"age": 68}\'.')] = None,
) -> None:
    """Draw the decision graph (decisions with their constraints), a patient's path highlighted."""
    from dkg.graph.render import render

    facts = json.loads(patient) if patient else None
    out.print(f"wrote {render(load_settings(), code, out_file, facts)}")


@app.command("match")
def match_cmd(
    guideline: Annotated[str | None, typer.Option("--guideline", help="Guideline code (default: all).")] = None,
    age: Annotated[float | None, typer.Option("--age")] = None,
    ph_status: Annotated[str | None, typer.Option("--ph-status")] = None,
    response: Annotated[str | None, typer.Option("--response")] = None,
    mrd: Annotated[str | None, typer.Option("--mrd")] = None,
    comorbidities: Annotated[str | None, typer.Option("--comorbidities")] = None,
    fact: Annotated[list[str] | None, typer.Option("--fact", help="Any other fact as attr=value.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON list.")] = False,
) -> None:
    """Recommended next steps for a patient, with evidence, from one read-only Cypher query."""
    from dkg.graph import loader

    facts: dict[str, object] = {"age": age, "ph_status": ph_status, "response": response, "mrd": mrd,
                                "comorbidities": comorbidities}
    for f in fact or []:
        k, _, v = f.partition("=")
        facts[k.strip()] = float(v) if v.replace(".", "", 1).isdigit() else v.strip()
    rows = loader.match_patient(load_settings(), facts, guideline)
    if as_json:
        print(json.dumps(rows, default=str))
        return
    for r in rows:
        out.print(f"[bold]{r['guideline']} {r['version']} {r['page']}[/] {r['condition']}")
        for n in r["next"]:
            out.print(f"   → {n['page']}: {n['text']}")


@app.command("watch")
def watch_cmd(
    sources: Annotated[Path, typer.Option("--sources", help="YAML list of sources (folder, url or web).")] = Path(
        "conf/sources.yaml"),
    full: Annotated[bool, typer.Option("--full/--graph-only",
                                       help="Also refresh the QA dataset and retrain after a change.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Poll guideline sources once; run the pipeline for each new version found (nothing when nothing changed)."""
    configure_prefect(load_settings())
    from flows.watch_guidelines import watch_guidelines

    report = watch_guidelines(str(sources), full_pipeline=full)
    if as_json:
        print(report.model_dump_json())
        return
    out.print(f"{report.checked} source(s) checked; new: {', '.join(report.loaded) or 'nothing'}")


vocab_app = typer.Typer(help="The attribute registry: list, approve, rename, merge, reject.", no_args_is_help=True)
app.add_typer(vocab_app, name="vocab")


def _registry() -> tuple[object, Path]:
    from dkg.constraints.registry import read_registry, registry_path
    from dkg.constraints.vocabulary import base_seed

    path = registry_path(load_settings())
    return read_registry(path, base_seed()), path


@vocab_app.command("list")
def vocab_list_cmd(
    pending: Annotated[bool, typer.Option("--pending", help="Only what waits for a decision.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
) -> None:
    """Every attribute: type, unit, range or values, aliases, status, where it was first seen."""
    from dkg.constraints.registry import Registry, to_json

    reg, path = _registry()
    assert isinstance(reg, Registry)
    attrs = reg.pending() if pending else list(reg.attributes.values())
    if as_json:
        data = to_json(reg)
        data["attributes"] = {a.name: data["attributes"][a.name] for a in attrs}
        print(json.dumps(data, ensure_ascii=False))
        return
    table = Table("attribute", "status", "type", "unit", "range / values", "aliases", "first seen")
    for a in attrs:
        rng = f"{a.min:g}–{a.max:g}" if a.min is not None and a.max is not None else ", ".join(a.values)
        if a.proposed_values:
            rng += f" (+ proposed {', '.join(a.proposed_values)})"
        seen = " ".join(x for x in (a.first_seen.guideline, a.first_seen.version,
                                    f"p. {a.first_seen.page}" if a.first_seen.page else "", a.first_seen.box) if x)
        table.add_row(a.name, a.status, a.type, a.unit or "", escape(rng), escape(", ".join(a.aliases)), escape(seen))
    out.print(table)
    out.print(f"registry version {reg.version} ({path})")


def _save_registry(reg: object, path: Path, message: str) -> None:
    from dkg.constraints.registry import Registry, write_registry

    assert isinstance(reg, Registry)
    version = write_registry(reg, path)
    out.print(f"{message} (registry version {version})")


@vocab_app.command("approve")
def vocab_approve_cmd(
    names: Annotated[list[str] | None, typer.Argument(help="Attributes to approve.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Approve everything pending.")] = False,
    resume: Annotated[bool, typer.Option("--resume", help="Then resume every build paused for approval.")] = False,
) -> None:
    """Approve proposed attributes (and proposed values of approved ones)."""
    from dkg.constraints.registry import Registry

    reg, path = _registry()
    assert isinstance(reg, Registry)
    if not names and not all_:
        raise DkgError("name the attributes to approve, or pass --all")
    done = reg.approve(None if all_ else names)
    _save_registry(reg, path, f"approved: {', '.join(done) or 'nothing pending'}")
    if resume:
        for run_id in _resume_paused_builds({"action": "approve_all"}):
            out.print(f"resumed flow run {run_id}")


def _resume_paused_builds(run_input: dict[str, object]) -> list[str]:
    """Resume every extract-constraints run paused for attribute approval, with ``run_input``."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType
    from prefect.client.schemas.objects import StateType
    from prefect.flow_runs import resume_flow_run

    configure_prefect(load_settings())
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED]))))
    resumed = []
    for r in runs:
        if r.state and r.state.state_details and r.state.state_details.pause_key == "attribute-approval":
            resume_flow_run(r.id, run_input=run_input)
            resumed.append(str(r.id))
    return resumed


def _edit_registry(change: Callable[[Any], str]) -> None:
    """Apply ``change`` (which returns what it did) to the registry and save it as a new version."""
    from dkg.constraints.registry import Registry

    reg, path = _registry()
    assert isinstance(reg, Registry)
    _save_registry(reg, path, change(reg))


@vocab_app.command("reject")
def vocab_reject_cmd(names: Annotated[list[str], typer.Argument(help="Proposed attributes to refuse.")]) -> None:
    """Reject proposals: constraints on them never pass the gate."""
    _edit_registry(lambda reg: f"rejected: {', '.join(reg.reject(names))}")


@vocab_app.command("rename")
def vocab_rename_cmd(old: str, new: str) -> None:
    """Give an attribute another name (the old one stays as an alias)."""
    _edit_registry(lambda reg: reg.rename(old, new) or f"renamed {old} → {new}")


@vocab_app.command("merge")
def vocab_merge_cmd(source: str, into: str) -> None:
    """Merge an attribute into an existing one of the same type (its names become aliases)."""
    _edit_registry(lambda reg: reg.merge(source, into) or f"merged {source} into {into}")


qa_app = typer.Typer(help="The CPG-QA dataset generated from the graph.", no_args_is_help=True)
app.add_typer(qa_app, name="qa")


def _qa_print(result: object, as_json: bool) -> None:
    from dkg.qa.build import QABuildResult

    assert isinstance(result, QABuildResult)
    if as_json:
        print(result.model_dump_json())
        return
    table = Table("", "count")
    for k, v in {**{f"type {k}": v for k, v in result.by_type.items()},
                 **{f"split {k}": v for k, v in result.by_split.items()},
                 **{f"guideline {k}": v for k, v in result.by_guideline.items()}}.items():
        table.add_row(k, str(v))
    out.print(table)
    leak = result.leakage
    out.print(f"{result.items} items, {result.valid} valid on the graph, {result.stale} stale "
              f"({result.regenerated} regenerated, {result.dropped} dropped, {result.added} added); "
              f"dataset {result.dataset_version} exported to {result.export}")
    if result.changes:
        out.print(f"changes: {result.changes}")
    out.print(f"leakage: shared decisions {leak.shared_decisions}, shared templates {leak.shared_templates}, "
              f"identical questions {leak.identical_questions}, max trigram Jaccard {leak.max_trigram_jaccard}")


@qa_app.command("build")
def qa_build_cmd(
    fresh: Annotated[bool, typer.Option("--fresh", help="Generate every item anew instead of refreshing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object as the last line.")] = False,
) -> None:
    """Generate (or refresh) and validate the QA dataset for every loaded guideline."""
    configure_prefect(load_settings())
    from flows.build_qa_dataset import build_qa_dataset

    _qa_print(build_qa_dataset(fresh=fresh), as_json)


@qa_app.command("validate")
def qa_validate_cmd(
    regenerate: Annotated[bool, typer.Option("--regenerate/--report-only",
                                             help="Rewrite stale items, or only report them.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object as the last line.")] = False,
) -> None:
    """Run every saved item's query on the current graph; report (and regenerate) stale items."""
    configure_prefect(load_settings())
    from flows.validate_qa_dataset import validate_qa_dataset

    _qa_print(validate_qa_dataset(regenerate=regenerate), as_json)


@qa_app.command("train")
def qa_train_cmd(
    size: Annotated[str, typer.Option("--size", help="small (quick) or paper (~19M parameters).")] = "small",
    baseline: Annotated[bool, typer.Option("--baseline/--no-baseline",
                                           help="Also train the paper's baseline without the DKG.")] = True,
    force: Annotated[bool, typer.Option("--force", help="Train even if the dataset has not changed.")] = False,
    epochs: Annotated[int | None, typer.Option("--epochs", help="Override the maximum epochs.")] = None,
    max_train_items: Annotated[int | None, typer.Option("--max-train-items",
                                                        help="Train on a sample of this many items.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object as the last line.")] = False,
) -> None:
    """Train the text-to-Cypher model on the saved dataset, evaluate it, promote it if not worse."""
    configure_prefect(load_settings())
    from flows.train_text2cypher import train_text2cypher

    report = train_text2cypher(size=size, with_baseline=baseline, force=force, epochs=epochs,
                               max_train_items=max_train_items)
    if as_json:
        print(report.model_dump_json())
        return
    out.print(report.reason)
    if report.with_dkg:
        from dkg.qa.evaluate import table

        _print_table2(table(report.with_dkg, report.without_dkg))


def _print_table2(rows: list[dict[str, object]]) -> None:
    t = Table("metric", "with DKG", "without DKG", "paper with DKG", "paper without DKG")
    for r in rows:
        t.add_row(*[("-" if v is None else str(v)) for v in r.values()])
    out.print(t)


def _answerer(model: Path | None) -> object:
    from dkg.qa import registry
    from dkg.qa.answer import Answerer
    from dkg.qa.model import Seq2Seq

    settings = load_settings()
    return Answerer(settings, Seq2Seq(model or registry.promoted_model_dir(settings)))


def _ask_served(question: str) -> dict[str, Any] | None:
    """The answer of a running `dkg serve`, or None when none is up (then the CLI answers itself)."""
    from dkg.serve.client import post_json, served_url

    settings = load_settings()
    url = served_url(settings)
    if url is None:
        return None
    return post_json(settings, url + "/v1/ask", {"question": question})


@app.command("ask")
def ask_cmd(
    question: Annotated[str, typer.Argument(help="A clinical question in English.")],
    model: Annotated[Path | None, typer.Option("--model", help="A model folder (default: the promoted one).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Answer a question from the graph: the answer, the Cypher that found it and the evidence.

    When a `dkg serve` of this state folder is up (or DKG_SERVE_URL names one), the question goes to it:
    the model is loaded there already. Otherwise the model is loaded here."""
    served = _ask_served(question) if model is None else None
    if served is None:
        from dkg.qa.answer import Answer, Answerer

        try:
            answerer = _answerer(model)
        except DkgError as exc:
            answer = Answer(question=question, status="rejected", answer=f"Not answered: {exc}.", message=str(exc))
        else:
            assert isinstance(answerer, Answerer)
            answer = answerer.ask(question)
        if as_json:
            print(answer.model_dump_json(exclude={"question"}))
            return
        served = answer.model_dump(mode="json", exclude={"question"})
    if as_json:
        print(json.dumps(served))
        return
    _print_answer(served)


def _print_answer(answer: dict[str, Any]) -> None:
    """An answer (``dkg ask --json``'s object) for a person."""
    out.print(f"[bold]{answer['status']}[/]: {escape(answer['answer'])}")
    if answer.get("cypher"):  # markup=False: Cypher's facts[k] is not a console style
        out.print(f"cypher: {answer['cypher']}", highlight=False, markup=False)
    for ev in answer.get("evidence") or []:
        way = {"on the way": " (on the way)", "treatment": " (treatment asked about)"}.get(str(ev.get("role")), "")
        out.print(f"evidence{way}: {ev['guideline']} {ev['version']}, page {ev['page']}, box {ev['box']}: "
                  f"{ev['text']}", highlight=False, markup=False)
    if answer.get("missing_facts"):
        out.print("missing facts: " + ", ".join(answer["missing_facts"]))
    for f in answer.get("facts_read") or []:  # why the graph was asked what it was asked
        out.print(f"read: {f['attr']} = {f['value']} from “{f['text']}” ({f['rule']})", highlight=False, markup=False)
    if answer.get("unread"):
        out.print("not understood: " + ", ".join(answer["unread"]), highlight=False, markup=False)
    if answer.get("message") and answer["status"] != "answered":
        out.print(f"why: {answer['message']}", highlight=False, markup=False)


@app.command("serve")
def serve_cmd(
    host: Annotated[str, typer.Option("--host", help="Address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8080,
) -> None:
    """Answer over HTTP (/v1/ask, /v1/web/ask, /v1/guidelines, /docs) with a web page for clinicians at /."""
    from dkg.serve.app import serve

    settings = load_settings()
    out.print(f"dkg serve: http://{host}:{port}/ (API docs at /docs); Ctrl-C stops it", highlight=False)
    serve(settings, host, port)


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
    _print_table2(rows)
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


web_app = typer.Typer(help="The guideline RAG chatbot over web guidelines.", no_args_is_help=True)
app.add_typer(web_app, name="web")


@web_app.command("ingest")
def web_ingest_cmd(
    toc_url: Annotated[str, typer.Argument(help="The guideline's table of contents page.")],
    site: Annotated[str | None, typer.Option("--site", help="Name to keep the site under.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Crawl and index a web guideline (a re-crawl processes only new and changed pages)."""
    configure_prefect(load_settings())
    from flows.ingest_web_guideline import ingest_web_guideline

    res = ingest_web_guideline(toc_url, site)
    if as_json:
        print(res.model_dump_json())
        return
    out.print(f"{res.site}: {res.pages} pages ({res.medical} medical); new {res.new}, changed {res.changed}, "
              f"removed {res.removed}, unchanged {res.unchanged}, failed {len(res.failed)}; URL list {res.xlsx}")
    for f in res.failed:
        err.print(f"[yellow]skipped:[/] {f}", highlight=False)


@web_app.command("ask")
def web_ask_cmd(
    question: Annotated[str, typer.Argument(help="A question in Japanese or English.")],
    site: Annotated[str | None, typer.Option("--site", help="A kept site (default: the last crawled).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    mode: Annotated[str | None, typer.Option("--mode", help="best or protocol (default: DKG_RAG_MODE, best).")] = None,
) -> None:
    """Answer from the site's pages only, or refuse with the protocol's sentences."""
    from dkg.web.rag import ask, dumps, index_site, load_site

    if mode not in (None, "best", "protocol"):
        raise typer.BadParameter(f"--mode must be best or protocol, not {mode!r}")
    settings = load_settings()
    answer = ask(settings, index_site(load_site(settings, site)), question, mode=mode)
    if as_json:
        print(dumps(answer))
        return
    out.print(f"[bold]{answer.status}[/] ({answer.mode}): {escape(answer.answer)}", highlight=False)
    if answer.detail:
        out.print(f"why: {escape(answer.detail)}", highlight=False)
    out.print(f"{'keywords' if answer.mode == 'protocol' else 'subject'}: {', '.join(answer.keywords)}",
              highlight=False)
    for r in answer.references:
        where = f" — {r.section}" if r.section else ""
        out.print(f"  {r.score:.3f} {r.url} {escape(r.title)}{escape(where)}", highlight=False)


@app.command("chat")
def chat_cmd(site: Annotated[str | None, typer.Option("--site", help="A kept site.")] = None) -> None:
    """Ask questions one after another (each answered on its own); an empty line ends."""
    from dkg.web.rag import ask, index_site, load_site

    settings = load_settings()
    index = index_site(load_site(settings, site))
    while True:
        try:
            q = input("? ")
        except EOFError:
            break
        if not q.strip():
            break
        a = ask(settings, index, q)
        out.print(a.answer, highlight=False)
        for r in a.references:
            out.print(f"  [{r.score:.2f}] {r.url}", highlight=False)


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


def _samples() -> list[Path]:
    root = Path(os.environ.get("DKG_SAMPLES_DIR", Path(__file__).resolve().parents[1].parent / "shared/reference"))
    return sorted(root.glob("guidelines/*/*/*.pdf")) or sorted(root.glob("**/*.pdf"))


@app.command("demo")
def demo_cmd() -> None:
    """The main job on the bundled samples: start services, then run the pipeline flows."""
    settings = load_settings()
    configure_prefect(settings)
    t0 = time.monotonic()
    with err.status("starting services…") as spinner:
        from dkg.services import services_up

        statuses = services_up(settings, progress=lambda msg: spinner.update(msg))
    out.print(_table(statuses))
    from flows.healthcheck import healthcheck

    report = healthcheck()
    out.print(f"health-check flow: {'[green]healthy[/]' if report.healthy else '[red]unhealthy[/]'}")
    if not report.healthy:
        raise typer.Exit(1)
    from flows.build_dkg import load_dkg
    from flows.extract_constraints import extract_constraints

    table = Table("guideline", "version", "pages", "boxes", "arrows", "edges", "GX gate", "graph",
                  "changed", "added", "removed")
    for pdf in _samples():
        res = _run_ingest(str(pdf), settings.state_path / "runs" / "demo" / pdf.stem)
        ext = extract_constraints(res.edges_csv)  # type: ignore[attr-defined]
        built = load_dkg(ext.constraints_csv)
        table.add_row(str(res.guideline), str(res.version), str(res.pages),  # type: ignore[attr-defined]
                      str(res.boxes), str(res.arrows), str(res.edges),  # type: ignore[attr-defined]
                      f"{ext.expectations} passed", "loaded" if built.loaded else "unchanged",
                      str(built.changed), str(built.added), str(built.removed))
    out.print(table)
    _demo_questions()
    out.print("try: .venv/bin/dkg ask \"45 y/o with Ph-negative ALL in CR, MRD negative: next step?\" ; "
              ".venv/bin/dkg graph diff ALL 1.2022 2.2022 ; make ui")
    out.print(f"demo finished in {time.monotonic() - t0:.1f} s")
    out.print("next: make serve   → the clinician page and the HTTP API on http://127.0.0.1:8080/ (API docs: /docs)")


def _demo_questions() -> None:
    """The rest of the chain: QA dataset and model (skipped when up to date), then two test questions answered."""
    from dkg.qa import registry, store
    from dkg.qa.answer import Answerer
    from dkg.qa.model import Seq2Seq
    from flows.guideline_pipeline import refresh_qa_and_model

    with err.status("QA dataset and text-to-Cypher model (first run: a few minutes)…"):
        down = refresh_qa_and_model(with_baseline=False)
    qa, model = down.qa, down.model
    out.print(f"QA dataset {qa.dataset_version}: {qa.valid}/{qa.items} queries return their expected node"
              + (" (unchanged)" if qa.skipped else ""))
    if model is not None:
        acc = f", test accuracy {model.with_dkg.accuracy:.3f}" if model.with_dkg else ""
        out.print(f"model: {model.reason}{acc}")
    settings = load_settings()
    items = store.load(settings.qa_path / "current") or []
    picks = [next((i for i in items if i.split == "test" and i.type == t), None) for t in ("next_step", "advisable")]
    answerer = Answerer(settings, Seq2Seq(registry.promoted_model_dir(settings)))
    for item in (p for p in picks if p is not None):
        out.print(f"\nQ: {item.QUESTION}", highlight=False, markup=False)
        _print_answer(answerer.ask(item.QUESTION).model_dump(mode="json", exclude={"question"}))


def main() -> None:
    """Run the CLI; a :class:`DkgError` becomes one line on stderr and exit code 1."""
    try:
        app()
    except DkgError as e:
        if _state["debug"]:
            raise
        err.print(f"[red]error:[/] {e}", highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
