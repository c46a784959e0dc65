"""Load test of ``dkg serve`` on loopback: 32 concurrent clients x 50 questions over both endpoints.

Starts the real ``dkg serve`` (a subprocess, rate limit off for the loopback clients), waits until it
has loaded the promoted model, then:

* **load**: 32 clients, each asks the same 50 questions (40 for the graph from qa-dev, 10 for the web
  guideline chatbot) in its own order; throughput, p50/p95/p99 per endpoint, errors, peak RSS of the
  service process. The service keeps answers per loaded model and graph, so after the first time a
  question is asked it is served from memory; the same load with that cache off is measured too
  (fewer requests: every one is a model pass).
* **CLI**: the same 50 graph-or-web questions through ``dkg ask --json`` / ``dkg web ask --json``
  while the service is up (the CLI sends them to it), and five through a cold CLI with no service
  (model loaded in the process): the ratio against the HTTP p50.

Bounded: every phase has a request count and a deadline, and the service is stopped at the end.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import Row, free_port

ROOT = Path(__file__).resolve().parents[1]
QA_DEV = ROOT.parent / "shared" / "data" / "qa-dev" / "questions.jsonl"
CLIENTS = 32
DEADLINE_S = 600.0
WEB_QUESTIONS = ["胸腺腫の治療法について教えてください。", "胸腺腫はどのように診断されますか？",
                 "胸腺腫の手術はどのように行われますか？", "胸腺腫の病理診断はどのように行われますか？",
                 "小児神経膠腫の治療法は？", "小児のグリオーマの手術の危険性は？", "What is the treatment of thymoma?",
                 "How is thymoma diagnosed?", "胸腺腫の症状は何ですか？", "胸腺腫の再発はどのように治療しますか？"]


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(q / 100 * (len(s) - 1)))]


def _site(settings: Any) -> str | None:
    """Keep a loopback copy of the Japanese test site as the chatbot's site; the previous default's name."""
    from dkg.web.crawl import crawl
    from dkg.web.rag import Site, process_pages, save_site, sites_root
    from tests.fixtures.web_sites import ja_routes, serve

    default = sites_root(settings) / "default"
    previous = default.read_text(encoding="utf-8").strip() if default.exists() else None
    with serve(ja_routes()) as base:
        pages, _ = crawl(settings, f"{base}/ja/toc.html")
    save_site(settings, Site(name="bench-ja", toc=f"{base}/ja/toc.html", crawled_at=time.time(),
                             pages=list(pages.values()), processed=process_pages(pages, None, set(pages))))
    return previous


class Service:
    """``dkg serve`` as a subprocess on a free loopback port."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix="dkg-serve-", suffix=".log", delete=False)  # noqa: SIM115
        self.proc = subprocess.Popen([str(ROOT / ".venv" / "bin" / "dkg"), "serve", "--port", str(self.port)],
                                     env={**os.environ, **env}, stdout=self.log, stderr=subprocess.STDOUT, cwd=ROOT)
        self.peak_rss = 0
        self._stop = threading.Event()

    def wait(self, timeout: float = 300.0) -> float:
        import requests

        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dkg serve exited: see {self.log.name}")
            try:
                if requests.get(f"{self.url}/v1/health", timeout=2).json().get("status") in ("ok", "degraded"):
                    threading.Thread(target=self._watch_rss, daemon=True).start()
                    return time.monotonic() - t0
            except (requests.RequestException, ValueError):
                pass
            time.sleep(0.5)
        raise RuntimeError("dkg serve did not come up")

    def _watch_rss(self) -> None:
        import psutil

        p = psutil.Process(self.proc.pid)
        while not self._stop.is_set():
            try:
                self.peak_rss = max(self.peak_rss, p.memory_info().rss)
            except psutil.Error:
                return
            time.sleep(0.1)

    def stop(self) -> None:
        self._stop.set()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _load(url: str, questions: list[tuple[str, str]], clients: int, per_client: int) -> dict[str, Any]:
    """``clients`` threads, each asking ``per_client`` of the questions in its own order."""
    import requests

    lat: dict[str, list[float]] = {"ask": [], "web": []}
    errors: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + DEADLINE_S

    def client(n: int) -> None:
        order = questions[:per_client]
        random.Random(n).shuffle(order)
        with requests.Session() as s:
            for kind, q in order:
                if time.monotonic() > deadline:
                    with lock:
                        errors.append("deadline")
                    return
                path = "/v1/ask" if kind == "ask" else "/v1/web/ask"
                t0 = time.perf_counter()
                try:
                    r = s.post(url + path, json={"question": q}, timeout=120)
                    ok = r.status_code == 200
                    detail = "" if ok else f"{r.status_code} {r.text[:80]}"
                except requests.RequestException as e:
                    ok, detail = False, str(e)[:80]
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    lat[kind].append(ms)
                    if not ok:
                        errors.append(detail)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    seconds = time.perf_counter() - t0
    n = sum(len(v) for v in lat.values())
    return {"requests": n, "seconds": round(seconds, 2), "throughput": round(n / seconds, 1), "errors": len(errors),
            "error_samples": errors[:3],
            **{f"{k}_{p}": round(_pct(v, p), 1) for k, v in lat.items() for p in (50, 95, 99)}}


