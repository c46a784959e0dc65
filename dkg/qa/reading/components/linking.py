"""A question that names no disease is about the one loaded guideline that alone decides on what it states: two
or more of its facts are attributes no other loaded guideline uses ("SLNB positive, BRAF wild-type" names the
flowchart that draws those two findings), and none of its facts is one that guideline does not decide on. One
such fact is not enough (a PSA alone, a life expectancy alone): the question is then asked for its disease."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, QuestionDoc, component

_AT_LEAST = 2


@component("linked_by_facts")
def link_by_facts(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    if r.guidelines or r.other_disease or len(ctx.kb.states) < 2:
        return
    baseline = {str(a) for a in ctx.clinical.get("baseline_facts", [])}
    # what a guideline decides on: its boxes' attributes and those its footnotes define its terms by ("PSA" where a
    # footnote's risk groups are bounded by it)
    decides = ctx.memo("decides", lambda: {c: ctx.kb.attrs.get(c, set()) | {x.attr for x in ctx.kb.criteria_of(c)}
                                           for c in ctx.kb.states})
    # (a fact no loaded guideline decides on, an attribute the registry keeps from another time, says nothing; one
    # that a guideline's own definitions or the implications worked out is presumed, not stated)
    worked_out = {x.attr for x in r.sources if re.match(r"[A-Z][A-Z0-9]{1,7}: |implied", x.rule)}
    stated = [a for a in r.facts if a not in baseline and a not in worked_out
              and any(a in d for d in decides.values())]
    fits = []
    for code in ctx.kb.states:
        mine = decides[code]
        if any(a not in mine for a in stated):
            continue
        own = [a for a in stated if all(a not in decides[c] for c in ctx.kb.states if c != code)]
        if len(own) >= _AT_LEAST:
            fits.append(code)
    if len(fits) == 1:
        r.guidelines = fits
