"""A sub-stage ("stage IIB", "stage 3a") is its stage group where the guidelines branch on groups only (the stage
values drawn are I–IV): the letter refines the group and never moves the patient out of it. The stage of another
condition ("CKD stage 3b", ``other_staged_conditions``) is read as nothing."""

from __future__ import annotations

from dkg import rx as re
from dkg.constraints.comparisons import ordinal_value
from dkg.constraints.vocabulary import load_vocabulary
from dkg.qa.reading.doc import Context, QuestionDoc, component


@component("substages")
def read_substage(doc: QuestionDoc, ctx: Context) -> None:
    if "stage" in doc.read_attrs():
        return
    groups = {ordinal_value(str(v)): str(v) for v in load_vocabulary().attributes.get("stage", {}).get(
        "values", ["I", "II", "III", "IV"])}
    for m in re.finditer(r"\bstage\s+(iv|i{1,3}|[1-4])([a-d][1-3]?)(?![\w+-])", doc.text):
        sub = ordinal_value(m.group(1).upper() + m.group(2).upper())
        group = groups.get(ordinal_value(m.group(1).upper()))
        if group is None or sub in groups or not doc.free(m.start(), m.end()):
            continue
        doc.add(m.start(), "stage", group, m.group(0), "sub-stage of a stage group")
        doc.take(m.start(), m.end())
        return


@component("other_condition_stages")
def set_aside_other_stages(doc: QuestionDoc, ctx: Context) -> None:
    """"CKD stage 3b", "stage 3 chronic kidney disease", "NYHA class II": another condition's stage is no fact."""
    other = "|".join(str(c) for c in ctx.clinical.get("other_staged_conditions", []))
    if not other:
        return
    level = r"(?:iv|v|i{1,3}|[0-5])[a-d]?"
    comorbid = ctx.memo("comorbidity_phrases", lambda: re.compile(
        "|".join(f"(?:{p})" for forms in ctx.clinical["phrases"].get("comorbidities", {}).values() for p in forms)
        or r"(?!x)x"))
    for m in re.finditer(rf"\b(?:{other})\b[\s,:(-]*(?:stage|grade|class|category)?\s*{level}(?![\w+-])|"
                         rf"\bstage\s+{level}\s+(?:{other})\b", doc.text):
        if not any(c.start() < m.end() and m.start() < c.end() for c in comorbid.finditer(doc.text)):
            doc.take(m.start(), m.end())  # (what a comorbidity phrase reads, "CKD stage 4", it reads)
