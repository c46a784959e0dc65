"""Entry point of the ``dkg`` command."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dkg.errors import DkgError
from dkg.services import services_down, services_status, services_up
from dkg.services.status import ServiceStatus
from dkg.settings import load_settings
from dkg_cli.env import configure_prefect

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
    stopped = services_down(load_settings())
    for name, was in stopped.items():
        out.print(f"{name}: {'stopped' if was else 'not running (nothing of ours to stop)'}")


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
        try:
            return ingest_guideline(source, str(out_dir) if out_dir else None)
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
) -> None:
    """Precision, recall and F1 of constraints per attribute and overall; whole-box exact share."""
    from dkg.constraints.evaluate import score_constraints
    from dkg.pdf.evaluate import load_truth

    scores = score_constraints(csv_path, load_truth(truth))
    if as_json:
        print(scores.model_dump_json())
        return
    table = Table("attribute", "tp", "fp", "fn", "precision", "recall", "F1")
    for name, s in [*scores.per_attribute.items(), ("OVERALL", scores.overall)]:
        table.add_row(name, str(s.tp), str(s.fp), str(s.fn), f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}")
    out.print(table)
    out.print(f"boxes whose whole constraint set is right: {scores.box_exact:.3f} "
              f"({scores.boxes_matched}/{scores.boxes} boxes matched)")


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
    sources: Annotated[Path, typer.Option("--sources", help="YAML list of sources (folder or url).")] = Path(
        "conf/sources.yaml"),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Poll guideline sources once; run the DKG pipeline for each new version found."""
    configure_prefect(load_settings())
    from flows.watch_guidelines import watch_guidelines

    report = watch_guidelines(str(sources))
    if as_json:
        print(report.model_dump_json())
        return
    out.print(f"{report.checked} source(s) checked; new: {', '.join(report.loaded) or 'nothing'}")


qa_app = typer.Typer(help="The CPG-QA dataset generated from the graph.", no_args_is_help=True)
app.add_typer(qa_app, name="qa")


def _qa_print(result: object, as_json: bool) -> None:
    from flows.qa_common import QABuildResult

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
    out.print("try: .venv/bin/dkg match --guideline ALL --age 68 --ph-status negative ; "
              ".venv/bin/dkg graph diff ALL 1.2022 2.2022")
    out.print(f"demo finished in {time.monotonic() - t0:.1f} s")


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
