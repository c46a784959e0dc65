"""Orchestration faults: the Prefect API server restarted, and the worker killed, in the middle of a watcher run.

A real topology, as a team runs it (deployments/README.md): ``prefect server start`` on its own
SQLite database, the project's ``prefect.yaml`` deployed with ``prefect deploy``, one ``prefect
worker start`` process, the zombie automation of ``deployments/`` and flow-run heartbeats every
30 s. The watcher polls a folder holding a guideline PDF and runs build-dkg (ingest, CoreNLP, GX,
Neo4j load) in a flow-run process the worker starts. The guarantees after each fault: the run
does not stay Running (it ends Crashed or Failed, or completes if the fault did not reach it), the
next poll processes the document unless the run completed, and nothing is recorded twice — the
watcher remembers the PDF's hash once, the graph holds the version once, a further poll runs
nothing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import yaml

from dkg.graph import loader
from dkg.services import corenlp, neo4j
from dkg.settings import Settings
from dkg.watch import load_state
from tests.faults.conftest import free_port, wait_until
from tests.faults.prefect_topology import BIN, ROOT, TERMINAL, Topology, topology, topology_env
from tests.faults.synthetic import wipe
from tests.pdf_support import reference_pdfs

pytestmark = [pytest.mark.services, pytest.mark.slow]

DEPLOYMENT = "watch-guidelines-nightly"
HEARTBEAT_S = 30  # Prefect's minimum
ZOMBIE_WITHIN_S = 45  # the shipped automation waits 90 s; a shorter window keeps the test short


@pytest.fixture(scope="module")
def topo(fault_neo4j: Settings, fault_corenlp: Settings,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Topology, str]]:
    s = fault_neo4j
    # an earlier fault test may have stopped either service for good: the watcher needs both
    assert neo4j.start(s).healthy and corenlp.start(s).healthy
    env = topology_env(s.state_path, tmp_path_factory.mktemp("prefect-home"), {
        "DKG_NEO4J_PORT": str(s.neo4j_port), "DKG_CORENLP_PORT": str(s.corenlp_port),
        "DKG_NEO4J_RETRY_S": "5", "PREFECT_FLOWS_HEARTBEAT_FREQUENCY": str(HEARTBEAT_S),
    })
    with topology(Path(env["PREFECT_HOME"]), free_port(), env) as t:
        t.start_server()
        automation = yaml.safe_load((ROOT / "deployments" / "automation-crash-zombies.yaml").read_text())
        automation["trigger"]["within"] = ZOMBIE_WITHIN_S
        action = automation["actions"][0]
        action["message"] = action["message"].replace("90 s", f"{ZOMBIE_WITHIN_S} s")
        created = subprocess.run([str(BIN / "prefect"), "automation", "create", "--from-json",
                                  json.dumps(automation)], env={**t.env, "PREFECT_API_URL": t.api},
                                 capture_output=True, text=True, timeout=120)
        assert created.returncode == 0, created.stdout + created.stderr
        deployment_id = t.deploy(DEPLOYMENT)
        t.start_worker()
        yield t, deployment_id


def _inbox(tmp_path: Path, pdf_stem: str) -> tuple[Path, str]:
    """A folder source holding one reference PDF; the sources file and the PDF's hash."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    pdf = next(p for p in reference_pdfs() if p.stem == pdf_stem)
    shutil.copy(pdf, inbox / pdf.name)
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - name: {tmp_path.name}\n    kind: folder\n    location: {inbox}\n")
    return sources, hashlib.sha256(pdf.read_bytes()).hexdigest()


def _builds(t: Topology, since: str = "") -> list[dict[str, Any]]:
    """build-dkg flow runs the server knows of, created at or after ``since`` (ISO; all when empty)."""
    runs: list[dict[str, Any]] = t.call("POST", "/flow_runs/filter",
                                        {"flows": {"name": {"any_": ["build-dkg"]}}, "limit": 200})
    return [r for r in runs if r["created"] >= since]


# build-dkg runs as a subflow in the watcher's own flow-run process (the deployment's fan_out, which sends it to a
# build-dkg deployment, is covered by tests/flows/test_cluster_topology.py): one process for the faults to hit
WATCH = {"full_pipeline": False, "fan_out": False}


def _poll(t: Topology, deployment_id: str, sources: Path, timeout_s: float = 600) -> tuple[str, str]:
    run = t.run(deployment_id, {"sources_file": str(sources), **WATCH})
    return run, t.wait_state(run, TERMINAL, timeout_s)


