"""A Prefect API server and a process worker as separate processes, for faults of the orchestration layer.

The server keeps its own SQLite database in its own ``PREFECT_HOME``, so the suite's ephemeral API
and the user's server are never touched. Everything is driven over the REST API with ``httpx``
(no Prefect client settings of the test process change), and the deployment comes from the
project's own ``prefect.yaml`` through ``prefect deploy``, as a user creates it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"
POOL = "dkg-local"  # the pool named in prefect.yaml; the server is the test's own, so no clash
TERMINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


@dataclass
class Topology:
    """One ``prefect server start`` and one ``prefect worker start`` with their logs and environment."""

    home: Path
    port: int
    env: dict[str, str]
    """Environment of the server, the worker and therefore of every flow run the worker starts."""
    server: subprocess.Popen[bytes] | None = None
    worker: subprocess.Popen[bytes] | None = None
    starts: dict[str, int] = field(default_factory=lambda: {"server": 0, "worker": 0})

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def _spawn(self, name: str, cmd: list[str]) -> subprocess.Popen[bytes]:
        self.starts[name] += 1
        log = open(self.home / f"{name}-{self.starts[name]}.log", "wb")  # noqa: SIM115 - closed with the process
        env = {**self.env, "PREFECT_API_URL": self.api}
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                cwd=str(ROOT), start_new_session=True)

    def start_server(self, timeout_s: float = 180.0) -> float:
        """Start the API server and wait until it answers; the seconds it took."""
        t0 = time.monotonic()
        self.server = self._spawn("server", [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1",
                                             "--port", str(self.port), "--no-ui"])
        deadline = t0 + timeout_s
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise RuntimeError(f"prefect server exited with {self.server.returncode}: {self.log_tail('server')}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.api}/health", timeout=2).status_code == 200:
                    return time.monotonic() - t0
            time.sleep(0.5)
        raise RuntimeError(f"prefect server did not answer in {timeout_s:.0f} s: {self.log_tail('server')}")

    def start_worker(self) -> None:
        self.worker = self._spawn("worker", [str(BIN / "prefect"), "worker", "start", "--pool", POOL,
                                             "--type", "process", "--prefetch-seconds", "5"])

    def log_tail(self, name: str, lines: int = 15) -> str:
        path = self.home / f"{name}-{self.starts[name]}.log"
        with contextlib.suppress(OSError):
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def kill(self, name: str, with_children: bool = False) -> float:
        """SIGKILL the server or the worker (with the flow-run processes it started); the moment (monotonic)."""
        proc = self.server if name == "server" else self.worker
        assert proc is not None and proc.poll() is None, f"{name} is not running"
        victims = [psutil.Process(proc.pid)]
        if with_children:
            victims += victims[0].children(recursive=True)
        t = time.monotonic()
        for p in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.send_signal(signal.SIGKILL)
        psutil.wait_procs(victims, timeout=30)
        proc.wait(10)
        return t

    def flow_run_processes(self) -> list[psutil.Process]:
        """The processes the worker started (its flow runs)."""
        if self.worker is None or self.worker.poll() is not None:
            return []
        with contextlib.suppress(psutil.NoSuchProcess):
            return list(psutil.Process(self.worker.pid).children(recursive=True))
        return []

    def stop(self) -> None:
        """Stop both processes and everything they started."""
        for proc in (self.worker, self.server):
            if proc is None or proc.poll() is not None:
                continue
            with contextlib.suppress(psutil.NoSuchProcess):
                tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
                for p in tree:
                    with contextlib.suppress(psutil.NoSuchProcess):
                        p.send_signal(signal.SIGTERM)
                _, alive = psutil.wait_procs(tree, timeout=20)
                for p in alive:
                    with contextlib.suppress(psutil.NoSuchProcess):
                        p.kill()

    # --- REST API ---------------------------------------------------------------------------
    def call(self, method: str, path: str, json: Any = None) -> Any:
        """One REST call, retried like Prefect's own client does when the server is busy (503: its SQLite
        database locked by the services) or briefly unreachable."""
        for attempt in range(6):
            try:
                resp = httpx.request(method, f"{self.api}{path}", json=json, timeout=30)
            except httpx.TransportError:
                if attempt == 5:
                    raise
            else:
                if resp.status_code not in (502, 503, 504) or attempt == 5:
                    resp.raise_for_status()
                    return resp.json() if resp.content else None
            time.sleep(2 ** attempt)
        raise AssertionError("unreachable")

    def deploy(self, name: str) -> str:
        """``prefect deploy --name NAME`` from the project's prefect.yaml; the deployment's id."""
        env = {**self.env, "PREFECT_API_URL": self.api, "DKG_PROJECT_DIR": str(ROOT)}
        self.call("POST", "/work_pools/", {"name": POOL, "type": "process"}) if not self._pool_exists() else None
        out = subprocess.run([str(BIN / "prefect"), "--no-prompt", "deploy", "--name", name], cwd=str(ROOT),
                             env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
        found = self.call("POST", "/deployments/filter", {"deployments": {"name": {"any_": [name]}}})
        assert len(found) == 1, found
        return str(found[0]["id"])

    def _pool_exists(self) -> bool:
        try:
            self.call("GET", f"/work_pools/{POOL}")
            return True
        except httpx.HTTPStatusError:
            return False

    def run(self, deployment_id: str, parameters: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
        """Create a flow run of the deployment (the worker picks it up), with extra environment variables for
        its process if given; its id."""
        body: dict[str, Any] = {"parameters": dict(parameters)}
        if env:
            body["job_variables"] = {"env": dict(env)}
        return str(self.call("POST", f"/deployments/{deployment_id}/create_flow_run", body)["id"])

    def flow_run(self, run_id: str) -> dict[str, Any]:
        data: dict[str, Any] = self.call("GET", f"/flow_runs/{run_id}")
        return data

    def state(self, run_id: str) -> str:
        return str(self.flow_run(run_id)["state_type"])

    def task_runs(self, name_like: str, started_after: str) -> list[dict[str, Any]]:
        """Task runs whose name is like ``name_like`` (SQL) that started after the given time (ISO)."""
        runs: list[dict[str, Any]] = self.call("POST", "/task_runs/filter", {
            "task_runs": {"name": {"like_": name_like}, "start_time": {"after_": started_after}}, "limit": 200})
        return runs

    def wait_state(self, run_id: str, states: set[str], timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        last = ""
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                last = self.state(run_id)
                if last in states:
                    return last
            time.sleep(1)
        raise AssertionError(f"flow run {run_id} still {last or 'unknown'} after {timeout_s:.0f} s; worker log:\n"
                             f"{self.log_tail('worker', 30)}")


def topology_env(state_dir: Path, home: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of the separate processes: their own Prefect home, the given dkg settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "DKG_"))}
    env.update({
        "PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_UI_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "INFO", "NO_PROXY": "localhost,127.0.0.1", "PYTHONUNBUFFERED": "1",
        "DKG_STATE_DIR": str(state_dir),
    })
    env.update(extra)
    return env


@contextlib.contextmanager
def topology(home: Path, port: int, env: dict[str, str]) -> Iterator[Topology]:
    home.mkdir(parents=True, exist_ok=True)
    topo = Topology(home=home, port=port, env=env)
    try:
        yield topo
    finally:
        topo.stop()
