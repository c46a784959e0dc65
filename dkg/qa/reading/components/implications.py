"""Facts implied by facts (``conf/qa.yaml`` implies: a Ph+ ALL is B-lineage, say), each shown with the facts it
came from."""

from __future__ import annotations

from dkg.qa.config import apply_implications
from dkg.qa.reading.doc import Context, FactSource, QuestionDoc, component


@component("implications")
def imply(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    stated = dict(r.facts)
    r.facts = apply_implications(r.facts, r.guidelines, ctx.conf)
    for attr in r.facts.keys() - stated.keys():
        because = ", ".join(f"{a} = {v}" for a, v in stated.items())[:80]
        r.sources.append(FactSource(attr, r.facts[attr], because, "implied (conf/qa.yaml implies)"))
