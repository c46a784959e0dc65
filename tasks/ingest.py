"""Ingestion tasks: identify the document, parse each page (OCR retried), assemble, write, report."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import requests
from prefect import task
from prefect.artifacts import create_table_artifact
from prefect.context import TaskRunContext
from prefect.logging import get_run_logger

from dkg.errors import IngestError, TransientError
from dkg.fingerprint import code_digest
from dkg.pdf import GuidelineGraph, PageGraph, parse_page, read_document_info
from dkg.pdf.document import finish_document
from dkg.pdf.export import page_report, write_outputs
from dkg.pdf.models import DocumentInfo
from tasks.common import retry_transient

_listeners: list[Callable[[PageGraph], None]] = []


def add_page_listener(fn: Callable[[PageGraph], None]) -> Callable[[], None]:
    """Register an in-process callback run as each page's result reaches the flow (the CLI's progress bar)."""
    _listeners.append(fn)
    return lambda: _listeners.remove(fn)


def notify_page(page: PageGraph) -> None:
    """Tell the listeners a page is done (called by the flow, so cached and remote pages count too)."""
    for fn in list(_listeners):
        fn(page)


def page_cache_key(context: TaskRunContext, parameters: dict[str, Any]) -> str:
    """A page's result depends only on the PDF's bytes (hashed once by ``read-document-info``), the page number
    and the parser's code."""
    return f"parse-page-{parameters['sha256']}-{parameters['index']}-{code_digest('pdf')}"


@task(name="fetch-guideline", retries=3, retry_delay_seconds=[2, 10, 30], retry_condition_fn=retry_transient)
def fetch_source(source: str, run_dir: Path) -> Path:
    """A local path as is; an http(s) URL downloaded into the run folder."""
    if not source.startswith(("http://", "https://")):
        return Path(source)
    target = run_dir / (Path(source.split("?")[0]).name or "guideline.pdf")
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with requests.get(source, timeout=60, stream=True) as resp:
            resp.raise_for_status()
            with open(target, "wb") as fh:
                for chunk in resp.iter_content(1 << 16):
                    fh.write(chunk)
    except (requests.ConnectionError, requests.Timeout) as e:
        raise TransientError(f"{source}: download failed ({type(e).__name__})") from e
    except requests.HTTPError as e:
        raise IngestError(f"{source}: HTTP {e.response.status_code}") from e
    return target


@task(name="read-document-info")
def read_info(path: Path) -> DocumentInfo:
    """Identity and page count; a corrupt or encrypted file fails here, at once."""
    return read_document_info(path)


@task(name="parse-page", task_run_name="parse-page-{index}", retries=2, retry_delay_seconds=5,
      retry_condition_fn=retry_transient, tags=["pdf-page"], cache_key_fn=page_cache_key, persist_result=True,
      cache_expiration=timedelta(days=90))
def parse_page_task(path: Path, index: int, sha256: str) -> PageGraph:
    """One page: vector path, or OCR for image-only pages (``sha256``: the PDF's, the cache key).

    Cached on the PDF's bytes, the page number and the parser's code: an unchanged guideline is not
    parsed twice. A page that fails raises (and is not cached); the flow records it as an error page.
    """
    page = parse_page(path, index)
    for w in page.warnings:
        get_run_logger().warning(w)
    return page


def error_page(path: Path, index: int, exc: BaseException) -> PageGraph:
    """The stand-in for a page that could not be parsed: the other pages are kept, this one is reported."""
    return PageGraph(index=index, kind="error", warnings=[f"{path.name} page {index}: {type(exc).__name__}: {exc}"])


@task(name="assemble-graph")
def assemble(path: Path, info: DocumentInfo, pages: list[PageGraph]) -> GuidelineGraph:
    """Resolve footnotes and links across pages and build the edge list."""
    return finish_document(path, info, sorted(pages, key=lambda p: p.index))


@task(name="write-edges")
def write(graph: GuidelineGraph, out_dir: Path) -> tuple[Path, Path]:
    """Write ``edges.csv`` and ``graph.json``."""
    return write_outputs(graph, out_dir)


@task(name="publish-ingest-report")
def publish_report(graph: GuidelineGraph) -> None:
    """Per-page table artifact: boxes, arrows, footnotes/links resolved, path, seconds."""
    rows = page_report(graph)
    flow = sum(1 for p in graph.pages if p.kind == "flowchart")
    skipped = sum(1 for p in graph.pages if p.kind == "non_flowchart")
    create_table_artifact(
        key="ingest-pages",
        table=rows,
        description=(f"{graph.info.code} {graph.info.version}: {flow} flowchart pages, {skipped} skipped as "
                     f"non-flowchart, {len(graph.edges)} edges"),
    )
