"""General reading rules a new guideline relies on (issue 38), on ground-truth states, no services: a sub-stage is
its stage group, an unnamed measurement is the guideline's only attribute in that unit, a named criterion met or
exceeded is a two-valued attribute, a name before a comparison does not reach across a coordination, and a
yes/no finding of several words has no one-word short name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

import pytest

from dkg.constraints.comparisons import find_comparisons
from dkg.constraints.qualifiers import find_qualifiers
from dkg.graph.model import BoxState, EdgeState, VersionState
from dkg.qa.knowledge import Knowledge
from dkg.qa.names import attribute_short_names
from dkg.qa.reader import Reader
from tests.unit.test_question_reader import truth_state

HELD_OUT = Path(__file__).resolve().parents[1] / "fixtures" / "heldout"


def _atoms(x: object) -> list[dict[str, object]]:
    if isinstance(x, dict):
        return [x] if "attr" in x else [a for v in x.values() for a in _atoms(v)]
    return [a for v in x for a in _atoms(v)] if isinstance(x, list) else []


@pytest.fixture(autouse=True, scope="module")
def _held_out_attributes_approved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A loaded guideline's attributes were approved on its way in: a registry of its own state folder holds them
    (the suite's shared state folder holds whatever earlier tests approved, or nothing on a clean clone)."""
    from dkg.constraints.registry import Attribute, read_registry, registry_path, write_registry
    from dkg.constraints.vocabulary import base_seed
    from dkg.settings import current_settings

    mp = pytest.MonkeyPatch()
    mp.setenv("DKG_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    path = registry_path(current_settings())
    reg = read_registry(path, base_seed())
    atoms = _atoms(json.loads((HELD_OUT / "MEL" / "truth.json").read_text(encoding="utf-8"))["nodes"])
    for name in sorted({str(a["attr"]) for a in atoms} - set(reg.attributes)):
        values = [a["value"] for a in atoms if a["attr"] == name]
        if all(isinstance(v, int | float) for v in values):
            reg.attributes[name] = Attribute(name=name, type="number", status="approved")
        else:
            flat = sorted({str(w) for v in values for w in (v if isinstance(v, list) else [v])})
            reg.attributes[name] = Attribute(name=name, type="category", values=flat, status="approved")
    write_registry(reg, path)
    reader.cache_clear()
    yield
    reader.cache_clear()
    mp.undo()


def _held_out_state(code: str) -> VersionState:
    t = json.loads((HELD_OUT / code / "truth.json").read_text(encoding="utf-8"))
    boxes = {f"{code}:{n['id']}": BoxState(f"{code}:{n['id']}", n["page"], n.get("text_resolved", n["text"]),
                                           n["text"], n["kind"], json.dumps(n["constraints"])) for n in t["nodes"]}
    edges = {EdgeState(f"{code}:{e['from']}", f"{code}:{e['to']}", "ARROW", e.get("label") or "") for e in t["edges"]}
    edges |= {EdgeState(f"{code}:{link['from']}", f"{code}:{tgt}", "LINKS_TO", "")
              for link in t["page_links"] for tgt in link["target_nodes"]}
    return VersionState(code, t["guideline"]["name"], t["guideline"]["version"], "sha", boxes, edges)


@lru_cache(maxsize=1)
def reader() -> Reader:
    return Reader(Knowledge([truth_state("KID", "2.2023"), _held_out_state("MEL")]))


def test_a_sub_stage_is_its_stage_group_where_the_guideline_draws_groups() -> None:
    r = reader().read("Stage IIIB renal cell carcinoma after nephrectomy: what next?")
    assert r.facts.get("stage") == "III"
    assert any(s.rule == "sub-stage of a stage group" for s in r.sources)
    assert reader().read("Stage 2a kidney cancer, next step?").facts.get("stage") == "II"


def test_an_unnamed_measurement_is_the_only_attribute_the_guideline_measures_in_that_unit() -> None:
    r = reader().read("54F, superficial spreading melanoma of the calf, 0.5 mm, no palpable nodes. Next step?")
    assert r.guidelines == ["MEL"] and r.facts.get("breslow_thickness") == 0.5
    # two lengths: which one is the primary's thickness is not said, so neither is read
    two = reader().read("Melanoma with 2 brain metastases (8 mm and 12 mm), never treated. What first?")
    assert "breslow_thickness" not in two.facts


def test_a_named_criterion_met_or_exceeded_is_a_two_valued_attribute() -> None:
    (within,) = find_qualifiers("Within Milan criteria")
    (beyond,) = find_qualifiers("Recurrence beyond the Milan criteria after resection")
    assert (within.attr, within.values) == ("Milan criteria", ("within",))
    assert (beyond.attr, beyond.values) == ("Milan criteria", ("beyond",))
    (rule,) = find_qualifiers("Nodules within the up-to-seven criterion")
    assert rule.values == ("within",) and rule.attr.startswith("up-to-seven")


def test_a_name_before_a_comparison_does_not_reach_across_a_coordination_of_phrases() -> None:
    (afp,) = find_comparisons("Within Milan criteria, but not a transplant candidate or AFP > 1000 ng/mL")
    assert afp.attr == "AFP" and afp.values == ("1000",)
    (both,) = find_comparisons("ALT and AST < 2.5 × ULN")  # two single names bounded together stay together
    assert both.attr == "ALT and AST"


def test_a_yes_no_finding_of_several_words_has_no_one_word_short_name() -> None:
    attrs = [SimpleNamespace(name="beyond_milan_criteria", aliases=["Beyond Milan criteria"], values=["yes", "no"]),
             SimpleNamespace(name="serum_epo", aliases=["Serum EPO"], values=[]),
             SimpleNamespace(name="braf_v600_status", aliases=["BRAF V600 status"], values=["positive", "negative"])]
    short = attribute_short_names(attrs)
    assert "beyond_milan_criteria" not in short  # "within Milan" must not read as beyond = yes
    assert short["serum_epo"] == ["epo"] and "braf" in short["braf_v600_status"]


def test_a_marker_finding_is_read_as_clinicians_write_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dkg.constraints.comparisons import EQ, Comparison
    from dkg.constraints.registry import Where, constraints_for, write_registry
    from dkg.constraints.vocabulary import load_registry

    path = tmp_path / "attributes.json"
    monkeypatch.setenv("DKG_REGISTRY_FILE", str(path))
    reg = load_registry()
    for phrase in ("BRAF V600 mutation status", "BRAF V600 status", "SLN status"):  # BRAF: one finding, two names
        constraints_for(reg, Comparison(EQ, ("positive",), None, 0, len(phrase), phrase, 0, len(phrase), "category"),
                        Where("MEL", "1.2025", "MEL-4", "b", phrase))
    reg.approve()
    write_registry(reg, path)
    # the knowledge's MEL boxes bound those two names: the truth's own attribute names are renamed to them
    state = _held_out_state("MEL")
    boxes = {u: BoxState(b.uid, b.page, b.text, b.textPlain, b.kind,
                         b.constraints.replace('"braf_v600"', '"braf_v600_mutation_status"'))
             for u, b in state.boxes.items()}
    boxes["MEL:extra"] = BoxState("MEL:extra", "MEL-4", "BRAF V600 positive", "BRAF V600 positive", "condition",
                                  json.dumps([{"attr": "braf_v600_status", "op": "=", "value": "positive"}]))
    rd = Reader(Knowledge([VersionState("MEL", state.name, state.version, "sha", boxes, set(state.edges))]))
    for question, value in (("Metastatic melanoma, BRAF V600E mutated, LDH normal. First line?", "positive"),
                            ("Metastatic melanoma, BRAF wt, never treated. First line?", "negative"),
                            ("Stage IV melanoma, positive for BRAF, no brain mets. What first?", "positive"),
                            ("Stage IV melanoma, BRAF-wild-type. What first?", "negative")):
        facts = rd.read(question).facts
        assert facts.get("braf_v600_status") == facts.get("braf_v600_mutation_status") == value, (question, facts)
    # a finding written out reads as the marker a guideline abbreviates
    for question, value in (("Stage IIB melanoma, WLE done and sentinel node biopsy negative (0/2). Next?", "negative"),
                            ("Melanoma 1.8 mm, SLNB+, no palpable nodes. Adjuvant?", "positive")):
        assert rd.read(question).facts.get("sln_status") == value, question


def test_a_guideline_is_called_by_the_general_names_of_the_disease_it_taught() -> None:
    from dkg.qa.names import guideline_names

    synonyms = {"hepatocellular carcinoma": ["hepatoma", "liver cancer"], "melanoma": ["malignant melanoma"]}
    names = {n.lower() for n in guideline_names("Hepatocellular Carcinoma", "HCC", ["Child-Pugh A"], synonyms)}
    assert {"hepatoma", "liver cancer"} <= names and "malignant melanoma" not in names
    rd = Reader(Knowledge([truth_state("KID", "2.2023"), _held_out_state("HCC"), _held_out_state("THY")]))
    assert rd.read("62M with a hepatoma, Child-Pugh A. Next step?").guidelines == ["HCC"]
    assert rd.read("48F, 2.3 cm PTC on FNA, no nodes. Surgery?").guidelines == ["THY"]


def test_a_phrase_naming_another_guidelines_value_says_nothing_of_the_guideline_asked_about() -> None:
    rd = Reader(Knowledge([truth_state("KID", "2.2023"), _held_out_state("THY")]))
    assert rd.read("Papillary renal cell carcinoma, 5 cm, next step?").facts.get("histology") == "non_clear_cell"
    assert "histology" not in rd.read("Papillary thyroid cancer 2 cm, next step?").facts


def test_abbreviations_a_guideline_defines_link_its_boxes_by_the_words_written_out() -> None:
    kb = Knowledge([_held_out_state("MEL")])  # footnote: "SLNB = sentinel lymph node biopsy, performed …"
    assert "sentinel lymph node biopsy not recommended" in kb.expand("Wide excision with 1 cm margins; SLNB not "
                                                                      "recommended")


def test_a_question_naming_no_disease_is_tied_to_a_guideline_only_by_what_only_it_decides_on() -> None:
    from dkg.qa.which_guideline import distinguishing

    kb = Knowledge([truth_state("ALL", "2.2022"), truth_state("KID", "2.2023"), truth_state("BONE", "2.2023"),
                    _held_out_state("MEL")])
    assert distinguishing(kb, "MEL", {"breslow_thickness": 0.5, "age": 54}) == ["breslow_thickness"]
    assert distinguishing(kb, "KID", {"age": 70, "performance_status": 1}) == []  # anyone's baseline
    assert distinguishing(kb, "ALL", {"ph_status": "positive"}) == ["ph_status"]
    # a shared attribute with a value only one guideline's branches name
    bone_only = {v for p in kb.paths["BONE"] for a, vs in p.scope.cats if a == "histology" for v in vs} - \
        {v for p in kb.paths["KID"] for a, vs in p.scope.cats if a == "histology" for v in vs}
    value = sorted(bone_only)[0]
    assert distinguishing(kb, "BONE", {"histology": value}) == ["histology"]
    assert distinguishing(kb, "KID", {"histology": value}) == []
