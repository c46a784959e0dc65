"""Flow: a web guideline's table of contents → pages → medical classification → index → URL list."""

from __future__ import annotations

from prefect import flow
from pydantic import BaseModel

from tasks.web import crawl_task, export_task, index_task, previous_task, publish_task


class WebIngestResult(BaseModel):
    site: str
    toc: str
    pages: int
    medical: int
    new: int
    changed: int
    removed: int
    unchanged: int
    failed: list[str]
    xlsx: str


@flow(name="ingest-web-guideline", flow_run_name="web-{toc_url}")
def ingest_web_guideline(toc_url: str, site: str | None = None) -> WebIngestResult:
    """Crawl (or re-crawl) a web guideline; only new and changed pages are processed again.

    Args:
        toc_url: the table of contents page.
        site: a name to keep the site under (default: from the URL); the last crawled is the default.
    """
    previous = previous_task(toc_url, site)
    pages, report = crawl_task(toc_url, previous)
    kept = index_task(toc_url, site, pages, previous, report)
    xlsx = export_task(kept)
    publish_task(kept, report)
    return WebIngestResult(site=kept.name, toc=toc_url, pages=len(pages), medical=report.medical,
                           new=len(report.new), changed=len(report.changed), removed=len(report.removed),
                           unchanged=report.unchanged, failed=report.failed, xlsx=str(xlsx))


if __name__ == "__main__":
    import sys

    print(ingest_web_guideline(sys.argv[1]).model_dump_json(indent=1))
