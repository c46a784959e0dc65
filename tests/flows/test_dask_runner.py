"""Page-level fan-out on a Dask LocalCluster with two workers gives the same result as the default runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from dkg.settings import load_settings
from tasks.runners import configured_runner
from tests.pdf_support import reference_pdfs

pytestmark = [pytest.mark.slow]


def test_ingestion_on_a_two_worker_local_cluster_matches_the_default(prefect_harness: None, tmp_path: Path) -> None:
    from flows.ingest_guideline import ingest_guideline

    pdf = next(p for p in reference_pdfs() if p.stem == "KID-1.2023")
    # refresh_cache: both runs really parse every page (no result comes from the page cache)
    default = ingest_guideline(str(pdf), str(tmp_path / "default"), refresh_cache=True)
    runner = configured_runner(load_settings(dask_workers=2))
    assert runner is not None and type(runner).__name__ == "DaskTaskRunner"
    on_dask = ingest_guideline.with_options(task_runner=runner)(str(pdf), str(tmp_path / "dask"), refresh_cache=True)
    assert on_dask.model_dump(exclude={"edges_csv", "graph_json"}) == default.model_dump(
        exclude={"edges_csv", "graph_json"})
    assert Path(on_dask.edges_csv).read_text() == Path(default.edges_csv).read_text()
    assert configured_runner(load_settings()) is None  # not configured: Prefect's default
