"""The FHIR export on a made-up guideline (no services): nesting, exclusive branches, CQL, the Python checks
(each shown to fail on a broken Bundle) and the attribute table both ways."""

from __future__ import annotations

import base64
import copy
import datetime as dt
import json
import random
from typing import Any

from dkg.fhir.checks import check_bundle
from dkg.fhir.cql import define_bodies, define_names
from dkg.fhir.export import action_diff, build_export, walk_actions
from dkg.fhir.mapping import load_mapping
from dkg.graph.model import BoxState, EdgeState, VersionState

TYPES: dict[str, str | None] = {"age": "number", "performance_status": "number", "stage": "category",
                                "gleason_group": "category", "prior_therapy": "text"}


def _box(uid: str, page: str, text: str, kind: str, constraints: list[dict[str, object]] | None = None) -> BoxState:
    return BoxState(f"TOY:{page}:{uid}", page, text, text, kind, json.dumps(constraints or []))


def toy(threshold: int = 70) -> VersionState:
    boxes = [
        _box("a", "TOY-1", "Newly diagnosed toy disease", "condition"),
        _box("b", "TOY-1", f"Age < {threshold}", "decision", [{"attr": "age", "op": "<", "value": threshold,
                                                               "unit": "years"}]),
        _box("c", "TOY-1", f"Age ≥ {threshold} or ECOG ≥ 2", "decision",
             [{"any_of": [{"attr": "age", "op": ">=", "value": threshold, "unit": "years"},
                          {"attr": "performance_status", "op": ">=", "value": 2, "unit": "ECOG"}]}]),
        _box("d", "TOY-1", "Intensive therapy", "action"),
        _box("e", "TOY-1", "Response assessment", "action"),
        _box("f", "TOY-1", "Gentle therapy (see TOY-2)", "action"),
        _box("g", "TOY-2", "Stage III or IV", "decision", [{"attr": "stage", "op": "in", "value": ["III", "IV"]}]),
        _box("h", "TOY-2", "Stage II, group 4", "decision",
             [{"attr": "stage", "op": "=", "value": "II"}, {"attr": "gleason_group", "op": "=", "value": "4"}]),
        _box("i", "TOY-2", "Supportive care", "action"),
    ]
    edges = {("a", "b"), ("a", "c"), ("b", "d"), ("d", "e"), ("c", "f"), ("g", "i"), ("h", "i")}
    es = {EdgeState(f"TOY:TOY-{1 if h < 'g' else 2}:{h}", f"TOY:TOY-{1 if t < 'g' else 2}:{t}", "ARROW", "")
          for h, t in edges}
    es.add(EdgeState("TOY:TOY-1:f", "TOY:TOY-2:g", "LINKS_TO", ""))
    return VersionState("TOY", "Toy disease", "1.2026", "0" * 64, {b.uid: b for b in boxes}, es)


def _plan(bundle: dict[str, Any], rid: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e["resource"] for e in bundle["entry"] if e["resource"]["id"] == rid)
    return found


def test_the_bundle_nests_decisions_marks_exclusive_branches_and_chains_steps() -> None:
    ex = build_export(toy(), load_mapping(), TYPES)
    assert check_bundle(ex.bundle) == []
    kinds = ex.counts()
    assert kinds["PlanDefinition"] == 3 and kinds["ActivityDefinition"] == 4 and kinds["Library"] == 1
    page1 = _plan(ex.bundle, "dkg-toy-toy-1")
    root = page1["action"][0]
    assert root["title"].startswith("Newly diagnosed")
    # age < 70 and (age >= 70 or ECOG >= 2) can both hold: not exclusive
    assert root["selectionBehavior"] == "any" and len(root["action"]) == 2
    young = next(a for a in root["action"] if a["title"].startswith("Age <") or a.get("id", "").endswith("steps"))
    steps = young["action"]
    assert [s["title"] for s in steps] == ["Age < 70", "Intensive therapy", "Response assessment"]
    assert steps[2]["relatedAction"] == [{"actionId": steps[1]["id"], "relationship": "after-end"}]
    assert steps[1]["definitionCanonical"].endswith("|1.2026")
    every = list(walk_actions(page1["action"]))
    assert any(a.get("definitionCanonical", "").split("|")[0].endswith("/PlanDefinition/dkg-toy-toy-2") for a in every)
    page2 = _plan(ex.bundle, "dkg-toy-toy-2")
    roots = page2["action"]
    assert len(roots) == 2  # two entry decisions, both leading to supportive care
    assert all([s["title"] for s in r["action"]][-1] == "Supportive care" for r in roots)


def test_exclusive_siblings_get_exactly_one() -> None:
    st = toy()
    st.boxes["TOY:TOY-1:c"] = _box("c", "TOY-1", "Age ≥ 70", "decision",
                                   [{"attr": "age", "op": ">=", "value": 70, "unit": "years"}])
    root = _plan(build_export(st, load_mapping(), TYPES).bundle, "dkg-toy-toy-1")["action"][0]
    assert root["selectionBehavior"] == "exactly-one"


