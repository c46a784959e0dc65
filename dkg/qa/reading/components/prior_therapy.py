"""No treatment before now ("treatment-naive", "previously untreated", "never treated", "no prior systemic
therapy", "no treatment yet"), for a linked guideline that decides on such a finding: an attribute named
``prior_…therapy`` or ``prior_…treatment`` (valued no, or none) or ``treatment_naive`` (valued yes)."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, QuestionDoc, component

_NAIVE = re.compile(
    r"\b(?:previously untreated|untreated|(?:treatment|therapy|systemic[- ]therapy|tx|rx)[- ]na[iï]ve|"
    r"never (?:been )?treated|no (?:prior|previous) (?:systemic |first[- ]line )?"
    r"(?:therapy|treatment|tx|rx)(?: for (?:advanced|metastatic) disease)?|"
    r"no (?:systemic )?(?:treatment|therapy|tx) (?:yet|so far|to date)|not (?:yet )?(?:been )?treated|"
    r"no previous systemic therapy)\b")


def _attrs(doc: QuestionDoc, ctx: Context) -> dict[str, str]:
    """The linked guidelines' no-prior-treatment attributes and the value that says "none before"."""
    out: dict[str, str] = {}
    for code in doc.reading.guidelines or list(ctx.kb.states):
        for attr in ctx.kb.attrs.get(code, set()):
            if re.fullmatch(r"prior_(?:[a-z]+_){0,2}(?:therapy|treatment)", attr):
                out[attr] = "none" if "none" in ctx.kb.values_of([code], attr) else "no"
            elif attr == "treatment_naive":
                out[attr] = "yes"
    return out


@component("prior_therapy")
def read_prior_therapy(doc: QuestionDoc, ctx: Context) -> None:
    attrs = _attrs(doc, ctx)
    if not attrs:
        return
    for m in _NAIVE.finditer(doc.text):
        if doc.free(m.start(), m.end()):
            for attr, value in sorted(attrs.items()):
                doc.add(m.start(), attr, value, m.group(0), "no treatment before")
            doc.take(m.start(), m.end())
            return
