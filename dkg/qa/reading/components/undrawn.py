"""A subtype the flowchart does not draw: a cell lineage (T-cell) where every way open to the patient names
another (B-ALL), or a "<kind> cell tumour" no loaded guideline mentions (giant cell tumour of bone). Such a
question is not covered."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, QuestionDoc, Reading, component
from dkg.qa.reading.text import in_brackets


def _every_text(ctx: Context) -> str:
    """Every box of the loaded guidelines and every disease name, lower case (joined once per context)."""
    return " ".join([*(b.text.lower() for st in ctx.kb.states.values() for b in st.boxes.values()),
                     *(n.lower() for names in [*ctx.conf.diseases.values(), *ctx.conf.disease_words.values()]
                       for n in names)])


def _lineage(ctx: Context, r: Reading, codes: list[str], letter: str) -> bool:
    """Whether every way open to the patient that ends there names a lineage, and none names ``letter``."""
    letters: list[set[str]] = []
    # a scope fact the question states (a relapse) leaves only the ways drawn for it
    scoped = [(str(a), str(v)) for a, v in ctx.clinical.get("scope_facts", {}).items()
              if str(r.facts.get(str(a))) == str(v)]
    for c in codes:
        st = ctx.kb.states[c]
        ways = [tuple(p.boxes) for p in ctx.kb.paths.get(c, []) if p.scope.consistent(r.facts)
                and all(v in dict(p.scope.cats).get(a, ()) for a, v in scoped)]
        for way in ways:
            if any(len(o) > len(way) and o[:len(way)] == way for o in ways):
                continue  # it goes on (a pointer to the relapse page): judged where it ends
            words = " ".join(st.boxes[b].textPlain.lower() for b in way if b in st.boxes)
            letters.append(set(re.findall(r"\b([tb])(?:[- ]cell\b|[- ]lineage\b|-all\b)", words)))
    return bool(letters) and all(ls and letter not in ls for ls in letters)


@component("undrawn_subtype")
def read_undrawn_subtype(doc: QuestionDoc, ctx: Context) -> None:
    r, text = doc.reading, doc.text
    if r.other_disease:
        return
    codes = r.guidelines or list(ctx.kb.states)
    lineage = re.search(r"\b([tb])(?:[- ]cell\b|[- ]lineage\b|-(?=all\b|lbl\b))", text)
    if lineage and _lineage(ctx, r, codes, lineage.group(1)):
        r.other_disease = f"{lineage.group(1)}-cell {' '.join(ctx.conf.diseases.get(codes[0], [''])[:1])}"
        return
    for m in re.finditer(r"\b([a-z]+)[- ]cell (?:tumou?r|carcinoma|sarcoma|neoplasm|lesion)s?\b", text):
        if any(re.search(p, text[max(0, m.start() - 25):m.end()]) for p in ctx.histology):
            continue  # "small round blue cell tumour": a histology a loaded guideline draws
        if r.guidelines and in_brackets(text, m.start(), text[m.end():]):
            continue  # "dedifferentiated chondrosarcoma (… high-grade spindle-cell sarcoma)": describing it
        every = ctx.memo("every_text", lambda: _every_text(ctx))
        if f"{m.group(1)} cell" not in every and f"{m.group(1)}-cell" not in every:
            r.other_disease = m.group(0)
            return
