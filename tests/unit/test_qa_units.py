"""Pure parts of the QA stack: decision paths, the Cypher parameteriser, the question tagger, splits."""

from __future__ import annotations

import json

from dkg import rx as re
from dkg.graph.model import BoxState, EdgeState, VersionState
from dkg.graph.paths import best_paths, decision_paths, next_boxes
from dkg.qa.config import number_words, treatment_phrase
from dkg.qa.cypher import next_step_query, parameterize
from dkg.qa.dataset import split_of, view
from dkg.qa.facts import Linker, _NameIndex, _phrase_regex, looks_english, tag, tag_all
from dkg.qa.generator import Generator
from dkg.qa.model import delexicalize, slot_params


def _box(uid: str, text: str, constraints: list[dict[str, object]] | None = None) -> BoxState:
    return BoxState(uid, "X-1", text, text, "decision" if constraints else "action", json.dumps(constraints or []))


def _toy() -> VersionState:
    boxes = {
        "root": _box("root", "Suspected disease"),
        "neg": _box("neg", "Ph- disease", [{"attr": "ph_status", "op": "=", "value": "negative"}]),
        "young": _box("young", "age < 60", [{"attr": "age", "op": "<", "value": 60}]),
        "old": _box("old", "age >= 60 or comorbid", [{"any_of": [{"attr": "age", "op": ">=", "value": 60},
                                                                  {"attr": "comorbidities", "op": "=",
                                                                   "value": "substantial"}]}]),
        "t1": _box("t1", "Intensive therapy"), "t2": _box("t2", "Gentle therapy"), "t0": _box("t0", "Stratify"),
    }
    edges = {EdgeState(h, t, "ARROW", "") for h, t in [("root", "neg"), ("neg", "t0"), ("t0", "young"),
                                                        ("t0", "old"), ("young", "t1"), ("old", "t2")]}
    return VersionState("TOY", None, "1", "x", boxes, edges)


def test_paths_accumulate_constraints_and_expand_or() -> None:
    paths = decision_paths(_toy())
    by = {}
    for p in paths:
        by.setdefault(p.decision, []).append(p)
    assert len(by["old"]) == 2  # age >= 60 | comorbidities: two scopes
    young = by["young"][0]
    assert young.scope.attrs == {"ph_status", "age"} and young.scope.holds({"ph_status": "negative", "age": 59})
    assert not young.scope.holds({"ph_status": "negative", "age": 60})
    assert not young.scope.holds({"age": 40})  # a constraint on a fact not given does not hold
    best = best_paths(paths, {"ph_status": "negative", "age": 70})
    assert {p.decision for p in best} == {"old"}
    assert {p.decision for p in best_paths(paths, {"ph_status": "negative"})} == {"neg"}


def test_parameterize_lifts_every_literal() -> None:
    q = next_step_query({"age": 45, "ph_status": "negative"}, "ALL", ["age", "ph_status"])
    text, params = parameterize(q)
    assert "'negative'" not in text and "'ALL'" not in text and " 45" not in text
    assert params["p0"] == 45 and params["p1"] == "negative" and params["p2"] == "ALL"
    t2, p2 = parameterize("MATCH (n) WHERE n.t CONTAINS 'it\\'s' RETURN n")
    assert p2 == {"p0": "it's"} and "$p0" in t2


def test_tagger_reads_facts_in_many_wordings() -> None:
    t = tag("pt: sixty-seven y/o woman, Ph+ ALL, frail. next tx?")
    assert t.facts == {"age": 67, "ph_status": "positive", "comorbidities": "substantial"} and t.guidelines == ["ALL"]
    assert tag("45M, Ph neg B-ALL, no comorbidities").facts == {"age": 45, "ph_status": "negative",
                                                               "comorbidities": "none"}
    assert tag("weighing 70 kg, aged 52, Ph-negative ALL").facts["age"] == 52
    assert tag("relapsed ALL 40 months after diagnosis").facts["time_to_relapse"] == 40
    assert tag("What about HER2-positive breast cancer?").other_disease == "breast cancer"
    assert tag("metastatic clear cell RCC").facts["stage"] == "IV"  # distant metastases imply stage IV
    assert not looks_english("急性リンパ性白血病の治療は？") and looks_english("What is the next step?")


def test_linker_keeps_treatment_words_out_of_the_facts() -> None:
    linker = Linker({"treat as relapsed/refractory disease", "surveillance"})
    t = tag_all("Is Treat as relapsed/refractory disease advisable for a Ph- ALL pt aged 30?", linker)
    assert t.treatment == "treat as relapsed/refractory disease" and "relapse" not in t.facts
    q = ("WITH {age: 30, phStatus: 'negative'} AS facts MATCH (p:Path {code: 'ALL'}) RETURN p, "
         "toLower(p.x) CONTAINS 'treat as relapsed/refractory disease' AS advisable")
    d = delexicalize(q, t)
    assert d.startswith("WITH $facts AS facts") and "CONTAINS $treatment" in d and "'ALL'" in d
    assert slot_params(d, t) == {"facts": {"age": 30, "phStatus": "negative"},
                                 "treatment": "treat as relapsed/refractory disease"}
    assert isinstance(slot_params("MATCH (n) WHERE n.x = $page RETURN n", t), str)


def test_small_helpers() -> None:
    assert number_words(67) == "sixty-seven" and number_words(15) == "fifteen"
    assert treatment_phrase("Post-induction therapy guided by MRD (See ALL-4)") == \
        "Post-induction therapy guided by MRD"
    assert split_of("ALL:ALL-4:x", {"train": 0.7, "validation": 0.15}) == split_of("ALL:ALL-4:x", {"train": 0.7,
                                                                                                 "validation": 0.15})


