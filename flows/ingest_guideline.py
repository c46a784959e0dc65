"""Flow: a guideline PDF (path or URL) to ``edges.csv`` and ``graph.json``, one task per page."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from prefect import flow, unmapped
from prefect.logging import get_run_logger
from pydantic import BaseModel

from dkg.errors import IngestError
from dkg.pdf import PageGraph
from tasks.common import rename_run
from tasks.ingest import (
    assemble,
    error_page,
    fetch_source,
    notify_page,
    parse_page_task,
    publish_report,
    read_info,
    write,
)


class IngestResult(BaseModel):
    """Where the outputs went and what the document is."""

    guideline: str | None
    version: str | None
    sha256: str | None = None
    pages: int
    flowchart_pages: int
    skipped_pages: int
    boxes: int
    arrows: int
    edges: int
    edges_csv: str
    graph_json: str


def _default_run_dir(source: str) -> Path:
    stem = Path(source.split("?")[0]).stem or "guideline"
    digest = hashlib.sha1(source.encode()).hexdigest()[:8]
    return Path(".dkg") / "runs" / "ingest" / f"{stem}-{digest}-{time.strftime('%Y%m%dT%H%M%S')}"


def source_label(source: str) -> str:
    """The file name of a guideline source, for run names before its identity is read."""
    return Path(source.split("?")[0]).name or source


@flow(name="ingest-guideline", flow_run_name="ingest {source}", log_prints=True)
def ingest_guideline(source: str, out_dir: str | None = None, refresh_cache: bool = False) -> IngestResult:
    """Parse every page of a guideline PDF as its own task and write the edge CSV and graph JSON.

    Args:
        source: a local PDF path or an http(s) URL.
        out_dir: output folder (default: a new run folder under ``.dkg/runs/ingest``).
        refresh_cache: parse every page again even when the same PDF bytes were parsed by the same code.
    """
    run_dir = Path(out_dir) if out_dir else _default_run_dir(source)
    path = fetch_source(source, run_dir)
    info = read_info(path)
    parse = parse_page_task.with_options(refresh_cache=True) if refresh_cache else parse_page_task
    futures = parse.map(unmapped(path), list(range(1, info.page_count + 1)), unmapped(info.sha256))
    pages: list[PageGraph] = []
    for index, fut in enumerate(futures, start=1):
        got = fut.result(raise_on_failure=False)
        if isinstance(got, IngestError):
            raise got  # the document itself is unreadable: nothing to keep
        page = got if isinstance(got, PageGraph) else error_page(path, index, got)
        if page.kind == "error":
            get_run_logger().warning(page.warnings[0])
        notify_page(page)
        pages.append(page)
    graph = assemble(path, info, pages)
    code, version = graph.info.code, graph.info.version  # read from the pages' headers and footers
    rename_run(f"ingest {code or source_label(source)} {version or ''}".strip(),
               [f"guideline:{code}"] if code else None)
    csv_path, json_path = write(graph, run_dir)
    publish_report(graph)
    result = IngestResult(
        guideline=graph.info.code, version=graph.info.version, sha256=graph.info.sha256, pages=len(graph.pages),
        flowchart_pages=sum(1 for p in graph.pages if p.kind == "flowchart"),
        skipped_pages=sum(1 for p in graph.pages if p.kind == "non_flowchart"),
        boxes=len(graph.boxes), arrows=sum(len(p.arrows) for p in graph.pages), edges=len(graph.edges),
        edges_csv=str(csv_path), graph_json=str(json_path),
    )
    get_run_logger().info("%s %s: %d edges written to %s", result.guideline, result.version, result.edges, csv_path)
    return result


if __name__ == "__main__":
    import sys

    ingest_guideline(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
