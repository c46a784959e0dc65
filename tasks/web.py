"""Web-guideline tasks: crawl (retried on network errors), process and index, export, publish."""

from __future__ import annotations

from pathlib import Path

from prefect import get_run_logger, task
from prefect.artifacts import create_link_artifact, create_table_artifact

from dkg.errors import DkgError
from dkg.settings import load_settings
from dkg.web.crawl import CrawlReport, Page, crawl, export_xlsx
from dkg.web.rag import Site, load_site, now, process_pages, save_site, site_name
from tasks.common import retry_transient


@task(name="previous-crawl")
def previous_task(toc: str, name: str | None) -> Site | None:
    try:
        return load_site(load_settings(), name or site_name(toc))
    except DkgError:
        return None


@task(name="crawl-site", retries=2, retry_delay_seconds=[10, 30], retry_condition_fn=retry_transient)
def crawl_task(toc: str, previous: Site | None) -> tuple[dict[str, Page], CrawlReport]:
    """Every page the table of contents links to; unchanged pages keep their record."""
    logger = get_run_logger()

    def progress(i: int, n: int) -> None:
        if i % 25 == 0 or i == n:
            logger.info("fetched %d/%d pages", i, n)

    prev = {p.url: p for p in previous.pages} if previous else None
    return crawl(load_settings(), toc, prev, progress=progress)


@task(name="process-and-index")
def index_task(toc: str, name: str | None, pages: dict[str, Page], previous: Site | None,
               report: CrawlReport) -> Site:
    """Nouns (MeCab) or stems for new and changed pages only, then the site is saved as the default."""
    processed = process_pages(pages, previous, set(report.new) | set(report.changed))
    site = Site(name=name or site_name(toc), toc=toc, crawled_at=now(), pages=list(pages.values()),
                processed=processed, title=report.title)
    save_site(load_settings(), site)
    return site


@task(name="export-url-list")
def export_task(site: Site) -> Path:
    """The URL list with its medical / non-medical classification, as a spreadsheet."""
    path = load_settings().state_path / "web" / f"{site.name}.xlsx"
    export_xlsx(site.pages, path)
    create_link_artifact(key="web-url-list", link=path.resolve().as_uri(), link_text=f"{site.name} URL list (xlsx)")
    return path


@task(name="publish-crawl-report")
def publish_task(site: Site, report: CrawlReport) -> None:
    rows = [{"what": k, "count": v} for k, v in (("links", report.links), ("fetched", report.fetched),
                                                 ("medical", report.medical), ("new", len(report.new)),
                                                 ("changed", len(report.changed)), ("removed", len(report.removed)),
                                                 ("unchanged", report.unchanged), ("failed", len(report.failed)))]
    create_table_artifact(key="web-crawl", table=rows, description=f"{site.name}: {report.toc}")
