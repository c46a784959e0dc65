"""Terms a guideline defines in its own footnotes or boxes, read from the findings a question states (no services).

The guideline here is a toy one written for these tests (a thymic carcinoma with a chemotherapy-eligibility
footnote, a risk table read from the top and a box that defines its own term); its attribute names are the
extractor's, whatever the disease. The sentences are new, not any held-out guideline's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from dkg.constraints.comparisons import find_comparisons
from dkg.constraints.models import Constraint
from dkg.graph.model import BoxState, EdgeState, VersionState
from dkg.qa.names import guideline_names
from dkg.qa.reader import Reader
from dkg.qa.termdefs import TermRule, criteria_of, derive, split_definitions
from tests.unit.toy_guidelines import toy_reader

# --- the forms a footnote defines a term in ----------------------------------------------------------------------


def test_a_term_defined_alone_keeps_its_criteria_and_whether_one_is_enough() -> None:
    (d,) = split_definitions("Dialysis-dependent: any of eGFR < 15 mL/min, serum potassium > 6 or fluid overload.")
    assert d.term == "Dialysis-dependent" and d.any_of and not d.header
    assert d.criteria == ("eGFR < 15 mL/min", "serum potassium > 6", "fluid overload")
    (d,) = split_definitions("Frail: gait speed < 0.8 m/s, grip strength < 20 kg and weight loss ≥ 5%.")
    assert not d.any_of and len(d.criteria) == 3


def test_a_table_of_values_read_from_the_top_and_bands_that_name_their_value() -> None:
    ds = split_definitions("Risk groups (first match from the top): high = node-positive or tumour > 5 cm; "
                           "intermediate = tumour 2–5 cm; low = tumour < 2 cm and node-negative.")
    assert [(d.term, d.rank) for d in ds] == [("high", 0), ("intermediate", 1), ("low", 2)]
    assert all(d.first_match and d.header == "Risk groups" for d in ds)
    assert ds[0].any_of and not ds[2].any_of
    bands = split_definitions("Ki-67 index (MIB-1): ≥ 20% = high, 3–19% = intermediate, < 3% = low.")
    assert [(d.term, d.criteria) for d in bands] == [("high", ("≥ 20%",)), ("intermediate", ("3–19%",)),
                                                      ("low", ("< 3%",))]


def test_a_table_written_one_value_a_sentence_and_the_value_for_none_of_the_criteria() -> None:
    ds = split_definitions("Frailty groups: Mild – slow gait, exhaustion. Severe – bed-bound; or weight loss "
                           "≥ 10%.")
    assert [(d.header, d.term) for d in ds] == [("Frailty groups", "Mild"), ("Frailty groups", "Severe")]
    assert ds[1].any_of and ds[1].criteria == ("bed-bound", "weight loss ≥ 10%")
    (d,) = split_definitions("Unfit: any of ECOG PS ≥ 3 or albumin < 25 g/L. Patients with none of these are fit.")
    assert d.otherwise == "fit"


def test_alternatives_separated_by_semicolons_stay_whole() -> None:
    crit, any_of = criteria_of("high-grade, recurrent or > 3 cm; multifocal disease; or lymphovascular invasion")
    assert any_of and crit == ("high-grade, recurrent or > 3 cm", "multifocal disease", "lymphovascular invasion")
    assert not criteria_of("marker ≥ 1 and doubling time ≤ 9 months; measure it twice")[1]  # a list of statements


# --- deciding a term from the facts ------------------------------------------------------------------------------


def _rule(value: str, criteria: list[list[Constraint]], any_of: bool, rank: int = 0, first: bool = False,
          otherwise: str | None = None) -> TermRule:
    return TermRule("T", "risk_group", value, tuple(tuple(c) for c in criteria), any_of, "g" if first else "",
                    rank, first, otherwise, "words")


def _c(attr: str, op: str, value: Any) -> Constraint:
    return Constraint(attr=attr, op=op, value=value)


def test_first_match_from_the_top_waits_for_every_value_above() -> None:
    high = _rule("high", [[_c("size", ">", 5)], [_c("nodes", "=", "positive")]], True, 0, True)
    low = _rule("low", [[_c("size", "<=", 5), _c("nodes", "=", "negative")]], False, 1, True)
    assert derive([high, low], {"size": 7})[0][1] == "high"
    assert derive([high, low], {"size": 3, "nodes": "negative"})[0][1] == "low"
    assert derive([high, low], {"size": 3}) == []  # the nodes, which could make it high, are not said
    assert derive([high, low], {"size": 7, "risk_group": "low"}) == []  # what the question states wins


def test_the_other_value_needs_every_criterion_ruled_out() -> None:
    unfit = _rule("unfit", [[_c("ecog", ">=", 3)], [_c("albumin", "<", 25)]], True, otherwise="fit")
    assert derive([unfit], {"ecog": 1, "albumin": 38})[0][1] == "fit"
    assert derive([unfit], {"ecog": 1}) == []
    assert derive([unfit], {"ecog": 3})[0][1] == "unfit"
    unread = _rule("unfit", [[_c("ecog", ">=", 3)], []], True, otherwise="fit")  # a criterion not understood
    assert derive([unread], {"ecog": 1}) == []


# --- through the reader, on a toy guideline ----------------------------------------------------------------------

_NOTE = ("Chemotherapy-ineligible: any of creatinine clearance < 50 mL/min, ECOG PS ≥ 3 or peripheral neuropathy "
         "grade ≥ 2. Patients with none of these are chemotherapy-eligible.")
_RISK = "Risk groups (first match from the top): high = tumour > 5 cm or N1; low = tumour ≤ 5 cm and N0."
_BOXES: list[tuple[str, str, str, list[dict[str, Any]]]] = [
    ("start", "Thymic carcinoma, unresectable", "", [{"attr": "resectable", "op": "=", "value": "no"}]),
    ("elig", "Chemotherapy-eligible", "", [{"attr": "chemotherapy_eligible", "op": "=", "value": "yes"}]),
    ("inel", "Chemotherapy-ineligible", _NOTE, [{"attr": "chemotherapy_eligible", "op": "=", "value": "no"}]),
    ("hi", "High risk", _RISK, [{"attr": "risk_group", "op": "=", "value": "high"}]),
    ("lo", "Low risk", _RISK, [{"attr": "risk_group", "op": "=", "value": "low"}]),
    ("loc", "Low volume: N0 and M0", "", [{"attr": "disease_volume", "op": "=", "value": "low"},
                                          {"attr": "n_category", "op": "=", "value": "N0"},
                                          {"attr": "m_category", "op": "=", "value": "M0"}]),
    ("a", "Regimen A for 4 cycles", "", []),
    ("b", "Best supportive care", "", []),
    ("c", "Observation", "", []),
]


def _toy() -> VersionState:
    boxes = {f"TC:{k}": BoxState(f"TC:{k}", "TC-1", f"{t} ({note})" if note else t, t,
                                 "treatment" if not c else "condition", json.dumps(c)) for k, t, note, c in _BOXES}
    edges = {EdgeState(f"TC:{a}", f"TC:{b}", "ARROW", "") for a, b in (
        ("start", "elig"), ("start", "inel"), ("elig", "a"), ("inel", "b"), ("start", "hi"), ("start", "lo"),
        ("hi", "a"), ("lo", "c"), ("start", "loc"), ("loc", "c"))}
    return VersionState("TC", "Thymic Carcinoma", "1", "sha", boxes, edges)


@pytest.fixture(scope="module")
def rd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    """A reader over the toy guideline beside the kidney sample, with the toy's attributes approved."""
    yield from toy_reader(tmp_path_factory, _toy(), (
        ("chemotherapy eligible", "yes", None), ("chemotherapy eligible", "no", None), ("resectable", "no", None),
        ("disease volume", "low", None), ("N category", "N0", None), ("N category", "N1", None),
        ("M category", "M0", None), ("tumor size", "5", "cm")))


