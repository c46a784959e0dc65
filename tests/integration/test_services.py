"""The real Neo4j and CoreNLP, started by the project."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from dkg.errors import ConfigError, ServiceError
from dkg.services import corenlp, neo4j, services_up
from dkg.settings import Settings, load_settings

pytestmark = pytest.mark.services
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_up_is_idempotent(services: Settings) -> None:
    before = {s.name: s.pid for s in services_up(services)}
    again = services_up(services)
    assert all(s.healthy and not s.started for s in again)
    assert {s.name: s.pid for s in again} == before
    assert all(pid is not None for pid in before.values())


def test_bolt_round_trip_writes_and_reads(services: Settings) -> None:
    with neo4j.open_driver(services) as driver, driver.session(database=services.neo4j_database) as session:
        tx = session.begin_transaction()
        tx.run("CREATE (:BoltProbe {value: $v})", v="round-trip")
        got = tx.run("MATCH (p:BoltProbe) RETURN p.value AS v").single()
        tx.rollback()
        assert got is not None and got["v"] == "round-trip"
        left = session.run("MATCH (p:BoltProbe) RETURN count(p) AS n").single()
        assert left is not None and left["n"] == 0


def test_local_server_keeps_the_configured_transaction_logs(services: Settings) -> None:
    """The retention reaches the engine (Neo4j's own default keeps every load's logs two days)."""
    if services.uses_external_neo4j:
        pytest.skip("an external server keeps its own configuration")
    with neo4j.open_driver(services) as driver:
        records, _, _ = driver.execute_query(
            "SHOW SETTINGS YIELD name, value WHERE name = 'db.tx_log.rotation.retention_policy' RETURN value",
            database_="system")
    assert [r["value"] for r in records] == [services.neo4j_tx_log_retention]


def test_corenlp_constituency_parse_through_stanza(services: Settings) -> None:
    trees = corenlp.constituency_parse(
        services,
        "adult patients should be less than 65 years of age and without substantial comorbidities",
    )
    assert len(trees) == 1
    assert "(QP (JJR less) (IN than) (CD 65))" in trees[0]
    assert trees[0].startswith("(ROOT")


def test_local_password_file_is_private(services: Settings) -> None:
    path = neo4j.password_file(services)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(path.read_text().strip()) >= 24


def test_port_taken_by_another_process_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        port = blocker.getsockname()[1]
        s = load_settings(state_dir=tmp_path, neo4j_port=port)
        expected = rf"port {port} on 127\.0\.0\.1 is already in use.*DKG_NEO4J_PORT"
        with pytest.raises(ServiceError, match=expected):
            neo4j.start(s)


def test_missing_java_is_a_clear_error(tmp_path: Path) -> None:
    s = load_settings(state_dir=tmp_path, neo4j_port=_free_port(), java_cmd="/nonexistent/java")
    with pytest.raises(ConfigError, match=r"Java 17\+ not found.*openjdk-17"):
        neo4j.start(s)


def test_cli_prints_one_line_error_and_exits_nonzero(tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        port = blocker.getsockname()[1]
        env = {**os.environ, "DKG_STATE_DIR": str(tmp_path), "DKG_NEO4J_PORT": str(port)}
        proc = subprocess.run(
            [sys.executable, "-m", "dkg_cli.main", "services", "up"],
            capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False,
        )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert f"error: port {port} on 127.0.0.1 is already in use" in proc.stderr


@pytest.fixture()
def private_neo4j(tmp_path: Path) -> Iterator[Settings]:
    s = load_settings(state_dir=tmp_path / "state", neo4j_port=_free_port(), neo4j_pagecache_mib=64,
                      neo4j_heap="512m")
    yield s
    neo4j.stop(s)


@pytest.mark.slow
def test_neo4j_lifecycle_restart_keeps_data_and_down_leaves_nothing(private_neo4j: Settings) -> None:
    s = private_neo4j
    first = neo4j.start(s)
    assert first.started and first.healthy and first.pid
    assert first.version is not None and first.version.startswith("5.26")
    second = neo4j.start(s)
    assert not second.started and second.pid == first.pid

    with neo4j.open_driver(s) as driver:
        driver.execute_query("CREATE (:Persisted {k: 'kept'})", database_=s.neo4j_database)

    assert neo4j.stop(s) is True
    assert not psutil.pid_exists(first.pid) or psutil.Process(first.pid).status() == psutil.STATUS_ZOMBIE
    assert not neo4j.status(s).healthy
    assert neo4j.stop(s) is False  # nothing of ours left to stop

    third = neo4j.start(s)
    assert third.started and third.pid != first.pid
    with neo4j.open_driver(s) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (p:Persisted) RETURN p.k AS k", database_=s.neo4j_database
        )
    assert [r["k"] for r in records] == ["kept"]


def test_failed_jar_download_is_a_clear_error(tmp_path: Path) -> None:
    failing_mvn = tmp_path / "mvn"
    failing_mvn.write_text("#!/bin/sh\necho '[ERROR] Could not transfer artifact: network is unreachable'\nexit 1\n")
    failing_mvn.chmod(0o755)
    s = load_settings(state_dir=tmp_path / "state", neo4j_port=_free_port(), maven_cmd=str(failing_mvn))
    expected = r"Maven could not fetch the jars for neo4j-pom\.xml.*network is unreachable"
    with pytest.raises(ServiceError, match=expected):
        neo4j.start(s)


@pytest.mark.slow
def test_start_timeout_is_a_clear_error_and_leaves_no_process(tmp_path: Path) -> None:
    s = load_settings(state_dir=tmp_path / "state", neo4j_port=_free_port(), service_start_timeout_s=1.0,
                      neo4j_heap="512m", neo4j_pagecache_mib=64)
    with pytest.raises(ServiceError, match=r"Neo4j did not (start|answer).* within 1 s"):
        neo4j.start(s)
    assert neo4j.stop(s) is False  # nothing of ours left running
    assert not [p for p in psutil.process_iter(["cmdline"])
                if f"dkg.service=neo4j:{s.state_path}" in " ".join(p.info["cmdline"] or [])]


def _listening(pid: int) -> set[str]:
    return {c.laddr.ip for c in psutil.Process(pid).net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN}


def test_neo4j_listens_on_loopback_only(services: Settings) -> None:
    pid = neo4j.status(services).pid
    assert pid is not None
    assert _listening(pid) <= {"127.0.0.1", "::ffff:127.0.0.1"}, _listening(pid)


def test_corenlp_refuses_every_client_but_127_0_0_1(services: Settings) -> None:
    """CoreNLP's server cannot choose its interface; its block list refuses other client addresses."""
    import http.client

    def ask(source: str) -> int:
        c = http.client.HTTPConnection("127.0.0.1", services.corenlp_port, timeout=30, source_address=(source, 0))
        try:
            c.request("POST", "/?properties=%7B%22annotators%22%3A%22tokenize%22%7D", body=b"Age 65 or older.")
            return c.getresponse().status
        finally:
            c.close()

    assert ask("127.0.0.1") == 200
    assert ask("127.0.0.2") == 401  # another address (loopback here; any LAN address alike) is refused
