"""Reader classes a guideline nobody here wrote showed (no services): metastases at a site and whether they cause
symptoms, values in multiples of a reference limit, no treatment before now, a named variant of a marker, a
recurrence in the guideline's own words, a question linked by facts only one guideline decides on, and a
treatment asked about without its schedule. The guideline here is a toy one written for these tests; its
attribute names are the extractor's, whatever the disease."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from dkg.constraints.comparisons import EQ, Comparison
from dkg.graph.model import BoxState, EdgeState, VersionState
from dkg.qa.knowledge import Knowledge, without_schedule
from dkg.qa.reader import Reader
from dkg.qa.reading.components.recurrence import _recurrence_attr
from tests.unit.test_question_reader import truth_state
from tests.unit.toy_guidelines import toy_reader

_BOXES: list[tuple[str, str, list[dict[str, Any]]]] = [
    ("start", "Metastatic Merkel cell carcinoma", [{"attr": "metastatic", "op": "=", "value": "yes"}]),
    ("naive", "Previously untreated", [{"attr": "prior_therapy", "op": "=", "value": "no"}]),
    ("sym", "Symptomatic brain metastases", [{"attr": "brain_metastases", "op": "=", "value": "symptomatic"}]),
    ("asym", "Asymptomatic brain metastases", [{"attr": "brain_metastases", "op": "=", "value": "asymptomatic"}]),
    ("none", "No brain metastases", [{"attr": "brain_metastases", "op": "=", "value": "absent"}]),
    ("high", "LDH > 2 × ULN", [{"attr": "ldh", "op": ">", "value": 2, "unit": "× ULN"}]),
    ("low", "LDH ≤ 2 × ULN", [{"attr": "ldh", "op": "<=", "value": 2, "unit": "× ULN"}]),
    ("kit+", "KIT mutation positive", [{"attr": "kit_mutation_status", "op": "=", "value": "positive"}]),
    ("kit-", "KIT wild-type", [{"attr": "kit_mutation_status", "op": "=", "value": "negative"}]),
    ("prog", "Progression after first-line therapy", [{"attr": "progression", "op": "=", "value": "yes"}]),
    ("n0", "cN0, M0", [{"attr": "n_category", "op": "=", "value": "N0"},
                       {"attr": "m_category", "op": "=", "value": "M0"}]),
    ("n1", "cN1", [{"attr": "n_category", "op": "=", "value": "N1"}]),
    ("small", "Tumour < 2 cm", [{"attr": "tumor_size", "op": "<", "value": 2, "unit": "cm"}]),
    ("le", "Life expectancy ≥ 10 years", [{"attr": "life_expectancy", "op": ">=", "value": 10, "unit": "years"}]),
    ("cdn", "No clinically detected nodes", [{"attr": "clinically_detected_nodes", "op": "=", "value": "no"}]),
    ("rnode", "Recurrent nodes ≥ 1 cm", [{"attr": "recurrent_nodes", "op": ">=", "value": 1, "unit": "cm"}]),
    ("ipi", "Avelumab + ipilimumab every 3 weeks × 4 doses, then avelumab maintenance", []),
    ("ave", "Avelumab for 1 year", []),
    ("srs", "Stereotactic radiosurgery", []),
]


def _toy() -> VersionState:
    boxes = {f"MCC:{k}": BoxState(f"MCC:{k}", "MCC-1", t, t, "treatment" if not c else "condition", json.dumps(c))
             for k, t, c in _BOXES}
    chain = ["start", "naive", "none", "high", "kit+", "ipi"]
    edges = {EdgeState(f"MCC:{a}", f"MCC:{b}", "ARROW", "") for a, b in itertools.pairwise(chain)}
    edges |= {EdgeState("MCC:naive", "MCC:sym", "ARROW", ""), EdgeState("MCC:sym", "MCC:srs", "ARROW", ""),
              EdgeState("MCC:naive", "MCC:asym", "ARROW", ""), EdgeState("MCC:asym", "MCC:ipi", "ARROW", ""),
              EdgeState("MCC:none", "MCC:low", "ARROW", ""), EdgeState("MCC:low", "MCC:kit-", "ARROW", ""),
              EdgeState("MCC:kit-", "MCC:ave", "ARROW", ""), EdgeState("MCC:start", "MCC:prog", "ARROW", ""),
              EdgeState("MCC:prog", "MCC:ave", "ARROW", ""), EdgeState("MCC:start", "MCC:n0", "ARROW", ""),
              EdgeState("MCC:n0", "MCC:small", "ARROW", ""), EdgeState("MCC:small", "MCC:srs", "ARROW", ""),
              EdgeState("MCC:start", "MCC:n1", "ARROW", ""), EdgeState("MCC:n1", "MCC:srs", "ARROW", ""),
              EdgeState("MCC:start", "MCC:le", "ARROW", ""), EdgeState("MCC:le", "MCC:srs", "ARROW", ""),
              EdgeState("MCC:start", "MCC:cdn", "ARROW", ""), EdgeState("MCC:cdn", "MCC:srs", "ARROW", ""),
              EdgeState("MCC:start", "MCC:rnode", "ARROW", ""), EdgeState("MCC:rnode", "MCC:srs", "ARROW", "")}
    return VersionState("MCC", "Merkel Cell Carcinoma", "1", "sha", boxes, edges)


@pytest.fixture(scope="module")
def rd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    """A reader over the toy guideline beside the kidney sample, with the toy's attributes approved."""
    yield from toy_reader(tmp_path_factory, _toy(), (("LDH", "2", "× ULN"), ("KIT mutation status", "positive", None),
                                ("KIT mutation status", "negative", None), ("prior therapy", "no", None),
                                ("progression", "yes", None), ("brain metastases", "symptomatic", None),
                                ("brain metastases", "asymptomatic", None), ("brain metastases", "absent", None),
                                ("N category", "N0", None), ("N category", "N1", None), ("M category", "M0", None),
                                ("tumor size", "2", "cm"), ("recurrent nodes", "1", "cm"),
                                ("clinically detected nodes", "no", None), ("life expectancy", "10", "years")))


