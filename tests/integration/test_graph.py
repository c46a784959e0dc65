"""The Decision Knowledge Graph on the real Neo4j: counts, decision paths, versions, rollback, atomicity."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dkg.constraints.parse import ParseCache, parse_texts
from dkg.constraints.table import box_texts, build_rows, read_edges, write_rows
from dkg.constraints.vocabulary import load_vocabulary
from dkg.errors import GraphLoadError, ServiceUnavailableError
from dkg.graph import loader
from dkg.graph.model import read_version
from dkg.pdf import ingest_pdf
from dkg.pdf.evaluate import normalise
from dkg.pdf.export import write_outputs
from dkg.services import neo4j
from dkg.settings import Settings, load_settings
from dkg.validate import validate_constraint_csv
from tests.pdf_support import ROOT, reference_pdfs, truth_of

pytestmark = [pytest.mark.services, pytest.mark.slow]
V = load_vocabulary()


def _validated_csv(settings: Settings, pdf: Path, out: Path, cache: ParseCache) -> Path:
    write_outputs(ingest_pdf(pdf), out)
    rows = read_edges(out / "edges.csv")
    built = build_rows(rows, box_texts(rows, out / "graph.json"), V, lambda t: parse_texts(settings, [t], cache)[0])
    csv_path = write_rows(built, out / "constraints.csv")
    validate_constraint_csv(csv_path, out, V, out / "quarantine", None)
    return csv_path


def _wipe(settings: Settings, codes: list[str]) -> None:
    with neo4j.open_driver(settings) as driver:
        driver.execute_query("MATCH (n) WHERE n.code IN $codes DETACH DELETE n", codes=codes,
                             database_=settings.neo4j_database)


def _load(settings: Settings, csv_path: Path) -> loader.LoadReport:
    state = read_version(csv_path, lambda code: loader.current_state(settings, code))
    return loader.load_version(settings, state)


@pytest.fixture(scope="module")
def built(services: Settings, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("dkg")
    cache = ParseCache(tmp / "parse.sqlite")
    out = {pdf.stem: _validated_csv(services, pdf, tmp / pdf.stem, cache) for pdf in reference_pdfs()}
    _wipe(services, ["ALL", "KID", "BONE"])
    return out


def _uids_of(settings: Settings, code: str, node: dict[str, Any]) -> set[str]:
    """Boxes with the node's page and text (a page may print the same text twice)."""
    state = loader.current_state(settings, code)
    assert state is not None
    hits = {b.uid for b in state.boxes.values() if b.page == node["page"] and normalise(b.textPlain) ==
            normalise(node["text"])}
    assert hits, node["text"]
    return hits


def _patient(constraints: list[dict[str, Any]]) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    lows: dict[str, float] = {}
    highs: dict[str, float] = {}
    items = list(constraints)
    for c in items:
        if "any_of" in c:
            alt = c["any_of"][0]
            items += alt if isinstance(alt, list) else [alt]
            continue
        v = c["value"]
        if c["op"] == "=":
            facts[c["attr"]] = v
        elif c["op"] == "in":
            facts[c["attr"]] = v[0]
        elif c["op"] in (">=", ">"):
            lows[c["attr"]] = max(lows.get(c["attr"], -1e9), v + (1 if c["op"] == ">" else 0))
        elif c["op"] in ("<=", "<"):
            highs[c["attr"]] = min(highs.get(c["attr"], 1e9), v - (1 if c["op"] == "<" else 0))
    for attr in set(lows) | set(highs):
        facts[attr] = lows.get(attr, highs.get(attr))
    return facts


