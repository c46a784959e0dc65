"""The production topology (PostgreSQL, `prefect server start`, two workers, a Dask scheduler with two worker
processes) runs the watcher over many guidelines and ends with the graph, the QA dataset and the model of
a sequential run; `dkg cluster down` leaves no process behind."""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import socket
import string
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from dkg import cluster
from dkg.graph import loader
from dkg.pdf.synthetic import synthetic_set
from dkg.settings import Settings, load_settings
from tests.browser import chromium, shot
from tests.integration.test_graph import _wipe
from tests.pdf_support import REFERENCE

pytestmark = [pytest.mark.slow]

GUIDELINES = 1  # a synthetic guideline, two versions: 2 PDFs. The watcher holds one of its worker's two slots
#                 while it waits for the builds, so that worker takes one build at most and the other worker the
#                 other: both run work; each build's pages spread over both Dask workers (8 PDFs took 11 min)
PARAMS: dict[str, Any] = {"full_pipeline": True, "retrain": True, "with_baseline": False, "model_size": "small",
                          "epochs": 1, "max_train_items": 150, "training_data": "maintained"}


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_ports(n: int, dask_workers: int = 2) -> list[int]:
    """``n`` ports nothing listens on, below the kernel's ephemeral range (so no client connection is handed one
    of them, or one of the Dask workers' worker and nanny ports that follow the last, while the cluster starts)."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng = random.Random()
    chosen: list[int] = []
    while len(chosen) < n:
        port = rng.randrange(15000, low - 64)
        extra = [p for i in range(1, dask_workers + 1) for p in cluster.dask_worker_ports(port, i)]
        if all(_bindable(p) for p in [port, *extra]) and not set([port, *extra]) & set(chosen):
            chosen.append(port)
    return chosen


def _sources(path: Path, prefix: str, guidelines: list[tuple[str, list[Path]]]) -> Path:
    lines = ["sources:"]
    for code, pdfs in guidelines:
        lines += [f"  - name: {prefix}-{code}", "    kind: folder", f"    location: {pdfs[0].parent}",
                  "    pattern: '*.pdf'"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _snapshot(settings: Settings, codes: list[str], qa_dir: Path) -> dict[str, Any]:
    """Graph, dataset and model of a run, without times and paths."""
    manifest = json.loads((qa_dir / "current" / "manifest.json").read_text(encoding="utf-8"))
    promoted = json.loads((qa_dir / "models" / "promoted.json").read_text(encoding="utf-8"))
    run = Path(promoted["run"])
    from safetensors.numpy import load_file

    files = {p.relative_to(run).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(run.rglob("*.json")) if p.name not in {"run.json", "dkg_model.json"}}  # paths, timings
    weights = {p.relative_to(run).as_posix(): load_file(str(p)) for p in sorted(run.rglob("*.safetensors"))}
    meta = json.loads((run / "cypher" / "dkg_model.json").read_text(encoding="utf-8"))
    losses = [(h["train_loss"], h["val_loss"]) for h in _find(meta, "history")]
    return {"graph": loader.fingerprint(settings, codes),
            "dataset": {"version": manifest.get("version"),
                        "items": (qa_dir / "current" / "items.jsonl").read_text(encoding="utf-8")},
            "model": {"dataset_version": promoted["dataset_version"], "accuracy": promoted["accuracy"],
                      "files": files, "losses": losses}, "weights": weights}


def _find(data: Any, key: str) -> Any:
    """The first value of ``key`` anywhere in a JSON document."""
    if isinstance(data, dict):
        if key in data:
            return data[key]
        data = list(data.values())
    if isinstance(data, list):
        for v in data:
            found = _find(v, key)
            if found is not None:
                return found
    return None


def test_the_watcher_on_the_production_topology_equals_a_sequential_run(
        services: Settings, prefect_harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.watch_guidelines import watch_guidelines

    tag = "".join(secrets.choice(string.ascii_uppercase) for _ in range(3))
    monkeypatch.setenv("DKG_QA_MAX_TEST_ITEMS", "100")  # the model is evaluated on 100 test items, in both runs
    # the synthetic guideline alone in the graph: both runs' datasets (generated, validated on the graph, the
    # validation loss over all of it) then cover it alone, not whatever earlier modules left loaded (the
    # reference guidelines, ~4 min more; tests/flows/test_pipeline_chain.py loads them from nothing anyway)
    _wipe(services, [str(g["code"]) for g in loader.guidelines(services)])
    # drawn after the bone sample (the second in name order): the leukaemia sample's paths make three quarters
    # of the three samples' QA items, and the dataset is built, validated and trained on twice here
    guidelines = synthetic_set(REFERENCE, GUIDELINES, tmp_path / "pdfs", prefix=f"Z{tag}", start=1)
    codes = [code for code, _ in guidelines]
    try:
        # 1. sequential: one process, Prefect's default runner, the suite's embedded API
        monkeypatch.setenv("DKG_QA_DIR", str(tmp_path / "qa-sequential"))
        seq_report = watch_guidelines(str(_sources(tmp_path / "seq.yaml", f"seq{tag}", guidelines)), **PARAMS)
        assert len(seq_report.loaded) == 2 * GUIDELINES and not seq_report.failed
        sequential = _snapshot(services, codes, tmp_path / "qa-sequential")
        assert all(sequential["graph"][c]["current"] and len(sequential["graph"][c]["versions"]) == 2 for c in codes)
        for code in codes:
            assert loader.remove_guideline(services, code) > 0

        # 2. the same PDFs through the topology: the watcher a deployment run on a worker, each version a
        #    separate flow run of build-dkg that either worker takes, the pages on the Dask workers
        monkeypatch.setenv("DKG_QA_DIR", str(tmp_path / "qa-topology"))
        api_port, pg_port, dask_port = _free_ports(3)
        cs = load_settings(state_dir=services.state_path, cluster_dir=tmp_path / "cluster",
                           cluster_api_port=api_port, cluster_pg_port=pg_port, cluster_dask_port=dask_port,
                           cluster_workers=2, cluster_dask_workers=2, cluster_worker_limit=1)
        lay = cluster.layout(cs)
        seen: dict[int, psutil.Process] = {}
        with cluster.running(cs, purge=True) as statuses:
            by_name = {s.name: s for s in statuses}
            assert all(s.healthy for s in statuses), [(s.name, s.detail) for s in statuses if not s.healthy]
            assert {"postgres", "prefect-server", "prefect-worker-1", "prefect-worker-2", "dask-scheduler",
                    "dask-worker-1", "dask-worker-2"} <= set(by_name)
            assert not by_name["neo4j"].started and not by_name["corenlp"].started  # the suite's, left running
            topo_sources = _sources(tmp_path / "topo.yaml", f"topo{tag}", guidelines)
            run = cluster.run_deployment(cs, "watch-guidelines/watch-guidelines-nightly",
                                         {"sources_file": str(topo_sources), "fan_out": True, **PARAMS},
                                         timeout_s=1500)
            assert run["state"]["type"] == "COMPLETED", run["state"]
            for p in cluster.processes(cs):
                seen[p.pid] = p
            # each version was its own flow run, and both workers ran some
            builds = cluster.api_call(cs, "POST", "/flow_runs/filter",
                                      {"flow_runs": {"name": {"like_": "build Z"}}, "limit": 50})
            assert len(builds) == 2 * GUIDELINES and all(b["state"]["type"] == "COMPLETED" for b in builds)
            _screenshot_run(cs, builds[0])  # the documentation's picture of a run in the Prefect UI
            for i in (1, 2):
                log = (lay.logs / f"prefect-worker-{i}.log").read_text(errors="replace")
                assert "submitting flow run" in log.lower(), f"prefect-worker-{i} ran no flow run"
                dask_log = (lay.logs / f"dask-worker-{i}.log").read_text(errors="replace")
                assert "Task run 'parse-page" in dask_log, f"dask-worker-{i} parsed no page"
            # the loads held their guideline's write slot; CoreNLP is limited to the server's threads
            for code in codes:
                limit = cluster.api_call(cs, "GET", f"/v2/concurrency_limits/{loader_limit(code)}")
                assert limit["limit"] == 1 and limit["active"]
            assert cluster.api_call(cs, "GET", f"/v2/concurrency_limits/{cluster.CORENLP_LIMIT}")["limit"] == \
                cs.corenlp_threads
            assert any(lay.results.iterdir()), "no result was written to the shared result storage"
        topology = _snapshot(services, codes, tmp_path / "qa-topology")

        assert topology["graph"] == sequential["graph"]
        assert topology["dataset"]["version"] == sequential["dataset"]["version"]
        assert topology["dataset"]["items"] == sequential["dataset"]["items"]
        assert topology["model"] == sequential["model"]  # tokenizers, configuration, losses, accuracy
        # the weights: equal up to float rounding (two processes sum gradients in their own thread order;
        # measured 1.5e-6 at most, with the same losses and accuracy)
        assert topology["weights"].keys() == sequential["weights"].keys() and topology["weights"]
        for name, tensors in topology["weights"].items():
            other = sequential["weights"][name]
            assert tensors.keys() == other.keys()
            for key, value in tensors.items():
                assert value.shape == other[key].shape
                assert float(abs(value.astype("float64") - other[key]).max()) < 1e-4, (name, key)
        # down: no process of the topology is left, the ports are free, the database is gone (purge)
        alive = [p for p in seen.values() if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert not alive, [(p.pid, p.name()) for p in alive]
        for port in (cs.cluster_api_port, cs.cluster_pg_port, cs.cluster_dask_port):
            with socket.socket() as s:
                assert s.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still answers"
        assert not lay.pg_data.exists()
    finally:
        for code in codes:
            loader.remove_guideline(services, code)


def _screenshot_run(cs: Settings, run: dict[str, Any]) -> None:
    """The Prefect UI of the topology's server, on one build-dkg run, in headless Chromium: the page must show the
    run's name and its completed state before the picture is taken (docs/img/prefect-run.png)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    base = cluster.api_url(cs).removesuffix("/api")
    with chromium(1440, 900) as driver:
        driver.get(f"{base}/runs/flow-run/{run['id']}")
        WebDriverWait(driver, 120).until(
            lambda d: run["name"] in (body := d.find_element(By.TAG_NAME, "body").text) and "Completed" in body)
        time.sleep(3)  # the timeline and the task runs draw after the header
        shot(driver, "prefect-flow-run.png", docs="prefect-run.png")


def loader_limit(code: str) -> str:
    from tasks.common import write_limit_name

    return write_limit_name(code)
