"""Classes of error the two sets of clinician questions s46 and s47 showed at first sight (no services): how a
history is placed, denials, reference words for labs, comparisons that name no tumour, and the option that says
more of what a who-gets question names. Each rule is general; the sentences here are new ones."""

from __future__ import annotations

from dkg.qa.reader import Reader
from tests.unit.test_question_reader import reader


def rd() -> Reader:
    return reader()


def test_a_proposal_that_ends_in_a_history_cue_gives_nothing() -> None:
    # "keen on", "plans on": the cue word ("on") belongs to the proposal
    r = rd().read("70M, 4.1 cm renal mass, N0 M0. Urologist keen on partial nephrectomy. Is that right?")
    assert r.done == []


def test_a_clause_after_but_or_so_is_placed_on_its_own() -> None:
    r = rd().read("29M, Ph-neg ALL, reached CR after induction but MRD stayed at 0.3% so he had blinatumomab "
                  "then a matched sibling allo transplant. Now day +60. Next?")
    assert [o.text.lower() for o in r.done] == ["blinatumomab followed by allogeneic hct"]


def test_a_treatment_done_with_a_remark_in_brackets_and_one_a_tumour_was_removed_with_are_history() -> None:
    r = rd().read("40M, parosteal osteosarcoma of the proximal humerus, wide excision (clear margins) done. "
                  "Final pathology: a high-grade component. Next step?")
    assert "wide excision" in [o.text.lower() for o in r.done]
    r = rd().read("Ms T, 36, had a parosteal osteosarcoma of the tibia removed by wide excision last month; "
                  "the specimen shows a high-grade component. What now?")
    assert "wide excision" in [o.text.lower() for o in r.done]


def test_a_finding_nobody_grants_is_denied() -> None:
    r = rd().read("clear cell RCC with many lung nodules - no one thinks they are resectable. Next?")
    assert r.facts.get("resectable") == "no"


def test_karnofsky_with_a_hedge_is_read() -> None:
    r = rd().read("58F, metastatic clear cell RCC, KPS approximately 70%. Next?")
    assert r.facts.get("performance_status") == 2


def test_a_lab_said_high_or_low_in_words_counts_as_a_risk_factor() -> None:
    r = rd().read("66M, clear cell RCC with lung and bone mets, none resectable, diagnosed 3 weeks ago. KPS 90. "
                  "Hb low, corrected calcium raised, neutrophils and platelets normal. First-line?")
    assert r.facts.get("risk_group") == "poor"  # within a year, anaemia, high calcium: three factors


def test_a_tumour_named_to_say_what_a_treatment_is_like_is_not_the_patients() -> None:
    r = rd().read("51F, dedifferentiated chondrosarcoma of the pelvis, resectable. Oncology proposes chemo "
                  "along the lines used for osteosarcoma with the excision. Supported?")
    assert r.facts.get("histology") == "chondrosarcoma"


def test_a_who_gets_question_names_the_option_that_has_more_of_its_words() -> None:
    for q in ("Whole-lung irradiation: which patients get it in the bone guideline?",
              "Under what circumstances is whole-lung radiation therapy used for bone sarcoma?"):
        r = rd().read(q)
        assert r.intent == "constraints" and r.treatment is not None, q
        assert "whole-lung" in r.treatment.text.lower(), q