def test_counts_and_every_decision_path(services: Settings, built: dict[str, Path]) -> None:
    for stem in ("ALL-1.2022", "KID-1.2023", "BONE-1.2023"):
        report = _load(services, built[stem])
        truth = json.loads(truth_of(next(p for p in reference_pdfs() if p.stem == stem)).read_text())
        code = truth["guideline"]["short"]
        assert report.loaded
        counts = loader.counts(services, code)
        assert counts["boxes"] == len(truth["nodes"])
        assert counts["arrows"] == len(truth["edges"])
        assert counts["decisions"] == sum(1 for n in truth["nodes"] if n["constraints"])
        by_id = {n["id"]: n for n in truth["nodes"]}
        for node in (n for n in truth["nodes"] if n["constraints"]):
            uids = _uids_of(services, code, node)
            rows = loader.match_patient(services, _patient(node["constraints"]), code)
            hits = [r for r in rows if r["decision"] in uids]
            assert hits, (node["text"], _patient(node["constraints"]))
            want = {by_id[e["to"]]["text"] for e in truth["edges"] if e["from"] == node["id"]}
            want |= {by_id[t]["text"] for lk in truth["page_links"] if lk["from"] == node["id"]
                     for t in lk["target_nodes"]}
            got = [{normalise(n["text"]) for n in h["next"]} for h in hits]
            assert {normalise(t) for t in want} in got, node["text"]


def test_new_version_updates_in_place_and_rolls_back(services: Settings, built: dict[str, Path]) -> None:
    _wipe(services, ["ALL"])
    _load(services, built["ALL-1.2022"])
    v1 = loader.current_state(services, "ALL")
    again = _load(services, built["ALL-1.2022"])
    assert not again.loaded and "already loaded" in again.message
    report = _load(services, built["ALL-2.2022"])
    changes = json.loads(truth_of(next(p for p in reference_pdfs() if p.stem == "ALL-2.2022")).read_text())[
        "changes_from_previous"]
    want_changed = sorted(c["text_after"] for c in changes["changed_nodes"])
    assert sorted(c.text_after or "" for c in report.diff.changed) == want_changed
    assert len(report.diff.added) == len(changes["added_nodes"]) and report.diff.removed == []
    assert report.writes["boxes_written"] == len(changes["changed_nodes"]) + len(changes["added_nodes"])
    assert report.diff.changed_paths  # who now gets a different answer
    diff = loader.diff_versions(services, "ALL", "1.2022", "2.2022")
    assert {c.uid for c in diff.changed} == {c.uid for c in report.diff.changed}

    def one_read(code: str) -> object:  # every guideline's latest version in one read, as a question reader gets it
        return next(s for s in loader.current_states(services) if s.code == code)

    v2 = loader.current_state(services, "ALL")
    assert v2 is not None and v2.version == "2.2022" and one_read("ALL") == v2
    loader.rollback(services, "ALL", "1.2022")
    back = loader.current_state(services, "ALL")
    assert v1 is not None and back is not None
    assert one_read("ALL") == back and back.boxes != v2.boxes
    assert back.boxes == v1.boxes and back.edges == v1.edges  # property by property
    assert loader.counts(services, "ALL")["boxes"] == len(v1.boxes)
    with pytest.raises(GraphLoadError, match=r"cannot roll ALL back to 0\.2021"):
        loader.rollback(services, "ALL", "0.2021")