@pytest.mark.parametrize(("question", "value"), [
    ("Metastatic Merkel cell carcinoma, MRI brain negative. What first?", "absent"),
    ("Merkel cell carcinoma with lung mets; brain imaging clear. First line?", "absent"),
    ("Metastatic Merkel cell carcinoma, no brain mets on staging MRI. What now?", "absent"),
    ("Merkel cell carcinoma with 2 cerebellar metastases, neurologically intact, off steroids. Plan?", "asymptomatic"),
    ("Merkel cell carcinoma, admitted with a seizure: 3 cm left parietal metastasis. What first?", "symptomatic"),
])
def test_metastases_at_a_site_are_read_with_whether_they_cause_symptoms(rd: Reader, question: str, value: str
                                                                         ) -> None:
    r = rd.read(question)
    assert r.guidelines == ["MCC"]
    assert r.facts.get("brain_metastases") == value, r.sources


def test_a_site_found_clear_states_no_distant_metastases_elsewhere(rd: Reader) -> None:
    # "no brain mets" says nothing of the other sites: no stage IV, and no M0 either
    r = rd.read("Merkel cell carcinoma, no brain mets on MRI. Next?")
    assert "metastatic" not in r.facts


@pytest.mark.parametrize(("question", "value"), [
    ("Metastatic Merkel cell carcinoma, LDH 1.4x ULN. First line?", 1.4),
    ("Metastatic Merkel cell carcinoma, LDH 660 U/L (ULN 220). First line?", 3),
    ("Metastatic Merkel cell carcinoma, LDH 2.5 times the upper limit of normal. First line?", 2.5),
    ("Metastatic Merkel cell carcinoma, LDH was 1.2x ULN in May and is climbing, today 2.2x ULN. Plan?", 2.2),
    ("Metastatic Merkel cell carcinoma, LDH within normal limits. First line?", 1),
])
def test_a_value_in_multiples_of_a_reference_limit_is_read_against_it(rd: Reader, question: str,
                                                                       value: float) -> None:
    assert rd.read(question).facts.get("ldh") == value


@pytest.mark.parametrize("question", [
    "Metastatic Merkel cell carcinoma, treatment-naive. First line?",
    "Metastatic Merkel cell carcinoma, never treated. What first?",
    "Metastatic Merkel cell carcinoma, no prior systemic therapy. First line?",
    "Previously untreated metastatic Merkel cell carcinoma. Plan?",
])
def test_no_treatment_before_now_is_the_guidelines_finding(rd: Reader, question: str) -> None:
    r = rd.read(question)
    assert r.facts.get("prior_therapy") == "no" and not r.unread


@pytest.mark.parametrize(("question", "value"), [
    ("Metastatic Merkel cell carcinoma, KIT L576P. First line?", "positive"),
    ("Metastatic Merkel cell carcinoma, KIT L576P not detected. First line?", "negative"),
])
def test_a_named_variant_of_a_marker_is_a_mutation_found(rd: Reader, question: str, value: str) -> None:
    assert rd.read(question).facts.get("kit_mutation_status") == value


