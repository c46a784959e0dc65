"""Quantities a question states: counts of metastases, numbers named as another measurement, months, dates and
ages (split out of :mod:`dkg.qa.reader`)."""

from __future__ import annotations

from datetime import date

from dkg import rx as re
from dkg.constraints.registry import american

_UNNAMING = {"of", "at", "is", "was", "were", "now", "to", "about", "approx", "approximately", "around", "only", "just",
             "and", "with", "a", "an", "the", "measuring", "measures", "sized", "size", "in", "on", "by", "from",
             "than", "over", "under", "below", "above", "less", "more", "up", "down"}


def _named_otherwise(text: str, start: int, attr: str) -> bool:
    """Does a word right before the number name another measurement ("FEV1 90%", "EF 30%")? A number the guideline's
    only attribute in that unit may take is one the question does not name otherwise."""
    m = re.search(r"([A-Za-z][\w-]*)[\s:=]*$", text[max(0, start - 24):start])  # "calf, 0.5 mm" names none
    if m is None:
        return False
    w = m.group(1).lower()
    return w not in _UNNAMING and american(w) not in attr.lower().split("_")  # "tumour 7 cm" names tumor_size


_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "a single": 1, "single": 1, "solitary": 1}
_LESION_NOUNS = {"metastasis count": r"(?:mets?|metastas[ei]s|metastatic\s+(?:lesions?|deposits?)|lesions?|deposits?)",
                 "tumour count": r"(?:tumou?rs?|nodules?|masses|lesions?)"}


def _counted_lesions(text: str, names: set[str]) -> tuple[int, int, int] | None:
    """How many metastases (or tumours) a question counts, for a guideline that branches on the count: the counts
    written before the noun, summed over sites ("2 brain mets … 6 bone mets" is 8; "> 10 liver mets" is 11);
    "innumerable", "numerous", "widespread", "diffuse" many. None when the question counts none, or says only
    "multiple" or "several" (a count the branch may need exactly). Returns (count, start, end)."""
    noun = next((p for k, p in _LESION_NOUNS.items() if k in names), None)
    if noun is None:
        return None
    total, span = 0, None
    num = r"(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|a single|single|solitary)"
    # (a measurement is no count: "3.4 cm solid lesion" counts nothing)
    for m in re.finditer(rf"(?:(>|more than|over|at least|≥)\s*)?(?<![\d.,])\b{num}\s+"
                         rf"(?!(?:cm|mm|centimet(?:er|re)s?|millimet(?:er|re)s?)\b)(?:[a-z][\w-]*\s+){{0,2}}?{noun}\b",
                         text):
        n = int(m.group(2)) if m.group(2).isdigit() else _NUMBER_WORDS[m.group(2)]
        total += n + (1 if m.group(1) in (">", "more than", "over") else 0)
        span = (span[0], m.end()) if span else (m.start(), m.end())
    many = re.search(r"\b(?:innumerable|numerous|countless|widespread|diffuse|extensive)\s+"
                     rf"(?:[a-z+/&][\w+/-]*\s+){{0,3}}?{noun}\b", text)
    if many:
        total = max(total, 10)
        span = (min(span[0], many.start()), max(span[1], many.end())) if span else (many.start(), many.end())
    return (total, *span) if span and total else None  # (a count of none is "no metastases", read elsewhere)


# --- numbers -----------------------------------------------------------------------------------

