"""Terms a guideline defines in its footnotes, from the findings a question states: "CrCl 45 mL/min" makes
"Surgery-ineligible" where a footnote says so, "T2b N0" makes stage IIA where a footnote's table does
(:mod:`dkg.qa.termdefs`). Only attributes the question did not state are set, each with the footnote's words."""

from __future__ import annotations

from dkg.qa.reading.doc import Context, FactSource, QuestionDoc, component
from dkg.qa.termdefs import derive


@component("term_definitions")
def read_defined_terms(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    codes = set(r.guidelines or ctx.kb.states)
    rules = [x for x in ctx.kb.term_rules if x.code in codes]
    if not rules:
        return
    for _ in range(2):  # a term defined by another term ("very high = ≥ 2 high-risk features")
        found = derive(rules, r.facts)
        if not found:
            break
        for rule, value in found:
            r.facts[rule.attr] = value
            r.sources.append(FactSource(rule.attr, value, rule.words[:160], f"{rule.code}: footnote definition"))
