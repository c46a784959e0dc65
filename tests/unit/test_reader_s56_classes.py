"""Classes of error the clinician set s56 (a GP's plain-language stories) showed at first sight, reader's rules
alone: two qualifiers before "illnesses", a marker "not found" on a test, a remission not got into, surgeons who
will not operate, questions of daily life (travel, work, sport, driving). The sentences here are new ones."""

from __future__ import annotations

from dkg.qa.reader import Reader
from tests.unit.test_question_reader import reader


def rd() -> Reader:
    return reader()


def test_plain_words_for_facts_of_the_pathway() -> None:
    r = rd().read("A 48-year-old builder with acute lymphoblastic leukaemia: the Philadelphia chromosome was not "
                  "identified on cytogenetics. He has no other serious illnesses. What induction is advised?")
    assert r.facts.get("ph_status") == "negative"
    assert r.facts.get("comorbidities") == "none"
    r = rd().read("After induction for Ph-negative B-ALL my 50-year-old patient didn't get into remission. "
                  "What does the guideline say now?")
    assert r.facts.get("response") == "less_than_CR"
    r = rd().read("A 19-year-old with localised Ewing sarcoma of the pelvis finished chemotherapy; the surgeons "
                  "will not operate because of the damage it would do. What local treatment comes next?")
    assert r.facts.get("resectable") == "no"


def test_questions_of_daily_life_are_outside_the_flowchart() -> None:
    for q in ("My patient finished treatment for kidney cancer last year. Is it safe for him to fly to Australia?",
              "When can she go back to work after her nephrectomy for a 5 cm renal tumour?",
              "After surgery for osteosarcoma of the tibia, when can my patient play rugby again?"):
        assert rd().read(q).intent == "outside", q


def test_who_gets_an_option_whatever_a_box_adds_to_it() -> None:
    """"switching to an alternative TKI" says nothing of what a box adds with "±" (chemotherapy in one box,
    blinatumomab in another): every box giving the option answers, not the one whose addition weighs least."""
    r = rd().read("Which ALL patients does the guideline move to an alternative TKI?")
    assert r.intent == "constraints"
    assert {o.text for o in r.treatments} == {"alternative tki"} and len({o.uid for o in r.treatments}) >= 2
    # the class written out ("tyrosine kinase inhibitor") is the abbreviation the boxes write
    r = rd().read("In which situations does the ALL guideline list switching to an alternative tyrosine kinase "
                  "inhibitor?")
    assert r.intent == "constraints" and {o.text for o in r.treatments} == {"alternative tki"}
    r = rd().read("Which ALL patients get an alternative TKI with chemotherapy?")  # the addition said: that box
    assert r.treatment is not None and "chemotherapy" in r.treatment.text


def test_second_round_of_plain_words() -> None:
    """s56 after its first fixes: a phase of care finished ("finished her induction treatment") with the response
    stated is no unread treatment; relapse timing as "diagnosed N months before it came back"; "% of the tumour
    was dead"; a denial over a list joined by "or" ("no lymph node or distant spread"); life expectancy stated is a
    fact, asked about it is an outcome question."""
    r = rd().read("A 50-year-old with Ph-positive ALL, no other illnesses, finished her induction treatment and is "
                  "in complete remission with MRD negative. What consolidation now?")
    assert not r.unread and r.facts.get("mrd") == "negative"
    r = rd().read("A 35-year-old man had Ph-negative B-ALL diagnosed about 40 months before the leukaemia came back. "
                  "What is advised now?")
    assert r.facts.get("time_to_relapse") == 40 and r.facts.get("relapse") == "yes"
    r = rd().read("A 16-year-old with high-grade osteosarcoma of the tibia had chemotherapy and a wide excision; "
                  "95% of the tumour was dead. What next?")
    assert r.facts.get("histologic_response") == "good"
    r = rd().read("A 5 cm kidney tumour in a 66-year-old, with no lymph node or distant spread. What is advised?")
    assert r.facts.get("metastatic") != "yes"
    r = rd().read("An 80-year-old man, frail, whose life expectancy is limited, has a 3 cm kidney tumour confined to "
                  "the kidney. What does the guideline recommend for him?")
    assert r.intent != "outcome"
    assert rd().read("A 60-year-old with a 3 cm kidney tumour: what is his life expectancy?").intent == "outcome"


def test_words_only_another_subtypes_boxes_have_decide_nothing() -> None:
    """"surface lesion" with a periosteal osteosarcoma read: "surface" is a word of the low-grade subtypes' box only,
    which the histology read rules out, so it is no unread deciding word; a word of a box the histology keeps open
    still is."""
    r = rd().read("20F, surface lesion of the femoral shaft; biopsy: periosteal osteosarcoma. CT chest clear. Plan?")
    assert r.facts.get("histology") == "periosteal_osteosarcoma" and "surface" not in r.unread


def test_a_size_given_with_a_comparison_is_the_tumours() -> None:
    """"a kidney tumour about the size of a tennis ball, 7 cm": the size after the comparison is the tumour's."""
    r = rd().read("A 58-year-old woman has a kidney tumour about the size of a tennis ball, 7.5 cm, confined to the "
                  "kidney with no nodes. What is advised first?")
    assert r.facts.get("t_category") == "T2"
