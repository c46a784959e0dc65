"""When a relapse came: "relapsed 14 months after diagnosis", "dx'd 2 years ago", or two dates (diagnosis,
relapse). Read early when the question names the relapse; read again at the end when only the facts imply one
("on imatinib; marrow now 30 % blasts")."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.quantities import _DURATION, _date_near, _dates, _months
from dkg.qa.reading.doc import Context, FactSource, QuestionDoc, component

_PATTERNS = [rf"\b(?:relapsed?|relapsing|recurred|recurrence|came back)\s+(?:at\s+|after\s+|about\s+|~)?{_DURATION}"
             r"(?:\s*(?:after|from|post|since)\s*(?:the\s*)?(?:initial\s*|original\s*|first\s*)?"
             r"(?:diagnosis|dx|cr1?|remission|presentation))?",
             rf"{_DURATION}\s*(?:after|from|post|since)\s*(?:the\s*)?(?:initial\s*|original\s*|first\s*)?"
             r"(?:diagnosis|dx)",
             rf"\b(?:dx'?d|dx|diagnosed|first diagnosed)\s+(?:about\s+|~|some\s+)?{_DURATION}\s+ago",
             # "diagnosed about 15 months before it came back"
             rf"\b(?:dx'?d|dx|diagnosed|first diagnosed)\s+(?:about\s+|~|some\s+|only\s+|just\s+)?{_DURATION}\s+"
             r"before\s+(?:it|the\s+[a-z]+)\s+(?:came back|relapsed|recurred|returned)"]


def _timing(doc: QuestionDoc, inferred: bool) -> list[tuple[int, FactSource]]:
    """The relapse facts a duration or two dates give (the duration's words are marked read)."""
    text = doc.text
    for p in _PATTERNS:
        m = re.search(p, text)
        if m and doc.free(m.start(), m.end()) and (inferred or re.search(r"relaps|recur|came back", text)):
            months = _months(float(m.group(1)), m.group(2))
            doc.take(m.start(), m.end())
            return [(m.start(), FactSource("time_to_relapse", round(months), m.group(0).strip(), "duration")),
                    (m.start(), FactSource("relapse", "yes", m.group(0).strip(), "duration"))]
    dates = _dates(text)
    if len(dates) >= 2:
        dx = _date_near(text, dates, r"\b(?:dx|diagnos\w*|presented)\b")
        rel = _date_near(text, dates, r"\b(?:relaps\w*|recurr\w*|came back|blasts|marrow|bm)\b")
        if dx and rel and rel > dx:
            months = (rel.year - dx.year) * 12 + rel.month - dx.month
            return [(0, FactSource("time_to_relapse", months, f"{dx:%b %Y} → {rel:%b %Y}", "dates"))]
    return []


@component("relapse_timing")
def read_relapse_timing(doc: QuestionDoc, ctx: Context) -> None:
    doc.cands.extend(_timing(doc, "relapse" in doc.read_attrs()))


@component("implied_relapse_timing")
def date_implied_relapse(doc: QuestionDoc, ctx: Context) -> None:
    """A relapse implied, not named ("on imatinib; marrow now 30 % blasts"): "dx'd 14 months ago" dates it."""
    r = doc.reading
    if r.facts.get("relapse") != "yes" or "time_to_relapse" in r.facts:
        return
    for _, src in _timing(doc, True):
        if src.attr == "time_to_relapse":
            r.facts[src.attr] = src.value
            r.sources.append(src)
