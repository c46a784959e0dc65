"""The whole chain through the version watcher, under the Prefect test harness, against the real services.

Version 1 of two reference guidelines is published (BONE at a local HTTP URL, KID in a
folder), the watcher runs every stage (ingest → constraints → GX gate → DKG → QA dataset → retraining);
a poll without change runs nothing; an unchanged guideline re-run does no work (pages come from the cache,
nothing is loaded, validated or trained); version 2 then flows through and exactly the QA items whose
answer changed are found stale.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dkg.graph import loader
from dkg.qa import registry, store
from dkg.qa.build import graph_views
from dkg.qa.config import load_config
from dkg.qa.dataset import expected_answer
from dkg.qa.validate import run_items
from dkg.settings import Settings, load_settings
from tests.integration.test_graph import _wipe
from tests.pdf_support import reference_pdfs

# Five guideline loads, three dataset builds and three (deliberately tiny) trainings.
pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.timeout(1800)]
CODES = ["BONE", "KID"]  # one guideline by URL, one by folder (ALL, 6,000 of 8,000 items, adds time, not coverage)
# "maintained": train on the dataset the chain just brought up to date (no second generation from the graph;
# the default "fresh" path is trained and evaluated in tests/flows/test_text2cypher.py)
TRAINING: dict[str, Any] = {"with_baseline": False, "epochs": 1, "max_train_items": 400, "training_data": "maintained"}


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A local HTTP server publishing one guideline PDF (ETag-less; Last-Modified and the bytes change)."""
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/guideline.pdf", served
    httpd.shutdown()


def _pdf(stem: str) -> Path:
    return next(p for p in reference_pdfs() if p.stem == stem)


def _publish(served: Path, stem: str) -> None:
    target = served / "guideline.pdf"
    shutil.copy(_pdf(stem), target)
    later = time.time() + 5  # a later Last-Modified than the copy it replaces
    os.utime(target, (later, later))


