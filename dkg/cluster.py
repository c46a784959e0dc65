"""The production topology on one machine, every part a separate process started with its own CLI.

PostgreSQL (Debian's binaries) is Prefect's database; ``prefect server start`` runs on it; several
``prefect worker start --pool dkg-local`` processes take flow runs; ``dask scheduler`` and ``dask
worker`` processes run the page-level tasks of every flow run (``DKG_DASK_ADDRESS``); Neo4j and
CoreNLP are the services of ``dkg services``. The same commands, with other hosts in the
addresses, run the parts on several machines (docs/deploy.md).

Each process is recorded in ``<state>/cluster/run`` (PID, address, a marker of its command line), so
``down`` stops only what ``up`` started, and ``status`` reports every process with its health.
Plain Python: this module starts Prefect's and Dask's command-line programs, it does not import them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from dkg.errors import ServiceError
from dkg.services import process
from dkg.services.status import ServiceStatus
from dkg.settings import Settings

Progress = Callable[[str], None]
ROOT = Path(__file__).resolve().parents[1]
"""The project folder: the workers run the flows of its prefect.yaml from here."""
POOL = "dkg-local"
PG_USER = "dkg"
PG_DB = "prefect"
CORENLP_LIMIT = "corenlp"
"""Global concurrency limit the CoreNLP parse task occupies (slots: the server's threads)."""


def _quiet(_: str) -> None:
    return None


def _bin(name: str) -> str:
    """A program of this virtual environment (prefect, dask), else the one on PATH."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else (shutil.which(name) or name)


@dataclass(frozen=True)
class Layout:
    """Where the cluster keeps its state."""

    base: Path
    pg_data: Path
    as_root: bool

    @property
    def run(self) -> Path:
        return self.base / "run"

    @property
    def logs(self) -> Path:
        return self.base / "logs"

    @property
    def results(self) -> Path:
        """Task results and caches every worker reads and writes (PREFECT_LOCAL_STORAGE_PATH)."""
        return self.base / "results"

    @property
    def secret(self) -> Path:
        return self.base / "postgres.secret"

    @property
    def started_services(self) -> Path:
        return self.run / "services-started.json"


def layout(settings: Settings) -> Layout:
    """The cluster's folders. As root, PostgreSQL (which refuses to run as root) runs as the ``postgres``
    user, so its data lives in a folder that user can reach."""
    base = (settings.cluster_dir or settings.state_path / "cluster").expanduser().resolve()
    as_root = os.geteuid() == 0
    if settings.cluster_pg_data is not None:
        data = settings.cluster_pg_data.expanduser().resolve()
    elif as_root:
        tag = hashlib.sha256(str(base).encode()).hexdigest()[:10]
        data = Path("/var/lib/dkg-cluster") / tag / "pgdata"
    else:
        data = base / "pgdata"
    return Layout(base=base, pg_data=data, as_root=as_root)


def api_url(settings: Settings) -> str:
    """The cluster's Prefect API (what PREFECT_API_URL must say to use it)."""
    return f"http://127.0.0.1:{settings.cluster_api_port}/api"


def dask_address(settings: Settings) -> str:
    return f"tcp://127.0.0.1:{settings.cluster_dask_port}"


def _password(lay: Layout) -> str:
    """The PostgreSQL password, made once and kept readable by this user only."""
    if lay.secret.exists():
        return lay.secret.read_text(encoding="utf-8").strip()
    lay.base.mkdir(parents=True, exist_ok=True)
    pw = secrets.token_hex(24)
    fd = os.open(lay.secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(pw)
    return pw


def database_url(settings: Settings, *, masked: bool = True) -> str:
    """Prefect's database URL; masked (the default) for anything that is shown or logged."""
    lay = layout(settings)
    pw = "***" if masked else _password(lay)
    return f"postgresql+asyncpg://{PG_USER}:{pw}@127.0.0.1:{settings.cluster_pg_port}/{PG_DB}"


def client_env(settings: Settings) -> dict[str, str]:
    """Environment of every process that runs flows or tasks on the cluster (workers, their flow runs,
    Dask workers): the cluster's API, its Dask scheduler, the shared result storage, this project."""
    lay = layout(settings)
    env = process.default_env()
    env.update({
        "PREFECT_API_URL": api_url(settings),
        "PREFECT_HOME": str(lay.base / "client-home"),
        "PREFECT_LOCAL_STORAGE_PATH": str(lay.results),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DKG_PROJECT_DIR": str(ROOT),
        "DKG_STATE_DIR": str(settings.state_path),
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p),
        "PYTHONUNBUFFERED": "1",
    })
    env.pop("PREFECT_API_DATABASE_CONNECTION_URL", None)  # only the server holds the database password
    if settings.cluster_dask_workers:
        env["DKG_DASK_ADDRESS"] = dask_address(settings)
    else:
        env.pop("DKG_DASK_ADDRESS", None)
    env.pop("DKG_DASK_WORKERS", None)
    return env


# --- one process of the topology ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    name: str
    role: str
    address: str
    cmd: list[str]
    env: dict[str, str]
    probe: Callable[[], tuple[bool, str]]
    """Health: (healthy, detail)."""
    marker: str
    """A piece of the command line that identifies our process (a PID alone may be reused)."""


def _http_ok(url: str, timeout_s: float = 3.0) -> tuple[bool, str]:
    req = urllib.request.Request(url)
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            return resp.status == 200, f"HTTP {resp.status}"
    except (urllib.error.URLError, OSError) as e:
        return False, f"no answer ({getattr(e, 'reason', e)})"


def _port_ok(port: int, what: str) -> Callable[[], tuple[bool, str]]:
    def probe() -> tuple[bool, str]:
        up = process.port_in_use("127.0.0.1", port)
        return up, f"{what} listens on {port}" if up else f"nothing listens on {port}"
    return probe


def _as_postgres(lay: Layout, cmd: list[str]) -> list[str]:
    if not lay.as_root:
        return cmd
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", *cmd]


def _postgres_part(settings: Settings, lay: Layout) -> Part:
    pg = settings.cluster_pg_bin
    port = settings.cluster_pg_port
    cmd = _as_postgres(lay, [str(pg / "postgres"), "-D", str(lay.pg_data), "-p", str(port),
                             "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
                             "-c", "max_connections=200", "-c", "shared_buffers=128MB"])

    def probe() -> tuple[bool, str]:
        r = subprocess.run([str(pg / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-d", PG_DB],
                           capture_output=True, text=True, timeout=10, check=False)
        return r.returncode == 0, (r.stdout.strip() or r.stderr.strip())
    return Part("postgres", "Prefect's database", f"postgresql://127.0.0.1:{port}/{PG_DB}", cmd,
                process.default_env(), probe, str(lay.pg_data))


def _server_part(settings: Settings, lay: Layout) -> Part:
    env = process.default_env()
    env.update({"PREFECT_HOME": str(lay.base / "server-home"),
                "PREFECT_API_DATABASE_CONNECTION_URL": database_url(settings, masked=False),
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                "PREFECT_UI_API_URL": api_url(settings)})
    env.pop("PREFECT_API_URL", None)
    cmd = [_bin("prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(settings.cluster_api_port)]
    return Part("prefect-server", "Prefect API and UI", api_url(settings), cmd, env,
                lambda: _http_ok(api_url(settings) + "/health"), f"--port {settings.cluster_api_port}")


def _worker_parts(settings: Settings, lay: Layout) -> list[Part]:
    env = client_env(settings)
    parts = []
    for i in range(1, settings.cluster_workers + 1):
        name = f"prefect-worker-{i}"
        cmd = [_bin("prefect"), "worker", "start", "--pool", POOL, "--type", "process", "--name", name,
               "--limit", str(settings.cluster_worker_limit)]
        parts.append(Part(name, f"runs flow runs of pool {POOL}", f"pool {POOL}", cmd, env,
                          _worker_probe(settings, name), f"--name {name}"))
    return parts


def _worker_probe(settings: Settings, name: str) -> Callable[[], tuple[bool, str]]:
    def probe() -> tuple[bool, str]:
        try:
            rows = api_call(settings, "POST", f"/work_pools/{POOL}/workers/filter", {})
        except ServiceError as e:
            return False, str(e)
        mine = [w for w in rows if w.get("name") == name]
        if not mine:
            return False, "not registered with the API yet"
        status = str(mine[0].get("status", "")).upper()
        return status == "ONLINE", f"{status.lower()}, last heartbeat {mine[0].get('last_heartbeat_time')}"
    return probe


def _dask_parts(settings: Settings, lay: Layout) -> list[Part]:
    if not settings.cluster_dask_workers:
        return []
    env = client_env(settings)
    port = settings.cluster_dask_port
    parts = [Part("dask-scheduler", "Dask scheduler", dask_address(settings),
                  [_bin("dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                  env, _port_ok(port, "scheduler"), f"--port {port}")]
    for i in range(1, settings.cluster_dask_workers + 1):
        wport, nport = dask_worker_ports(port, i)
        parts.append(Part(f"dask-worker-{i}", "Dask worker (1 process, 1 thread)", f"tcp://127.0.0.1:{wport}",
                          [_bin("dask"), "worker", dask_address(settings), "--name", f"dask-worker-{i}",
                           "--nworkers", "1", "--nthreads", "1", "--host", "127.0.0.1",
                           "--worker-port", str(wport), "--nanny-port", str(nport), "--no-dashboard",
                           "--local-directory", str(lay.base / "dask")],
                          env, _port_ok(wport, "worker"), f"--name dask-worker-{i}"))
    return parts


def parts(settings: Settings) -> list[Part]:
    """Every process of the topology, in start order."""
    lay = layout(settings)
    return [_postgres_part(settings, lay), _server_part(settings, lay), *_worker_parts(settings, lay),
            *_dask_parts(settings, lay)]


# --- the REST API of the cluster's Prefect server ------------------------------------------------------------------


def api_call(settings: Settings, method: str, path: str, body: Any = None, timeout_s: float = 15.0) -> Any:
    """One JSON call to the cluster's Prefect API."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(api_url(settings) + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            text = resp.read().decode()
            return json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        raise ServiceError(f"Prefect API {method} {path}: HTTP {e.code} {e.read()[:300]!r}") from e
    except (urllib.error.URLError, OSError) as e:
        raise ServiceError(f"Prefect API {api_url(settings)} does not answer: {e}") from e


def ensure_concurrency_limit(settings: Settings, name: str, limit: int) -> None:
    """Create (or set) an active global concurrency limit."""
    try:
        api_call(settings, "GET", f"/v2/concurrency_limits/{name}")
    except ServiceError as e:
        if "404" not in str(e):
            raise
        api_call(settings, "POST", "/v2/concurrency_limits/", {"name": name, "limit": limit, "active": True})
        return
    api_call(settings, "PATCH", f"/v2/concurrency_limits/{name}", {"limit": limit, "active": True})


# --- up, status, down -------------------------------------------------------------------------------------------


def _record(lay: Layout, name: str) -> process.ProcessRecord | None:
    return process.read_record(process.pid_file(lay.run, name))


def _alive(lay: Layout, name: str) -> psutil.Process | None:
    rec = _record(lay, name)
    return process.process_of(rec) if rec else None


def _wait(part: Part, pid: int, log: Path, timeout_s: float) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if not process.pid_alive(pid):
            raise ServiceError(f"{part.name} exited during start-up{process.first_error(log)}; its log {log} "
                               f"ends with:\n{process.tail(log, 12)}")
        ok, _ = part.probe()
        if ok:
            return time.monotonic() - t0
        time.sleep(0.5)
    raise ServiceError(f"{part.name} did not become healthy in {timeout_s:.0f} s; its log {log} ends with:\n"
                       f"{process.tail(log, 12)}")


def _init_postgres(settings: Settings, lay: Layout, progress: Progress) -> None:
    """initdb once (password auth over TCP on 127.0.0.1 only)."""
    if (lay.pg_data / "PG_VERSION").exists():
        return
    pg = settings.cluster_pg_bin
    if not (pg / "initdb").exists():
        raise ServiceError(f"PostgreSQL not found in {pg}: install the Debian package `postgresql` "
                           "(scripts/bootstrap.sh does) or set DKG_CLUSTER_PG_BIN")
    progress("postgres: initdb")
    lay.pg_data.mkdir(parents=True, exist_ok=True)
    pwfile = lay.pg_data.parent / ".initdb-pw"
    pwfile.write_text(_password(lay), encoding="utf-8")
    try:
        if lay.as_root:
            shutil.chown(lay.pg_data.parent, "postgres", "postgres")
            shutil.chown(lay.pg_data, "postgres", "postgres")
            shutil.chown(pwfile, "postgres", "postgres")
        os.chmod(pwfile, 0o600)
        os.chmod(lay.pg_data, 0o700)
        r = subprocess.run(_as_postgres(lay, [str(pg / "initdb"), "-D", str(lay.pg_data), "-U", PG_USER,
                                              f"--pwfile={pwfile}", "--auth=scram-sha-256", "-E", "UTF8",
                                              "--no-locale"]),
                           capture_output=True, text=True, timeout=300, check=False)
        if r.returncode != 0:
            raise ServiceError(f"initdb {lay.pg_data} failed: {r.stderr.strip()[-800:]}")
    finally:
        pwfile.unlink(missing_ok=True)


def _create_database(settings: Settings, lay: Layout) -> None:
    pg = settings.cluster_pg_bin
    env = {**process.default_env(), "PGPASSWORD": _password(lay)}
    base = ["-h", "127.0.0.1", "-p", str(settings.cluster_pg_port), "-U", PG_USER]
    r = subprocess.run([str(pg / "psql"), *base, "-d", "postgres", "-tAc",
                        f"SELECT 1 FROM pg_database WHERE datname = '{PG_DB}'"],
                       capture_output=True, text=True, env=env, timeout=30, check=False)
    if r.returncode != 0:
        raise ServiceError(f"psql on 127.0.0.1:{settings.cluster_pg_port}: {r.stderr.strip()[-400:]}")
    if r.stdout.strip() != "1":
        r = subprocess.run([str(pg / "createdb"), *base, PG_DB], capture_output=True, text=True, env=env,
                           timeout=30, check=False)
        if r.returncode != 0:
            raise ServiceError(f"createdb {PG_DB}: {r.stderr.strip()[-400:]}")


def _fixed_ports(settings: Settings, name: str) -> list[tuple[int, str]]:
    """The ports ``name`` binds, each with the setting that moves it (a Dask worker's two follow the scheduler's)."""
    fixed = {"postgres": [(settings.cluster_pg_port, "DKG_CLUSTER_PG_PORT")],
             "prefect-server": [(settings.cluster_api_port, "DKG_CLUSTER_API_PORT")],
             "dask-scheduler": [(settings.cluster_dask_port, "DKG_CLUSTER_DASK_PORT")]}
    if name in fixed:
        return fixed[name]
    if name.startswith("dask-worker-"):
        i = int(name.rsplit("-", 1)[1])
        return [(p, "DKG_CLUSTER_DASK_PORT") for p in dask_worker_ports(settings.cluster_dask_port, i)]
    return []


def dask_worker_ports(scheduler_port: int, i: int) -> tuple[int, int]:
    """Worker and nanny port of Dask worker ``i`` (from 1): fixed offsets from the scheduler's port."""
    return scheduler_port + 10 + i, scheduler_port + 30 + i


def _start_part(settings: Settings, lay: Layout, part: Part, timeout_s: float, progress: Progress) -> ServiceStatus:
    running = _alive(lay, part.name)
    if running is not None:
        ok, detail = part.probe()
        return ServiceStatus(name=part.name, address=part.address, healthy=ok, managed=True, pid=running.pid,
                             detail=detail)
    for port, variable in _fixed_ports(settings, part.name):
        if process.port_in_use("127.0.0.1", port):
            raise ServiceError(f"{part.name}: port {port} on 127.0.0.1 is already in use"
                               f"{process.owner_of_port(port)}: stop it or choose another port ({variable})")
    progress(f"{part.name}: starting")
    log = lay.logs / f"{part.name}.log"
    proc = process.start_detached(part.cmd, log, env=part.env, cwd=ROOT)
    process.write_record(process.pid_file(lay.run, part.name),
                         process.ProcessRecord(part.name, proc.pid, part.address, part.marker,
                                               time.time(), str(log)))
    took = _wait(part, proc.pid, log, timeout_s)
    ok, detail = part.probe()
    return ServiceStatus(name=part.name, address=part.address, healthy=ok, managed=True, pid=proc.pid,
                         started=True, detail=detail, startup_s=round(took, 1))


def _deploy(settings: Settings, lay: Layout, progress: Progress) -> None:
    """The work pool, the CoreNLP concurrency limit, and prefect.yaml's deployments."""
    env = client_env(settings)
    progress(f"work pool {POOL}")
    r = subprocess.run([_bin("prefect"), "work-pool", "create", POOL, "--type", "process", "--overwrite"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=180, check=False)
    if r.returncode != 0:
        raise ServiceError(f"prefect work-pool create {POOL}: {(r.stdout + r.stderr).strip()[-600:]}")
    ensure_concurrency_limit(settings, CORENLP_LIMIT, settings.corenlp_threads)
    if not settings.cluster_deploy:
        return
    progress("prefect deploy --all (prefect.yaml)")
    log = lay.logs / "deploy.log"
    with open(log, "wb") as fh:
        done = subprocess.run([_bin("prefect"), "--no-prompt", "deploy", "--all"], stdout=fh, stderr=subprocess.STDOUT,
                              env=env, cwd=ROOT, timeout=600, check=False)
    if done.returncode != 0:
        raise ServiceError(f"prefect deploy --all failed; {log} ends with:\n{process.tail(log, 12)}")


def up(settings: Settings, progress: Progress = _quiet) -> list[ServiceStatus]:
    """Start every part that is not running (idempotent) and wait until each is healthy.

    Raises:
        ServiceError: a part could not start (its log is named), a port is taken, PostgreSQL is missing.
    """
    from dkg.services import services_up

    lay = layout(settings)
    lay.run.mkdir(parents=True, exist_ok=True)
    lay.results.mkdir(parents=True, exist_ok=True)
    statuses = services_up(settings, progress)
    started = sorted({s.name for s in statuses if s.started} | set(_started_services(lay)))
    lay.started_services.write_text(json.dumps(started), encoding="utf-8")
    _init_postgres(settings, lay, progress)
    every = parts(settings)
    limit = settings.service_start_timeout_s
    statuses.append(_start_part(settings, lay, every[0], limit, progress))
    _create_database(settings, lay)
    server = _start_part(settings, lay, every[1], limit, progress)
    statuses.append(server)
    if server.started or not (lay.run / "deployed").exists():
        _deploy(settings, lay, progress)
        (lay.run / "deployed").write_text(str(time.time()), encoding="utf-8")
    for part in every[2:]:
        statuses.append(_start_part(settings, lay, part, limit, progress))
    return statuses


def _started_services(lay: Layout) -> list[str]:
    with contextlib.suppress(OSError, ValueError):
        return list(json.loads(lay.started_services.read_text(encoding="utf-8")))
    return []


def status(settings: Settings) -> list[ServiceStatus]:
    """Every process of the topology with its address and health (Neo4j and CoreNLP included)."""
    from dkg.services import services_status

    lay = layout(settings)
    out = services_status(settings)
    for part in parts(settings):
        proc = _alive(lay, part.name)
        if proc is None:
            out.append(ServiceStatus(name=part.name, address=part.address, healthy=False, managed=False,
                                     detail="not running"))
            continue
        ok, detail = part.probe()
        rss = peak = None
        with contextlib.suppress(psutil.Error):
            tree = [proc, *proc.children(recursive=True)]
            rss = sum(p.memory_info().rss for p in tree) / 2**20
            peak = process.peak_rss_mib(proc.pid)
        out.append(ServiceStatus(name=part.name, address=part.address, healthy=ok, managed=True, pid=proc.pid,
                                 detail=detail, rss_mib=rss, peak_rss_mib=peak))
    return out


def processes(settings: Settings) -> list[psutil.Process]:
    """The live processes of the topology, children included (the server's, the workers' flow runs)."""
    lay = layout(settings)
    found: dict[int, psutil.Process] = {}
    for part in parts(settings):
        proc = _alive(lay, part.name)
        if proc is None:
            continue
        with contextlib.suppress(psutil.Error):
            for p in [proc, *proc.children(recursive=True)]:
                found[p.pid] = p
    return list(found.values())


def _stop_tree(proc: psutil.Process, timeout_s: float) -> None:
    try:
        tree = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for p in tree:
        with contextlib.suppress(psutil.Error):
            p.terminate()
    _, alive = psutil.wait_procs(tree, timeout=timeout_s)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=10)


def down(settings: Settings, purge: bool = False, progress: Progress = _quiet) -> dict[str, bool]:
    """Stop what ``up`` started, in reverse order; Neo4j and CoreNLP only if ``up`` started them.

    ``purge`` also deletes the PostgreSQL data, the shared results and the logs (a test's cluster).
    """
    from dkg.services import corenlp, neo4j

    lay = layout(settings)
    stopped: dict[str, bool] = {}
    for part in reversed(parts(settings)):
        proc = _alive(lay, part.name)
        if proc is not None:
            progress(f"{part.name}: stopping")
            # PostgreSQL: SIGTERM is a "smart" shutdown that waits for clients; the server is gone by now
            _stop_tree(proc, timeout_s=60 if part.name in ("postgres", "prefect-server") else 30)
        process.pid_file(lay.run, part.name).unlink(missing_ok=True)
        stopped[part.name] = proc is not None
    for name in _started_services(lay):
        progress(f"{name}: stopping")
        stopped[name] = (neo4j.stop if name == "neo4j" else corenlp.stop)(settings)
    lay.started_services.unlink(missing_ok=True)
    (lay.run / "deployed").unlink(missing_ok=True)
    if purge:
        shutil.rmtree(lay.pg_data.parent if lay.as_root and settings.cluster_pg_data is None else lay.pg_data,
                      ignore_errors=True)
        shutil.rmtree(lay.base, ignore_errors=True)
    return stopped


@contextlib.contextmanager
def running(settings: Settings, purge: bool = True, progress: Progress = _quiet) -> Iterator[list[ServiceStatus]]:
    """The topology for the length of a ``with`` block (tests, benchmarks); always brought down."""
    try:
        yield up(settings, progress)
    finally:
        down(settings, purge=purge, progress=progress)


TERMINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


def run_deployment(settings: Settings, name: str, parameters: dict[str, Any], timeout_s: float = 3600.0,
                   poll_s: float = 2.0) -> dict[str, Any]:
    """Create a flow run of deployment ``flow/deployment`` on the cluster and wait for its end; the flow run
    as the API returns it (``state.type`` says how it ended)."""
    flow_name, dep_name = name.split("/", 1)
    dep = api_call(settings, "GET", f"/deployments/name/{flow_name}/{dep_name}")
    run = api_call(settings, "POST", f"/deployments/{dep['id']}/create_flow_run", {"parameters": parameters})
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = api_call(settings, "GET", f"/flow_runs/{run['id']}")
        if (run.get("state") or {}).get("type") in TERMINAL:
            return dict(run)
        time.sleep(poll_s)
    raise ServiceError(f"flow run {run['id']} of {name} did not end in {timeout_s:.0f} s")
