"""A local Neo4j Community 5.26 engine (embedded, Bolt on loopback) and the driver to reach it."""

from __future__ import annotations

import logging
import os
import secrets
import time
from pathlib import Path

import neo4j
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

from dkg.errors import ConfigError, ServiceError, ServiceUnavailableError
from dkg.services import java, process
from dkg.services.status import ServiceStatus
from dkg.settings import Settings

log = logging.getLogger(__name__)
# The driver logs every failed connection attempt; start-up polling makes many on purpose.
logging.getLogger("neo4j").setLevel(logging.ERROR)

NAME = "neo4j"
LAUNCHER = "Neo4jLauncher.java"
READY = "DKG-NEO4J-READY"


def _dir(settings: Settings) -> Path:
    return settings.state_path / "neo4j"


def password_file(settings: Settings) -> Path:
    """File that holds the generated password of the local server (mode 0600)."""
    return _dir(settings) / "password"


def _ensure_password(settings: Settings) -> Path:
    path = password_file(settings)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Create with 0600 from the start so the secret is never world-readable.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(secrets.token_urlsafe(24))
    path.chmod(0o600)
    return path


def credentials(settings: Settings) -> tuple[str, str]:
    """User and password for Bolt: the external server's, or the local generated one.

    Raises:
        ConfigError: neither an external password nor a local password file exists.
    """
    if settings.uses_external_neo4j:
        if settings.neo4j_password is None:
            raise ConfigError("NEO4J_URI is set but NEO4J_PASSWORD is not")
        return settings.neo4j_username, settings.neo4j_password.get_secret_value()
    path = password_file(settings)
    if not path.exists():
        raise ServiceUnavailableError(
            f"no local Neo4j password at {path}: start the services with `dkg services up`"
        )
    return "neo4j", path.read_text(encoding="utf-8").strip()


def open_driver(settings: Settings) -> neo4j.Driver:
    """Open a driver to the configured Neo4j; the caller closes it."""
    user, password = credentials(settings)
    return neo4j.GraphDatabase.driver(
        settings.bolt_uri, auth=(user, password), connection_timeout=5.0,
        max_connection_lifetime=300, max_transaction_retry_time=settings.neo4j_retry_s,
    )


def ping(settings: Settings) -> str:
    """Run ``RETURN 1`` over Bolt and return the server version.

    Raises:
        ServiceUnavailableError: the server does not answer.
        ServiceError: it answers but rejects the credentials.
    """
    try:
        with open_driver(settings) as driver:
            # Plain sessions, not execute_query: a probe must fail fast, not retry for 30 s.
            with driver.session(database=settings.neo4j_database) as session:
                one = session.run("RETURN 1 AS one").single()
                if one is None or one["one"] != 1:
                    raise ServiceError("Neo4j answered RETURN 1 with something else")
            with driver.session(database="system") as session:
                comp = session.run(
                    "CALL dbms.components() YIELD versions, edition "
                    "RETURN versions[0] AS version, edition"
                ).single()
            return f"{comp['version']} {comp['edition']}" if comp else "unknown"
    except AuthError as e:
        raise ServiceError(
            f"Neo4j at {settings.bolt_uri} rejected the credentials (check NEO4J_PASSWORD "
            "or the password file in the state folder)"
        ) from e
    except (ServiceUnavailable, OSError) as e:
        raise ServiceUnavailableError(f"Neo4j at {settings.bolt_uri} is not answering") from e
    except Neo4jError as e:
        raise ServiceUnavailableError(f"Neo4j at {settings.bolt_uri} failed RETURN 1: {e.message}") from e


def _record(settings: Settings) -> process.ProcessRecord | None:
    return process.read_record(process.pid_file(settings.state_path / "run", NAME))


def _marker(settings: Settings) -> str:
    return f"-Ddkg.service={NAME}:{settings.state_path}"


def status(settings: Settings) -> ServiceStatus:
    """Report health, version and memory of the configured Neo4j."""
    managed_proc = None
    record = None if settings.uses_external_neo4j else _record(settings)
    if record is not None:
        managed_proc = process.process_of(record)
    try:
        version = ping(settings)
        healthy, detail = True, "answers RETURN 1 over Bolt"
    except ServiceError as e:
        version, healthy, detail = None, False, str(e)
    rss = peak = None
    if managed_proc is not None:
        rss = managed_proc.memory_info().rss / 2**20
        peak = process.peak_rss_mib(managed_proc.pid)
    return ServiceStatus(
        name=NAME, address=settings.bolt_uri, healthy=healthy,
        managed=managed_proc is not None, version=version,
        pid=managed_proc.pid if managed_proc else None, detail=detail, rss_mib=rss, peak_rss_mib=peak,
    )


