"""Which loaded guideline a question is about when it names none: the words of a guideline's names it uses, the
words and facts that belong to another loaded guideline, and the facts that tie it to one guideline only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dkg.qa.clinical import load_clinical
from dkg.qa.knowledge import Knowledge, content_words
from dkg.qa.reading.doc import Reading

_GLUE = {"than", "then", "with", "from", "into", "only", "also", "more", "less", "rather", "which", "when", "what",
         "whom", "patients", "patient", "managed", "given", "treated", "instead", "other", "after", "before"}


def _said_words(kb: Knowledge, text: str) -> set[str]:
    """The question's content words that may name a disease (no glue, no generic head such as "tumour")."""
    from dkg.qa.names import GENERIC_HEADS

    generic = set().union(*(content_words(h) for h in GENERIC_HEADS))
    return {w for w in content_words(kb.expand(text)) if len(w) > 3 and w not in _GLUE and w not in generic}


def _name_words(names: Mapping[str, Sequence[str]], code: str) -> set[str]:
    return {w for n in names.get(code, ()) for w in content_words(n.lower())}


def names_guideline(kb: Knowledge, text: str, code: str, names: Mapping[str, Sequence[str]]) -> bool:
    """Does the question use a word of one of the guideline's names ("thyroid" of "thyroid cancer")?"""
    return bool(_said_words(kb, text) & _name_words(names, code))


def foreign_words(kb: Knowledge, text: str, codes: set[str], names: Mapping[str, Sequence[str]]) -> list[str]:
    """Words of ``text`` that name another loaded guideline ("prostate" of "Prostate Cancer") and that neither the
    names nor the boxes of ``codes`` write."""
    mine = set().union(*(kb.box_words(c) | _name_words(names, c) for c in codes if c in kb.states))
    theirs = set().union(*(_name_words(names, c) for c in kb.states if c not in codes))
    return sorted((_said_words(kb, text) & theirs) - mine)


def foreign_facts(kb: Knowledge, codes: Sequence[str], facts: Mapping[str, Any]) -> list[str]:
    """Facts that none of ``codes`` decides on and another loaded guideline does (baseline facts aside): a
    question stating them is about that other guideline's patient."""
    baseline = {str(a) for a in load_clinical().get("baseline_facts", [])}
    return sorted(a for a in facts if a not in baseline and not any(a in kb.attrs.get(c, set()) for c in codes)
                  and any(a in kb.attrs.get(o, set()) for o in kb.states if o not in codes))


def distinguishing(kb: Knowledge, code: str, facts: Mapping[str, Any]) -> list[str]:
    """The facts that tie a question to one guideline: an attribute only it decides on, or a value of a shared
    attribute that only its branches name (histology = ewing_sarcoma)."""
    baseline = {str(a) for a in load_clinical().get("baseline_facts", [])}
    others = [c for c in kb.states if c != code]
    out = []
    for a, v in facts.items():
        if a in baseline or a not in kb.attrs.get(code, set()):
            continue
        if all(a not in kb.attrs.get(c, set()) for c in others):
            out.append(a)
            continue
        mine = kb.values_of([code], a)
        theirs = kb.values_of(others, a)
        if str(v) in mine and str(v) not in theirs:
            out.append(a)
    return out


def unsettled_disease(kb: Knowledge, r: Reading, codes: list[str], facts: Mapping[str, Any],
                      labels: Mapping[str, str]) -> tuple[str, str] | None:
    """Why a question that names no disease may be about another guideline's patient than the one of the boxes
    found (in ``codes``), and the answer that asks for the disease; None where the disease is settled."""
    if r.guidelines:
        return None
    # (a fact worked out by the guideline's own definitions, a T category from a size, presumes it)
    presumed = {s.attr for s in r.sources if codes and s.rule.startswith(f"{codes[0]}:")}
    unpresumed = {a: v for a, v in facts.items() if a not in presumed}
    ask = "Not answered: which disease is this about? Please name it."
    if codes:
        foreign = foreign_facts(kb, codes, unpresumed)
        if foreign:
            # no disease named, and the question states what only another guideline decides on ("PD-L1 CPS 5"
            # is no kidney fact): the answer found would be another disease's
            names = [labels.get(a, a) for a in foreign]
            return ("the question states " + ", ".join(names) + ", which only another guideline "
                    "decides on, and names no disease"), ask
    if len(codes) == 1 and len(kb.states) > 1 and not distinguishing(kb, codes[0], unpresumed):
        # no disease named and nothing said that only this guideline asks about: another disease's patient
        # would read the same ("a 3.8 cm lesion, AFP 35" is not a kidney question)
        return f"the question names no disease and states nothing only {codes[0]} decides on", ask
    if len(codes) > 1:
        # the facts hold in two guidelines and the question names no disease: which patient is it?
        return ("the facts fit " + " and ".join(codes) + " and the question names no disease",
                "Not answered: the facts fit more than one guideline (" + ", ".join(codes) +
                "); please name the disease.")
    return None
