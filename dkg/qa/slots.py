"""What a question's reading gives the query: the slots the model's query may use (the facts, with those the
history and the guideline's ways imply, the guideline, the treatment, the page), and the dataset's own query for the
question where the model's cannot be used."""

from __future__ import annotations

from dkg.constraints.vocabulary import load_vocabulary
from dkg.qa import cypher
from dkg.qa.config import treatment_phrase
from dkg.qa.facts import Tagged
from dkg.qa.knowledge import Knowledge
from dkg.qa.pathway import code_of, implied_by_done, implied_by_facts
from dkg.qa.reading.doc import FactSource, Reading
from dkg.qa.who_gets import constraint_boxes


def model_slots(kb: Knowledge, r: Reading) -> Tagged:
    """What the model is shown: the slots its query may use, filled from the reading."""
    t = Tagged(facts=dict(r.facts), guidelines=list(r.guidelines), other_disease=r.other_disease, page=r.page)
    if r.intent == "constraints":
        t.facts = {}
        boxes = constraint_boxes(kb, r)
        if r.treatment is not None and (r.treatment.text in r.text or boxes == [r.treatment.uid] or (
                len(boxes) > 1 and all(r.treatment.text in kb.states[code_of(b)].boxes[b].textPlain.lower()
                                       for b in boxes))):
            # named as the guideline writes it, the option of the one box meant, or one option that several
            # boxes list
            t.treatment = r.treatment.text
        elif boxes:
            box = kb.states[code_of(boxes[0])].boxes[boxes[0]]
            t.treatment = treatment_phrase(box.textPlain).lower()
    elif r.intent == "advisable" and r.treatment is not None:
        t.treatment = r.treatment.text
    stated = set(r.facts)
    implied = implied_by_done(kb, r.guidelines or list(kb.states), r.facts, [o.uid for o in r.done])
    for i in implied:
        t.facts[i.attr] = i.value
        if r.intent != "constraints":
            r.facts[i.attr] = i.value
            r.sources.append(FactSource(i.attr, i.value, i.because, "implied: that treatment was given"))
    if r.intent != "constraints" and r.guidelines:
        for i in implied_by_facts(kb, r.guidelines, r.facts, stated):
            t.facts[i.attr] = i.value
            r.facts[i.attr] = i.value
            r.sources.append(FactSource(i.attr, i.value, i.because, "implied: every way that uses it has it"))
    return t


def rules_query(kb: Knowledge, r: Reading, tags: Tagged) -> str | None:
    """The dataset's query of the question's type for its reading (None where it names no treatment to ask
    about)."""
    order = list(load_vocabulary().attributes)
    code = r.guidelines[0] if len(r.guidelines) == 1 else None
    if r.intent == "next_step":
        return cypher.next_step_query(tags.facts, code, order)
    if r.intent == "advisable" and tags.treatment:
        return cypher.advisable_query(tags.facts, code, tags.treatment, order)
    if r.intent == "constraints" and tags.treatment:
        boxes = constraint_boxes(kb, r)
        return cypher.constraints_query(code_of(boxes[0]), None, tags.treatment) if boxes else None
    return None
