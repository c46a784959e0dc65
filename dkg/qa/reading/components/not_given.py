"""Treatments stated as not given yet ("before any chemo", "chemo-naive", "no RT yet"): the patient has not
passed their boxes."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.knowledge import content_words
from dkg.qa.reading.doc import Context, QuestionDoc, component
from dkg.qa.reading.text import PHASE_WORDS


@component("not_given")
def read_not_given(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    codes = r.guidelines or list(ctx.kb.states)
    frags = [m.group(1) or m.group(2) or m.group(3) or m.group(4) for m in re.finditer(
        r"\b(?:before|prior to|without|ahead of)\s+any\s+([a-z][\w/+-]*(?:\s+[a-z][\w/+-]*)?)|"
        r"\b([a-z][\w-]{2,20})[- ]na[iï]ve\b|"
        r"\bno\s+(?:prior\s+)?([a-z][\w/+-]*(?:\s+[a-z][\w/+-]*)?)\s+yet\b|"
        r"\b(?:not\s+yet|has\s+not|hasn't|have\s+not|haven't)\s+(?:had|received|started|been\s+given)\s+"
        r"(?:any\s+)?([a-z][\w/+-]*(?:\s+[a-z][\w/+-]*)?)", doc.text)]
    for frag in frags:
        said = content_words(ctx.kb.expand(ctx.kb.aliased(frag))) - PHASE_WORDS
        for sc, _, o in ctx.kb.link_options(ctx.kb.aliased(frag), codes):
            if sc > 0.5 and o.words & said and o.uid not in {x.uid for x in r.not_given}:
                r.not_given.append(o)
