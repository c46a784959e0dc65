"""Ages a question gives only as a range: a date of birth (a year alone, or a month, says the age to within a
year), "older than 40 but not yet 60", "just over 70", "in her early forties", "in his 60s". The range becomes
an age only where the guideline's own age cut-offs do not fall inside it, so that every age in it takes the same
branch; otherwise the age stays missing and the clinician is asked for it."""

from __future__ import annotations

import math
from datetime import date

from dkg import rx as re
from dkg.qa.quantities import _ANY_DATE, _any_dates
from dkg.qa.reading.doc import Context, QuestionDoc, component

_BIRTH_CUE = r"\b(?:dob|d\.o\.b\.?|date of birth|born(?: on| in)?|birth year|year of birth)\b[:\s]*"
_DECADES = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60, "seventies": 70,
            "eighties": 80, "nineties": 90}
_PART = {"early": (0, 3.99), "mid": (3, 6.99), "late": (6, 9.99), "": (0, 9.99)}
_EPS = 0.01


def _cuts(doc: QuestionDoc, ctx: Context) -> list[float]:
    """Where the ages the linked guidelines' ways allow begin and end."""
    codes = doc.reading.guidelines or list(ctx.kb.paths)
    out: set[float] = set()
    for code in codes:
        for p in ctx.kb.paths.get(code, []):
            for a, lo, hi in p.scope.nums:
                if a == "age":
                    out |= {x for x in (lo, hi) if math.isfinite(x)}
    return sorted(out)


def settled(cuts: list[float], lo: float, hi: float) -> float | None:
    """An age standing for every age in ``[lo, hi]`` when no way's bound falls inside it (a way allowing
    ``[a, b]`` splits the range where ``lo < a <= hi`` or ``lo <= b < hi``); None otherwise."""
    if any(lo < c <= hi or lo <= c < hi for c in cuts):
        return None
    mid = (lo + hi) / 2
    return int(mid) if lo <= int(mid) <= hi else round(mid, 2)


def birth_range(text: str, today: date) -> tuple[float, float, str] | None:
    """The age range a date of birth gives on the latest other date the question names (today if none):
    exact with a day, within a year with a month or a year alone. Returns (lo, hi, the words)."""
    cue = re.search(_BIRTH_CUE, text)
    if cue is None:
        return None
    dated = _any_dates(text)
    birth = next(((a, b, d) for a, b, d in dated if 0 <= a - cue.end() <= 3), None)
    year = re.match(r"(?:in\s+)?((?:19|20)\d{2})\b(?![/-]\d)", text[cue.end():]) if birth is None else None
    if birth is None and year is None:
        return None
    on = max([d for a, _, d in dated if birth is None or a != birth[0]], default=today)
    if birth is not None:
        words = text[cue.start():birth[1]]
        m = _ANY_DATE.match(text, birth[0])
        has_day = m is not None and bool(m.group(1) or m.group(4) or m.group(9))
        first = birth[2]
        last = first if has_day else date(first.year, first.month, 28)
    else:
        assert year is not None
        words = text[cue.start():cue.end() + year.end()]
        first, last = date(int(year.group(1)), 1, 1), date(int(year.group(1)), 12, 31)

    def age(born: date) -> int:
        return on.year - born.year - ((on.month, on.day) < (born.month, born.day))

    lo, hi = age(last), age(first)
    return (lo, hi, words) if 0 <= lo <= hi <= 110 else None


def said_range(text: str) -> tuple[float, float, int, str] | None:
    """An age said as a range: (lo, hi, where, the words)."""
    both = re.search(r"\b(?:older than|over|above)\s+(\d{1,3})\s*(?:years?(?: old)?|yrs?)?\s*(?:,\s*)?(?:but|and)\s+"
                     r"(?:not yet|younger than|under|below|not quite|less than)\s+(\d{1,3})\b", text)
    if both:
        above, below = int(both.group(1)), int(both.group(2))
        return (above + _EPS, below - _EPS, both.start(), both.group(0)) if above < below else None
    decade = re.search(r"\b(?:in|into)\s+(?:his|her|their|the)\s+(early|mid-?|late)?\s*-?\s*"
                       r"(twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties|[2-9]0'?s)\b", text)
    if decade:
        base = _DECADES.get(decade.group(2)) or int(decade.group(2)[:2])
        a, b = _PART[(decade.group(1) or "").rstrip("-")]
        return (base + a, base + b, decade.start(), decade.group(0))
    over = re.search(r"\b(?:just|slightly|a little|a bit)\s+(over|above|under|below)\s+(\d{1,3})\b"
                     r"(?!\s*(?:kg|cm|mm|%|mg|g/|weeks?|months?|days?|cycles?))", text)
    if over:
        n = int(over.group(2))
        lo, hi = (n + _EPS, n + 1.99) if over.group(1) in ("over", "above") else (n - 1.99, n - _EPS)
        return (lo, hi, over.start(), over.group(0))
    older = re.search(r"\b(older|younger) than\s+(\d{1,3})\b|\baged?\s+(over|above|under|below)\s+(\d{1,3})\b", text)
    if older:
        up = (older.group(1) or older.group(3)) in ("older", "over", "above")
        n = int(older.group(2) or older.group(4))
        return ((n + _EPS, 110.0) if up else (0.0, n - _EPS)) + (older.start(), older.group(0))
    return None


@component("age_ranges")
def read_age_range(doc: QuestionDoc, ctx: Context) -> None:
    if "age" in doc.read_attrs():
        return
    text = doc.text
    born = birth_range(text, ctx.today)
    if born is not None:
        lo, hi, words = born
        where = text.find(words)
        rule = "age from the date of birth" + (" and the latest date given" if _any_dates(text[where + len(words):])
                                               or _any_dates(text[:where]) else " and today's date")
    else:
        said = said_range(text)
        if said is None:
            return
        lo, hi, where, words = said
        rule = "age said as a range"
    if not doc.free(where, where + len(words)):
        return
    value = lo if lo == hi else settled(_cuts(doc, ctx), lo, hi)
    if value is None:
        return  # the guideline branches inside the range: the age is asked for
    shown = f"{lo:g}" if lo == hi else f"{math.ceil(lo):g}–{math.floor(hi):g}"
    doc.add(where, "age", value, words, f"{rule} ({shown}{'' if lo == hi else ': one branch for all of it'})")
    doc.take(where, where + len(words))
