"""A guideline the platform has never seen (HL 1.2024, written for these tests) flows through end to end.

Its boxes bring attributes no list names: a Deauville score range, creatinine clearance in mL/min,
stage IIB, CD30-positive, (non-)bulky disease, transplant eligibility. With auto-approval the build
proposes them to the registry, approves them and loads; without it the run pauses for a data engineer,
publishes the new attributes as an artifact, loads nothing, and goes on when resumed through Prefect's
API with a typed input (here: approve with a rename), or fails and loads nothing when rejected.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dkg.constraints.evaluate import score_constraints
from dkg.constraints.registry import read_registry
from dkg.constraints.vocabulary import base_seed
from dkg.graph import loader
from dkg.settings import Settings, load_settings
from tests.fixtures.restyle import render
from tests.integration.test_graph import _wipe

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.timeout(900)]
TRUTH = Path(__file__).resolve().parents[1] / "fixtures" / "new_guideline" / "truth.json"
NEW = {"deauville", "creatinine_clearance", "cd30_status", "bulky", "transplant_eligible"}


@pytest.fixture()
def hl_pdf(tmp_path: Path) -> Path:
    return render(TRUTH, tmp_path / "HL-1.2024.pdf")


@pytest.fixture()
def registry_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, services: Settings) -> Iterator[Path]:
    """A registry of its own (seeded from the vocabulary), and no HL in the graph before or after."""
    path = tmp_path / "registry" / "attributes.json"
    monkeypatch.setenv("DKG_REGISTRY_FILE", str(path))
    monkeypatch.setenv("DKG_APPROVAL_TIMEOUT_S", "600")
    _wipe(services, ["HL"])
    yield path
    _wipe(services, ["HL"])


HAND_WRITTEN = [  # (question, the box the answer must contain), written by hand for HL 1.2024
    ("Hodgkin lymphoma, interim PET after two cycles of ABVD shows Deauville 5. Next step?",
     "Switch to escalated BEACOPP"),
    ("A 34-year-old with Hodgkin lymphoma had an interim PET after 2 cycles of ABVD with a Deauville score of 2. "
     "What next?", "Continue ABVD for 2 more cycles"),
    ("72-year-old with Hodgkin lymphoma, ECOG 2, creatinine clearance 25 mL/min. What treatment?",
     "Give brentuximab vedotin alone"),
    ("Stage IIB Hodgkin lymphoma: what is the primary treatment?", "Give escalated BEACOPP or A+AVD"),
    ("30-year-old woman, stage II Hodgkin lymphoma with bulky disease. Primary treatment?",
     "Give ABVD for 4 cycles and involved-site radiation"),
    ("Relapsed Hodgkin lymphoma, CD30-positive, not transplant eligible. What do we give?", "Give pembrolizumab"),
]


def test_the_new_guideline_goes_through_the_watchers_whole_chain_with_auto_approval(
        services: Settings, prefect_harness: None, hl_pdf: Path, registry_file: Path,
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Watcher → ingest → constraints (new attributes proposed, approved) → GX → graph → QA dataset → model."""
    from dkg.qa import registry as models
    from dkg.qa import store
    from dkg.qa.answer import Answerer
    from dkg.qa.model import Seq2Seq
    from flows.watch_guidelines import watch_guidelines

    monkeypatch.setenv("DKG_AUTO_APPROVE_ATTRIBUTES", "1")
    # HL alone in the graph: its dataset and model are then quick to build (the next module,
    # test_pipeline_chain.py, loads the reference guidelines from nothing anyway)
    _wipe(services, [str(g["code"]) for g in loader.guidelines(services)])
    qa_dir = tmp_path / "qa"
    monkeypatch.setenv("DKG_QA_DIR", str(qa_dir))
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - name: hl-inbox-{uuid.uuid4().hex[:8]}\n    kind: folder\n"
                       f"    location: {hl_pdf.parent}\n    pattern: 'HL-*.pdf'\n", encoding="utf-8")
    report = watch_guidelines(str(sources), full_pipeline=True, with_baseline=False, epochs=1, max_train_items=400)
    assert report.loaded == ["HL 1.2024"] and not report.failed, report

    # constraints against the truth written by hand
    csv_path = max((p for p in (services.state_path / "runs").rglob("constraints.csv") if "HL-1.2024" in str(p)),
                   key=lambda p: p.stat().st_mtime)
    scores = score_constraints(csv_path, json.loads(TRUTH.read_text(encoding="utf-8")))
    assert scores.overall.f1 == 1.0, scores.per_attribute

    # the registry learnt the new attributes, approved, with where they were first seen
    reg = read_registry(registry_file, base_seed())
    assert set(reg.approved()) >= NEW, sorted(reg.attributes)
    assert not reg.pending()
    assert "IIB" in reg.attributes["stage"].values
    assert reg.attributes["deauville"].first_seen.page == "HL-2"
    assert reg.attributes["creatinine_clearance"].unit == "mL/min"

    # dkg match with any attribute
    def next_steps(facts: dict[str, Any]) -> set[str]:
        return {n["text"] for r in loader.match_patient(services, facts, "HL") for n in r["next"]}

    assert "Continue ABVD for 2 more cycles" in next_steps({"deauville": 2})
    assert "Continue ABVD for 2 more cycles" not in next_steps({"deauville": 5})
    assert "Give brentuximab vedotin alone" in next_steps({"age": 70, "creatinine_clearance": 20})
    assert "Give escalated BEACOPP or A+AVD" in next_steps({"stage": "2b"})  # stage IIB, spelled another way
    assert "Give ABVD for 4 cycles and involved-site radiation" in next_steps({"stage": "II", "bulky": "yes"})
    assert "Give ABVD for 4 cycles and involved-site radiation" not in next_steps({"stage": "II", "bulky": "no"})

    # QA items for its decisions, phrased with the new attributes, all validated before they were saved
    items = [i for i in store.load(qa_dir / "current") or [] if i.guideline == "HL"]
    assert len(items) > 100, len(items)
    said = " ".join(i.QUESTION.lower() for i in items)
    assert all(w in said for w in ("deauville", "creatinine clearance", "iib", "bulky", "cd30")), said[:300]
    assert report.downstream is not None

    # hand-written questions, answered by the model the chain retrained
    answerer = Answerer(load_settings(qa_dir=qa_dir), Seq2Seq(models.promoted_model_dir(load_settings(qa_dir=qa_dir))))
    answers = answerer.ask_many([q for q, _ in HAND_WRITTEN])
    wrong = [(q, a.status, a.answer) for (q, box), a in zip(HAND_WRITTEN, answers, strict=True)
             if a.status != "answered" or box not in a.answer]
    assert not wrong, wrong


