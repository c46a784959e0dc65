"""Web chatbot quality, both modes in one run: the best mode's figures against the protocol's as baseline.

Sites are the test fixtures served on loopback and crawled as a user would (`tests/fixtures/web_sites.py`):
the NCI PDQ summaries (MedQuAD questions in and out of scope), the cpgQA contexts (all 1,097 questions, with
the gold answer span), and the Japanese thymic-tumour guidebook (8 questions). The best mode's rules were
written while looking at 300 cpgQA questions (``random.Random(5).sample``) and at MedQuAD; the other 797
cpgQA questions are reported on their own as well. Ten sites written for evaluation by helpers that saw no
code (`tests/fixtures/web/`, four English and four Japanese) were each measured once at first sight, then used
for development too (their README gives the first-sight figures). The full table goes to stderr.
"""

from __future__ import annotations

import random
import sys
from typing import Any

from bench.common import Row

WRITTEN = ("asthma-en", "osteoporosis-ja", "gout-en", "bowel-screening-en", "gastric-cancer-ja", "rheumatoid-ja",
           "migraine-en", "diabetes-ja", "heart-failure-en", "dementia-ja", "copd-en", "hypertension-ja")
"""Sites written for evaluation by helpers that saw no code (tests/fixtures/web/README.md)."""
JA = [("胸腺腫はどのように診断されますか？", True), ("胸腺腫の病理診断はどのように行われますか？", True),
      ("胸腺腫の治療法について教えてください。", True), ("胸腺腫の手術はどのように行われますか？", True),
      ("小児の神経膠腫の症状は何ですか？", False), ("小児神経膠腫の治療法は？", False),
      ("小児のグリオーマの手術の危険性は？", False), ("小児神経膠腫に化学療法は効きますか？", False)]


def _index(routes: dict[str, Any], toc_path: str) -> Any:
    from dkg.settings import load_settings
    from dkg.web.crawl import crawl
    from dkg.web.rag import Site, index_site, process_pages
    from tests.fixtures.web_sites import serve

    settings = load_settings(web_delay_s=0.0)
    with serve(routes) as base:
        pages, report = crawl(settings, f"{base}{toc_path}")
    site = Site(name="bench", toc=toc_path, crawled_at=0, pages=list(pages.values()),
                processed=process_pages(pages, None, set(pages)), title=report.title)
    return index_site(site)


def run() -> list[Row]:
    from dkg.settings import load_settings
    from dkg.web.evaluate import compare
    from tests.fixtures.web_sites import cpgqa_routes, ja_routes, medquad, nci_routes, written_site

    settings = load_settings()
    rows: list[Row] = []
    table: list[tuple[str, str, Any]] = []

    nci = _index(nci_routes()[0], "/nci/toc.html")
    mq = compare(settings, nci, medquad())
    cpg_routes, cpg_q = cpgqa_routes()
    cpg = _index(cpg_routes, "/cpg/toc.html")
    looked = random.Random(5).sample(range(len(cpg_q)), 300)
    rest = [q for i, q in enumerate(cpg_q) if i not in set(looked)]
    cpg_all = compare(settings, cpg, cpg_q)
    cpg_rest = compare(settings, cpg, rest)
    ja = compare(settings, _index(ja_routes(), "/ja/toc.html"), [{"question": q, "in_scope": s} for q, s in JA])
    written = {}
    for name in WRITTEN:
        routes, questions = written_site(name)
        written[name] = compare(settings, _index(routes, f"/{name}/toc.html"), questions)

    for name, report in (("MedQuAD on NCI", mq), ("cpgQA, all 1,097", cpg_all), ("cpgQA, 797 not looked at", cpg_rest),
                         ("Japanese guidebook", ja),
                         *((f"{name} (written)", written[name]) for name in WRITTEN)):
        for mode, ev in report.modes.items():
            table.append((name, mode, ev))
    print(f"{'set':<30} {'mode':<9} {'scope':<5} {'n':>5} {'ref recall':>10} {'on page':>8} {'answered':>9} "
          f"{'refused':>8} {'span':>6} {'F1':>6} {'ground':>7} {'p95 ms':>7}", file=sys.stderr)
    for name, mode, ev in table:
        for scope, g in (("in", ev.in_scope), ("out", ev.out_of_scope)):
            if g:
                print(f"{name:<30} {mode:<9} {scope:<5} {g.questions:>5} {g.hit_rate or '-':>10} "
                      f"{g.answered_on_page or '-':>8} "
                      f"{g.answered_pct:>8}% {g.refused_pct:>7}% {g.span_recall or '-':>6} {g.token_f1 or '-':>6} "
                      f"{g.grounding_mean or '-':>7} {ev.latency_ms_p95:>7}", file=sys.stderr)

    def pair(report: Any, scope: str, field: str) -> tuple[float, float]:
        b = getattr(getattr(report.modes["best"], scope), field) or 0.0
        p = getattr(getattr(report.modes["protocol"], scope), field) or 0.0
        return float(b), float(p)

    for label, report, scope, field, unit in (
            ("cpgQA reference recall", cpg_all, "in_scope", "hit_rate", ""),
            ("cpgQA answer-span recall", cpg_all, "in_scope", "span_recall", ""),
            ("cpgQA token F1", cpg_all, "in_scope", "token_f1", ""),
            ("cpgQA (797) reference recall", cpg_rest, "in_scope", "hit_rate", ""),
            ("cpgQA (797) answer-span recall", cpg_rest, "in_scope", "span_recall", ""),
            ("MedQuAD in scope answered", mq, "in_scope", "answered_pct", "%"),
            ("MedQuAD out of scope refused", mq, "out_of_scope", "refused_pct", "%"),
            ("Japanese in scope answered", ja, "in_scope", "answered_pct", "%"),
            ("Japanese out of scope refused", ja, "out_of_scope", "refused_pct", "%"),
            *((f"{name}: in scope answered from the expected page", written[name], "in_scope", "answered_on_page", "")
              for name in WRITTEN),
            *((f"{name}: out of scope refused", written[name], "out_of_scope", "refused_pct", "%")
              for name in WRITTEN)):
        b, p = pair(report, scope, field)
        rows.append(Row(f"{label}, best", b, "the same, protocol", p, unit))
    return rows