def _cli(questions: list[tuple[str, str]], env: dict[str, str]) -> tuple[float, int]:
    """Seconds per question through `dkg ask --json` / `dkg web ask --json`; failures."""
    dkg = str(ROOT / ".venv" / "bin" / "dkg")
    t0 = time.perf_counter()
    failed = 0
    for kind, q in questions:
        cmd = [dkg, "ask", "--json", q] if kind == "ask" else [dkg, "web", "ask", "--json", q]
        r = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, timeout=300, cwd=ROOT)
        try:
            json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            failed += 1
    return (time.perf_counter() - t0) / len(questions), failed


def run() -> list[Row]:
    from dkg.qa import registry
    from dkg.settings import load_settings

    settings = load_settings()
    if registry.promoted(settings) is None or not QA_DEV.exists():
        print("no promoted model or no qa-dev questions; skipping the service load test", file=sys.stderr)
        return []
    graph_qs = [json.loads(line)["question"] for line in QA_DEV.read_text(encoding="utf-8").splitlines()
                if line.strip()][:40]
    questions = [("ask", q) for q in graph_qs] + [("web", q) for q in WEB_QUESTIONS]
    random.Random(0).shuffle(questions)
    previous_site = _site(settings)
    rows: list[Row] = []
    try:
        service = Service({"DKG_SERVE_RATE": "0"})
        try:
            startup = service.wait()
            cached = _load(service.url, questions, CLIENTS, 50)  # every question new to the service at first
            warm = _load(service.url, questions, CLIENTS, 50)  # the same load again: answers kept
            cli_served, cli_failed = _cli(questions, {})
        finally:
            service.stop()
        peak_mib = service.peak_rss / 2**20
        uncached_service = Service({"DKG_SERVE_RATE": "0", "DKG_SERVE_CACHE": "0"})
        try:
            uncached_service.wait()
            uncached = _load(uncached_service.url, questions, CLIENTS, 5)
        finally:
            uncached_service.stop()
        cold_cli, cold_failed = _cli([q for q in questions if q[0] == "ask"][:5], {})  # no service up
    finally:
        if previous_site is not None:
            from dkg.web.rag import sites_root

            (sites_root(settings) / "default").write_text(previous_site, encoding="utf-8")
    print("serve load (cache on): ", json.dumps(cached), file=sys.stderr)
    print("serve load (again):    ", json.dumps(warm), file=sys.stderr)
    print("serve load (cache off):", json.dumps(uncached), file=sys.stderr)
    print(f"serve startup {startup:.1f} s, peak RSS {peak_mib:.0f} MiB; CLI via service {cli_served:.2f} s/question "
          f"({cli_failed} failed), cold CLI {cold_cli:.2f} s/question ({cold_failed} failed)", file=sys.stderr)
    rows.append(Row("serve /v1/ask p95, 32 clients", cached["ask_95"], "same, cache off", uncached["ask_95"], "ms"))
    rows.append(Row("serve /v1/ask p95, same load again", warm["ask_95"], "first load", cached["ask_95"], "ms"))
    rows.append(Row("serve throughput, same load again", warm["throughput"], "first load", cached["throughput"], "/s"))
    rows.append(Row("serve /v1/ask p50, 32 clients", cached["ask_50"], "same, cache off", uncached["ask_50"], "ms"))
    rows.append(Row("serve /v1/ask p99, 32 clients", cached["ask_99"], "same, cache off", uncached["ask_99"], "ms"))
    rows.append(Row("serve /v1/web/ask p95, 32 clients", cached["web_95"], "same, cache off", uncached["web_95"], "ms"))
    rows.append(Row("serve throughput, 32 clients", cached["throughput"], "same, cache off",
                    uncached["throughput"], "/s"))
    rows.append(Row("serve errors (of 3,360 requests)", float(cached["errors"] + warm["errors"] + uncached["errors"]),
                    "none", 1.0, ""))
    rows.append(Row("serve peak RSS", peak_mib, "1 GiB", 1024.0, "MiB"))
    rows.append(Row("CLI s/question (service up)", cli_served, "cold CLI, no service", cold_cli, "s"))
    rows.append(Row("HTTP p50 s/question", cached["ask_50"] / 1000, "CLI via service", cli_served, "s"))
    return rows
