"""Classes of error the clinician sets s48 and s49 showed at first sight (no services): an age given as a date of
birth or as a range, a person "of N", a transcript said not detected, tests that were done, a surgery named by its
verb, terse shorthand, and questions about money, toxicity or survival. Each rule is general; the sentences here
are new ones."""

from __future__ import annotations

from datetime import date

import pytest

from dkg.qa.facts import looks_english
from dkg.qa.reader import Reader
from dkg.qa.reading.components.age_ranges import birth_range, said_range, settled
from tests.unit.test_question_reader import reader


def rd() -> Reader:
    return reader()


@pytest.mark.parametrize(("text", "today", "want"), [
    ("dob 30/11/1961. ", date(2026, 12, 5), (65, 65)),                 # a day: exact
    ("dob 30/12/1961. ", date(2026, 12, 5), (64, 64)),                 # the birthday is still to come
    ("born in 1971, seen today", date(2026, 12, 5), (54, 55)),         # a year alone: within a year
    ("d.o.b. 12/1971", date(2026, 12, 5), (54, 55)),                   # a month alone, in its own month
    ("dob 1990. relapse 03/2020", date(2026, 12, 5), (29, 30)),        # on the latest date the question gives
])
def test_a_date_of_birth_gives_an_age_range(text: str, today: date, want: tuple[int, int]) -> None:
    got = birth_range(text, today)
    assert got is not None and (got[0], got[1]) == want


@pytest.mark.parametrize(("text", "lo", "hi"), [
    ("she is older than 30 but younger than 45.", 30.01, 44.99),
    ("a man in his late sixties", 66, 69.99),
    ("in her 50s, fit", 50, 59.99),
    ("just over 75, independent", 75.01, 76.99),
    ("aged under 18", 0, 17.99),
])
def test_an_age_said_as_a_range(text: str, lo: float, hi: float) -> None:
    got = said_range(text)
    assert got is not None and got[:2] == pytest.approx((lo, hi))


def test_a_range_becomes_an_age_only_where_no_cut_off_falls_inside_it() -> None:
    cuts = [15.0, 39.999999, 40.0, 59.999999, 60.0]  # the ways allow 15–40, 40–60, 60 and over
    assert settled(cuts, 41.01, 58.99) is not None
    assert settled(cuts, 59.0, 60.0) is None  # a birthday this year could put the patient either side of 60
    assert settled(cuts, 55.0, 64.99) is None


def test_the_reader_asks_for_the_age_where_the_range_straddles_a_branch() -> None:
    r = rd().read("Ph-negative ALL, newly diagnosed, no comorbidities, in his late fifties. Induction per pathway?")
    assert 56 <= r.facts["age"] < 60  # the ways split at 40 and 60: the late fifties take one of them
    born, today = rd(), rd().ctx.today  # (the reader is shared: its day is set back)
    born.ctx.today = date(2026, 6, 1)
    try:
        r = born.read("Ph-negative ALL, newly diagnosed, no comorbidities, born in 1966. Induction per pathway?")
        assert "age" not in r.facts  # 59 or 60, on either side of the split
        r = born.read("Ph-negative ALL, newly diagnosed, no comorbidities, born in 1976. Induction per pathway?")
        assert r.facts.get("age") in (49, 50)
    finally:
        born.ctx.today = today


def test_a_person_of_n_and_an_age_in_brackets_are_ages() -> None:
    r = rd().read("The patient is a gentleman of 66 years with a 3 cm renal mass, N0 M0. Next?")
    assert r.facts.get("age") == 66
    assert rd().read("A woman in her thirties (36 years) with Ph+ ALL, no comorbid illness. Induction?"
                     ).facts.get("age") == 36


def test_a_transcript_said_not_detected_is_negative_and_has_not_any_is_none() -> None:
    r = rd().read("27F, new B-ALL, p210/p190 negative by RT-PCR. She has not any heart or lung disease. Induction?")
    assert r.facts.get("ph_status") == "negative" and r.facts.get("comorbidities") == "none"


def test_tests_that_were_done_are_no_treatment_history() -> None:
    r = rd().read("35M with Ph-negative B-ALL diagnosed this week; the karyotype and the flow were done. No other "
                  "illness. What induction?")
    assert r.unread == [] and not r.done


