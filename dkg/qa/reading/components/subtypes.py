"""Subtypes and grades: a subtype or regimen that says what the tumour is (``conf/clinical.yaml`` subtypes), a
footnote's low-grade subtypes, and a numeric grade ("G3", "grade II") as the guideline's grade words."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, QuestionDoc, component


@component("subtypes")
def read_subtypes(doc: QuestionDoc, ctx: Context) -> None:
    text = doc.text
    named = any(re.search(rf"(?<![\w+]){p}(?![\w+])", text) for p in ctx.histology)
    for st in ctx.clinical.get("subtypes", []):
        m = re.search(st["pattern"], text)
        if m and not (st.get("only_unnamed") and named):  # a regimen says the tumour only when nothing else does
            for a, v in st["facts"].items():
                doc.add(m.start(), a, str(v), m.group(0), "subtype")
    for code, d in ctx.kb.defs.items():
        for w in d.low_grade_subtypes:
            m = re.search(rf"\b{re.escape(w)}\b", text)
            if m:
                doc.add(m.start(), "grade", "low", m.group(0), f"{code}: low-grade subtype (footnote)")


@component("grade")
def read_grade(doc: QuestionDoc, ctx: Context) -> None:
    text = doc.text
    m = re.search(r"\b(?:grade|g)\s*([1-4]|iv|iii|ii|i)\b", text)
    if m and doc.free(m.start(), m.end()):
        n = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}.get(m.group(1), m.group(1))
        doc.add(m.start(), "_grade_number", int(n), m.group(0), "number")
        if any("grade" in a for a in ctx.kb.attrs.values()) and not re.search(r"\bp?t[1-4][a-c]?\b", text):
            value = ctx.clinical["grade_numbers"].get(n)
            if value:
                doc.add(m.start(), "grade", value, m.group(0), f"grade {n} is {value}-grade")
        doc.take(m.start(), m.end())
