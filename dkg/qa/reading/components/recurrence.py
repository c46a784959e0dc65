"""Metastases found after the first treatment are a recurrence (unless said to be there at diagnosis), in the
words of the guideline asked about: its relapse, or its own recurrence or progression finding; nothing where it
decides on neither."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, FactSource, QuestionDoc, component


@component("recurrence")
def read_recurrence(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    treated = [o for o in r.done if not re.search(r"biops|work-?up|staging|imaging|h&p|diagnos", o.box.lower())]
    if r.facts.get("metastatic") == "yes" and "relapse" not in r.facts and treated and \
            not re.search(r"\b(?:at (?:presentation|diagnosis|dx)|de novo|synchronous|newly)\b", doc.text):
        attr = _recurrence_attr(r.guidelines, ctx)
        if attr is None or attr in r.facts:
            return
        r.facts[attr] = "yes"
        r.sources.append(FactSource(attr, "yes", "metastases after " + r.done[0].text, "recurrence"))


def _recurrence_attr(codes: list[str], ctx: Context) -> str | None:
    """The attribute a recurrence is written in by the guidelines asked about (relapse where none is named)."""
    if not codes:
        return "relapse"
    attrs = set().union(*(ctx.kb.attrs.get(c, set()) for c in codes))
    if "relapse" in attrs:
        return "relapse"
    own = sorted(a for a in attrs if re.search(r"recurren|relaps|progress", a) and not re.search(r"rapid|free", a))
    return own[0] if len(own) == 1 else None