def test_a_question_naming_no_disease_is_linked_by_two_facts_only_one_guideline_decides_on(rd: Reader) -> None:
    assert rd.read("Metastatic, KIT wild-type, LDH 1.2x ULN, untreated. First line?").guidelines == ["MCC"]
    # one such fact is not enough: the disease is asked for
    assert rd.read("Metastatic, LDH 1.2x ULN. First line?").guidelines == []


def test_a_recurrence_is_written_in_the_guidelines_own_words() -> None:
    kb = SimpleNamespace(attrs={"A": {"relapse", "stage"}, "B": {"progression", "stage"}, "C": {"stage"},
                                "D": {"rapid_progression", "disease_progression"}})
    ctx: Any = SimpleNamespace(kb=kb)
    assert _recurrence_attr([], ctx) == "relapse"
    assert _recurrence_attr(["A"], ctx) == "relapse"
    assert _recurrence_attr(["B"], ctx) == "progression"
    assert _recurrence_attr(["C"], ctx) is None  # a guideline that decides on neither gets no such fact
    assert _recurrence_attr(["D"], ctx) == "disease_progression"


def test_a_treatment_is_named_without_its_schedule(rd: Reader) -> None:
    assert without_schedule("Avelumab + ipilimumab every 3 weeks × 4 doses").split() == ["avelumab", "+",
                                                                                      "ipilimumab"]
    r = rd.read("Metastatic Merkel cell carcinoma, 2 brain mets, asymptomatic. Is ipilimumab plus avelumab right?")
    assert r.treatment is not None and "ipilimumab" in r.treatment.words



def test_previously_untreated_is_no_prior_therapy() -> None:
    from dkg.constraints.qualifiers import find_qualifiers

    assert [(c.attr, c.values) for c in find_qualifiers("Stage IV disease, previously untreated")] == [
        ("prior therapy", ("no",))]


def test_no_symptomatic_metastases_at_a_site_is_none_there_or_none_with_symptoms() -> None:
    from dkg.constraints.comparisons import IN
    from dkg.constraints.extract import _negate

    c = Comparison(EQ, ("symptomatic",), None, 0, 10, "brain metastases", 0, 10, "category")
    n = _negate(c)
    assert n is not None and (n.op, n.values) == (IN, ("absent", "asymptomatic"))
    # a state whose negation names no one value stays unread elsewhere
    assert _negate(Comparison(EQ, ("symptomatic",), None, 0, 10, "disease", 0, 10, "category")) is None


@pytest.mark.parametrize(("question", "expected"), [
    ("Merkel cell carcinoma of the cheek, cN0, CXR clear. Plan?", {"n_category": "N0", "m_category": "M0"}),
    ("Merkel cell carcinoma, pN1b, M0. Next?", {"n_category": "N1", "m_category": "M0"}),
    ("Merkel cell carcinoma with liver mets. Next?", {"m_category": "M1"}),
    ("Merkel cell carcinoma, cT2N1bM0. Next?", {"n_category": "N1", "m_category": "M0"}),  # written in one word
])
def test_written_tnm_categories_are_the_guidelines_values(rd: Reader, question: str, expected: dict[str, str]
                                                          ) -> None:
    facts = rd.read(question).facts
    assert {k: facts.get(k) for k in expected} == expected


def test_a_measurement_is_the_attribute_its_own_clause_names(rd: Reader) -> None:
    # two attributes in cm: the tumour's words name one, the node's words the other
    assert rd.read("2.6 cm Merkel cell carcinoma of the arm, cN0. Plan?").facts.get("tumor_size") == 2.6
    r = rd.read("Merkel cell carcinoma, now a 1.4 cm recurrent node in the groin. Plan?")
    assert r.facts.get("recurrent_nodes") == 1.4 and "tumor_size" not in r.facts


@pytest.mark.parametrize("question", ["Merkel cell carcinoma of the cheek, no palpable nodes. Plan?",
                                      "Merkel cell carcinoma, no clinically evident nodes. Plan?",
                                      "Merkel cell carcinoma, no clinically detected nodes. Plan?"])
def test_an_attribute_is_read_by_the_other_words_clinicians_use_for_part_of_its_name(rd: Reader, question: str
                                                                                     ) -> None:
    assert rd.read(question).facts.get("clinically_detected_nodes") == "no"


def test_an_estimate_is_read_with_its_hedge(rd: Reader) -> None:
    assert rd.read("Merkel cell carcinoma, frail, LE ~4 yrs. Plan?").facts.get("life_expectancy") == 4
    assert rd.read("Merkel cell carcinoma, life expectancy approximately 12 years. Plan?").facts.get(
        "life_expectancy") == 12