def start(settings: Settings) -> ServiceStatus:
    """Start the local engine unless it already runs; wait until Bolt answers ``RETURN 1``.

    Idempotent: a running, healthy server of ours is left alone. With ``NEO4J_URI`` set,
    nothing is started and the external server is only checked.

    Raises:
        ConfigError: Java or Maven missing.
        ServiceError: the port is taken by another process, the jars cannot be fetched, or
            the engine does not come up in time (the message names the log).
    """
    if settings.uses_external_neo4j:
        return status(settings)
    run_dir = settings.state_path / "run"
    record = _record(settings)
    if record is not None and process.process_of(record) is not None:
        current = status(settings)
        if current.healthy:
            return current
        # Ours but not answering yet (still starting): wait for it below.
        return _wait_ready(settings, record.pid, Path(record.log), time.monotonic(), started=False)
    if process.port_in_use(settings.neo4j_host, settings.neo4j_port):
        raise ServiceError(
            f"port {settings.neo4j_port} on {settings.neo4j_host} is already in use"
            f"{process.owner_of_port(settings.neo4j_port)}: stop that process or set "
            "DKG_NEO4J_PORT to a free port (or NEO4J_URI to use that server)"
        )
    java.java_major_version(settings.java_cmd)
    base = _dir(settings)
    classpath = java.resolve_classpath(
        settings.maven_cmd, "neo4j-pom.xml", {"neo4j.version": settings.neo4j_version}, base / "maven"
    )
    classes = java.compile_launcher(settings.java_cmd, LAUNCHER, classpath, base / "launcher")
    pw = _ensure_password(settings)
    log_path = base / "launcher.log"
    cmd = [
        settings.java_cmd, f"-Xmx{settings.neo4j_heap}", _marker(settings),
        "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "-cp", ":".join([str(classes), *map(str, classpath)]), "Neo4jLauncher",
        str(base / "home"), settings.neo4j_host, str(settings.neo4j_port),
        str(settings.neo4j_pagecache_mib), str(pw), str(settings.neo4j_tx_timeout_s),
        settings.neo4j_tx_log_retention,
    ]
    t0 = time.monotonic()
    pid = process.launch(run_dir, NAME, cmd, log_path, settings.bolt_uri, _marker(settings))
    return _wait_ready(settings, pid, log_path, t0, started=True)


def _wait_ready(settings: Settings, pid: int, log_path: Path, t0: float, started: bool) -> ServiceStatus:
    deadline = t0 + settings.service_start_timeout_s
    while True:
        if not process.pid_alive(pid):
            raise ServiceError(
                f"Neo4j exited during start-up; last lines of {log_path}:\n{process.tail(log_path)}"
            )
        # Bolt opens before the launcher has set the password: wait for its READY line.
        if READY not in process.tail(log_path, 50):
            if time.monotonic() > deadline:
                _abandon(settings, pid)
                raise ServiceError(
                    f"Neo4j did not start within {settings.service_start_timeout_s:.0f} s; see {log_path} "
                    "(raise DKG_SERVICE_START_TIMEOUT_S on a slow machine)"
                )
            time.sleep(0.5)
            continue
        try:
            ping(settings)
            break
        except ServiceUnavailableError:
            if time.monotonic() > deadline:
                _abandon(settings, pid)
                raise ServiceError(
                    f"Neo4j did not answer on {settings.bolt_uri} within "
                    f"{settings.service_start_timeout_s:.0f} s; see {log_path}"
                ) from None
            time.sleep(0.5)
    elapsed = time.monotonic() - t0 if started else None
    return status(settings).model_copy(update={"started": started, "startup_s": elapsed})


def _abandon(settings: Settings, pid: int) -> None:
    """A start that timed out leaves no process behind."""
    record = _record(settings)
    proc = process.process_of(record) if record is not None and record.pid == pid else None
    if proc is not None:
        process.stop_process(proc, timeout_s=30)
    process.pid_file(settings.state_path / "run", NAME).unlink(missing_ok=True)


def stop(settings: Settings) -> bool:
    """Stop the local engine if we started it; return True when a process was stopped."""
    return process.stop_recorded(settings.state_path / "run", NAME, timeout_s=90)