def test_the_cql_defines_every_condition_with_the_graphs_logic() -> None:
    ex = build_export(toy(), load_mapping(), TYPES)
    names = define_names(ex.cql)
    assert set(ex.decisions.values()) <= names and "Age" in names
    bodies = define_bodies(ex.cql)
    assert bodies[ex.decisions["TOY:TOY-1:b"]] == '"Age" < 70'
    assert bodies[ex.decisions["TOY:TOY-1:c"]] == '("Age" >= 70 or "Fact performance_status" >= 2)'
    assert bodies[ex.decisions["TOY:TOY-2:g"]] == '("Fact stage" ~ "stage = III" or "Fact stage" ~ "stage = IV")'
    assert "code \"performance_status observation\": '89247-1' from \"LOINC\"" in ex.cql  # ECOG is LOINC
    assert "/CodeSystem/dkg-attribute'" in ex.cql  # gleason_group: a local code
    lib = next(e["resource"] for e in ex.bundle["entry"] if e["resource"]["resourceType"] == "Library")
    assert base64.b64decode(lib["content"][0]["data"]).decode() == ex.cql


def test_the_checks_find_what_is_broken() -> None:
    good = build_export(toy(), load_mapping(), TYPES).bundle
    broken = copy.deepcopy(good)
    page = _plan(broken, "dkg-toy-toy-1")
    acts = list(walk_actions(page["action"]))
    cond = next(a for a in acts if a.get("condition"))
    cond["condition"][0]["expression"]["expression"] = "No such define"
    link = next(a for a in acts if "PlanDefinition/" in a.get("definitionCanonical", ""))
    link["definitionCanonical"] = "http://dkg.local/fhir/PlanDefinition/nowhere|1"
    del page["publisher"]
    page["type"]["coding"][0]["code"] = "order-set"
    broken["entry"].append(copy.deepcopy(broken["entry"][-1]))
    problems = "\n".join(check_bundle(broken))
    assert "no define 'No such define'" in problems
    assert "nowhere|1 is not in the Bundle" in problems
    assert "without publisher" in problems
    assert "needs type eca-rule" in problems
    assert "used 2 times" in problems


def test_a_new_version_that_moves_a_threshold_changes_that_action_only() -> None:
    mapping = load_mapping()
    old = build_export(toy(70), mapping, TYPES).bundle
    new_state = toy(75)
    new = build_export(VersionState("TOY", "Toy disease", "2.2026", "1" * 64, new_state.boxes, new_state.edges),
                       mapping, TYPES).bundle
    # the boxes keep their uids in this toy, so the ids are the same across versions
    assert {e["resource"]["id"] for e in old["entry"]} == {e["resource"]["id"] for e in new["entry"]}
    diff = action_diff(old, new)
    assert not diff["added"] and not diff["removed"]
    assert diff["changed"] and all("TOY-1-b" in c or "TOY-1-c" in c for c in diff["changed"]), diff
    assert action_diff(old, old) == {"added": [], "removed": [], "changed": []}


def test_facts_written_as_fhir_read_back_the_same() -> None:
    mapping = load_mapping()
    rng = random.Random(3)
    at = dt.date(2026, 3, 1)
    units: dict[str, str | None] = {"performance_status": "ECOG", "age": "years"}
    for i in range(200):
        facts = {"age": rng.randint(0, 100), "performance_status": rng.randint(0, 4),
                 "stage": rng.choice(["I", "II", "III", "IV"]), "gleason_group": str(rng.randint(1, 5)),
                 "prior_therapy": rng.choice(["none", "radiotherapy"])}
        facts = {k: v for k, v in facts.items() if rng.random() < 0.8}
        res = mapping.patient_resources(f"p{i}", facts, TYPES, units, at)
        back = {k: v for k, (v, _) in mapping.facts_from_resources(res, TYPES, at).items()}
        assert back == facts, (facts, back)
    # a preliminary Observation does not count; the latest final one does
    res = mapping.patient_resources("q", {"stage": "II"}, TYPES, units, at)
    later = copy.deepcopy(res[1])
    later.update(id="q-2", effectiveDateTime="2026-02-28T12:00:00Z", valueCodeableConcept={
        "coding": [{"system": mapping.value_system("stage"), "code": "III"}]})
    prelim = copy.deepcopy(later)
    prelim.update(id="q-3", status="preliminary", effectiveDateTime="2026-02-28T18:00:00Z", valueCodeableConcept={
        "coding": [{"system": mapping.value_system("stage"), "code": "IV"}]})
    assert mapping.facts_from_resources([*res, later, prelim], TYPES, at)["stage"][0] == "III"
