"""What ``dkg serve`` keeps loaded: the promoted model with its question reader, the web site's index.

Everything heavy is built once and swapped in whole when the world changes: a newly promoted model,
a new version loaded into the graph, a re-crawled web site. A background thread looks every
``serve_reload_s`` seconds; a new :class:`Loaded` is built beside the one in use and replaces it in
one assignment, so requests in flight finish on the old one and none fails during the switch.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dkg.errors import DkgError
from dkg.settings import Settings

log = logging.getLogger("dkg.serve")


@dataclass(frozen=True)
class Stamp:
    """What the loaded objects were built from; a different stamp means rebuild."""

    model_run: str | None
    graph: tuple[tuple[str, str, int], ...]
    site: tuple[str, float] | None


class NotReadyError(DkgError):
    """The service has nothing to answer with yet (no promoted model, no crawled site)."""


class _Replaced(NotReadyError):
    """The batcher was closed because a new model was swapped in."""


class Batcher:
    """One thread that answers queued questions in batches: whatever arrived while the last batch ran.

    The model generates a batch of questions in one pass (measured: 32 questions in 1.0 s batched against
    2.8 s one by one, identical answers), so under concurrent load the queue itself forms the batches;
    nobody waits for a timer. The thread ends once it is closed and its queue is empty."""

    def __init__(self, answerer: Any, max_batch: int = 64) -> None:
        self.answerer, self.max_batch = answerer, max_batch
        self._queue: list[tuple[str, dict[str, Any] | None, Future[Any]]] = []
        self._cv = threading.Condition()
        self._closed = False
        self.batches: list[int] = []  # sizes, for the health route and the bench
        self._thread = threading.Thread(target=self._run, name="dkg-serve-batcher", daemon=True)
        self._thread.start()

    def submit(self, question: str, facts: dict[str, Any] | None) -> Future[Any]:
        fut: Future[Any] = Future()
        with self._cv:
            if self._closed:
                raise _Replaced("the model is being replaced; ask again")
            self._queue.append((question, facts, fut))
            self._cv.notify()
        return fut

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._queue and not self._closed:
                    self._cv.wait()
                if not self._queue:
                    return
                batch, self._queue = self._queue[:self.max_batch], self._queue[self.max_batch:]
            self.batches.append(len(batch))
            del self.batches[:-1000]
            try:
                answers = self.answerer.ask_many([q for q, _, _ in batch], [f for _, f, _ in batch])
            except BaseException as e:  # every waiting request gets the error, the thread lives on
                for _, _, fut in batch:
                    fut.set_exception(e)
                continue
            for (_, _, fut), answer in zip(batch, answers, strict=True):
                fut.set_result(answer)


@dataclass
class Loaded:
    """One consistent set of loaded objects and the answers they gave (the cache dies with them)."""

    stamp: Stamp
    answerer: Any | None  # dkg.qa.answer.Answerer; None while no model is promoted
    batcher: Batcher | None
    site_index: Any | None  # dkg.web.rag.SiteIndex; None while no site is crawled
    site_name: str | None
    loaded_at: float
    problems: list[str] = field(default_factory=list)
    cache: OrderedDict[str, bytes] = field(default_factory=OrderedDict)
    inflight: dict[str, Future[Any]] = field(default_factory=dict)
    cache_lock: threading.Lock = field(default_factory=threading.Lock)


def _site_stamp(settings: Settings) -> tuple[str, float] | None:
    from dkg.web.rag import sites_root

    root = sites_root(settings)
    default = root / "default"
    if not default.exists():
        return None
    name = default.read_text(encoding="utf-8").strip()
    path = root / f"{name}.json"
    return (name, path.stat().st_mtime) if path.exists() else None


def current_stamp(settings: Settings) -> Stamp:
    """The promoted model, the current version of every guideline and the kept site, read now."""
    from dkg.graph.loader import current_versions
    from dkg.qa import registry

    promo = registry.promoted(settings)
    graph = tuple((str(r["code"]), str(r["version"]), int(r["seq"] or 0)) for r in current_versions(settings))
    return Stamp(model_run=promo.run if promo else None, graph=graph, site=_site_stamp(settings))


class Engine:
    """The loaded objects of a running service and the thread that keeps them current."""

    def __init__(self, settings: Settings, warm_question: str | None = "What is the next step?") -> None:
        self.settings = settings
        self.warm_question = warm_question
        self._loaded: Loaded | None = None
        self._swap = threading.Lock()  # one rebuild at a time
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reloads = 0
        self.last_error: str | None = None

    # --- loading -----------------------------------------------------------------------------
    def _build(self, stamp: Stamp, previous: Loaded | None) -> Loaded:
        from dkg.qa.answer import Answerer
        from dkg.qa.model import Seq2Seq
        from dkg.web.rag import index_site, load_site

        problems: list[str] = []
        answerer = None
        if previous is not None and previous.answerer is not None and (previous.stamp.model_run, previous.stamp.graph) \
                == (stamp.model_run, stamp.graph):
            answerer = previous.answerer
        elif stamp.model_run is not None:
            answerer = Answerer(self.settings, Seq2Seq(Path(stamp.model_run) / "cypher"))
            answerer.linker()
            answerer.reader()
            if self.warm_question:  # the first request should not pay for the model's first pass
                answerer.ask(self.warm_question)
        else:
            problems.append("no promoted text-to-Cypher model (run `dkg qa train`)")
        site_index, site_name = None, None
        if previous is not None and previous.stamp.site == stamp.site:
            site_index, site_name = previous.site_index, previous.site_name
        elif stamp.site is not None:
            site = load_site(self.settings, stamp.site[0])
            site_index, site_name = index_site(site), site.name
            if self.settings.rag_mode == "best":
                site_index.passages  # noqa: B018 - built now, beside the set in use, not on the first request
        else:
            problems.append("no web guideline crawled (run `dkg web ingest TOC_URL`)")
        batcher = None
        if answerer is not None:
            kept = previous.batcher if previous is not None and previous.answerer is answerer else None
            batcher = kept or Batcher(answerer)
        return Loaded(stamp=stamp, answerer=answerer, batcher=batcher, site_index=site_index, site_name=site_name,
                      loaded_at=time.time(), problems=problems)

    def refresh(self) -> bool:
        """Rebuild what changed since the last look; True when something was swapped in."""
        with self._swap:
            stamp = current_stamp(self.settings)
            old = self._loaded
            if old is not None and old.stamp == stamp:
                return False
            new = self._build(stamp, old)
            self._loaded = new  # one assignment: requests already running keep `old`
            self.reloads += old is not None
            if old is not None and old.batcher is not None and old.batcher is not new.batcher:
                old.batcher.close()  # it answers what is queued, then ends
            log.info("loaded model=%s graph=%s site=%s", stamp.model_run, stamp.graph, stamp.site)
            return True

    def start(self) -> None:
        """Load now, then keep looking in a daemon thread."""
        self.refresh()
        self._thread = threading.Thread(target=self._watch, name="dkg-serve-reload", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _watch(self) -> None:
        while not self._stop.wait(self.settings.serve_reload_s):
            try:
                self.refresh()
                self.last_error = None
            except Exception as e:  # keep serving the loaded objects; the error shows on /v1/health
                self.last_error = f"{type(e).__name__}: {e}"
                log.warning("reload failed, still serving the loaded objects: %s", self.last_error)

    @property
    def current(self) -> Loaded | None:
        """The loaded set, or None while the first load runs."""
        return self._loaded

    @property
    def loaded(self) -> Loaded:
        if self._loaded is None:
            raise NotReadyError("the service is still loading")
        return self._loaded

    # --- answering: JSON bytes, as `dkg ask --json` / `dkg web ask --json` print them ----------
    def _remember(self, loaded: Loaded, key: str, value: bytes) -> None:
        with loaded.cache_lock:
            loaded.cache[key] = value
            while len(loaded.cache) > self.settings.serve_cache:
                loaded.cache.popitem(last=False)

    def _hit(self, loaded: Loaded, key: str) -> bytes | None:
        """A kept answer (the caller holds ``loaded.cache_lock``)."""
        hit = loaded.cache.get(key) if self.settings.serve_cache else None
        if hit is not None:
            loaded.cache.move_to_end(key)
        return hit

    def ask(self, question: str, facts: Mapping[str, Any] | None = None) -> bytes:
        """``dkg ask --json`` for one question (and optional given facts).

        Answered from the cache, or by joining the same question already being answered, or in the
        batcher's next batch."""
        given = dict(facts) if facts else None
        key = json.dumps(["ask", question, given or {}], sort_keys=True, default=str)
        try:
            return self._ask(self.loaded, key, question, given)
        except _Replaced:  # the model was swapped between reading `loaded` and queueing: ask the new one
            return self._ask(self.loaded, key, question, given)

    def _ask(self, loaded: Loaded, key: str, question: str, given: dict[str, Any] | None) -> bytes:
        if loaded.batcher is None:
            raise NotReadyError("; ".join(loaded.problems) or "no model loaded")
        with loaded.cache_lock:
            hit = self._hit(loaded, key)
            if hit is not None:
                return hit
            fut = loaded.inflight.get(key)
            first = fut is None
            if fut is None:
                fut = loaded.batcher.submit(question, given)
                loaded.inflight[key] = fut
        if first:  # outside the lock: a future already done runs the callback here, and it takes the lock
            fut.add_done_callback(lambda f: self._settle(loaded, key, f))
        return _answer_bytes(fut.result(timeout=self.settings.serve_timeout_s))

    def _settle(self, loaded: Loaded, key: str, fut: Future[Any]) -> None:
        with loaded.cache_lock:
            loaded.inflight.pop(key, None)
        if fut.exception() is None and self.settings.serve_cache:
            self._remember(loaded, key, _answer_bytes(fut.result()))

    def web_ask(self, question: str) -> bytes:
        """``dkg web ask --json`` for one question."""
        from dkg.web.rag import ask, dumps

        loaded = self.loaded
        if loaded.site_index is None:
            raise NotReadyError("no web guideline crawled (run `dkg web ingest TOC_URL`)")
        key = json.dumps(["web", question])
        with loaded.cache_lock:
            hit = self._hit(loaded, key)
        if hit is not None:
            return hit
        answer = ask(self.settings, loaded.site_index, question)
        value = dumps(answer).encode()
        if self.settings.serve_cache and answer.status != "llm_unavailable":  # a passing outage is not kept
            self._remember(loaded, key, value)
        return value


def _answer_bytes(answer: Any) -> bytes:
    return str(answer.model_dump_json(exclude={"question"})).encode()
