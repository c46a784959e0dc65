"""Service start-up: Neo4j cold (new store) and warm (existing store), CoreNLP, Bolt latency."""

from __future__ import annotations

import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.common import Row, free_port
from dkg.services import corenlp, neo4j
from dkg.settings import Settings, load_settings


def _jvm_start_s(settings: Settings) -> float:
    t0 = time.perf_counter()
    subprocess.run([settings.java_cmd, "-version"], capture_output=True, check=True)
    return time.perf_counter() - t0


def _timed_start(settings: Settings, module: object) -> float:
    t0 = time.perf_counter()
    status = module.start(settings)  # type: ignore[attr-defined]
    assert status.healthy and status.started, status
    return time.perf_counter() - t0


def run() -> list[Row]:
    """Start private instances on free ports in a temporary state folder and time them."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="dkg-bench-") as tmp:
        base = load_settings()
        s = load_settings(
            state_dir=Path(tmp), neo4j_port=free_port(), corenlp_port=free_port(),
            neo4j_heap="512m", neo4j_pagecache_mib=64,
        )
        # Share the resolved classpaths with the main state folder: the jars are cached, and
        # fetching them is not what we measure.
        for name in ("neo4j", "corenlp"):
            src = base.state_path / name / "maven"
            if src.exists():
                dst = s.state_path / name / "maven"
                dst.mkdir(parents=True, exist_ok=True)
                for f in src.glob("classpath-*.txt"):
                    (dst / f.name).write_text(f.read_text())
        jvm = statistics.median(_jvm_start_s(s) for _ in range(3))
        try:
            cold = _timed_start(s, neo4j)
            neo4j.stop(s)
            warm = _timed_start(s, neo4j)
            rows.append(Row("neo4j start, new store", cold, "neo4j start, existing store", warm, "s"))
            rows.append(Row("neo4j start, existing store", warm, "bare JVM start", jvm, "s"))
            with neo4j.open_driver(s) as driver, driver.session(database=s.neo4j_database) as session:
                session.run("RETURN 1").consume()
                lat = []
                for _ in range(200):
                    t0 = time.perf_counter()
                    session.run("RETURN 1").consume()
                    lat.append(time.perf_counter() - t0)
            tcp = []
            for _ in range(200):
                t0 = time.perf_counter()
                with socket.create_connection(("127.0.0.1", s.neo4j_port)):
                    pass
                tcp.append(time.perf_counter() - t0)
            rows.append(Row("bolt RETURN 1 p50", statistics.median(lat) * 1e3, "TCP connect p50",
                            statistics.median(tcp) * 1e3, "ms"))
        finally:
            neo4j.stop(s)
        try:
            nlp = _timed_start(s, corenlp)
            rows.append(Row("corenlp start (parser preloaded)", nlp, "bare JVM start", jvm, "s"))
        finally:
            corenlp.stop(s)
    return rows
