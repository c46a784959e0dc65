"""DKG loads: in-place update vs full rebuild, and bulk throughput vs a naive per-row loader."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bench.common import Row

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference" / "guidelines"


def _state_from_truth(truth_path: Path, code: str):  # type: ignore[no-untyped-def]
    from dkg.graph.model import BoxState, EdgeState, VersionState

    t = json.loads(truth_path.read_text())
    boxes = {n["id"]: BoxState(n["id"], n["page"], n["text_resolved"], n["text"],
                               "decision" if n["constraints"] else "action", json.dumps(n["constraints"]))
             for n in t["nodes"]}
    edges = {EdgeState(e["from"], e["to"], "ARROW", e.get("label") or "") for e in t["edges"]}
    return VersionState(code, t["guideline"]["name"], t["guideline"]["version"], "bench", boxes, edges)


def _wipe(settings, code: str) -> None:  # type: ignore[no-untyped-def]
    from dkg.services.neo4j import open_driver

    with open_driver(settings) as d:
        d.execute_query("MATCH (n) WHERE n.code = $c DETACH DELETE n", c=code)


def run() -> list[Row]:
    """(a) rebuild v2 vs (b) update v1→v2; (c) 10,000-box load vs one statement per row."""
    from dkg.graph import loader
    from dkg.graph.model import BoxState, EdgeState, VersionState
    from dkg.services.neo4j import open_driver
    from dkg.settings import load_settings

    settings = load_settings()
    rows: list[Row] = []
    v1 = _state_from_truth(REFERENCE / "ALL" / "1.2022" / "truth.json", "BENCHALL")
    v2 = _state_from_truth(REFERENCE / "ALL" / "2.2022" / "truth.json", "BENCHALL")
    _wipe(settings, "BENCHALL")
    loader.load_version(settings, v1)
    t0 = time.perf_counter()
    upd = loader.load_version(settings, v2)
    t_update = time.perf_counter() - t0
    _wipe(settings, "BENCHALL")
    t0 = time.perf_counter()
    full = loader.load_version(settings, v2)
    t_full = time.perf_counter() - t0
    _wipe(settings, "BENCHALL")
    w_upd = sum(upd.writes.values())
    w_full = sum(full.writes.values())
    rows.append(Row("v1→v2 in-place update: writes", w_upd, "full rebuild of v2: writes", w_full, "n"))
    rows.append(Row("v1→v2 in-place update: seconds", t_update, "full rebuild of v2: seconds", t_full, "s"))

    n = 10_000
    boxes = {f"b{i}": BoxState(f"b{i}", f"SYN-{i // 100}", f"Box {i}", f"Box {i}", "decision" if i % 2 else "action",
                               json.dumps([{"attr": "age", "op": ">=", "value": i % 90, "unit": "years"}]
                                          if i % 2 else []))
             for i in range(n)}
    edges = {EdgeState(f"b{i}", f"b{i + 1}", "ARROW", "") for i in range(n - 1)}
    syn = VersionState("SYN10K", "synthetic", "1.0", "bench", boxes, edges)
    _wipe(settings, "SYN10K")
    t0 = time.perf_counter()
    loader.load_version(settings, syn)
    bulk = (n + len(edges)) / (time.perf_counter() - t0)
    _wipe(settings, "SYN10K")
    # naive baseline on a sample (it is slow): one auto-commit statement per node and per relation
    sample = 1000
    with open_driver(settings) as driver, driver.session(database=settings.neo4j_database) as s:
        t0 = time.perf_counter()
        for i in range(sample):
            b = boxes[f"b{i}"]
            s.run("MERGE (x:Box {uid: $uid}) SET x.code = 'SYNNAIVE', x.text = $t, x.page = $p",
                  uid=f"naive-{b.uid}", t=b.text, p=b.page).consume()
        for i in range(sample - 1):
            s.run("MATCH (a:Box {uid: $a}), (b:Box {uid: $b}) MERGE (a)-[:ARROW]->(b)",
                  a=f"naive-b{i}", b=f"naive-b{i + 1}").consume()
        naive = (2 * sample - 1) / (time.perf_counter() - t0)
        s.run("MATCH (x:Box {code: 'SYNNAIVE'}) DETACH DELETE x").consume()
    rows.append(Row("10,000-box load: nodes+relations/s", bulk, "one statement per row: nodes+relations/s",
                    naive, "/s"))
    return rows