def test_an_abbreviation_listed_as_another_disease_is_not_one_when_a_loaded_guideline_is_named_so() -> None:
    # conf lists "hcc" among other diseases' abbreviations (so a kidney guideline refuses it); once a guideline
    # named "Hepatocellular Carcinoma" is loaded, "HCC" names it
    liver = VersionState("HCC", "Hepatocellular Carcinoma", "1", "sha", {
        "HCC:a": BoxState("HCC:a", "HCC-1", "Early-stage HCC", "Early-stage HCC", "condition",
                          json.dumps([{"attr": "metastatic", "op": "=", "value": "no"}])),
        "HCC:b": BoxState("HCC:b", "HCC-1", "Resection", "Resection", "treatment", "[]")},
        {EdgeState("HCC:a", "HCC:b", "ARROW", "")})
    r = Reader(Knowledge([truth_state("KID", "2.2023"), liver])).read("70M, HCC, no mets. Initial treatment?")
    assert r.other_disease is None and r.guidelines == ["HCC"]
    r = Reader(Knowledge([truth_state("KID", "2.2023")])).read("70M, HCC, no mets. Initial treatment?")
    assert r.other_disease == "hepatocellular carcinoma"


def test_positive_before_the_markers_name_is_the_finding(rd: Reader) -> None:
    assert rd.read("Merkel cell carcinoma, positive KIT, no brain mets. Plan?").facts.get(
        "kit_mutation_status") == "positive"


def test_a_question_that_asks_what_to_start_is_no_work_up_question(rd: Reader) -> None:
    assert not rd.read("Merkel cell carcinoma in a 70-year-old. What should we start?").workup
    assert rd.read("Suspected Merkel cell carcinoma in a 70-year-old. What work-up?").workup


def test_the_tumour_of_an_organ_links_the_guideline_named_by_that_organ() -> None:
    """"a Bethesda VI thyroid nodule", "carcinoma of the thyroid": the organ of one loaded guideline's names links it
    when the question names no disease; another disease of that organ is still not covered, and so is the organ's
    tumour when no loaded guideline is about it. The organ's own lesions are no metastases."""
    thyroid = VersionState("THY", "Differentiated Thyroid Cancer", "1", "sha", {
        "THY:a": BoxState("THY:a", "THY-1", "Papillary carcinoma < 1 cm", "Papillary carcinoma < 1 cm", "condition",
                          json.dumps([{"attr": "metastatic", "op": "=", "value": "no"}])),
        "THY:b": BoxState("THY:b", "THY-1", "Lobectomy", "Lobectomy", "treatment", "[]")},
        {EdgeState("THY:a", "THY:b", "ARROW", "")})
    both = Reader(Knowledge([truth_state("KID", "2.2023"), thyroid]))
    for q in ("72F, Bethesda VI thyroid nodule 3.5 cm. Initial treatment?",
              "Papillary carcinoma of the thyroid, 8 mm, no nodes. Surgery?",
              "61M, total thyroidectomy last month: papillary, 8 mm, no nodes. What next?"):  # the organ's removal
        r = both.read(q)
        assert r.guidelines == ["THY"] and r.other_disease is None, q
    r = both.read("Medullary thyroid carcinoma, calcitonin 2,000 pg/mL. Which drug first?")
    assert r.other_disease == "medullary thyroid carcinoma"
    liver = VersionState("HCC", "Hepatocellular Carcinoma", "1", "sha", {
        "HCC:a": BoxState("HCC:a", "HCC-1", "Early-stage HCC", "Early-stage HCC", "condition",
                          json.dumps([{"attr": "metastatic", "op": "=", "value": "no"}])),
        "HCC:b": BoxState("HCC:b", "HCC-1", "Resection", "Resection", "treatment", "[]")},
        {EdgeState("HCC:a", "HCC:b", "ARROW", "")})
    r = Reader(Knowledge([truth_state("KID", "2.2023"), liver])).read(
        "66F, HCC: 3 liver lesions (4.2, 3.1 and 2.0 cm), ECOG 0. Plan?")
    assert r.guidelines == ["HCC"] and r.facts.get("metastatic") is None  # the organ's own lesions
    r = Reader(Knowledge([truth_state("KID", "2.2023")])).read("Bethesda VI thyroid nodule 3 cm. Surgery?")
    assert r.guidelines == [] and r.other_disease == "thyroid nodule"


def test_a_nerve_named_recurrent_says_no_recurrence(rd: Reader) -> None:
    """"gross tumour left on the recurrent laryngeal nerve" names a nerve: no relapse is read from it."""
    assert rd.read("Residual tumour on the recurrent laryngeal nerve after surgery. Next step?").facts.get(
        "relapse") is None
    assert rd.read("Recurrent disease in the neck after surgery. Next step?").facts.get("relapse") == "yes"
