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


def test_a_denied_finding_is_no_risk_factor() -> None:
    # set s55: "no anaemia" counted as anaemia made a favourable patient intermediate (a wrong answer)
    r = rd().read("70F, clear cell RCC, nephrectomy 6 y ago, now several lung mets, not resectable. KPS 90 %, "
                  "no anaemia, calcium normal, neutrophils and platelets normal. Next?")
    assert r.facts.get("risk_group") == "favorable"
    r = rd().read("70F, clear cell RCC, nephrectomy 6 y ago, now several lung mets, not resectable. KPS 90 %, "
                  "anaemic, calcium normal, neutrophils and platelets normal. Next?")
    assert r.facts.get("risk_group") == "intermediate"


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


def test_a_relatives_illness_states_no_fact_of_the_patient() -> None:
    r = rd().read("31F, new Ph-neg B-ALL. Younger sister had a lymphoma at 22, now in remission. Induction?")
    assert "response" not in r.facts
    r = rd().read("My son is 19 and has ALL; he is in remission after induction and MRD is negative. What next?")
    assert r.facts.get("response") == "CR"  # the writer's own son is the patient


def test_a_birthday_to_come_reads_its_time_unit_and_a_size_is_no_count() -> None:
    r = rd().read("F, turns 60 in a few months. New Ph-neg ALL, nil PMH. Induction?")
    assert r.facts.get("age") == 59 and r.unread == []
    r = rd().read("55M, incidental 2.6 cm solid lesion of the right kidney. Next?")
    assert "metastasis" not in r.facts and r.facts.get("t_category") == "T1a"


def test_what_is_not_done_yet_diagnoses_nothing_and_otherwise_nil_is_no_comorbidity() -> None:
    r = rd().read("Uro MDT: 70F, incidental 3.1 cm lesion of the left kidney on ultrasound. No CT, bloods or biopsy "
                  "yet. First step per pathway?")
    assert r.workup
    r = rd().read("60M, 5 cm renal mass, N0 M0, gout on allopurinol, otherwise nil. Primary treatment?")
    assert r.facts.get("comorbidities") == "none"


def test_diagnosed_this_month_is_within_a_year_and_lab_abbreviations_count() -> None:
    r = rd().read("59F, clear cell RCC, lung and liver mets, none resectable, dx this month. KPS 90. Hb 13.9 g/dL, "
                  "cCa 2.3 mmol/L, neut 4.2, plt 250. First-line?")
    assert r.facts.get("risk_group") == "intermediate"  # one factor: less than a year from diagnosis


def test_testing_the_family_and_fertility_are_outside_the_flowchart() -> None:
    for q in ("Kidney cancer at 38 in my brother; should my kids and I be tested, and from what age?",
              "Osteosarcoma at 14: should the siblings be screened for Li-Fraumeni?",
              "Ewing sarcoma, 16M, about to start chemo. Can he bank sperm first?"):
        assert rd().read(q).intent == "outside", q


def test_a_result_that_came_back_is_no_relapse_and_a_bracket_in_a_test_name_is_read() -> None:
    r = rd().read("Our daughter is 24; the marrow showed ALL and the Philadelphia chromosome test (BCR-ABL1) came "
                  "back negative. What is the first treatment?")
    assert r.facts.get("ph_status") == "negative" and "relapse" not in r.facts


def test_an_age_after_a_title_and_name_and_a_polite_request_asks_what_its_sentence_asks() -> None:
    r = rd().read("Mrs J is 47 and has Ph+ ALL in CR after TKI + chemo induction, MRD 0.001%. She asks what "
                  "comes next - could you advise?")
    assert r.facts.get("age") == 47 and r.intent == "next_step"
    assert rd().read("Please see Mr T, 66, with a renal mass. Thanks.").facts.get("age") == 66


