"""CoreNLP faults: the server killed in the middle of an extraction, and a server that stays down."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prefect import flow
from prefect.client.orchestration import get_client

from dkg.constraints.parse import Parse, parse_texts
from dkg.services import corenlp
from dkg.settings import Settings
from tasks.constraints import parse_task
from tests.faults.conftest import kill, wait_until
from tests.pdf_support import ROOT

pytestmark = [pytest.mark.services, pytest.mark.slow]


def _box_texts() -> list[str]:
    texts: dict[str, None] = {}
    for truth in sorted((ROOT.parent / "shared" / "reference" / "guidelines").glob("*/*/truth.json")):
        for node in json.loads(truth.read_text(encoding="utf-8"))["nodes"]:
            texts.setdefault(str(node["text"]), None)
    return list(texts)


def _env(monkeypatch: pytest.MonkeyPatch, s: Settings) -> None:
    """Tasks read their settings from the environment: point them at the fault services."""
    monkeypatch.setenv("DKG_STATE_DIR", str(s.state_path))
    monkeypatch.setenv("DKG_CORENLP_PORT", str(s.corenlp_port))
    monkeypatch.setenv("DKG_NEO4J_PORT", str(s.neo4j_port))


def _cached(cache: Path) -> int:
    path = cache / "corenlp.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(str(path)) as db:
        try:
            return int(db.execute("SELECT count(*) FROM parse").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def _tree(p: Parse) -> str:
    return p.tree.bracketed(p.tokens)


@flow(name="fault-extract")
def _extract(texts: list[str]) -> dict[str, Parse]:
    return parse_task(texts)


async def _task_run_count(flow_run_id: Any) -> int:
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    async with get_client() as client:
        runs = await client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
    return max(r.run_count for r in runs if r.name.startswith("parse-box-texts"))


def test_corenlp_killed_during_extraction_is_retried_until_it_is_back(
        fault_corenlp: Settings, prefect_harness: None, monkeypatch: pytest.MonkeyPatch,
        record: Callable[..., None]) -> None:
    import asyncio

    s = fault_corenlp
    texts = _box_texts()
    assert len(texts) >= 100
    clean = parse_texts(s, texts)  # no cache: what an undisturbed run parses
    # the run parses into a cache folder of its own: the undisturbed run's cache (a file another connection of this
    # process may still hold open) must not answer for it
    cache = s.state_path / "cache-under-fault"
    shutil.rmtree(cache, ignore_errors=True)
    _env(monkeypatch, s)
    monkeypatch.setenv("DKG_CACHE_DIR", str(cache))

    outcome: dict[str, Any] = {}
    t = threading.Thread(target=lambda: outcome.update(state=_extract(texts, return_state=True)))
    t.start()
    assert wait_until(lambda: _cached(cache) >= 20, 120), "the extraction did not start"
    killed_at = kill(corenlp.status(s).pid)
    done_before = _cached(cache)
    assert done_before < len(texts), "the extraction finished before CoreNLP could be killed"
    time.sleep(2.0)  # down for a while: the first retry (after 5 s) may still find it starting
    assert corenlp.start(s).healthy
    t.join(300)
    recovered_s = time.monotonic() - killed_at
    state = outcome["state"]
    assert state.is_completed(), state
    result = state.result()
    assert [_tree(result[x]) for x in texts] == [_tree(p) for p in clean]
    runs = asyncio.run(_task_run_count(state.state_details.flow_run_id))
    assert runs >= 2  # failed on the kill, retried with back-off
    record("CoreNLP killed during extraction", f"SIGKILL to the CoreNLP JVM after {done_before} of "
           f"{len(texts)} texts; restarted 2 s later", f"parse task retried ({runs} runs), completed; "
           "parses equal an undisturbed run; parses before the kill came from the cache", 0, recovered_s)


def test_corenlp_that_stays_down_fails_the_run_naming_the_cause(
        fault_settings: Settings, prefect_harness: None, monkeypatch: pytest.MonkeyPatch,
        record: Callable[..., None]) -> None:
    s = fault_settings
    corenlp.stop(s)  # the port is closed now
    _env(monkeypatch, s)
    texts = ["Age 65 years or older and no substantial comorbidities (never parsed before)"]

    @flow(name="fault-extract-down")
    def extract_down(texts: list[str]) -> dict[str, Parse]:
        return parse_task.with_options(retry_delay_seconds=[1, 1, 1])(texts)

    t0 = time.monotonic()
    state = extract_down(texts, return_state=True)
    took = time.monotonic() - t0
    assert state.is_failed()
    with pytest.raises(Exception, match=rf"CoreNLP at http://127\.0\.0\.1:{s.corenlp_port} failed to parse"):
        state.result()
    record("CoreNLP down for good", "server stopped, its port closed",
           "parse task retried 3 times, then the run failed naming the CoreNLP address", 0, None,
           seconds=round(took, 1))