_MONTHS = {m: i + 1 for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                           "nov", "dec"])}
_DATE = re.compile(r"\b(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+)?((?:19|20)\d{2})\b")
_NUM = r"(\d+(?:\.\d+)?)"
_AGE_EXTRA = [r"\b(\d{1,3})\s?(?:yo|y/o|y\.o\.)?\s?(?:m|f)\b(?![\w/])", r"\b(\d{1,3})\s*(?:yo|y/o)\b",
              r"\b(?:(?:my|our|the|this|your) )?(?:patient|pt)\s*,\s*(\d{1,3})(?=\s*[,.;)])",  # "My patient, 19, …"
              # "turned 40"
              r"\b(?:just |recently )?turn(?:ed|s|ing)\s+(\d{1,3})\b(?!\s*(?:cm|mm|kg|%|mg|units?|points?))",
              r"\b(?:boy|girl|man|woman|male|female)\s*,?\s*(?:aged?\s*)?(\d{1,3})\b(?!\s*(?:kg|cm|%|mo))",
              # a person named at the start of a sentence, then the age: "Mr K, 52.", "Retired firefighter, 59, …"
              r"(?:^|[.;:]\s+|\bre\s+)(?:mr|mrs|ms|miss|dr)\.?\s+[a-z][\w'-]*\.?\s*,\s*(\d{1,3})(?=\s*[,.;)])",
              # a relative who is the patient: "my nephew is 22 and has …"
              r"\b(?:nephew|niece|grandson|granddaughter|partner|spouse|child|teen(?:ager)?|uncle|aunt)\s+(?:is|was|"
              r"turned)\s+(\d{1,3})\b(?!\s*(?:kg|cm|%|months?|mg|weeks?|days?))",
              # … and anywhere in a sentence: "please see Mr P, 58, who …", "Mrs A is 55", "Mr D is 73"
              r"\b(?:mr|mrs|ms|miss|mx)\.?\s+[a-z][\w'-]*\.?\s*(?:,\s*|\s+is\s+|\s+aged?\s+)(\d{1,3})"
              r"(?=\s*(?:[,.;)]|years?\b|yrs?\b|and\b|$))",
              r"(?:^|[.;:]\s+)(?:(?:retired|retiree|former|semi-retired|active|busy)\s+)?[a-z]+(?:er|or|ist|ian|ant|ent|man|woman)"
              r"\s*,\s*(\d{1,3})(?=\s*[,.;)])",
              # "a man of 48 years", "lady of 71", "boy of seventeen years old"
              r"\b(?:patient|pt|man|woman|lady|gentleman|gent|boy|girl|male|female|child|kid|teen(?:ager)?|adolescent|"
              r"person|guy)\s+of\s+(\d{1,3})\b(?!\s*(?:kg|cm|mm|%|mg|g/|months?|mos?|weeks?|days?|cycles?))",
              r"\((\d{1,3})\s*(?:years?|yrs?|y)(?:\s*old)?\)",  # "in his early forties (41 years)"
              # "patient 19 years, she has …"
              r"\b(?:patient|pt|man|woman|lady|gentleman|boy|girl|male|female|child)\s*,?\s*(\d{1,3})\s*(?:years?|yrs?)\b"
              r"(?!\s+(?:ago|after|before|since|later|from|of\s+(?:follow|treat|therap|age)))"]
_DURATION = r"(\d+(?:\.\d+)?)\s*(months?|mos?|mths?|years?|yrs?|y|weeks?|wks?)"


def _months(n: float, unit: str) -> float:
    if unit.startswith(("y",)):
        return n * 12
    if unit.startswith("w"):
        return n / 4.345
    return n


def _dates(text: str) -> list[tuple[int, date]]:
    """Dates with a month where the question gives one ("02/2025", "Feb 2025"), else a year's middle."""
    exact = _any_dates(text)
    out = [(a, d) for a, _, d in exact]
    for m in _DATE.finditer(text):
        if not any(a <= m.start(2) < b for a, b, _ in exact):
            out.append((m.start(), date(int(m.group(2)), _MONTHS.get(m.group(1) or "", 6), 1)))
    return sorted(out)


_ANY_DATE = re.compile(r"\b(?:(\d{1,2})\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+"
                       r"((?:19|20)\d{2})\b|"
                       r"\b(?:(\d{1,2})/)?(\d{1,2})/((?:19|20)\d{2})\b|\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b")


def _any_dates(text: str) -> list[tuple[int, int, date]]:
    """Dates written with a month ("19 March 1963", "Feb 2022", "03/1966", "10/02/2022", "1963-03-19"):
    (start, end, date); a day that is not given is the 1st."""
    out = []
    for m in _ANY_DATE.finditer(text):
        try:
            if m.group(2):
                d = date(int(m.group(3)), _MONTHS[m.group(2)], int(m.group(1) or 1))
            elif m.group(6):
                d = date(int(m.group(6)), int(m.group(5)), int(m.group(4) or 1))  # day/month/year
            else:
                d = date(int(m.group(7)), int(m.group(8)), int(m.group(9)))
        except (ValueError, KeyError):
            continue
        out.append((m.start(), m.end(), d))
    return out


def _date_near(text: str, dates: list[tuple[int, date]], cue: str) -> date | None:
    best: tuple[int, date] | None = None
    for c in re.finditer(cue, text):
        for pos, d in dates:
            dist = pos - c.end() if pos >= c.end() else (c.start() - pos) * 3
            if 0 <= dist < 60 and (best is None or dist < best[0]):
                best = (dist, d)
    return best[1] if best else None