def test_a_disease_word_in_british_spelling_described_by_the_guidelines_own_words_is_its_disease() -> None:
    r = rd().read("My wife is 44 and has Philadelphia-positive leukaemia; she is in remission after TKI plus "
                  "chemotherapy and her MRD is negative. What comes next?")
    assert r.other_disease is None and r.facts.get("ph_status") == "positive"
    assert rd().read("He has chronic myeloid leukaemia in chronic phase. Next step?").other_disease


def test_sizes_in_words_and_nothing_spread_are_read() -> None:
    r = rd().read("my dad is 80. a growth of about two and a half centimetres was found on his kidney and nothing "
                  "has spread. what will he be offered?")
    assert r.facts.get("t_category") == "T1a" and r.facts.get("metastatic") != "yes"


def test_performance_and_resectability_in_plain_words() -> None:
    r = rd().read("Post-op: 60M, radical nephrectomy, clear cell RCC pT3a N0, grade 2. Fully back to work. Next?")
    assert r.facts.get("performance_status") == 0
    r = rd().read("22F, high-grade osteosarcoma of the humerus after neoadjuvant MAP; the surgeon says it can now be "
                  "removed. Next step?")
    assert r.facts.get("resectable") == "yes"
    r = rd().read("After VDC/IE, the spine surgeons say they cannot take it out safely. Local control for this "
                  "Ewing sarcoma?")
    assert r.facts.get("resectable") == "no"


def test_metastases_in_named_organs_and_no_other_disease() -> None:
    r = rd().read("Mr B, 66, clear cell kidney cancer with disease in his lungs and liver. Next?")
    assert r.facts.get("metastatic") == "yes"
    r = rd().read("ccRCC, nephrectomy 2018. Now a single 1.2 cm lung nodule, no other disease on PET. Next?")
    assert r.facts.get("metastatic") == "yes" and [o.text.lower() for o in r.done if "nephrectomy" in o.text.lower()]


def test_what_a_guideline_recommends_asked_with_a_comma_is_no_yes_no_question() -> None:
    assert rd().read("pT3a N0 papillary RCC after nephrectomy. What further treatment, if any, does the guideline "
                     "recommend?").intent == "next_step"
    assert rd().read("Clear cell RCC pT3a after nephrectomy. Any more treatment, or do we just watch?").intent \
        == "next_step"


def test_with_or_without_sets_nothing_aside_and_a_plan_to_do_x_names_x() -> None:
    r = rd().read("When does the bone guideline allow intralesional excision, with or without a surgical adjuvant?")
    assert r.intent == "constraints" and r.excluded == []
    r = rd().read("12-year-old, localised Ewing sarcoma of the tibia, just diagnosed. The surgeon would like to do a "
                  "wide excision first. Is that right?")
    assert r.treatment is not None and "wide excision" in r.treatment.text.lower()


def test_an_option_is_named_by_the_word_it_opens_with() -> None:
    r = rd().read("71M, fit, grade 1 chondrosarcoma of the femur. Is observation an option per the guideline?")
    assert r.treatment is not None and r.treatment.text.lower().startswith("observation")


def test_another_conditions_stage_is_no_tumour_stage_but_stays_a_comorbidity() -> None:
    r = rd().read("80M, CKD stage 3a, 3.1 cm enhancing renal mass, N0 M0. Is partial nephrectomy right for him?")
    assert r.facts.get("stage") == "I" and r.facts.get("t_category") == "T1a"
    r = rd().read("50F, Ph-neg B-ALL, CKD stage 5 on dialysis. Induction?")
    assert r.facts.get("comorbidities") == "substantial" and "stage" not in r.facts


def test_a_value_that_changed_after_a_treatment_given_is_its_response() -> None:
    r = rd().read("38F, Ph-neg B-ALL in CR after induction; MRD 0.5% then 0.8%. She had blinatumomab, became MRD "
                  "negative, then a sibling allo-HCT. Now day +90. What next?")
    assert r.facts.get("mrd") in ("positive", "rising") and r.later.get("mrd") == "negative"
