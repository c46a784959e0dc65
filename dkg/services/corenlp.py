"""The Stanford CoreNLP server (Maven Central jars) and a stanza client for it.

The project starts the server itself (``dkg services up``) and every client connects with
``StartServer.DONT_START``: one JVM with the models loaded serves all flows and tests,
instead of each client paying the ~20 s model load.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import requests

from dkg.errors import ServiceError, ServiceUnavailableError
from dkg.services import java, process
from dkg.services.status import ServiceStatus
from dkg.settings import Settings

if TYPE_CHECKING:
    from stanza.server import CoreNLPClient

log = logging.getLogger(__name__)

NAME = "corenlp"
ANNOTATORS = "tokenize,ssplit,pos,parse"
PROBE_SENTENCE = "Adult patients younger than 65 years receive induction therapy."


def _dir(settings: Settings) -> Path:
    return settings.state_path / "corenlp"


def _marker(settings: Settings) -> str:
    return f"-Ddkg.service={NAME}:{settings.state_path}"


def parse_tree_http(settings: Settings, text: str, timeout_s: float = 60.0) -> str:
    """Constituency parse of ``text`` by a plain HTTP call (used to probe readiness).

    Raises:
        ServiceUnavailableError: the server does not answer or answers with an error.
    """
    props = {"annotators": ANNOTATORS, "outputFormat": "json"}
    try:
        resp = requests.post(
            settings.corenlp_endpoint,
            params={"properties": json.dumps(props)},
            data=text.encode("utf-8"),
            timeout=timeout_s,
            proxies={"http": "", "https": ""},
        )
        resp.raise_for_status()
        tree = str(resp.json()["sentences"][0]["parse"])
    except (requests.RequestException, ValueError, KeyError, IndexError) as e:
        raise ServiceUnavailableError(
            f"CoreNLP at {settings.corenlp_endpoint} did not parse a sentence: {type(e).__name__}"
        ) from e
    return tree


def _record(settings: Settings) -> process.ProcessRecord | None:
    return process.read_record(process.pid_file(settings.state_path / "run", NAME))


def status(settings: Settings) -> ServiceStatus:
    """Report health (a real parse), version and memory of the configured CoreNLP server."""
    record = None if settings.uses_external_corenlp else _record(settings)
    proc = process.process_of(record) if record else None
    try:
        tree = parse_tree_http(settings, PROBE_SENTENCE, timeout_s=30)
        healthy, detail = tree.startswith("(ROOT"), "parses a sentence"
    except ServiceUnavailableError as e:
        healthy, detail = False, str(e)
    return ServiceStatus(
        name=NAME, address=settings.corenlp_endpoint, healthy=healthy, managed=proc is not None,
        version=settings.corenlp_version if not settings.uses_external_corenlp else None,
        pid=proc.pid if proc else None, detail=detail,
        rss_mib=proc.memory_info().rss / 2**20 if proc else None,
        peak_rss_mib=process.peak_rss_mib(proc.pid) if proc else None,
    )


def loopback_only_blocklist(allowed: str = "127.0.0.1") -> list[str]:
    """IPv4 subnets that cover every address but ``allowed`` (32 prefixes: the complement of a /32)."""
    import ipaddress

    a = int(ipaddress.IPv4Address(allowed))
    out = []
    for bits in range(1, 33):
        flipped = (a ^ (1 << (32 - bits))) >> (32 - bits) << (32 - bits)
        out.append(f"{ipaddress.IPv4Address(flipped)}/{bits}")
    return out


def start(settings: Settings) -> ServiceStatus:
    """Start the CoreNLP server unless it runs; wait until it parses a sentence.

    Raises:
        ConfigError: Java or Maven missing.
        ServiceError: port taken, jars not fetchable, or no answer in time.
    """
    if settings.uses_external_corenlp:
        return status(settings)
    record = _record(settings)
    if record is not None and process.process_of(record) is not None:
        return _wait_ready(settings, record.pid, Path(record.log), time.monotonic(), started=False)
    if process.port_in_use("127.0.0.1", settings.corenlp_port):
        raise ServiceError(
            f"port {settings.corenlp_port} on 127.0.0.1 is already in use"
            f"{process.owner_of_port(settings.corenlp_port)}: stop that process or set "
            "DKG_CORENLP_PORT to a free port (or DKG_CORENLP_URL to use that server)"
        )
    java.java_major_version(settings.java_cmd)
    base = _dir(settings)
    classpath = java.resolve_classpath(
        settings.maven_cmd, "corenlp-pom.xml", {"corenlp.version": settings.corenlp_version},
        base / "maven",
    )
    props = base / "server.properties"
    props.parent.mkdir(parents=True, exist_ok=True)
    props.write_text(
        f"annotators={ANNOTATORS}\nparse.maxlen={settings.corenlp_parse_maxlen}\n", encoding="utf-8"
    )
    log_path = base / "server.log"
    # The server has no bind-address option and listens on every interface: its block list refuses every
    # client address except 127.0.0.1 (IPv4; see docs/security.md)
    blocked = base / "blocklist.txt"
    blocked.write_text("\n".join(loopback_only_blocklist()) + "\n", encoding="utf-8")
    cmd = [
        settings.java_cmd, f"-Xmx{settings.corenlp_memory}", _marker(settings),
        "-cp", ":".join(map(str, classpath)), "edu.stanford.nlp.pipeline.StanfordCoreNLPServer",
        "-port", str(settings.corenlp_port), "-timeout", str(settings.corenlp_timeout_ms),
        "-threads", str(settings.corenlp_threads), "-quiet", "true",
        "-preload", ANNOTATORS, "-serverProperties", str(props), "-blockList", str(blocked), "-stanford", "true",
    ]
    t0 = time.monotonic()
    pid = process.launch(settings.state_path / "run", NAME, cmd, log_path, settings.corenlp_endpoint,
                         _marker(settings))
    return _wait_ready(settings, pid, log_path, t0, started=True)


def _wait_ready(settings: Settings, pid: int, log_path: Path, t0: float, started: bool) -> ServiceStatus:
    deadline = t0 + settings.service_start_timeout_s
    while True:
        if not process.pid_alive(pid):
            raise ServiceError(
                f"CoreNLP exited during start-up; last lines of {log_path}:\n{process.tail(log_path)}"
            )
        try:
            parse_tree_http(settings, PROBE_SENTENCE, timeout_s=max(5.0, deadline - time.monotonic()))
            break
        except ServiceUnavailableError:
            if time.monotonic() > deadline:
                stop(settings)  # a start that timed out leaves no process behind
                raise ServiceError(
                    f"CoreNLP did not parse a sentence on {settings.corenlp_endpoint} within "
                    f"{settings.service_start_timeout_s:.0f} s; see {log_path}"
                ) from None
            time.sleep(0.5)
    elapsed = time.monotonic() - t0 if started else None
    return status(settings).model_copy(update={"started": started, "startup_s": elapsed})


def stop(settings: Settings) -> bool:
    """Stop the server if we started it; return True when a process was stopped."""
    return process.stop_recorded(settings.state_path / "run", NAME, timeout_s=30)


@contextmanager
def client(settings: Settings, timeout_ms: int | None = None) -> Iterator[CoreNLPClient]:
    """A ``stanza.server.CoreNLPClient`` connected to the running server (never starts one).

    stanza is imported here, lazily, because importing it imports torch (seconds).
    """
    from stanza.server import CoreNLPClient, StartServer

    cli = CoreNLPClient(
        endpoint=settings.corenlp_endpoint,
        start_server=StartServer.DONT_START,
        annotators=ANNOTATORS,
        timeout=timeout_ms or settings.corenlp_timeout_ms,
        be_quiet=True,
        properties={"parse.maxlen": str(settings.corenlp_parse_maxlen)},
    )
    try:
        yield cli
    finally:
        cli.stop()


def tree_to_str(tree: Any) -> str:
    """Render a CoreNLP protobuf parse tree as a bracketed string: ``(S (NP ...) ...)``."""
    if not tree.child:
        return str(tree.value)
    return "(" + str(tree.value) + " " + " ".join(tree_to_str(c) for c in tree.child) + ")"


def constituency_parse(settings: Settings, text: str) -> list[str]:
    """Parse ``text`` through stanza's client and return one bracketed tree per sentence.

    Raises:
        ServiceUnavailableError: the server is down or timed out (transient).
    """
    try:
        with client(settings) as cli:
            ann = cli.annotate(text, annotators=ANNOTATORS, output_format=None)
    except Exception as e:  # stanza raises its own AnnotationException/TimeoutException
        raise ServiceUnavailableError(
            f"CoreNLP at {settings.corenlp_endpoint} failed to parse: {type(e).__name__}: {e}"
        ) from e
    return [tree_to_str(s.parseTree) for s in ann.sentence]
