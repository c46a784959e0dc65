"""Helpers shared by the task modules."""

from __future__ import annotations

from typing import Any

from prefect.client.schemas.objects import State, TaskRun

from dkg.errors import is_transient


def retry_transient(task: Any, task_run: TaskRun, state: State[Any]) -> bool:
    """``retry_condition_fn``: retry only errors marked transient (a corrupt file fails at once)."""
    try:
        state.result()
    except Exception as exc:  # the failed state re-raises the task's exception
        return is_transient(exc)
    return False