def _paused_run(deadline_s: float = 240) -> Any:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType
    from prefect.client.schemas.objects import StateType

    t0 = time.monotonic()
    while time.monotonic() - t0 < deadline_s:
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED]))))
        for r in runs:
            if r.state and r.state.state_details and r.state.state_details.pause_key == "attribute-approval":
                return r
        time.sleep(2)
    raise AssertionError("no build paused for attribute approval")


def _pause_and_answer(hl_pdf: Path, out: Path, decision: dict[str, Any],
                      while_paused: Callable[[], None] | None = None) -> dict[str, Any]:
    """Build HL in a thread, wait for the approval pause, answer it through Prefect's API, wait for the end."""
    from prefect.flow_runs import resume_flow_run

    thread, box = _start(hl_pdf, out)
    paused = _paused_run()
    if while_paused is not None:
        while_paused()
    resume_flow_run(paused.id, run_input={"rename": {}, "merge": {}, "reject": [], **decision})
    thread.join(timeout=600)
    return box


def _start(hl_pdf: Path, out: Path) -> tuple[threading.Thread, dict[str, Any]]:
    from flows.build_dkg import build_dkg

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = build_dkg(str(hl_pdf), out_dir=str(out))
        except Exception as e:  # the run's failure is what the test looks at
            box["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def test_without_auto_approval_the_build_pauses_loads_nothing_and_resumes_with_a_rename(
        services: Settings, prefect_harness: None, hl_pdf: Path, registry_file: Path,
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    def while_paused() -> None:
        assert loader.current_state(services, "HL") is None  # nothing loaded while it waits
        with get_client(sync_client=True) as client:
            by_key = ArtifactFilter(key=ArtifactFilterKey(any_=["pending-attributes"]))
            pending = client.read_artifacts(artifact_filter=by_key)
            artifacts = [a for a in pending if "HL 1.2024" in str(a.data)]  # other guidelines publish theirs too
        assert artifacts and any("deauville" in str(a.data) and "HL-2" in str(a.data) for a in artifacts)
        assert {a.name for a in read_registry(registry_file, base_seed()).pending()} >= NEW

    monkeypatch.setenv("DKG_AUTO_APPROVE_ATTRIBUTES", "0")
    box = _pause_and_answer(hl_pdf, tmp_path / "run", {"action": "approve_with_changes",
                                                         "rename": {"deauville": "deauville_score"}}, while_paused)
    assert "error" not in box, box
    assert box["result"].loaded
    reg = read_registry(registry_file, base_seed())
    assert "deauville_score" in reg.approved() and "deauville" not in reg.attributes
    assert "Deauville score" in reg.attributes["deauville_score"].aliases
    rows = loader.match_patient(services, {"deauville_score": 1}, "HL")
    assert any(n["text"] == "Continue ABVD for 2 more cycles" for r in rows for n in r["next"])


def test_a_rejected_attribute_fails_the_build_and_the_graph_stays_as_it_was(
        services: Settings, prefect_harness: None, hl_pdf: Path, registry_file: Path,
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DKG_AUTO_APPROVE_ATTRIBUTES", "0")
    box = _pause_and_answer(hl_pdf, tmp_path / "run", {"action": "reject"})
    assert "error" in box and "rejected by a data engineer" in str(box["error"]), box
    assert loader.current_state(services, "HL") is None
    reg = read_registry(registry_file, base_seed())
    assert reg.attributes["deauville"].status == "rejected"
