"""Classes of error the clinician set s55 showed at first sight (reader's rules alone): a finding denied before a
counted risk factor, a reference to the guideline read as a comparison, a scan said clear read as a histology's word,
a toxicity's grade asked after its name, a new presentation as de novo. The sentences here are new ones."""

from __future__ import annotations

from dkg.qa.reader import Reader
from dkg.qa.reading.text import denied
from tests.unit.test_question_reader import reader


def rd() -> Reader:
    return reader()


def test_denial_reaches_over_two_words_within_its_clause() -> None:
    text = "no significant anaemia; anaemic since may; without any thrombocytosis"
    assert denied(text, text.index("anaemia"))
    assert not denied(text, text.index("anaemic"))
    assert denied(text, text.index("thrombocytosis"))


def test_an_option_under_this_guideline_and_a_clear_scan_leave_nothing_unread() -> None:
    r = rd().read("61F, 8 cm right renal mass confined to the kidney, nodes negative, PET and CT chest clear. "
                  "Is radical nephrectomy an option under this guideline?")
    assert r.unread == []


def test_a_toxicity_grade_asked_after_its_name_is_outside_the_flowchart() -> None:
    r = rd().read("Relapsed Ph-negative B-ALL on blinatumomab, fever and hypotension on day 3. "
                  "Which cytokine release syndrome grade, and do we give steroids?")
    assert r.intent == "outcome"  # answered as not covered


def test_a_new_presentation_is_within_a_year_of_diagnosis() -> None:
    r = rd().read("59M, new presentation of clear cell RCC with bone and liver mets, unresectable. KPS 90 %, "
                  "Hb normal, calcium normal, neutrophils and platelets normal. First-line?")
    assert r.facts.get("risk_group") == "intermediate"  # one factor: less than a year from diagnosis
