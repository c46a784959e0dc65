"""`dkg ingest`, `dkg extract`, `dkg build` and `dkg watch`: from a guideline PDF to the graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dkg.settings import load_settings
from dkg_cli.app import app
from dkg_cli.env import configure_prefect
from dkg_cli.output import err, out


def run_ingest(source: str, out_dir: Path | None) -> object:
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
    explain: Annotated[str | None, typer.Option(
        "--explain", help="Only draw what the parser saw on this page (a number, or a label such as KID-3) as "
                          "explain-<page>.png in --out (default: the current folder): boxes, traced lines, heads, "
                          "arrows, links.")] = None,
) -> None:
    """Parse a guideline PDF's flowcharts into edges.csv and graph.json (a Prefect flow run)."""
    if explain is not None:
        _explain(Path(pdf), explain, out_dir or Path("."))
        return
    configure_prefect(load_settings())
    result = run_ingest(pdf, out_dir)
    if as_json:
        print(result.model_dump_json())  # type: ignore[attr-defined]
        return
    out.print(result)


def _explain(pdf: Path, page: str, folder: Path) -> None:
    from dkg.errors import IngestError
    from dkg.pdf.explain import explain_page

    if page.isdigit():
        index = int(page)
    else:
        from dkg.pdf import ingest_pdf

        labels = {p.label: p.index for p in ingest_pdf(pdf).pages if p.label}
        if page not in labels:
            raise IngestError(f"{pdf}: no page labelled {page!r} (labels: {', '.join(sorted(labels)) or 'none'})")
        index = labels[page]
    e = explain_page(pdf, index, folder / f"explain-{page}.png")
    out.print(f"wrote {e.png}: page {index} ({e.page.label or 'no label'}, {e.path}) — {len(e.page.boxes)} boxes, "
              f"{e.segments} traced segments, {e.heads} heads, {len(e.page.arrows)} arrows, "
              f"{len(e.page.links)} links", highlight=False)
    for note in e.notes:
        err.print(f"  {note}", highlight=False)


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