def test_unvalidated_csv_is_refused(services: Settings, built: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / "constraints.csv"
    copy.write_bytes(built["KID-2.2023"].read_bytes())
    with pytest.raises(GraphLoadError, match=r"not validated by the Great Expectations gate"):
        read_version(copy, None)
    mark = built["KID-2.2023"].with_name("constraints.csv.validated.json")
    (tmp_path / "constraints.csv.validated.json").write_bytes(mark.read_bytes())
    copy.write_text(copy.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(GraphLoadError, match=r"changed after validation"):
        read_version(copy, None)


def test_neo4j_unreachable_is_a_clear_transient_error(tmp_path: Path) -> None:
    dead = load_settings(state_dir=tmp_path, neo4j_uri="bolt://127.0.0.1:1", neo4j_password="x", neo4j_retry_s=2.0)
    with pytest.raises(ServiceUnavailableError, match=r"Neo4j at bolt://127.0.0.1:1 is not answering"):
        loader.versions(dead, "ALL")


def test_killed_load_leaves_the_graph_unchanged(services: Settings, built: dict[str, Path], tmp_path: Path) -> None:
    _wipe(services, ["SYN"])
    csv_path = _synthetic(built["ALL-1.2022"], tmp_path, boxes=6000)
    script = (f"from pathlib import Path; from dkg.settings import load_settings; from dkg.graph import loader; "
              f"from dkg.graph.model import read_version; "
              f"loader.load_version(load_settings(state_dir=Path({str(services.state_path)!r})), "
              f"read_version(Path({str(csv_path)!r}), None))")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    deadline = time.monotonic() + 120
    seen = False
    with neo4j.open_driver(services) as driver:
        while time.monotonic() < deadline and proc.poll() is None:
            records, _, _ = driver.execute_query("SHOW TRANSACTIONS YIELD currentQuery RETURN currentQuery",
                                                 database_="neo4j")
            if any("UNWIND $rows" in (r["currentQuery"] or "") for r in records):
                seen = True
                break
            time.sleep(0.05)
    proc.kill()
    proc.wait()
    assert seen, "the load finished before it could be killed"
    time.sleep(1.0)
    assert loader.counts(services, "SYN").get("boxes", 0) == 0
    assert loader.versions(services, "SYN") == []
    report = _load(services, csv_path)  # the next run completes
    assert report.loaded and loader.counts(services, "SYN")["boxes"] == 6000 * 2
    _wipe(services, ["SYN"])  # later tests see only the reference guidelines


def _synthetic(template: Path, tmp_path: Path, boxes: int) -> Path:
    """A validated synthetic guideline: ``boxes`` decision → action pairs."""
    import csv

    rows = list(csv.DictReader(template.read_text(encoding="utf-8").splitlines()))
    base = rows[0]
    out = []
    for i in range(boxes):
        r = dict(base)
        r.update(guideline="SYN", version="1.0", head_id=f"s{i}_a", tail_id=f"s{i}_b", kind="arrow",
                 head_plain=f"Patients aged {i % 90} years group {i}", head=f"Patients aged {i % 90} years group {i}",
                 tail_plain=f"Treatment {i}", tail=f"Treatment {i}", head_page=f"SYN-{i // 50}",
                 tail_page=f"SYN-{i // 50}", label="",
                 head_constraints=json.dumps([{"attr": "age", "op": ">=", "value": i % 90, "unit": "years"}]),
                 tail_constraints="[]", head_kind="condition", tail_kind="action")
        out.append(r)
    path = tmp_path / "syn" / "constraints.csv"
    write_rows(out, path)
    validate_constraint_csv(path, path.parent, V, tmp_path / "q", None)
    return path


def test_constraint_operations_are_recorded_and_reversible(services: Settings, built: dict[str, Path],
                                                           tmp_path: Path) -> None:
    from dkg.graph.render import render

    _wipe(services, ["KID"])
    _load(services, built["KID-1.2023"])
    state = loader.current_state(services, "KID")
    assert state is not None
    uid = next(b.uid for b in state.boxes.values() if b.textPlain.startswith("Age <75 years"))
    age = {"attr": "age", "op": "<", "value": 75, "unit": "years"}
    loader.edit_constraints(services, "KID", uid, "remove", [age])
    rows = loader.match_patient(services, {"comorbidities": "none"}, "KID")
    assert uid in {r["decision"] for r in rows}  # no age needed any more
    report = loader.edit_constraints(services, "KID", uid, "add", [{**age, "value": 70}])
    assert [c.uid for c in report.diff.changed] == [uid]
    assert uid not in {r["decision"] for r in loader.match_patient(services, {"age": 72, "comorbidities": "none"},
                                                                      "KID")}
    with pytest.raises(GraphLoadError, match=r"has no constraint"):
        loader.edit_constraints(services, "KID", uid, "remove", [age])
    with pytest.raises(GraphLoadError, match=r"not in the constraint vocabulary"):
        loader.edit_constraints(services, "KID", uid, "add", [{"attr": "shoe_size", "op": "=", "value": "42"}])
    assert [v["version"] for v in loader.versions(services, "KID")] == ["1.2023", "1.2023+edit.1", "1.2023+edit.2"]
    loader.rollback(services, "KID", "1.2023")
    back = loader.current_state(services, "KID")
    assert back is not None and back.boxes == state.boxes
    svg = render(services, "KID", tmp_path / "kid.svg", {"age": 60, "comorbidities": "none", "stage": "I",
                                                            "t_category": "T1a"})
    text = svg.read_text()
    assert text.startswith("<?xml") and "#ffe08a" in text and "Age &lt;75 years" in text