def _fault(t: Topology, deployment_id: str, tmp_path: Path, settings: Settings, inject: Callable[[], float],
           restore: Callable[[], None], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Start a watcher run, inject the fault once the run is parsing the PDF, restore, then poll again."""
    code, version = "KID", "1.2023"
    wipe(settings, code)
    sources, sha = _inbox(tmp_path, f"{code}-{version}")
    run = t.run(deployment_id, {"sources_file": str(sources), **WATCH}, env)
    created = t.flow_run(run)["created"]  # builds are counted from here: runs of earlier tests registered late
    # (a process killed while the server was away) are not this test's
    assert wait_until(lambda: bool(t.task_runs("parse-page%", started_after=created)), 300, 0.5), \
        t.log_tail("worker", 40)
    injected_at = inject()
    restore()
    first = t.wait_state(run, TERMINAL, 600)
    _, second = _poll(t, deployment_id, sources)
    recovered_s = time.monotonic() - injected_at
    _, third = _poll(t, deployment_id, sources)
    seen = load_state(settings.state_path).get(tmp_path.name)
    versions = [v["version"] for v in loader.versions(settings, code)]
    first_state = t.flow_run(run)["state"]  # after the polls: a run marked Crashed may have finished since
    out = {"first": first, "later": first_state["type"],
           "first_message": f"{first_state['name']}: {first_state['message'] or ''}", "second": second,
           "third": third, "hashes": seen.hashes if seen else [], "sha": sha, "versions": versions,
           "builds": len(builds := _builds(t, created)), "recovered_s": recovered_s,
           "build_runs": [(b["name"], b["state_type"], b["created"]) for b in builds]}
    wipe(settings, code)
    return out


MAX_DOWN_S = 300
# Prefect's default is 5 (about a minute a call): a shorter budget keeps the test short. Not 1: under CI load the
# server's SQLite is sometimes busy for a moment and answers 503, and a single retry (about 2 s) made the run fail
# before the fault was injected; 3 retries (about 14 s a call) ride that through and still give up in the outage.
CLIENT_RETRIES = 3


def test_api_server_down_until_the_flow_run_process_gives_up(topo: tuple[Topology, str], fault_neo4j: Settings,
                                                             tmp_path: Path, record: Callable[..., None]) -> None:
    """The server is killed while the run parses the PDF and stays down until the flow-run process has
    ended. The process works on without the API (task states and heartbeats are buffered events) until it
    must report to it (an artifact, the next subflow, its final state); Prefect's client then retries and
    gives up, so the process can never report its end. With the default retry budget (5 tries, about a
    minute for each call) a shorter outage may be ridden through (20 s and once 80 s were seen so), and a
    long one keeps the process going for minutes (445 s measured) while each call runs out its retries:
    which one happens depends on timing. So the run under test gets a budget of three retries (its own
    ``PREFECT_CLIENT_MAX_RETRIES`` through the run's job variables; the worker keeps the default) and the
    outage lasts until its process has given up. Then: the run must not stay Running, the next poll
    processes the PDF again, nothing is recorded twice."""
    t, deployment_id = topo
    down: dict[str, float] = {}

    def inject() -> float:
        flow_runs = t.flow_run_processes()
        assert flow_runs, t.log_tail("worker", 40)
        at = t.kill("server")
        _, alive = psutil.wait_procs(flow_runs, timeout=MAX_DOWN_S)
        down["s"] = time.monotonic() - at
        assert not alive, f"the flow-run process still runs {MAX_DOWN_S} s into the outage:\n{t.log_tail('worker', 40)}"
        return at

    out = _fault(t, deployment_id, tmp_path, fault_neo4j, inject, lambda: t.start_server() and None,
                 {"PREFECT_CLIENT_MAX_RETRIES": str(CLIENT_RETRIES)})
    out["down_s"] = down["s"]
    print(json.dumps(out, indent=1))
    assert out["first"] in {"CRASHED", "FAILED"}, out  # it could not report Completed to a server that was down
    assert out["later"] == out["first"]  # and nothing reported otherwise since
    assert out["second"] == "COMPLETED" and out["third"] == "COMPLETED"
    assert out["hashes"] == [out["sha"]]  # remembered once
    assert out["versions"] == ["1.2023"]  # loaded once
    assert out["builds"] == 2  # processed again by the next poll; the third poll built nothing
    record("Prefect API server down during a watcher run",
           f"SIGKILL to `prefect server start` while the run parses the PDF; restarted when the flow-run process "
           f"(client retries: {CLIENT_RETRIES}) had given up, {out['down_s']:.0f} s later",
           f"run marked {out['first'].capitalize()} ({out['first_message'].partition(': ')[2][:80]}); the next poll "
           "processed the PDF again; hash remembered once, version loaded once", 0, out["recovered_s"])


def test_worker_killed_during_a_watcher_run(topo: tuple[Topology, str], fault_neo4j: Settings,
                                            tmp_path: Path, record: Callable[..., None]) -> None:
    t, deployment_id = topo

    def inject() -> float:
        return t.kill("worker", with_children=True)  # the worker and the flow-run process it started

    out = _fault(t, deployment_id, tmp_path, fault_neo4j, inject, t.start_worker)
    print(json.dumps(out, indent=1))
    assert out["first"] == "CRASHED", out  # nobody is left to report it: the zombie automation marks it
    assert "No heartbeat" in (out["first_message"] or "")
    assert out["second"] == "COMPLETED" and out["third"] == "COMPLETED"
    assert out["hashes"] == [out["sha"]]
    assert out["versions"] == ["1.2023"]
    assert out["builds"] == 2
    record("worker killed mid-flow", "SIGKILL to `prefect worker start` and its flow-run process while the "
           "run parses the PDF; a new worker started", "run marked Crashed by the heartbeat automation; the next "
           "poll processed the PDF again; hash remembered once, version loaded once", 0, out["recovered_s"])
