"""Age and performance status: numbers in shorthand ("61M", "ECOG 1"), a birthday to come, an age in months,
Karnofsky as ECOG, and the ECOG grade in the scale's own words."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.facts import _AGE, _ECOG
from dkg.qa.quantities import _AGE_EXTRA
from dkg.qa.reading.doc import Context, QuestionDoc, component


def _numbers(doc: QuestionDoc) -> None:
    text = doc.text
    # "he turns 60 next month": not 60 yet
    coming = re.search(r"\bturn(?:s|ing)\s+(\d{1,3})\s+(?:next|in\s+(?:a|\d+)|this\s+coming|soon|later\s+this)\b"
                       r"(?:\s+(?:few\s+)?(?:days?|weeks?|months?|year|spring|summer|autumn|fall|winter))?", text)
    if coming and doc.free(coming.start(1), coming.end(1)) and 1 <= int(coming.group(1)) <= 120:
        doc.add(coming.start(), "age", int(coming.group(1)) - 1, coming.group(0), "a birthday still to come")
        doc.take(coming.start(), coming.end())
    for pats, attr, lo, hi in ((_AGE_EXTRA + _AGE, "age", 0, 120), (_ECOG, "performance_status", 0, 5)):
        for p in pats:
            for m in re.finditer(p, text):
                if attr in doc.read_attrs() or not doc.free(m.start(1), m.end(1)):
                    continue
                n = int(m.group(1))
                if lo <= n <= hi and not re.match(r"\s*(?:cm|mm|kg|%|mg|g/|weeks?|wks?|months?|mos?|days?)",
                                                  text[m.end(1):]):
                    doc.add(m.start(), attr, n, m.group(0), "number")
                    doc.take(m.start(), m.end())


def _other_ages(doc: QuestionDoc) -> None:
    text = doc.text
    if "age" not in doc.read_attrs():
        # "a 14-month-old", "9 months old": an age in months is under a year or a few
        infant = re.search(r"\b(\d{1,3})[- ]?(?:months?|mos?|mths?)[- ]old\b", text)
        if infant and doc.free(infant.start(), infant.end()):
            doc.add(infant.start(), "age", int(infant.group(1)) // 12, infant.group(0), "age in months")
            doc.take(infant.start(), infant.end())


def _performance(doc: QuestionDoc, ctx: Context) -> None:
    text = doc.text
    kps_pat = (r"\b(?:kps|karnofsky)(?: performance status| ps| score)?\s*"
               r"(?:(?:of|about|around|approximately|approx\.?|roughly|~|=|:|is|was)\s*)*(\d{2,3})\s*%?")
    for m in re.finditer(kps_pat, text):
        if doc.free(m.start(), m.end()):
            kps = int(m.group(1))
            ecog = next((e for k, e in ctx.clinical["kps_to_ecog"] if kps >= k), 4)
            if "performance_status" not in doc.read_attrs():
                doc.add(m.start(), "performance_status", ecog, m.group(0), f"Karnofsky {kps} → ECOG {ecog}")
            doc.add(m.start(), "_kps", kps, m.group(0), "number")
            doc.take(m.start(), m.end())
    if "performance_status" not in doc.read_attrs():
        # the ECOG grade said the way the scale defines it: "up and about more than half the day, self-caring"
        for grade, pat in ctx.clinical.get("ecog_words", []):
            worded = re.search(pat, text)
            if worded and doc.free(worded.start(), worded.end()):
                doc.add(worded.start(), "performance_status", int(grade), worded.group(0),
                        f"ECOG {grade} as the scale words it")
                doc.take(worded.start(), worded.end())
                break


@component("ages")
def read_age_and_performance(doc: QuestionDoc, ctx: Context) -> None:
    _numbers(doc)
    _other_ages(doc)
    _performance(doc, ctx)
