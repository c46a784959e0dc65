"""Helpers shared by the task modules."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from prefect.client.schemas.objects import State, TaskRun

from dkg import cluster
from dkg.errors import is_transient


def retry_transient(task: Any, task_run: TaskRun, state: State[Any]) -> bool:
    """``retry_condition_fn``: retry only errors marked transient (a corrupt file fails at once)."""
    try:
        state.result()
    except Exception as exc:  # the failed state re-raises the task's exception
        return is_transient(exc)
    return False


def rename_run(name: str, tags: list[str] | None = None) -> None:
    """Give the current flow run a name a data engineer recognises (guideline and version), once they are known.

    ``tags`` (e.g. ``guideline:ALL``) are added to the run's tags, so the UI can filter runs by guideline.
    Best effort: a run without an API (a plain function call) or a refused update keeps its first name.
    """
    from prefect.client.orchestration import get_client
    from prefect.context import FlowRunContext
    from prefect.logging import get_run_logger

    ctx = FlowRunContext.get()
    if ctx is None or ctx.flow_run is None:
        return
    try:
        with get_client(sync_client=True) as client:
            new_tags = sorted({*ctx.flow_run.tags, *tags}) if tags else None
            client.update_flow_run(ctx.flow_run.id, name=name, tags=new_tags)
    except Exception as e:  # the name is cosmetic: never fail a run over it
        get_run_logger().debug("could not rename the flow run to %r: %s", name, e)


CORENLP_LIMIT = cluster.CORENLP_LIMIT
"""Global concurrency limit of CoreNLP parses (``dkg cluster up`` sets it to the server's threads; absent, no limit)."""


def write_limit_name(code: str) -> str:
    """The global concurrency limit that serialises Neo4j writes of one guideline."""
    return f"neo4j-write-{code}"


@contextmanager
def guideline_write_slot(code: str, timeout_s: float = 1800.0) -> Iterator[None]:
    """Hold the guideline's Neo4j write slot (a global concurrency limit of 1, made on first use): two flow
    runs of one guideline on different workers load one after the other, different guidelines in parallel.
    The loader also takes the guideline's lock inside Neo4j, so a run outside Prefect is safe too."""
    from prefect.client.orchestration import get_client
    from prefect.concurrency.sync import concurrency

    name = write_limit_name(code)
    with get_client(sync_client=True) as client:
        client.upsert_global_concurrency_limit_by_name(name, 1)
    with concurrency(name, occupy=1, timeout_seconds=timeout_s, strict=True):
        yield
