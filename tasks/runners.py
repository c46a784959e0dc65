"""Task runners: Prefect's thread pool by default, a Dask cluster when configured.

``DKG_DASK_ADDRESS`` (``tcp://host:8786``) sends page- and sentence-level tasks to an existing
Dask scheduler (workers on several machines, see deployments/README.md); ``DKG_DASK_WORKERS=N``
starts a ``LocalCluster`` of N worker processes for the run.
"""

from __future__ import annotations

from typing import Any

from dkg.settings import Settings


def configured_runner(settings: Settings) -> Any | None:
    """A ``DaskTaskRunner`` when Dask is configured, else None (keep the flow's default)."""
    if not settings.dask_address and not settings.dask_workers:
        return None
    from prefect_dask.task_runners import DaskTaskRunner

    if settings.dask_address:
        return DaskTaskRunner(address=settings.dask_address)
    return DaskTaskRunner(cluster_class="distributed.LocalCluster",
                          cluster_kwargs={"n_workers": settings.dask_workers, "threads_per_worker": 1,
                                          "dashboard_address": None})
