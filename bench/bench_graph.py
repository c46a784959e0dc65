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


def synthetic(code: str, n: int, changed: float = 0.0, seed: int = 5):  # type: ignore[no-untyped-def]
    """A guideline of ``n`` boxes as a tree (each decision box branches to two boxes, pages of 40 boxes,
    categorical and numeric constraints); ``changed``: the share of decision boxes whose constraints and
    text differ (what a new version of a large guideline looks like)."""
    import random

    from dkg.graph.model import BoxState, EdgeState, VersionState

    rng = random.Random(seed)
    edited = set(rng.sample(range(1, n, 2), int(changed * (n // 2))))
    boxes = {}
    for i in range(n):
        bump = 5 if i in edited else 0
        cons = ([{"attr": "age", "op": ">=", "value": (i * 7) % 80 + bump, "unit": "years"},
                 {"attr": f"marker_{i % 13}", "op": "=", "value": "positive" if (i + bump) % 2 else "negative"}]
                if i % 2 else [])
        text = f"Box {i}{' (revised)' if bump else ''}"
        boxes[f"s{i}"] = BoxState(f"s{i}", f"SYN-{i // 40}", text, text, "decision" if i % 2 else "action",
                                  json.dumps(cons))
    edges = {EdgeState(f"s{i}", f"s{c}", "ARROW", "") for i in range(n) for c in (2 * i + 1, 2 * i + 2) if c < n}
    return VersionState(code, "synthetic", "2.0" if changed else "1.0", "bench", boxes, edges)


def _update_vs_rebuild(settings, v1, v2, code: str, repeat: int = 3) -> tuple[float, float, int, int]:  # type: ignore[no-untyped-def]
    """Median seconds and the writes of v1→v2 in place, and of a fresh load of v2 (the graph wiped before)."""
    import statistics

    from dkg.graph import loader

    t_upd, t_full = [], []
    for _ in range(repeat):
        _wipe(settings, code)
        loader.load_version(settings, v1)
        t0 = time.perf_counter()
        upd = loader.load_version(settings, v2)
        t_upd.append(time.perf_counter() - t0)
        _wipe(settings, code)
        t0 = time.perf_counter()
        full = loader.load_version(settings, v2)
        t_full.append(time.perf_counter() - t0)
    _wipe(settings, code)
    return statistics.median(t_upd), statistics.median(t_full), sum(upd.writes.values()), sum(full.writes.values())


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
    loader.load_version(settings, v1)  # warm: schema, driver, vocabulary
    t_update, t_full, w_upd, w_full = _update_vs_rebuild(settings, v1, v2, "BENCHALL")
    rows.append(Row("v1→v2 in-place update: writes", w_upd, "full rebuild of v2: writes", w_full, "n"))
    rows.append(Row("v1→v2 in-place update: seconds", t_update, "full rebuild of v2: seconds", t_full, "s"))
    big1, big2 = synthetic("SYN2K", 2000), synthetic("SYN2K", 2000, changed=0.05)
    t_update, t_full, w_upd, w_full = _update_vs_rebuild(settings, big1, big2, "SYN2K")
    rows.append(Row("2,000 boxes, 5 % changed: update s", t_update, "full rebuild of v2: seconds", t_full, "s"))
    rows.append(Row("2,000 boxes, 5 % changed: writes", w_upd, "full rebuild of v2: writes", w_full, "n"))

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
