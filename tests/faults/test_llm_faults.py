"""An LLM endpoint that hangs: the chatbot times out and gives its fixed refusal, never hangs.

The endpoint is a local stand-in for the paid external LLM API (the only service the suite may
stand in for): a TCP server that accepts the request and never answers.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from dkg.settings import load_settings
from dkg.web import rag
from dkg.web.crawl import Page
from dkg.web.text import load_web_config


@pytest.fixture
def hanging_llm() -> Iterator[str]:
    """STAND-IN for the external LLM API: accepts connections, reads the request, never replies."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            held.append(conn)  # keep it open, say nothing

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}/v1"
    stop.set()
    t.join(2)
    for c in held:
        c.close()
    srv.close()


def _index() -> rag.SiteIndex:
    text = ("Osteosarcoma is a bone cancer. Treatment of osteosarcoma is neoadjuvant chemotherapy followed by "
            "wide excision and adjuvant chemotherapy. Response is judged by necrosis.")
    pages = {"http://site.test/osteo": Page(url="http://site.test/osteo", title="Osteosarcoma", text=text,
                                            language="en", sha256="x", fetched_at=0.0, medical=True, reason="")}
    return rag.SiteIndex(list(pages.values()), rag.process_pages(pages, None, set(pages)))


def test_hanging_llm_times_out_to_the_fixed_refusal(hanging_llm: str, record: Callable[..., None]) -> None:
    import openai  # noqa: F401 - imported before the clock starts (seconds on a busy machine)

    settings = load_settings(llm_base_url=hanging_llm, llm_timeout_s=2.0, llm_retries=1)
    index = _index()
    rag.detect_language("warm up the language detector")
    t0 = time.monotonic()
    answer = rag.ask(settings, index, "What is the treatment of osteosarcoma?")
    took = time.monotonic() - t0
    assert answer.status == "llm_unavailable"
    assert answer.answer == load_web_config().refusals["en"]["not_enough"]
    assert answer.detail and hanging_llm in answer.detail and "did not answer" in answer.detail
    assert took < 2.0 * 2 + 4  # (retries + 1) × time-out, the client's back-off, a busy machine
    record("LLM endpoint hangs", "stand-in server accepts and never replies (timeout 2 s, 1 retry)",
           "status llm_unavailable with the fixed not-enough-information sentence", 0, None, seconds=round(took, 1))
