"""Words the question left unread that decide branches of a linked guideline: a question with such words is not
answered with confidence (the clinician sees them)."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.knowledge import _stem, content_words
from dkg.qa.reading.doc import Context, QuestionDoc, Reading, component
from dkg.qa.reading.text import LATER_FINDING

_NOT_DECIDING = {"skeleton", "good", "than", "would", "less", "more", "with", "without", "from", "into", "only", "also",
                 "other", "complete", "completed", "pathology", "cause", "sites", "site", "when", "feasible",
                 "disease", "selected", "diagnosis", "presentation", "weeks", "week"}


def _used(ctx: Context, r: Reading, text: str) -> set[str]:
    """Stems of the words some reading used: facts' words, disease names, history and what was set aside."""
    used = {_stem(w) for s in r.sources for w in re.findall(r"[a-z][a-z\-]{3,}", s.text)}
    for code in r.guidelines:
        for n in ctx.conf.diseases.get(code, []) + ctx.conf.disease_words.get(code, []):
            used |= {_stem(w) for w in re.findall(r"[a-z][a-z\-]{3,}", n.lower())}
    used |= {_stem(w) for f in r.done_text for w in re.findall(r"[a-z][a-z\-]{3,}", f)}
    used |= {_stem(w) for f in r.excluded for w in re.findall(r"[a-z][a-z\-]{3,}", f)}  # set aside: read
    if r.later:  # the words that made a finding a later one were read
        used |= {_stem(w) for m in LATER_FINDING.finditer(text) for w in re.findall(r"[a-z][a-z\-]{3,}", m.group(0))}
    if any(x.attr == "time_to_relapse" for x in r.sources):  # the timing is read: other durations are history
        used |= {_stem(w) for w in ("month", "months", "year", "years", "week", "weeks")}
    return used


@component("unread")
def find_unread(doc: QuestionDoc, ctx: Context) -> None:
    r, text = doc.reading, doc.text
    left = "".join(c if not doc.taken[i] else " " for i, c in enumerate(text))
    # "on last month's echo": when a test was done decides nothing
    left = re.sub(r"\b(?:last|this|next|past|previous|prior) (?:month|week|year)(?:'s|s)?\b|"
                  r"\b(?:the\s+)?(?:last|final|first|second|third)\s+(?:[a-z]+\s+)?(?:block|cycle|course)s?\b", " ",
                  left)
    codes = r.guidelines or []
    deciding = set().union(*(ctx.kb.deciding_words.get(c, set()) for c in codes)) if codes else set()
    used = _used(ctx, r, text)
    treat = {w for o in (r.treatments + r.done) for w in o.words}
    for w in re.findall(r"[a-z][a-z\-]{3,}", left):
        sw = _stem(w)
        if sw in deciding and sw not in used and sw not in treat and sw not in _NOT_DECIDING and \
                not (content_words(ctx.kb.expand(w)) - {sw}) & treat:  # an abbreviation of the treatment's words
            r.unread.append(w)


@component("page")
def read_page(doc: QuestionDoc, ctx: Context) -> None:
    """A page code the question names ("ALL-3")."""
    page = re.search(r"\b([A-Z][A-Z0-9]{1,7}-\d{1,3})\b", doc.reading.question)
    doc.reading.page = page.group(1) if page else None
