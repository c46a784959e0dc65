"""Detached service processes tracked by PID files in the state folder."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from dkg.errors import ServiceError


@dataclass(frozen=True)
class ProcessRecord:
    """What we remember about a process we started."""

    name: str
    pid: int
    address: str
    marker: str
    started_at: float
    log: str


def pid_file(run_dir: Path, name: str) -> Path:
    """Path of the PID record of service ``name``."""
    return run_dir / f"{name}.pid.json"


def read_record(path: Path) -> ProcessRecord | None:
    """Read a PID record; a missing or unreadable file means no record."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ProcessRecord(**data)
    except (OSError, ValueError, TypeError):
        return None


def write_record(path: Path, record: ProcessRecord) -> None:
    """Write a PID record atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(record)), encoding="utf-8")
    tmp.replace(path)


def process_of(record: ProcessRecord) -> psutil.Process | None:
    """Return the live process of ``record`` if it is still ours (same PID and marker)."""
    try:
        proc = psutil.Process(record.pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        if record.marker not in " ".join(proc.cmdline()):
            return None  # the PID was reused by somebody else
        return proc
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def port_in_use(host: str, port: int) -> bool:
    """True when something already listens on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def owner_of_port(port: int) -> str:
    """Describe the process listening on ``port`` if the OS tells us, else ''."""
    try:
        for conn in psutil.net_connections(kind="tcp"):
            listening = conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN
            if listening and conn.pid:
                try:
                    return f" by pid {conn.pid} ({psutil.Process(conn.pid).name()})"
                except psutil.Error:
                    return f" by pid {conn.pid}"
    except psutil.Error:
        pass
    return ""


def start_detached(
    cmd: Sequence[str], log_path: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in its own session so it outlives the caller; output goes to ``log_path``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:  # one log per start, so readiness lines are fresh
        try:
            return subprocess.Popen(
                list(cmd),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=str(cwd) if cwd else None,
                env=dict(env) if env is not None else None,
                start_new_session=True,
            )
        except OSError as e:
            raise ServiceError(f"could not start {cmd[0]}: {e.strerror or e}") from e


def stop_process(proc: psutil.Process, timeout_s: float = 60.0) -> None:
    """Stop ``proc`` with SIGTERM (clean shutdown hooks), then SIGKILL after ``timeout_s``."""
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=timeout_s)
    except psutil.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    except psutil.NoSuchProcess:
        return


def tail(path: Path, lines: int = 5) -> str:
    """Last ``lines`` lines of a log file, for error messages."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


def first_error(path: Path) -> str:
    """The first line of a log that names an OS or start-up error (the cause, which a traceback's tail hides),
    as ``" (cause: …)"``; empty where there is none."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        if re.search(r"\b(OSError|Errno \d+|Address already in use|TimeoutError)\b", line):
            return f" (cause: {line.strip()[:300]})"
    return ""


def peak_rss_mib(pid: int) -> float | None:
    """Peak resident memory (VmHWM) of ``pid`` in MiB, from /proc; None where unavailable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


def pid_alive(pid: int) -> bool:
    """True when a process with ``pid`` exists and is not a zombie."""
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def default_env() -> dict[str, str]:
    """Environment for child JVMs: no proxy for loopback traffic."""
    env = dict(os.environ)
    env["NO_PROXY"] = "localhost,127.0.0.1"
    env["no_proxy"] = "localhost,127.0.0.1"
    return env


def launch(run_dir: Path, name: str, cmd: Sequence[str], log_path: Path, address: str, marker: str) -> int:
    """Start a service process detached and record its PID; return the PID."""
    proc = start_detached(cmd, log_path, env=default_env())
    write_record(pid_file(run_dir, name), ProcessRecord(name, proc.pid, address, marker, time.time(), str(log_path)))
    return proc.pid


def stop_recorded(run_dir: Path, name: str, timeout_s: float) -> bool:
    """Stop the recorded process of ``name`` if it is still ours; True when one was stopped."""
    path = pid_file(run_dir, name)
    record = read_record(path)
    if record is None:
        return False
    proc = process_of(record)
    if proc is not None:
        stop_process(proc, timeout_s=timeout_s)
    path.unlink(missing_ok=True)
    return proc is not None
