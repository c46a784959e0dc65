"""Throughput of the watcher on the production topology: 24 guideline PDFs with 1 worker, 2 workers, and
2 workers + a Dask cluster of 2 worker processes, measured in the same run.

Each configuration gets its own topology (`dkg.cluster`, fresh PostgreSQL database, fresh shared results),
its own caches (no parse or page from an earlier configuration is reused) and its own guideline codes; the
watcher runs as a deployment with ``fan_out`` (each version a separate flow run that any worker picks up).
Where the time goes comes from Prefect's own run records: the flow runs and task runs of the poll,
summed by name, and the wait of each build between its creation and its start.

``DKG_THROUGHPUT_PDFS`` changes the number of PDFs (even; two versions per guideline).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import Row, free_port  # noqa: E402

REFERENCE = Path(os.environ.get("DKG_SHARED_DIR", ROOT.parent / "shared")) / "reference" / "guidelines"
PDFS = int(os.environ.get("DKG_THROUGHPUT_PDFS", "24"))
CONFIGS = [("1 worker", 1, 0), ("2 workers", 2, 0), ("2 workers + Dask (2 processes)", 2, 2)]


def _when(text: str | None) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() if text else float("nan")


def _stages(settings: Any, since: str) -> dict[str, Any]:
    """Seconds per stage from the run records of the poll (flow runs and task runs that started after ``since``)."""
    from dkg import cluster

    flows = cluster.api_call(settings, "POST", "/flow_runs/filter",
                             {"flow_runs": {"start_time": {"after_": since}}, "limit": 200})
    tasks: list[dict[str, Any]] = []
    offset = 0
    while True:
        page = cluster.api_call(settings, "POST", "/task_runs/filter",
                                {"task_runs": {"start_time": {"after_": since}}, "limit": 200, "offset": offset})
        tasks += page
        if len(page) < 200:
            break
        offset += 200
    by_flow: dict[str, float] = defaultdict(float)
    for f in flows:
        by_flow[f["name"].split(" ", 1)[0]] += float(f.get("total_run_time") or 0)
    by_task: dict[str, float] = defaultdict(float)
    for t in tasks:
        name = t["name"].rsplit("-", 1)[0] if t["name"].count("-") >= 2 else t["name"]
        name = "parse-page" if name.startswith("parse-page") else name
        by_task[name] += float(t.get("total_run_time") or 0)
    builds = [f for f in flows if f["name"].startswith("build")]
    waits = [_when(f["start_time"]) - _when(f["created"]) for f in builds if f.get("start_time")]
    return {"flows": dict(by_flow), "tasks": dict(by_task), "builds": len(builds),
            "build_wait_s": sum(waits) / len(waits) if waits else float("nan")}


def _measure(label: str, workers: int, dask_workers: int, pdf_dir: Path, work: Path) -> dict[str, Any]:
    from dkg import cluster
    from dkg.graph import loader
    from dkg.pdf.synthetic import synthetic_set
    from dkg.settings import load_settings

    tag = f"TP{workers}{dask_workers}"
    guidelines = synthetic_set(REFERENCE, PDFS // 2, pdf_dir / tag, prefix=tag)
    sources = work / f"{tag}.yaml"
    stamp = int(time.time())
    lines = ["sources:"]
    for code, pdfs in guidelines:
        lines += [f"  - name: bench-{code}-{stamp}", "    kind: folder", f"    location: {pdfs[0].parent}",
                  "    pattern: '*.pdf'"]
    sources.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.environ["DKG_CACHE_DIR"] = str(work / f"cache-{tag}")  # cold caches: every page and sentence is parsed
    settings = load_settings(cluster_dir=work / f"cluster-{tag}", cluster_api_port=free_port(),
                             cluster_pg_port=free_port(), cluster_dask_port=free_port(), cluster_workers=workers,
                             cluster_dask_workers=dask_workers, cluster_worker_limit=2)
    codes = [c for c, _ in guidelines]
    try:
        with cluster.running(settings, purge=True) as statuses:
            bad = [s.name for s in statuses if not s.healthy]
            if bad:
                raise RuntimeError(f"{label}: not healthy: {bad}")
            since = datetime.now().astimezone().isoformat()
            t0 = time.perf_counter()
            run = cluster.run_deployment(settings, "watch-guidelines/watch-guidelines-nightly",
                                         {"sources_file": str(sources), "fan_out": True, "full_pipeline": False},
                                         timeout_s=3600)
            wall = time.perf_counter() - t0
            if run["state"]["type"] != "COMPLETED":
                raise RuntimeError(f"{label}: the watcher run ended {run['state']}")
            stages = _stages(settings, since)
    finally:
        os.environ.pop("DKG_CACHE_DIR", None)
        for code in codes:
            loader.remove_guideline(load_settings(), code)
    print(f"  {label}: {PDFS} PDFs in {wall:.0f} s ({PDFS / wall * 60:.1f} PDFs/min)", file=sys.stderr, flush=True)
    return {"label": label, "wall_s": wall, **stages}


def run() -> list[Row]:
    work = Path(tempfile.mkdtemp(prefix="dkg-throughput-", dir=str(ROOT / ".dkg")))
    try:
        results = [_measure(label, w, d, work / "pdfs", work) for label, w, d in CONFIGS]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = results[0]["wall_s"]
    print(f"\nthroughput: {PDFS} guideline PDFs through the watcher (fan-out), same run")
    print(f"{'configuration':<32} {'wall s':>8} {'PDFs/min':>9} {'speed-up':>9} {'build wait s':>13}  "
          "flow-run seconds (summed)  |  task-run seconds (summed, top)")
    for r in results:
        flows = ", ".join(f"{k} {v:.0f}" for k, v in sorted(r["flows"].items(), key=lambda kv: -kv[1]))
        tasks = ", ".join(f"{k} {v:.0f}" for k, v in sorted(r["tasks"].items(), key=lambda kv: -kv[1])[:6])
        print(f"{r['label']:<32} {r['wall_s']:>8.0f} {PDFS / r['wall_s'] * 60:>9.1f} {base / r['wall_s']:>8.2f}x "
              f"{r['build_wait_s']:>13.1f}  {flows}  |  {tasks}")
    return [Row(f"watcher, {PDFS} PDFs: {r['label']} (s)", r["wall_s"], "1 worker (s)", base, "s")
            for r in results[1:]]


if __name__ == "__main__":
    for r in run():
        print(f"{r.measure:<56} {r.value:>8.1f} {r.unit} {r.baseline_name:<16} {r.baseline:>8.1f} {r.ratio:>6.2f}x")
