"""One value per attribute from the candidates: a later statement wins (history first, then the present), with
the exceptions clinicians expect (a named comorbidity outweighs "healthy", a site found clear does not undo
metastases elsewhere, a value found again on the final specimen decides the steps after the treatment given, a
remission before a relapse is history). Then a clinical phrase naming another guideline's tumour kind is dropped."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, FactSource, QuestionDoc, Reading, component
from dkg.qa.reading.text import LATER_FINDING


def _choose(r: Reading, attr: str, items: list[tuple[int, FactSource]]) -> FactSource:
    items.sort(key=lambda ps: ps[0])
    chosen = items[-1][1]
    if attr == "comorbidities" and any(s.value == "substantial" and s.rule == "clinical phrase" for _, s in items):
        chosen = next(s for _, s in items if s.value == "substantial" and s.rule == "clinical phrase")
    if attr == "relapse" and any(s.value == "yes" for _, s in items):
        chosen = next(s for _, s in items if s.value == "yes")
    if attr == "metastatic" and any(s.value == "yes" for _, s in items) and all(
            re.search(r"\b(?:clear|clean|negative|neg|unremarkable|normal|other|else|elsewhere|further|additional)\b",
                      s.text)
            for _, s in items if s.value == "no"):
        # "15 bone mets …, liver and lungs clear", "solitary lung nodule, no other disease": a site found clear
        # does not undo metastases elsewhere
        chosen = next(s for _, s in items if s.value == "yes")
    # a value found again on the final specimen ("a high-grade component on final pathology") is a later
    # finding: the earlier value placed the patient, the later one decides the step after
    found = [(p, s) for p, s in items if s.value != items[0][1].value and LATER_FINDING.search(
        r.text[max(0, p - 60):p + 60])]
    if found and len(items) > 1 and items[0][1].value != found[-1][1].value:
        chosen = next(s for _, s in items if s.value != found[-1][1].value)
        r.later[attr] = found[-1][1].value
    return chosen


def _remission_before_relapse(r: Reading, cands: list[tuple[int, FactSource]]) -> None:
    """A relapse after a remission: the remission is history, the relapse is the state. The relapse is placed by
    what says it happened ("relapsed", "now 35% blasts"), not by a time it is counted from ("dx 14 mo ago"); a
    first remission ("CR1") is before any relapse, wherever it is written."""
    if r.facts.get("relapse") != "yes" or r.facts.get("response") != "CR":
        return
    later = [(p, s) for p, s in cands if s.attr == "response" and s.value == "CR"]
    rel = [p for p, s in cands if s.attr == "relapse" and s.rule != "duration"] or \
        [p for p, s in cands if s.attr == "relapse"]
    first = all(re.fullmatch(r"cr ?1|first (?:cr|complete remission|remission)", s.text.lower()) for _, s in later)
    if later and rel and (first or max(p for p, _ in later) < max(rel)):
        del r.facts["response"]
        # the depth of that remission ("MRD-neg CR1") is history too, when written before the relapse
        mrd = [p for p, s in cands if s.attr == "mrd"]
        if "mrd" in r.facts and mrd and max(mrd) < max(rel):
            del r.facts["mrd"]


@component("resolve")
def resolve_facts(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    by: dict[str, list[tuple[int, FactSource]]] = {}
    for pos, s in doc.cands:
        by.setdefault(s.attr, []).append((pos, s))
    for attr, items in by.items():
        r.facts[attr] = _choose(r, attr, items).value
        r.sources.extend(s for _, s in items)
    _remission_before_relapse(r, doc.cands)


@component("foreign_phrases")
def drop_foreign_phrases(doc: QuestionDoc, ctx: Context) -> None:
    """A clinical phrase that names a tumour kind of another guideline ("papillary" is a non-clear-cell kidney
    tumour) says nothing about a question linked to a guideline whose branches give that attribute other values:
    the fact is dropped (it would send the patient nowhere in the guideline asked about). Only the facts that say
    what the tumour is (``fixed_facts``); a branch that never names a value may still hold it."""
    r = doc.reading
    if not r.guidelines:
        return
    fixed = {str(a) for a in ctx.clinical.get("fixed_facts", [])}  # what kind of tumour it is
    for src in [s for s in r.sources if s.rule in ("clinical phrase", "qa phrase") and s.attr in fixed]:
        if src.attr not in r.facts or str(r.facts[src.attr]) != str(src.value):
            continue  # (another reading of the attribute was kept)
        seen = {v for c in r.guidelines for p in ctx.kb.paths.get(c, []) for a, vs in p.scope.cats
                if a == src.attr for v in vs}
        if seen and str(src.value) not in seen:
            del r.facts[src.attr]
            r.sources.remove(src)
    doc.resolved = dict(r.facts)
