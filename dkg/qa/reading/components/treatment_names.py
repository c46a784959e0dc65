"""A treatment named as the guideline writes it ("primary treatment of stage II–III disease") states no patient
fact: its words are set aside before any fact is read (the intent still reads them)."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, QuestionDoc, component


def _phrases(ctx: Context) -> list[str]:
    """The loaded guidelines' treatments of three words or more, longest first."""
    return sorted(dict.fromkeys(p for p, _ in ctx.kb.phrases if len(p.split()) >= 3), key=lambda p: -len(p))


@component("treatment_names")
def set_aside_treatments(doc: QuestionDoc, ctx: Context) -> None:
    text = doc.text
    for p in ctx.memo("treatment_phrases", lambda: _phrases(ctx)):
        if p not in text:  # a whole-word match is a substring first: most of thousands of phrases stop here
            continue
        for m in re.finditer(r"(?<![\w])" + re.escape(p) + r"(?![\w])", text):
            if doc.free(m.start(), m.end()):
                doc.take(m.start(), m.end())
                doc.named.append((m.start(), m.end()))
