"""Neo4j faults: the server killed in the middle of a version load; two loads of one guideline at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dkg.errors import ServiceUnavailableError
from dkg.graph import loader
from dkg.services import neo4j
from dkg.settings import Settings
from tests.faults.conftest import kill, wait_until
from tests.faults.synthetic import dump, synthetic_csv, wipe

pytestmark = [pytest.mark.services, pytest.mark.slow]


def _load_is_writing(settings: Settings) -> bool:
    with neo4j.open_driver(settings) as driver:
        records, _, _ = driver.execute_query("SHOW TRANSACTIONS YIELD currentQuery RETURN currentQuery",
                                             database_="neo4j")
    return any("UNWIND $rows" in (r["currentQuery"] or "") for r in records)


def test_neo4j_killed_mid_load_keeps_the_previous_version(fault_neo4j: Settings, tmp_path: Path,
                                                          record: Callable[..., None]) -> None:
    s = fault_neo4j
    v1 = synthetic_csv(tmp_path / "v1", "KIL", "1.0", 300)
    v2 = synthetic_csv(tmp_path / "v2", "KIL", "2.0", 6000, age_shift=1)
    assert loader.load_version(s, v1).loaded
    before = dump(s, "KIL")

    outcome: dict[str, Any] = {}

    def load() -> None:
        try:
            outcome["report"] = loader.load_version(s, v2)
        except Exception as e:
            outcome["error"] = e

    t = threading.Thread(target=load)
    t.start()
    assert wait_until(lambda: _load_is_writing(s), 120), "the load finished before the server could be killed"
    killed_at = kill(neo4j.status(s).pid)
    t.join(120)
    assert isinstance(outcome.get("error"), ServiceUnavailableError), outcome
    assert "is not answering" in str(outcome["error"])

    assert neo4j.start(s).healthy  # recovery replays the log; the open transaction is gone
    recovered_s = time.monotonic() - killed_at
    after = dump(s, "KIL")
    assert after == before  # the previous version intact and current, nothing of 2.0
    assert [v[0] for v in after["versions"]] == ["1.0"]

    report = loader.load_version(s, v2)  # the next run loads it
    assert report.loaded and [v["version"] for v in loader.versions(s, "KIL")] == ["1.0", "2.0"]
    assert loader.counts(s, "KIL")["boxes"] == 12000
    record("Neo4j killed mid version load", "SIGKILL to the Neo4j JVM while the load's UNWIND runs",
           "load failed as transient (ServiceUnavailableError); after restart 1.0 intact and current; "
           "the next load of 2.0 completed", 0, recovered_s)
    wipe(s, "KIL")


@pytest.mark.parametrize("versions", [("1.0", "2.0"), ("2.0", "2.0")], ids=["two-versions", "same-version-twice"])
def test_two_loads_of_one_guideline_at_once_are_serialised(fault_neo4j: Settings, tmp_path: Path,
                                                           versions: tuple[str, str],
                                                           record: Callable[..., None]) -> None:
    s = fault_neo4j
    csvs = {v: synthetic_csv(tmp_path / v, "CON", v, 1500, age_shift=int(float(v))) for v in set(versions)}
    base = synthetic_csv(tmp_path / "base", "CON", "0.9", 1500, age_shift=5)
    wipe(s, "CON")
    assert loader.load_version(s, base).loaded

    results: list[Any] = []
    barrier = threading.Barrier(len(versions))

    def load(v: str) -> None:
        barrier.wait()
        try:
            results.append(loader.load_version(s, csvs[v]))
        except Exception as e:
            results.append(e)

    threads = [threading.Thread(target=load, args=(v,)) for v in versions]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    took = time.monotonic() - t0
    assert all(isinstance(r, loader.LoadReport) for r in results), results
    concurrent = dump(s, "CON")
    order = [v for v, _, _ in concurrent["versions"]]

    # the same loads one after the other, in the order the graph recorded them
    wipe(s, "CON")
    loader.load_version(s, base)
    for v in order[1:]:
        loader.load_version(s, csvs[v])
    sequential = dump(s, "CON")
    assert concurrent == sequential
    if versions[0] == versions[1]:  # the second run found its version current: nothing written twice
        assert order == ["0.9", "2.0"] and sorted(r.loaded for r in results) == [False, True]
    else:
        assert sorted(order[1:]) == ["1.0", "2.0"]
    record(f"two loads of one guideline at once ({' + '.join(versions)})",
           "two threads released by one barrier call load_version together",
           "serialised by the guideline node's write lock; final graph equals the sequential loads in the "
           "recorded order", 0, None, seconds=round(took, 1))
    wipe(s, "CON")
