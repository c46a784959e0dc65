"""General text helpers of the question reader: the question's normal form, sentences, and shared patterns."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from dkg import rx as re
from dkg.qa.facts import normalise

# The end of a sentence: not the dot of "i.e.", "e.g." or "vs.".
SENTENCE_END = re.compile(r"(?<=[?.!])(?<!\b[a-z]\.)(?<!\bvs\.)(?<!\bapprox\.)\s+")


# A new event of the disease, said to be now or later ("Now in 2024 CT shows lung mets", "two years later she
# relapsed"): what the question says before it (treatments, a risk group) was so then.
NEW_EVENT = re.compile(r"(?:^|[.;]\s+|,\s+|\s)(?:(?:but\s+)?(?:now|currently|presently|at present)|"
                       r"(?:\d+|a|one|two|three|four|five|six|several) (?:years?|months?) later)\b"
                       r"[^.;?]{0,80}?\b(?:relaps\w*|recur\w*|mets|metasta\w*|progress\w*|came back|new (?:lesion|"
                       r"nodule|mass|deposit)s?|lesions? in)")



def said_before_event(r: Any, text: str, attr: str) -> bool:
    """Whether every statement of ``attr``'s current value comes before a new event of the disease."""
    event = NEW_EVENT.search(text)
    said = [s for s in r.sources if s.attr == attr and str(s.value) == str(r.facts.get(attr))]
    return event is not None and bool(said) and all(0 <= text.find(s.text) < event.start() for s in said)


# Words that say a finding comes from the final specimen, after the first treatment.
LATER_FINDING = re.compile(r"\b(?:final (?:path\w*|histolog\w*|specimen)|(?:resection|excision|surgical) specimen|"
                           r"on the specimen|component|foci|focus of)\b")

# English words one letter away from a word of the guidelines, never typos of it ("renal vein patent" is not
# "patient").
_REAL_WORDS = {"patent", "patents", "parent", "parents", "ration", "ablate", "resent", "relapsed", "remission"}


def join_lines(question: str) -> str:
    """One line: a line break ends a sentence (a problem list: "#1 … \\n#2 … \\nAnything further recommended?")."""
    lines = [" ".join(line.split()) for line in question.splitlines() if line.strip()]
    return " ".join(line if i == len(lines) - 1 or re.search(r"[.?!;:,]$", line) else line + "."
                    for i, line in enumerate(lines))


def fix_typos(text: str, vocabulary: Collection[str]) -> str:
    """Words of six letters or more one edit away from a word of the guidelines, written as the guidelines do."""

    def fix(m: re.Match[str]) -> str:
        w = m.group(0)
        lw = w.lower()
        if len(lw) < 6 or lw in vocabulary or lw in _REAL_WORDS:
            return w
        for v in vocabulary:
            if abs(len(v) - len(lw)) <= 1 and len(v) >= 7 and edit1(lw, v) and \
                    not (v.startswith(lw) or lw.startswith(v)):  # "completed" is no typo of "complete"
                return v
        return w

    return re.sub(r"[A-Za-z]{6,}", fix, text)


def normal_text(question: str) -> str:
    """The lower-case normal form every component reads (shorthand and written-out numbers made plain)."""
    text = normalise(question)
    text = re.sub(r"\b(\d+) and a half\b", r"\1.5", text)
    # "70 percent", "5 per cent": a percentage
    text = re.sub(r"(?<=\d)\s*(?:per ?cent|pct)\b", "%", text)
    # lengths spelled out: "3.5 centimetres", "12 millimeters"
    text = re.sub(r"(?<=\d)\s*centimet(?:er|re)s?\b", " cm", text)
    text = re.sub(r"(?<=\d)\s*millimet(?:er|re)s?\b", " mm", text)
    # "he has not any other disease": "has no"
    text = re.sub(r"\b(has|have|had|is|are|was|were|there's|there is|there are)(?: not|n't) any\b", r"\1 no", text)
    # clinical shorthand for with and without ("concordant w/ the pathway", "w/o mets")
    text = re.sub(r"(?<![\w/])w/o(?![\w/])", "without", text)
    text = re.sub(r"(?<![\w/])w/(?=\s|[a-z])", "with ", text)
    # "the blinatumomab-then-transplant track": a sequence written as one word
    text = re.sub(r"(?<=[a-z])-(then|followed-by|before|after)-(?=[a-z])",
                  lambda m: " " + str(m.group(1)).replace("-", " ") + " ", text)
    # "a year and 8 months", "2 yrs 3 mo": one duration in months
    return re.sub(r"\b(a|an|\d+)\s*(?:years?|yrs?|y)\s*(?:and\s*|,\s*)?(\d+)\s*(?:months?|mos?|mths?)\b",
                  lambda m: f"{12 * (1 if m.group(1) in ('a', 'an') else int(m.group(1))) + int(m.group(2))}"
                            " months",
                  text)


def ask_sentence(text: str) -> str:
    """The part of the question that asks (the last sentence with a question mark, else the last one)."""
    parts = [p.strip() for p in SENTENCE_END.split(text) if p.strip()]
    asks = [p for p in parts if "?" in p]
    return asks[-1] if asks else (parts[-1] if parts else text)


def edit1(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours apart."""
    if a == b:
        return True
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    if abs(len(a) - len(b)) != 1:
        return False
    s, t = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(s) and s[i] == t[i]:
        i += 1
    return s[i:] == t[i + 1:]


def in_brackets(text: str, start: int, after: str) -> bool:
    """Whether ``text`` at ``start`` is inside a bracket that closes in ``after``."""
    return text[:start].count("(") > text[:start].count(")") and ")" in after


# Words of a phase of care, not of a treatment: "after induction" places no box by itself.
PHASE_WORDS = {"induction", "consolidation", "salvage", "initial", "regimen", "therapy", "treatment",
               "continue", "clinical", "trial", "consider", "primary"}


_DENIED_BEFORE = re.compile(r"\b(?:no|not|nor|without|nil|free of|absence of|(?:neg|negative) for)\s+"
                            r"(?:(?!and\b|or\b|but\b|with\b)[\w-]+\s+){0,2}$")


def denied(text: str, start: int) -> bool:
    """Whether the words starting at ``start`` are denied by what comes just before them ("no <finding>",
    "without any <finding>", "not <finding>"), within their clause."""
    return _DENIED_BEFORE.search(text[max(0, start - 30):start]) is not None

