# ruff: noqa: E501  (Japanese questions are kept whole)
"""The guideline RAG chatbot against loopback sites: crawl, classify, retrieve, answer or refuse, evaluate."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dkg.errors import IngestError
from dkg.settings import Settings, load_settings
from dkg.web.crawl import Fetcher, WebFetchError, crawl, toc_links
from dkg.web.evaluate import compare, evaluate
from dkg.web.rag import (
    Site,
    SiteIndex,
    ask,
    grounding,
    index_site,
    load_site,
    process_pages,
)
from dkg.web.text import japanese_nouns, load_web_config
from tests.fixtures.web_sites import bad_routes, cpgqa_routes, ja_routes, medquad, nci_routes, serve, written_site

pytestmark = [pytest.mark.slow]


@pytest.fixture()
def web_settings(tmp_path: Path) -> Settings:
    return load_settings(state_dir=tmp_path / "state", web_delay_s=0.0, web_timeout_s=2.0, web_retries=1,
                         web_max_bytes=2_000_000)


def _site(settings: Settings, toc: str) -> tuple[Site, SiteIndex]:
    pages, report = crawl(settings, toc)
    site = Site(name="t", toc=toc, crawled_at=0, pages=list(pages.values()),
                processed=process_pages(pages, None, set(pages)), title=report.title)
    return site, index_site(site)


def test_japanese_site_thymic_questions_answered_glioma_refused(web_settings: Settings) -> None:
    assert japanese_nouns("胸腺腫の治療には手術が行われます。") == ["胸", "腺腫", "治療", "手術"]
    with serve(ja_routes()) as base:
        site, index = _site(web_settings, f"{base}/ja/toc.html")
    by_url = {p.url.rsplit("/", 1)[1]: p for p in site.pages}
    assert len(by_url) == 14
    assert not by_url["about.html"].medical and not by_url["links.html"].medical
    assert sum(p.medical for p in site.pages) == 12
    in_scope = {"胸腺腫はどのように診断されますか？": "q03.html", "胸腺腫の病理診断はどのように行われますか？": "q04.html",
                "胸腺腫の治療法について教えてください。": "q06.html", "胸腺腫の手術はどのように行われますか？": "q07.html"}
    for mode in ("protocol", "best"):
        for q, page in in_scope.items():
            a = ask(web_settings, index, q, mode=mode)
            assert a.status == "answered" and a.mode == mode, (q, a)
            assert any(r.url.endswith(page) for r in a.references[:2]), (q, a.references)
            referenced = " ".join(p.text for p in site.pages if p.url in {r.url for r in a.references})
            assert a.answer and grounding(a.answer, referenced, "ja") == 1.0
            assert len(a.keywords) == 2 or mode == "best"
        for q in ["小児の神経膠腫の症状は何ですか？", "小児神経膠腫の治療法は？", "小児のグリオーマの手術の危険性は？",
                  "小児神経膠腫に化学療法は効きますか？"]:
            a = ask(web_settings, index, q, mode=mode)
            refusals = {"no_references": "参考情報がありません。", "not_enough_information": "テキストに十分な情報がありません。"}
            assert refusals.get(a.status) == a.answer, (mode, q, a)


def test_crawl_keeps_own_pages_classifies_and_reports_changes(web_settings: Settings, tmp_path: Path) -> None:
    routes, _ = nci_routes()
    with serve(routes) as base:
        toc = f"{base}/nci/toc.html"
        links = toc_links(Fetcher(web_settings).get(toc), toc)
        assert all(u.startswith(f"{base}/nci/") and "#" not in u for u in links)
        assert len(links) == len(set(links)) == len([p for p in routes if p.startswith("/nci/")]) - 1
        pages, report = crawl(web_settings, toc)
        assert not report.failed and report.new and not report.changed
        assert not pages[f"{base}/nci/about.html"].medical and not pages[f"{base}/nci/links.html"].medical
        medical = [p for p in pages.values() if p.medical]
        assert len(medical) >= 0.9 * (len(pages) - 2)
        # a re-crawl after one page changed and one disappeared reports just that
        changed = next(p for p in routes if p.startswith("/nci/types-kidney"))
        routes[changed].body = routes[changed].body.replace(b"</main>", b"<p>Updated paragraph.</p></main>")
        gone = next(p for p in routes if p.startswith("/nci/types-bone"))
        toc_route = routes["/nci/toc.html"]
        toc_route.body = toc_route.body.replace(gone[len("/nci/"):].encode(), b"missing.html")
        routes["/nci/missing.html"] = routes.pop(gone)
        pages2, report2 = crawl(web_settings, toc, pages)
        assert report2.changed == [f"{base}{changed}"]
        assert report2.removed == [f"{base}{gone}"] and report2.new == [f"{base}/nci/missing.html"]
        assert report2.unchanged == len(pages) - 2
    from openpyxl import load_workbook

    from dkg.web.crawl import export_xlsx

    xlsx = export_xlsx(pages2.values(), tmp_path / "urls.xlsx")
    rows = list(load_workbook(xlsx).active.iter_rows(values_only=True))  # type: ignore[union-attr]
    assert rows[0][:4] == ("url", "title", "language", "medical") and len(rows) == len(pages2) + 1
    assert {r[3] for r in rows[1:]} == {"yes", "no"}


def test_threshold_truncation_and_both_refusals(web_settings: Settings) -> None:
    web_settings = load_settings(state_dir=web_settings.state_path, rag_mode="protocol", web_delay_s=0.0)
    routes, _ = nci_routes()
    with serve(routes) as base:
        _, index = _site(web_settings, f"{base}/nci/toc.html")
    a = ask(web_settings, index, "What is the treatment of Ewing sarcoma?")
    assert a.status == "answered" and a.references
    assert all(r.score >= 0.2 for r in a.references)
    assert [r.score for r in a.references] == sorted((r.score for r in a.references), reverse=True)
    assert a.reference_chars == 4096  # many long pages: the joined text is cut
    strict = load_settings(state_dir=web_settings.state_path, rag_mode="protocol", rag_threshold=0.99)
    assert ask(strict, index, "What is the treatment of Ewing sarcoma?").status == "no_references"
    short = load_settings(state_dir=web_settings.state_path, rag_mode="protocol", rag_max_chars=300)
    assert ask(short, index, "What is the treatment of Ewing sarcoma?").reference_chars == 300
    none = ask(web_settings, index, "How much does parking cost at the hospital?")
    assert none.status == "no_references" and none.answer == "There are no references."
    thin = ask(web_settings, index, "Can leukemia be treated by nephrectomy?")
    assert thin.status == "not_enough_information" and thin.answer == "There is not enough information in the text."
    assert ask(web_settings, index, "").status == "rejected"
    assert ask(web_settings, index, "x" * 10_000).status == "rejected"
    # the best mode: the same refusals, each with its reason; references are passages' pages within the budget
    best = load_settings(state_dir=web_settings.state_path, rag_mode="best")
    a = ask(best, index, "What is the treatment of Ewing sarcoma?")
    assert a.status == "answered" and a.mode == "best" and a.references and a.reference_chars <= 4096
    assert all(r.section for r in a.references) and "Ewing" in " ".join(r.title for r in a.references)
    parking = ask(best, index, "How much does parking cost at the hospital?")
    assert parking.answer == {"no_references": "There are no references.",
                              "not_enough_information": "There is not enough information in the text."}.get(
        parking.status), parking
    thin = ask(best, index, "Can leukemia be treated by nephrectomy?")
    assert thin.status == "not_enough_information" and thin.detail, thin
    passing = ask(best, index, "What are the treatments for Hairy Cell Leukemia?")  # named once, in passing
    assert passing.status == "not_enough_information" and "in passing" in str(passing.detail), passing
    assert [(t["term"], t["verdict"]) for t in passing.scope] == [("Hairy Cell Leukemia", "passing")], passing.scope
    old_name = ask(best, index, "What are the treatments for malignant fibrous histiocytoma of bone?")
    assert old_name.status == "answered", old_name  # the site's "formerly called …" alias
    assert "Pleomorphic" in " ".join(r.title for r in old_name.references) or "UPS" in " ".join(
        r.title for r in old_name.references), old_name.references


def test_bad_sites_give_clear_messages(web_settings: Settings) -> None:
    with serve(bad_routes()) as base:
        pages, report = crawl(web_settings, f"{base}/bad/toc.html")
        fails = " | ".join(report.failed)
        assert "slow.html" in fails and "error.html: failed after 2 attempts (HTTP 500)" in fails
        assert "huge.html: larger than" in fails
        sjis = pages[f"{base}/bad/sjis.html"]
        assert "胸腺腫" in sjis.text and sjis.language == "ja"
        with pytest.raises(IngestError, match="links to no page"):
            crawl(web_settings, f"{base}/empty/toc.html")
        with pytest.raises(IngestError, match="links to no page"):
            crawl(web_settings, f"{base}/offsite/toc.html")
        with pytest.raises(WebFetchError, match="HTTP 404"):
            crawl(web_settings, f"{base}/nothing/toc.html")


class _LabelledStandIn(BaseHTTPRequestHandler):
    """LOCAL STAND-IN for the paid OpenAI-compatible API (tests only): echoes fixed replies."""

    mode = "ok"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        user = body["messages"][-1]["content"]
        if self.mode == "error":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "boom"}}')
            return
        if "Extract two keywords" in user:
            text = "Ewing sarcoma, treatment"
        else:
            assert body["temperature"] == 0.1 and body["max_tokens"] == 1024
            assert user.startswith("Reference information: ") and "\nQuestion: " in user
            cites = "cite the" in body["messages"][0]["content"]  # the best mode numbers its references
            text = {"ok": "Multiagent chemotherapy is given" + (" [1]." if cites else "."),
                    "cites_more": "Multiagent chemotherapy is given [9].",
                    "outside": "Take 500 mg of aspirin twice a day with honey [1]."}[self.mode]
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": text}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def llm_stand_in() -> Iterator[tuple[str, type[_LabelledStandIn]]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _LabelledStandIn)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", _LabelledStandIn
    httpd.shutdown()


def test_llm_path_uses_the_protocol_message_and_reports_endpoint_errors(
        web_settings: Settings, llm_stand_in: tuple[str, type[_LabelledStandIn]]) -> None:
    url, handler = llm_stand_in
    routes, _ = nci_routes()
    with serve(routes) as base:
        _, index = _site(web_settings, f"{base}/nci/toc.html")
    s = load_settings(state_dir=web_settings.state_path, llm_base_url=url, llm_model="stand-in", rag_mode="protocol")
    a = ask(s, index, "How is Ewing sarcoma treated?")
    assert a.status == "answered" and a.generator == "llm" and a.keywords == ["Ewing sarcoma", "treatment"]
    # the best mode asks no keywords; the protocol's answer prompt goes with its passages, unchanged
    b = ask(s, index, "How is Ewing sarcoma treated?", mode="best")
    assert b.status == "answered" and b.generator == "llm" and b.mode == "best"
    assert b.answer == "Multiagent chemotherapy is given [1]." and "ewe" in b.keywords
    # the best mode checks the model's answer: it cites only the references given, and holds only their words
    handler.mode = "cites_more"
    c = ask(s, index, "How is Ewing sarcoma treated?", mode="best")
    assert c.status == "not_enough_information" and "[9]" in str(c.detail), c
    handler.mode = "outside"
    d = ask(s, index, "How is Ewing sarcoma treated?", mode="best")
    assert d.status == "not_enough_information" and "numbers the references do not (500)" in str(d.detail), d
    # and the scope decision runs before the model is called: a question on another disease never reaches it
    handler.mode = "error"
    e = ask(s, index, "What are the treatments for Hairy Cell Leukemia?", mode="best")
    assert e.status == "not_enough_information" and e.generator == "llm" and "in passing" in str(e.detail), e
    handler.mode = "ok"
    refusal = load_web_config().refusals["en"]["not_enough"]
    handler.mode = "error"  # the endpoint answers with an error: the fixed sentence, the cause reported
    failed = ask(s, index, "How is Ewing sarcoma treated?", mode="protocol")
    assert failed.status == "llm_unavailable" and failed.answer == refusal and failed.detail
    handler.mode = "ok"
    down = load_settings(state_dir=web_settings.state_path, llm_base_url="http://127.0.0.1:1/v1", llm_timeout_s=2,
                         rag_mode="protocol")
    gone = ask(down, index, "How is Ewing sarcoma treated?")  # nobody listens: the same, never a hang
    assert gone.status == "llm_unavailable" and gone.answer == refusal
    assert gone.detail and "did not answer" in gone.detail


def test_evaluation_on_medquad_and_cpgqa(web_settings: Settings) -> None:
    routes, _ = nci_routes()
    with serve(routes) as base:
        _, index = _site(web_settings, f"{base}/nci/toc.html")
    questions = medquad()
    both = compare(web_settings, index, questions)
    report, best = both.modes["protocol"], both.modes["best"]
    assert report.in_scope and report.out_of_scope and best.in_scope and best.out_of_scope
    # Protocol, measured: 99.0 % of 703 out-of-scope refused (the renal summary itself cross-references
    # transitional cell cancer of the renal pelvis); 18 of 18 in-scope answered except the 8 questions that use
    # the old name "malignant fibrous histiocytoma", which the current summary no longer uses.
    assert report.out_of_scope.refused_pct >= 98.5, report.out_of_scope
    named = [q for q in questions if q["in_scope"] and "Histiocytoma" not in str(q["focus"])]
    assert evaluate(web_settings, index, named, "protocol").in_scope.answered_pct == 100.0  # type: ignore[union-attr]
    assert report.in_scope.grounding_mean is not None and report.in_scope.grounding_mean >= 0.95
    # Best, measured: all 26 in scope answered (the old name found through the site's "formerly called"),
    # all 703 out of scope refused (names mentioned in passing are no page's subject), grounding 1.0.
    assert best.in_scope.answered_pct == 100.0 and best.out_of_scope.refused_pct == 100.0, best
    assert best.in_scope.grounding_mean == 1.0, best.in_scope
    cpg_routes, cpg_questions = cpgqa_routes()
    with serve(cpg_routes) as base:
        _, cpg_index = _site(web_settings, f"{base}/cpg/toc.html")
    cpg = compare(web_settings, cpg_index, cpg_questions)
    protocol, top = cpg.modes["protocol"].in_scope, cpg.modes["best"].in_scope
    expanded = load_settings(state_dir=web_settings.state_path, rag_query="keywords+question")
    wide = evaluate(expanded, cpg_index, cpg_questions, "protocol").in_scope
    assert protocol and wide and top and protocol.hit_rate is not None and wide.hit_rate is not None
    # Two keywords against 190 short passages of one guideline (measured 0.46); adding the question's words
    # (rag_query = keywords+question) finds the answer passage for 0.74 of the 1,097 questions.
    assert protocol.hit_rate >= 0.4 and wide.hit_rate >= 0.7, (protocol, wide)
    # Best, measured on all 1,097: reference recall 0.976, gold span inside the answer 0.712, token F1 0.27,
    # answered 0.89 (the rules were written looking at 300 of them; see docs/concepts/chatbot.md).
    assert top.hit_rate is not None and top.hit_rate >= 0.95, top
    assert top.span_recall is not None and top.span_recall >= 0.68, top
    assert top.grounding_mean == 1.0 and (top.token_f1 or 0) > (protocol.token_f1 or 0), (top, protocol)


@pytest.mark.parametrize(("name", "floors"), [
    # "page": in scope answered with the expected page among the references; "refused": out of scope refused.
    # asthma-en and osteoporosis-ja: first written sites (their first sight is in the README there). The next
    # four were measured at first sight with the scope by named things (c484c97) before anything was changed for
    # them (gout 16/20 and 8/10, bowel 16/20 and 7/10, gastric 13/20 and 9/10, rheumatoid 19/20 and 7/10); the
    # next two after the changes those led to (migraine 16/20 and 8/10, diabetes 15/20 and 9/10). Measured now:
    ("asthma-en", {"hit": 0.85, "page": 0.80, "refused": 100.0}),          # 0.825, 100 %
    ("osteoporosis-ja", {"hit": 0.90, "page": 0.75, "refused": 100.0}),    # 0.75, 100 %
    ("gout-en", {"hit": 0.95, "page": 0.95, "refused": 100.0}),            # 1.0, 100 %
    ("bowel-screening-en", {"hit": 0.95, "page": 0.90, "refused": 100.0}),  # 0.90, 100 %
    ("gastric-cancer-ja", {"hit": 0.90, "page": 0.90, "refused": 100.0}),  # 0.90, 100 %
    ("rheumatoid-ja", {"hit": 0.95, "page": 0.95, "refused": 90.0}),       # 1.0, 90 %
    ("migraine-en", {"hit": 0.90, "page": 0.90, "refused": 90.0}),         # 0.90, 90 %
    ("diabetes-ja", {"hit": 0.85, "page": 0.85, "refused": 90.0}),         # 0.85, 90 %
    # written after all of the above, first sight (e39c05d): heart failure 18/20 and 7/10, dementia 15/20 and 10/10
    ("heart-failure-en", {"hit": 0.90, "page": 0.90, "refused": 90.0}),    # 0.90, 90 %
    ("dementia-ja", {"hit": 0.75, "page": 0.75, "refused": 100.0}),        # 0.75, 100 %
    # written after all of the above (2e7e093), first sight: copd 17/20 and 6/10, hypertension 11/20 and 3/10;
    # then three Japanese classes (another disease holding the subject's name, 低血圧 and 心不全 as conditions,
    # words of when as no subject), then COVID-19 as a condition (ICD-10-CM chapter 22) and a named pain (片頭痛):
    ("copd-en", {"hit": 0.95, "page": 0.85, "refused": 70.0}),             # hit 1.0, 0.85, 70 %
    ("hypertension-ja", {"hit": 0.75, "page": 0.60, "refused": 80.0}),     # 0.60, 80 %
])
def test_sites_written_for_evaluation(web_settings: Settings, name: str, floors: dict[str, float]) -> None:
    routes, questions = written_site(name)
    with serve(routes) as base:
        _, index = _site(web_settings, f"{base}/{name}/toc.html")
    both = compare(web_settings, index, questions)
    best, protocol = both.modes["best"], both.modes["protocol"]
    assert best.in_scope and best.out_of_scope and protocol.in_scope
    assert (best.in_scope.hit_rate or 0) >= floors["hit"] > (protocol.in_scope.hit_rate or 0), best
    assert (best.in_scope.answered_on_page or 0) >= floors["page"], best.in_scope
    assert best.out_of_scope.refused_pct >= floors["refused"], best.out_of_scope
    assert best.in_scope.grounding_mean == 1.0, best.in_scope


def test_web_ingest_flow_keeps_sites_and_the_cli_answers(web_settings: Settings, prefect_harness: None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.ingest_web_guideline import ingest_web_guideline

    monkeypatch.setenv("DKG_STATE_DIR", str(web_settings.state_path))
    monkeypatch.setenv("DKG_WEB_DELAY_S", "0")
    with serve(ja_routes()) as base:
        first = ingest_web_guideline(f"{base}/ja/toc.html", "ja")
        again = ingest_web_guideline(f"{base}/ja/toc.html", "ja")
    assert first.pages == 14 and first.medical == 12 and first.new == 14
    assert again.new == 0 and again.changed == 0 and again.unchanged == 14
    assert Path(first.xlsx).exists()
    site = load_site(load_settings(state_dir=web_settings.state_path))
    assert site.name == "ja"