def _coded(code: str, ph: str, cutoff: int, deeper: bool = False) -> VersionState:
    """A toy guideline under ``code``: box ids carry the code, as the loader's do."""
    boxes = {
        "root": _box("root", "Suspected disease"),
        "ph": _box("ph", f"Ph {ph} disease", [{"attr": "ph_status", "op": "=", "value": ph}]),
        "young": _box("young", f"age < {cutoff}", [{"attr": "age", "op": "<", "value": cutoff}]),
        "old": _box("old", f"age >= {cutoff}", [{"attr": "age", "op": ">=", "value": cutoff}]),
        "t0": _box("t0", "Stratify"), "t1": _box("t1", "Intensive therapy"), "t2": _box("t2", "Gentle therapy"),
    }
    pairs = [("root", "ph"), ("ph", "t0"), ("t0", "young"), ("t0", "old"), ("young", "t1"), ("old", "t2")]
    if deeper:  # one more attribute on the old branch: more specific than a copy without it
        boxes["unfit"] = _box("unfit", "comorbid", [{"attr": "comorbidities", "op": "=", "value": "substantial"}])
        boxes["t3"] = _box("t3", "Palliative care")
        pairs += [("old", "unfit"), ("unfit", "t3")]
    boxes = {f"{code}:{u}": BoxState(f"{code}:{u}", b.page, b.text, b.textPlain, b.kind, b.constraints)
             for u, b in boxes.items()}
    edges = {EdgeState(f"{code}:{h}", f"{code}:{t}", "ARROW", "") for h, t in pairs}
    return VersionState(code, None, "1", code, boxes, edges)


def test_route_equals_the_best_paths_of_all_guidelines() -> None:
    """The indexed, early-stopping route check agrees with ``best_paths`` over every loaded path."""
    states = [_coded("AAA", "negative", 60, deeper=True), _coded("BBB", "negative", 62),
              _coded("CCC", "positive", 60), _coded("DDD", "negative", 70, deeper=True)]
    views = [view(s) for s in states]
    gen = Generator(views)
    everywhere = [p for v in views for p in v.paths]
    outcomes = set()
    for v in views:
        for ph in ("negative", "positive", None):
            for age in (30, 59, 60, 61, 63, 65, 75, None):
                for comorbid in ("substantial", None):
                    facts = {k: x for k, x in {"ph_status": ph, "age": age, "comorbidities": comorbid}.items()
                             if x is not None}
                    best = best_paths(everywhere, facts)
                    for nxt in {tuple(next_boxes(v.state, [p.decision for p in best])), ()}:
                        expected = bool(best) and {p.code for p in best} == {v.code} and \
                            next_boxes(v.state, {p.decision for p in best}) == list(nxt)
                        assert gen._route(v, facts, list(nxt)) == expected, (v.code, facts, nxt)
                        outcomes.add(expected)
    assert outcomes == {True, False}


def test_name_index_finds_what_a_search_for_every_name_finds() -> None:
    diseases = {"ALL": ["acute lymphoblastic leukemia", "B-ALL"], "KID": ["kidney cancer", "renal cell carcinoma"],
                "NHL": ["non-Hodgkin lymphoma"], "X": ["(odd) name"]}
    index = _NameIndex(diseases)
    for q in ["renal cell carcinoma and acute lymphoblastic leukemia", "nonhodgkin lymphoma, stage ii",
              "non hodgkin lymphoma or b all", "(odd) name here", "kidney cancers", "xrenal cell carcinoma", ""]:
        full = [c for c, names in diseases.items() if any(re.search(_phrase_regex(n), q) for n in names)]
        assert index.codes(q) == full, q


def test_consistent_is_holds_over_the_given_facts_only() -> None:
    """``Scope.consistent`` (written without building a smaller scope) keeps its meaning: the scope restricted to
    the attributes the facts give holds for them; unknown facts and facts the scope does not name never
    contradict it. Checked on every combination of a small grid."""
    import itertools
    import math

    from dkg.graph.paths import Scope

    scopes = [Scope(), Scope(cats=(("ph_status", ("negative",)),)),
              Scope(cats=(("mrd", ("negative", "unknown")), ("ph_status", ("positive",)))),
              Scope(nums=(("age", -math.inf, 65 - 1e-6),)),
              Scope(cats=(("response", ("CR",)),), nums=(("age", 18.0, 39.0), ("performance_status", 0.0, 2.0)))]
    values = {"ph_status": [None, "negative", "positive"], "mrd": [None, "negative", "unknown", "positive"],
              "age": [None, 17, 18, 39, 40.5, 64, 65, "45", True], "response": [None, "CR", "PR"],
              "performance_status": [None, 0, 3], "stage": [None, "IV"]}

    def reference(scope: Scope, facts: dict[str, object]) -> bool:
        known = {a: v for a, v in facts.items() if v is not None}
        return Scope(tuple((a, v) for a, v in scope.cats if a in known),
                     tuple((a, lo, hi) for a, lo, hi in scope.nums if a in known)).holds(known)

    checked = kept = 0
    for combo in itertools.product(*values.values()):
        facts = dict(zip(values, combo, strict=True))
        for scope in scopes:
            got = scope.consistent(facts)
            assert got == reference(scope, facts), (scope, facts)
            checked += 1
            kept += got
    assert checked == 5 * 3 * 4 * 9 * 3 * 3 * 2 and 0 < kept < checked  # both outcomes occur