def test_a_surgery_named_by_its_verb_or_as_surgery_is_asked_about() -> None:
    r = rd().read("Localized Ewing sarcoma of the radius, 15M. Team would like to operate first, i.e. upfront "
                  "surgery before any chemotherapy. Is that in line with the pathway?")
    assert r.intent == "advisable" and r.treatment is not None and "excision" in r.treatment.text.lower()


def test_terse_shorthand_is_english_and_criteria_per_this_chart_asks_who_gets() -> None:
    assert looks_english("adjuvant nivolumab post-op - criteria per this chart?")
    assert not looks_english("Какое лечение рекомендовано?")
    r = rd().read("adjuvant pembrolizumab after nephrectomy - indications per this algorithm?")
    assert r.intent == "constraints"


@pytest.mark.parametrize(("question", "intent"), [
    ("Ewing sarcoma of the pelvis: what does proton therapy cost compared with photons?", "outside"),
    ("Will the insurer reimburse cabozantinib in second line?", "outside"),
    ("On ipilimumab + nivolumab, now grade 3 colitis. Should we stop both and give steroids?", "outside"),
    ("What screening should the brothers of a patient with a TP53 variant have?", "outside"),
    ("What proportion of patients with Ph-negative ALL are alive at 5 years after pediatric-inspired therapy?",
     "outcome"),
])
def test_money_toxicity_screening_and_survival_are_outside_the_flowchart(question: str, intent: str) -> None:
    assert rd().read(question).intent == intent


def test_a_treatment_with_its_date_was_given_and_radiation_after_surgery_is_not_definitive() -> None:
    r = rd().read("61F, grade 1 chondrosarcoma of the sacrum, wide excision 03/2025, clear margins. Plan now?")
    assert any("wide excision" in o.text for o in r.done)
    r = rd().read("Localized Ewing sarcoma of the scapula, 13M: completed VDC/IE, wide resection + post-op RT, and "
                  "all adjuvant cycles (last one 09/2026). What now?")
    assert not any("definitive" in o.box.lower() for o in r.done)


def test_what_was_given_before_a_new_event_is_placed_on_the_ways_of_the_tumour_then() -> None:
    r = rd().read("Clear cell RCC, pT1b G2, partial nephrectomy 2020, surveillance since. Now multiple liver and "
                  "bone mets, unresectable; KPS 90, all IMDC labs normal, over a year from diagnosis. First line?")
    assert not any("asymptomatic" in o.box.lower() for o in r.done)  # the surveillance after surgery


def test_a_finding_attained_is_read_with_its_verb_and_a_box_the_facts_hold_is_read() -> None:
    r = rd().read("44F, Ph-negative B-ALL, attained a first complete remission, then maintenance; 16 months after "
                  "diagnosis her marrow shows 30% blasts. Next?")
    assert r.unread == []
    r = rd().read("Parosteal osteosarcoma of the distal femur, low grade, a surface lesion on MRI, 31M. Rx?")
    assert r.unread == []


def test_a_value_set_against_another_is_not_the_patients_and_percent_in_words() -> None:
    r = rd().read("What if a metastatic kidney cancer is chromophobe rather than clear cell, nothing resectable?")
    assert r.facts.get("histology") == "non_clear_cell"
    r = rd().read("Patient 22 years, high grade osteosarcoma of the tibia, MAP then wide resection; necrosis 95 "
                  "percent. Next?")
    assert r.facts.get("age") == 22 and r.facts.get("histologic_response") == "good"


def test_who_gets_an_option_no_patient_of_the_question_reaches_looks_at_the_boxes_that_say_more() -> None:
    from dkg.qa.who_gets import constraint_boxes

    rdr = rd()
    r = rdr.read("For metastatic clear cell renal cancer, which patients may have active surveillance?")
    boxes = constraint_boxes(rdr.kb, r)
    assert boxes and all("asymptomatic" in rdr.kb.states["KID"].boxes[u].textPlain for u in boxes)


def test_a_risk_group_said_of_the_primary_before_a_relapse_is_counted_again_now() -> None:
    r = rd().read("Partial nephrectomy 4 years ago for a high-risk clear cell RCC; adjuvant therapy declined. Now "
                  "she has relapsed with lung and liver metastases, unresectable. KPS 60%, haemoglobin low, calcium "
                  "and counts normal. First-line treatment?")
    assert r.facts.get("risk_group") in ("intermediate", "poor")  # KPS < 80 and low Hb: two factors