def _runs(flow_name: str) -> list[Any]:
    """Flow runs of one flow, newest first, from the harness's API."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName
    from prefect.client.schemas.sorting import FlowRunSort

    with get_client(sync_client=True) as client:
        return list(client.read_flow_runs(flow_filter=FlowFilter(name=FlowFilterName(any_=[flow_name])),
                                          sort=FlowRunSort.START_TIME_DESC, limit=200))


def _task_states(flow_run_id: Any) -> list[tuple[str, str]]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
    return [(r.name, r.state.name if r.state else "") for r in runs]


def _current(settings: Settings) -> dict[str, str]:
    return {str(g["code"]): str(g["version"]) for g in loader.guidelines(settings) if g["code"] in CODES}


def test_v1_then_v2_flow_through_the_watcher_and_unchanged_inputs_do_no_work(
    services: Settings, prefect_harness: None, server: tuple[str, Path], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from flows.guideline_pipeline import guideline_pipeline
    from flows.watch_guidelines import watch_guidelines

    qa_home = tmp_path / "qa"
    monkeypatch.setenv("DKG_QA_DIR", str(qa_home))
    monkeypatch.setenv("DKG_QA_MAX_TEST_ITEMS", "100")  # each of the tiny trainings is evaluated on 100 test items
    monkeypatch.setenv("DKG_LLM_API_KEY", CANARY_KEY)  # set, never used (no LLM endpoint): must never be written
    others = [g["code"] for g in loader.guidelines(services) if g["code"] not in CODES]
    _wipe(services, [*CODES, *others])  # the reference guidelines alone, loaded by the watcher from nothing

    url, served = server
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    tag = uuid.uuid4().hex[:8]
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - name: all-url-{tag}\n    kind: url\n    location: {url}\n"
                       f"  - name: inbox-{tag}\n    kind: folder\n    location: {inbox}\n    pattern: '*.pdf'\n")

    # --- poll 1: version 1 of each guideline runs through every stage ------------------------------------
    _publish(served, "BONE-1.2023")
    shutil.copy(_pdf("KID-1.2023"), inbox)
    first = watch_guidelines(str(sources), full_pipeline=True, **TRAINING)
    assert sorted(first.loaded) == ["BONE 1.2023", "KID 1.2023"], first
    assert {d.version for d in first.changed} == {"1.2023"} and not first.failed
    assert _current(services) == {"BONE": "1.2023", "KID": "1.2023"}
    assert first.downstream is not None
    qa1, model1 = first.downstream.qa, first.downstream.model
    # (~4,230 items for BONE and KID)
    assert not qa1.skipped and qa1.items >= 4000 and qa1.valid == qa1.items and qa1.failures == 0 and qa1.schema_ok
    assert set(qa1.by_type) == {"next_step", "constraints", "advisable", "not_covered"}
    assert all(n >= 500 for n in qa1.by_type.values()), qa1.by_type
    assert qa1.leakage.clean, qa1.leakage
    assert qa1.dataset_version and qa1.dataset_version.startswith("BONE-1.2023+KID-1.2023.")
    items_v1 = store.load(qa_home / "current")
    assert items_v1 is not None and len(items_v1) == qa1.items
    assert all(it.DKG_response == it.Expected_Node for it in items_v1)
    dd = store.load_hf(Path(qa1.export or ""))
    assert {k: len(v) for k, v in dd.items()} == qa1.by_split
    adv = [it for it in items_v1 if it.type == "advisable"]
    assert {it.advisable for it in adv} == {True, False}
    assert all(it.ANSWER.startswith("Yes") == it.advisable for it in adv)
    assert model1 is not None and not model1.skipped and model1.promoted  # nothing was promoted before
    assert model1.dataset_version == qa1.dataset_version
    assert registry.promoted(load_settings(state_dir=services.state_path, qa_dir=qa_home)) is not None
    # runs are named after what they processed
    assert {r.name for r in _runs("build-dkg")[:2]} == {"build BONE 1.2023", "build KID 1.2023"}
    assert _runs("watch-guidelines")[0].name.startswith("watch: ")

    # --- poll 2: nothing changed, nothing runs ----------------------------------------------------------------
    builds_before = len(_runs("build-dkg"))
    second = watch_guidelines(str(sources), full_pipeline=True, **TRAINING)
    assert second.changed == [] and second.loaded == [] and second.downstream is None
    assert len(_runs("build-dkg")) == builds_before
    assert _runs("watch-guidelines")[0].name == "watch: no change"

    # --- an unchanged guideline run again by hand: every stage finds its work done --------------------------
    work_before = {f: len(_runs(f)) for f in ("extract-constraints", "load-dkg", "validate-qa-dataset")}
    again = guideline_pipeline(str(_pdf("BONE-1.2023")), **TRAINING)
    assert not again.graph.loaded and "nothing to do" in again.graph.message
    assert again.qa is not None and again.qa.skipped and again.qa.dataset_version == qa1.dataset_version
    assert again.model is not None and again.model.skipped
    pages = [s for n, s in _task_states(_runs("ingest-guideline")[0].id) if n.startswith("parse-page")]
    assert pages and set(pages) == {"Cached"}, pages  # no page parsed twice
    assert {f: len(_runs(f)) for f in work_before} == work_before  # nothing extracted, loaded or re-validated
    assert _runs("guideline-pipeline")[0].name == "pipeline BONE 1.2023"
    assert _current(services)["BONE"] == "1.2023"

    # --- poll 3: version 2 of each guideline ------------------------------------------------------------------
    _publish(served, "BONE-2.2023")
    shutil.copy(_pdf("KID-2.2023"), inbox)
    third = watch_guidelines(str(sources), full_pipeline=True, **TRAINING)
    assert sorted(third.loaded) == ["BONE 2.2023", "KID 2.2023"], third
    assert _current(services) == {"BONE": "2.2023", "KID": "2.2023"}
    assert third.downstream is not None
    qa2, model2 = third.downstream.qa, third.downstream.model
    # the items whose answer changed are exactly those the Python rule predicts from each item's facts
    views, conf = graph_views(services), load_config()
    affected = set()
    for it in items_v1:
        now = expected_answer(it, views, conf)
        if now is None or (sorted(now[0]), now[1]) != (sorted(it.Expected_Node), it.ANSWER):
            affected.add(it.id)
    assert affected and {it.guideline for it in items_v1 if it.id in affected} == set(CODES)
    assert not qa2.skipped and set(qa2.stale_ids) == affected  # Cypher on the graph agrees with Python
    assert qa2.regenerated + qa2.dropped == len(affected) and qa2.added > 0  # each v2 has a new branch
    assert qa2.valid == qa2.items and qa2.failures == 0
    assert qa2.dataset_version and qa2.dataset_version.startswith("BONE-2.2023+KID-2.2023.")
    after = {it.id: it for it in store.load(qa_home / "current") or []}
    assert all(after[it.id].ANSWER == it.ANSWER for it in items_v1 if it.id not in affected)
    assert model2 is not None and not model2.skipped and model2.dataset_version == qa2.dataset_version
    assert registry.read_run(Path(model2.run or ""))["promoted"] is model2.promoted  # a decision was recorded

    # --- poll 4: unchanged again ------------------------------------------------------------------------------
    fourth = watch_guidelines(str(sources), full_pipeline=True, **TRAINING)
    assert fourth.changed == [] and fourth.loaded == [] and fourth.downstream is None

    # --- poll 5: a third guideline that shares attributes (stage, age, ECOG) with the others -----------------
    _fourth_guideline_joins(services, sources, inbox, qa_home, tmp_path, monkeypatch)

    # --- no secret in any log, artifact or file the chain wrote ------------------------------------------------
    _assert_no_secrets(services, [tmp_path, services.state_path])


HL_TRUTH = Path(__file__).resolve().parents[1] / "fixtures" / "new_guideline" / "truth.json"


def _fourth_guideline_joins(services: Settings, sources: Path, inbox: Path, qa_home: Path, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """HL 1.2024 (written for the tests; stage, age and ECOG like the references) arrives in the inbox: the items
    asking about a disease no guideline covered that HL now covers are dropped, any item naming no guideline that
    HL answers too is replaced by one naming its guideline (unit-tested in tests/unit/test_new_guideline_rules.py),
    the chain says so, retrains, promotes, and the promoted model answers a question about HL."""
    from dkg.qa.answer import Answerer
    from dkg.qa.model import Seq2Seq
    from flows.watch_guidelines import watch_guidelines
    from tests.fixtures.restyle import render

    monkeypatch.setenv("DKG_AUTO_APPROVE_ATTRIBUTES", "1")
    monkeypatch.setenv("DKG_REGISTRY_FILE", str(tmp_path / "registry" / "attributes.json"))
    render(HL_TRUTH, inbox / "HL-1.2024.pdf")
    try:
        fifth = watch_guidelines(str(sources), full_pipeline=True, **TRAINING)
        assert fifth.loaded == ["HL 1.2024"] and not fifth.failed, fifth
        assert fifth.downstream is not None
        qa5, model5 = fifth.downstream.qa, fifth.downstream.model
        assert qa5.valid == qa5.items and qa5.failures == 0 and qa5.schema_ok
        assert "HL" in qa5.by_guideline and qa5.by_guideline["HL"] > 100, qa5.by_guideline
        # "… Hodgkin lymphoma?" was asked as a disease no guideline covered: those items are gone now
        covered = qa5.reasons.get("names a disease a loaded guideline now covers", 0)
        assert covered > 0, (qa5.reasons, qa5.changes)
        items = store.load(qa_home / "current") or []
        assert not [it.QUESTION for it in items if it.type == "not_covered" and not it.guideline
                    and "hodgkin" in it.QUESTION.lower()]
        # an item naming no guideline that HL answers too would be asked again naming its guideline; with BONE and
        # KID none is (HL's stage branches need what their questions do not state), so nothing was replaced
        ambiguous = qa5.reasons.get("names no guideline and is now ambiguous", 0)
        assert qa5.replaced == ambiguous and f"{ambiguous} replaced by items naming their guideline" in qa5.changes
        assert not [it.id for it in items if it.id in set(qa5.stale_ids) and it.guideline != "HL"
                    and "{code:" not in it.QUERY and it.type == "next_step"]  # the ambiguous ones are gone
        assert model5 is not None and model5.promoted, model5
        settings = load_settings(state_dir=services.state_path, qa_dir=qa_home)
        answer = Answerer(settings, Seq2Seq(registry.promoted_model_dir(settings))).ask(
            "Stage IIB Hodgkin lymphoma: what is the primary treatment?")
        assert answer.status == "answered" and "Give escalated BEACOPP or A+AVD" in answer.answer, answer
    finally:
        loader.remove_guideline(services, "HL")


CANARY_KEY = "sk-dkg-canary-7f3c9e1d2b"


def _assert_no_secrets(settings: Settings, folders: list[Path]) -> None:
    """The Neo4j password and the API key appear in no Prefect log or artifact and in no file written,
    except the password file itself (0600) and Neo4j's own store."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter
    from prefect.logging.handlers import APILogHandler

    from dkg.services import neo4j as neo4j_service

    APILogHandler().flush()  # logs still queued for the API are sent first

    secret_file = neo4j_service.password_file(settings)
    secrets = [secret_file.read_text(encoding="utf-8").strip(), CANARY_KEY]
    logs: list[Any] = []
    artifacts: list[Any] = []
    with get_client(sync_client=True) as client:  # the API pages by at most 200
        while page := client.read_logs(log_filter=LogFilter(), limit=200, offset=len(logs)):
            logs += page
        while page2 := client.read_artifacts(limit=200, offset=len(artifacts)):
            artifacts += page2
    texts = [lg.message for lg in logs] + [json.dumps(a.data, default=str) + str(a.description) for a in artifacts]
    assert logs and artifacts
    for secret in secrets:
        assert not [t[:100] for t in texts if secret in t]
    neo4j_store = settings.state_path / "neo4j" / "home" / "data"  # the store (credentials only hashed there)
    scanned = 0
    for folder in folders:
        for f in folder.rglob("*"):
            try:  # other processes may rename or remove files meanwhile (temporaries, the unit tests' caches)
                if not f.is_file() or f == secret_file or neo4j_store in f.parents or f.stat().st_size > 50_000_000:
                    continue
                data = f.read_bytes()
            except FileNotFoundError:
                continue
            scanned += 1
            for secret in secrets:
                assert secret.encode() not in data, f"{f} holds a secret"
    assert scanned > 50


def test_every_qa_query_is_read_only_and_parameterised(services: Settings) -> None:
    from dkg.qa.cypher import parameterize
    from dkg.qa.dataset import QAItem

    q = ("WITH {age: 45, phStatus: 'negative'} AS facts MATCH (p:Path {code: 'ALL'}) "
         "WHERE all(k IN p.catAttrs WHERE facts[k] IN p[k]) RETURN p.uid AS uid")
    text, params = parameterize(q)
    assert "'negative'" not in text and "45" not in text
    assert params == {"p0": 45, "p1": "negative", "p2": "ALL"}
    before = loader.counts(services, "KID")
    assert before, "the chain test above loads KID"
    # a query that would write is refused by the read-only transaction
    bad = QAItem(id="x", QUESTION="delete everything?", ANSWER="-", QUERY="MATCH (n:Box) DETACH DELETE n",
                 Expected_Node=[], type="next_step", guideline="KID", version="", split="train", template="-")
    result = run_items(services, [bad])["x"]
    assert result.error and "write" in result.error.lower()
    assert loader.counts(services, "KID") == before
