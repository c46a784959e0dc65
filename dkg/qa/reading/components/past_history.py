"""A past history that lists only conditions no guideline counts as substantial ("PMH hypothyroidism on
levothyroxine", "PMH only GERD") says the patient has no substantial comorbidity."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, QuestionDoc, component


@component("past_history")
def read_past_history(doc: QuestionDoc, ctx: Context) -> None:
    if "comorbidities" in doc.read_attrs():
        return
    m = re.search(r"\b(?:pmh|past (?:medical )?history|medical history)\b[:\s]*(?:(?:is|of|only|includes?|"
                  r"notable for|significant for|remarkable for)\s+)*([^.;?]+)", doc.text)
    if not m or not re.search(r"[a-z]{3,}", m.group(1)):
        return
    heavy = ctx.clinical["phrases"].get("comorbidities", {}).get("substantial", [])
    if any(re.search(p, m.group(1)) for p in heavy) or re.search(r"comorbid|multiple|several|many", m.group(1)):
        return
    doc.add(m.start(), "comorbidities", "none", m.group(0), "past history names no substantial comorbidity")
    doc.take(m.start(), m.end())
