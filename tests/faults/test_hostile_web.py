"""Hostile web guideline sites, served on loopback by the test: every fetch ends in bounded time with a
clear error naming the URL, or (a charset lie) in readable text; nothing outside the site is requested."""

from __future__ import annotations

import gzip
import http.server
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from typing import ClassVar

import pytest

from dkg.settings import load_settings
from dkg.web.crawl import Fetcher, WebFetchError

BIG = 50 * 1024 * 1024


class _Handler(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, code: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        _Handler.hits.append(self.path)
        port = self.server.server_address[1]
        if self.path == "/robots.txt":
            self._send(404)
        elif self.path == "/big.html":  # 50 MB of HTML, streamed
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(BIG))
            self.end_headers()
            chunk = b"<p>" + b"x" * 65530 + b"</p>"
            try:
                for _ in range(BIG // len(chunk)):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif self.path.startswith("/loop"):
            n = int(self.path[5:] or 0)
            self._send(302, headers={"Location": f"/loop{n + 1}"})
        elif self.path == "/elsewhere.html":
            self._send(302, headers={"Location": f"http://127.0.0.2:{port}/admin"})
        elif self.path == "/file.html":
            self._send(301, headers={"Location": "file:///etc/passwd"})
        elif self.path == "/liar.html":  # says UTF-8, is Shift_JIS
            body = "<html><body><p>急性リンパ性白血病の治療</p></body></html>".encode("shift_jis")
            self._send(200, body, {"Content-Type": "text/html; charset=utf-8"})
        elif self.path == "/bomb.html":  # 1 GB of zeros in about 1 MB of gzip
            self._send(200, _BOMB, {"Content-Type": "text/html", "Content-Encoding": "gzip"})
        else:
            self._send(404)


_BOMB = gzip.compress(b"\0" * (1024 * 1024 * 1024), compresslevel=9)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def _fetch(url: str) -> tuple[str | None, str | None, float, float]:
    fetcher = Fetcher(load_settings(web_retries=0, web_delay_s=0.0, web_timeout_s=10.0))
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        return fetcher.get(url), None, time.monotonic() - t0, tracemalloc.get_traced_memory()[1] / 2**20
    except WebFetchError as e:
        return None, str(e), time.monotonic() - t0, tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("path", "pattern"), [
    ("/big.html", r"larger than 5000000 bytes; skipped"),
    ("/bomb.html", r"larger than 5000000 bytes; skipped"),
    ("/loop0", r"more than 5 redirects; not followed"),
    ("/elsewhere.html", r"redirects to another host \(127\.0\.0\.2\); not followed"),
    ("/file.html", r"redirects to a non-web address \(file scheme\); not followed"),
], ids=["50 MB body", "gzip bomb", "endless redirects", "redirect to another host", "redirect to file://"])
def test_hostile_page_is_refused(site: str, path: str, pattern: str, record: Callable[..., None]) -> None:
    import re

    _Handler.hits.clear()
    text, error, took, peak_mb = _fetch(site + path)
    assert text is None and error is not None
    assert re.search(pattern, error) and (site + path) in error, error
    assert took < 30
    assert peak_mb < 64, peak_mb  # the body is read in chunks and given up at the limit (5 MB)
    assert not any(h.startswith("/admin") for h in _Handler.hits)  # nothing requested past the refusal
    record(f"hostile web page: {path}", "served on loopback by the test", f"refused: {error[:80]}", 0, None,
           seconds=round(took, 2), peak_rss_mb=round(peak_mb, 1))


def test_charset_lie_still_gives_text(site: str, record: Callable[..., None]) -> None:
    text, error, took, _peak = _fetch(site + "/liar.html")
    assert error is None and text is not None
    assert "急性リンパ性白血病" in text  # the declared UTF-8 fails; the bytes are read as what they are
    record("hostile web page: charset lie", "UTF-8 declared, Shift_JIS sent", "decoded as Shift_JIS", 0, None,
           seconds=round(took, 1))
