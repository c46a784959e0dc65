"""Terms a guideline defines in its footnotes, from the findings a question states: "CrCl 45 mL/min" makes
"Surgery-ineligible" where a footnote says so, "T2b N0" makes stage IIA where a footnote's table does
(:mod:`dkg.qa.termdefs`). Only attributes the question did not state are set, each with the footnote's words."""

from __future__ import annotations

from dkg.qa.reading.doc import Context, FactSource, QuestionDoc, component
from dkg.qa.reading.text import said_before_event
from dkg.qa.termdefs import TermRule, derive


def _said_before_event(doc: QuestionDoc, rules: list[TermRule]) -> None:
    """A term stated only before a new event ("nephrectomy for low-risk disease … now relapsed") was so then: where
    the findings stated now define it again, the definition decides (the stated value stays in the sources)."""
    r = doc.reading
    for attr in sorted({x.attr for x in rules} & set(r.facts)):
        if not said_before_event(r, doc.text, attr):
            continue
        now = [(rule, v) for rule, v in derive(rules, {a: v for a, v in r.facts.items() if a != attr})
               if rule.attr == attr]
        if now and str(now[0][1]) != str(r.facts[attr]):
            rule, value = now[0]
            r.facts[attr] = value
            r.sources.append(FactSource(attr, value, rule.words[:160],
                                        f"{rule.code}: footnote definition (the value said before the new event "
                                        "was the tumour's then)"))


@component("term_definitions")
def read_defined_terms(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    codes = set(r.guidelines or ctx.kb.states)
    rules = [x for x in ctx.kb.term_rules if x.code in codes]
    if not rules:
        return
    _said_before_event(doc, rules)
    for _ in range(2):  # a term defined by another term ("very high = ≥ 2 high-risk features")
        found = derive(rules, r.facts)
        if not found:
            break
        for rule, value in found:
            r.facts[rule.attr] = value
            r.sources.append(FactSource(rule.attr, value, rule.words[:160], f"{rule.code}: footnote definition"))
