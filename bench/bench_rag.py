"""Web chatbot: retrieval latency over a 10,000-page synthetic site, and crawl speed on loopback."""

from __future__ import annotations

import random
import statistics
import time

from bench.common import Row
from dkg.web.crawl import Page

WORDS = ["treatment", "therapy", "chemotherapy", "radiation", "surgery", "diagnosis", "biopsy", "stage",
         "relapse", "remission", "marrow", "transplant", "dose", "symptom", "imaging", "prognosis",
         "resection", "histology", "sarcoma", "leukemia", "kidney", "bone", "lymphoblastic", "infusion",
         "antibody", "inhibitor", "maintenance", "consolidation", "induction", "surveillance"]


def _site(n: int, rng: random.Random) -> tuple[list[Page], dict[str, str]]:

    pages, processed = [], {}
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(120)] + [f"topic{i}"]
        text = " ".join(words)
        url = f"http://site/p{i}.html"
        pages.append(Page(url=url, title=f"p{i}", text=text, language="en", sha256=str(i), fetched_at=0,
                          medical=True, reason=""))
        processed[url] = text
    return pages, processed


def run() -> list[Row]:
    from dkg.settings import load_settings
    from dkg.web.rag import SiteIndex, ask
    from dkg.web.text import process

    rng = random.Random(7)
    pages, processed = _site(10_000, rng)
    t0 = time.perf_counter()
    index = SiteIndex(pages, processed)
    fit_s = time.perf_counter() - t0
    settings = load_settings()
    questions = [f"What is the {rng.choice(WORDS)} for topic{rng.randrange(10_000)}?" for _ in range(200)]
    lat = []
    for q in questions:
        t = time.perf_counter()
        ask(settings, index, q)
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    # baseline: processing the question alone (the part every answer pays before retrieval)
    base = []
    for q in questions:
        t = time.perf_counter()
        process(q, "en")
        base.append((time.perf_counter() - t) * 1000)
    p50, p95 = statistics.median(lat), lat[int(0.95 * len(lat))]
    b50 = statistics.median(base)
    crawl_ps, fetch_ps = _crawl_speed(rng)
    return [Row("ask p50, 10k pages (ms)", p50, "process question p50", b50, "ms"),
            Row("ask p95, 10k pages (ms)", p95, "process question p50", b50, "ms"),
            Row("fit TF-IDF on 10k pages (s)", fit_s, "ask p50 (s)", p50 / 1000, "s"),
            Row("crawl, 300 loopback pages (pages/s)", crawl_ps, "plain GET of the same pages", fetch_ps, "/s")]


def _crawl_speed(rng: random.Random) -> tuple[float, float]:
    """Crawl a 300-page loopback site (no politeness delay) against plain GETs of the same pages."""
    import http.server
    import threading

    import requests

    from dkg.settings import load_settings
    from dkg.web.crawl import crawl

    body = {f"/s/p{i}.html": ("<html><head><title>p</title></head><body><main><p>" +
                              " ".join(rng.choice(WORDS) for _ in range(300)) + "</p></main></body></html>").encode()
            for i in range(300)}
    body["/s/toc.html"] = ("<html><body>" + "".join(f'<a href="p{i}.html">p{i}</a>' for i in range(300)) +
                           "</body></html>").encode()

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = body.get(self.path)
            self.send_response(200 if data else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(data or b"")

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        t = time.perf_counter()
        crawl(load_settings(web_delay_s=0.0), f"{base}/s/toc.html")
        crawl_ps = 300 / (time.perf_counter() - t)
        t = time.perf_counter()
        with requests.Session() as sess:
            for i in range(300):
                sess.get(f"{base}/s/p{i}.html", timeout=10)
        fetch_ps = 300 / (time.perf_counter() - t)
    finally:
        srv.shutdown()
    return crawl_ps, fetch_ps