def _facts(rd: Reader, q: str) -> tuple[dict[str, Any], dict[str, str]]:
    r = rd.read(q)
    return r.facts, {s.attr: s.rule for s in r.sources}


def test_a_finding_that_the_footnote_lists_makes_the_term(rd: Reader) -> None:
    facts, rules = _facts(rd, "Unresectable thymic carcinoma, creatinine clearance 38 mL/min. What next?")
    assert facts.get("chemotherapy_eligible") == "no" and rules["chemotherapy_eligible"] == "TC: footnote definition"
    facts, _ = _facts(rd, "Unresectable thymic carcinoma, creatinine clearance 90 mL/min, ECOG PS 1, peripheral "
                          "neuropathy grade 0. What next?")
    assert facts.get("chemotherapy_eligible") == "yes"
    facts, _ = _facts(rd, "Unresectable thymic carcinoma, ECOG PS 1. What next?")
    assert "chemotherapy_eligible" not in facts  # two criteria not said: the term stays open


def test_a_risk_table_read_from_the_top(rd: Reader) -> None:
    assert _facts(rd, "Thymic carcinoma, tumour 7 cm. Next?")[0].get("risk_group") == "high"
    assert _facts(rd, "Thymic carcinoma, tumour 3 cm, cN0. Next?")[0].get("risk_group") == "low"
    assert "risk_group" not in _facts(rd, "Thymic carcinoma, tumour 3 cm. Next?")[0]


def test_a_box_that_defines_its_own_term(rd: Reader) -> None:
    facts, rules = _facts(rd, "Thymic carcinoma, cN0 M0. Next?")
    assert facts.get("disease_volume") == "low" and rules["disease_volume"] == "TC: footnote definition"


# --- the classes around it ---------------------------------------------------------------------------------------


def test_a_solid_cancer_is_named_with_another_head_and_by_its_acronyms() -> None:
    names = guideline_names("Oral Cavity Cancer", "OCC", ["Resected OCC, T1b", "Recurrent ROCC: any T, N2",
                                                         "Urinalysis: ECC > 3/HPF", "Verrucous carcinoma"])
    assert {"oral cavity tumour", "oral cavity carcinoma", "oral cavity mass", "ROCC"} <= set(names)
    assert "ECC" not in names  # three letters: another thing's initials, not the disease
    assert "verrucous carcinoma" in names


def test_a_tnm_category_names_its_own_attribute() -> None:
    said = [(c.attr, c.values) for c in find_comparisons("cT3, N1 or M1 disease, low-grade T1, solitary Ta ≤ 2 cm")]
    assert said == [("T category", ("T3",)), ("N category", ("N1",)), ("M category", ("M1",)),
                    ("T category", ("T1",)), ("T category", ("Ta",)), ("tumor size", ("2",))]


def test_a_list_where_or_joins_only_some_items_is_not_one_is_enough() -> None:
    crit, any_of = criteria_of("grade 3, necrosis or mitoses > 10, node-negative, no metastases")
    assert not any_of and len(crit) >= 4
