"""Faults are injected into services of the suite's own: a second Neo4j and CoreNLP on free ports.

Each fault is real (a process killed by its PID, a port closed, a file system full or
read-only, an endpoint that never answers); the services the rest of the suite shares are never
touched. Every fault test records one row — fault, how it was injected, what happened, data
lost, seconds to recover — in ``.dkg/faults/results.jsonl``; ``scripts/faults_table.py``
prints them as the table kept in docs/operations/faults.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from dkg.services import corenlp, neo4j
from dkg.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / ".dkg" / "faults" / "results.jsonl"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="package")
def fault_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """Settings of the fault services: their own state folder and ports (started on demand)."""
    s = load_settings(state_dir=tmp_path_factory.mktemp("fault-state"), neo4j_port=free_port(),
                      corenlp_port=free_port(), neo4j_retry_s=3.0)
    yield s
    neo4j.stop(s)
    corenlp.stop(s)


@pytest.fixture(scope="package")
def fault_neo4j(fault_settings: Settings) -> Settings:
    assert neo4j.start(fault_settings).healthy
    return fault_settings


@pytest.fixture(scope="package")
def fault_corenlp(fault_settings: Settings) -> Settings:
    assert corenlp.start(fault_settings).healthy
    return fault_settings


def kill(pid: int | None) -> float:
    """SIGKILL a process and wait until it is gone; the moment of the kill (monotonic)."""
    assert pid is not None
    t = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.Process(pid).wait(30)
    return t


def wait_until(cond: Callable[[], bool], timeout_s: float, step_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step_s)
    return False


@pytest.fixture
def record() -> Callable[..., None]:
    """Append one row to the fault table."""
    def add(fault: str, injected: str, outcome: str, data_lost: int, recovery_s: float | None,
            **extra: Any) -> None:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        row = {"fault": fault, "injected": injected, "outcome": outcome, "data_lost": data_lost,
               "recovery_s": None if recovery_s is None else round(recovery_s, 1), **extra}
        with open(RESULTS, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
    return add
