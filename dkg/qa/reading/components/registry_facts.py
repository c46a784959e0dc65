"""Facts on attributes the registry approved from a guideline ("Deauville score of 2", "CrCl 25 mL/min", "stage
IIB", "CD30-positive", "non-bulky"): found by the attribute's names, valued by what follows them. Attributes that
components before this one already read are left to them."""

from __future__ import annotations

from typing import Any

from dkg import rx as re
from dkg.constraints.comparisons import ordinal_value
from dkg.constraints.qualifiers import MARKER
from dkg.constraints.registry import canonical_unit, convert
from dkg.constraints.vocabulary import load_registry, load_vocabulary
from dkg.qa.facts import _phrase_regex
from dkg.qa.names import registry_short_names
from dkg.qa.quantities import _counted_lesions
from dkg.qa.reading.doc import Context, QuestionDoc, component

# A value read: the value, where its words end, and how many characters before the name belong to them.
Found = tuple[Any, int, int] | None


_LIMIT = r"(?:uln|lln|upper limit(?: of normal)?|lower limit(?: of normal)?|(?:the )?normal)"


def _multiple(m: re.Match[str], text: str) -> Found:
    """A value measured in multiples of a reference limit ("LDH 1.3x ULN", "3x above ULN", "780 U/L (ULN 250)",
    "within normal limits"); of values said one after another ("1.5x ULN a month ago … today 2.4x ULN") the
    last in the sentence."""
    sentence = re.split(r"(?<!\d)[.;?](?!\d)", text[m.end():m.end() + 120])[0]
    said = list(re.finditer(rf"(\d+(?:\.\d+)?)\s*(?:x|×|times|-fold)\s*(?:the\s+)?(?:above\s+|over\s+)?(?:the\s+)?"
                            rf"{_LIMIT}\b", sentence))
    if said:
        n = float(said[-1].group(1))
        return (int(n) if n.is_integer() else round(n, 3)), m.end() + said[-1].end(), 0
    v = re.match(r"(?:\s*(?:level|value|of|is|was|were|at|=|:|now|currently|measured|today|elevated|raised|high))*"
                 r"\s*(\d+(?:\.\d+)?)\s*(?:[a-zµμ]+/[a-z]+)?\s*\(\s*(?:uln|upper limit(?: of normal)?|"
                 r"ref(?:erence)?(?: range)?|normal)\s*(?:=|:|is|<|≤|up to)?\s*(?:\d+(?:\.\d+)?\s*[-–]\s*)?"
                 r"(\d+(?:\.\d+)?)", sentence)
    if v and float(v.group(2)) > 0:
        n = round(float(v.group(1)) / float(v.group(2)), 2)
        return (int(n) if n.is_integer() else n), m.end() + v.end(), 0
    v = re.match(r"(?:\s*(?:level|is|was|were|are|remains?|now|currently|today))*\s*(?:within normal limits|"
                 r"within (?:the )?normal range|normal|wnl|not elevated|unremarkable)\b", sentence)
    if v:
        return 1, m.end() + v.end(), 0
    return None


def _number(a: Any, m: re.Match[str], after: str) -> Found:
    v = re.match(r"(?:\s*(?:score|level|value|of|is|was|were|at|=|:|now|currently|measured|~|≈|about|around|"
                 r"roughly|approx(?:\.|imately)?|estimated|est\.?))*"
                 r"\s*(<=|>=|<|>|below|under|above|over)?\s*(\d+(?:\.\d+)?)\s*([a-z%/µμ0-9.]+)?", after)
    if not v:
        return None
    n = float(v.group(2))
    unit = canonical_unit(v.group(3)) if v.group(3) and not v.group(3)[0].isdigit() else None
    if unit and a.unit and unit != a.unit:
        conv = convert(n, unit, a.unit)
        if conv is None:
            return None  # "PSA 13.5 ng/mL" is no PSA doubling time in months
        n = conv
    if v.group(1) in ("<", "below", "under"):
        n -= 1 if n.is_integer() else 0.1
    elif v.group(1) in (">", "above", "over"):
        n += 1 if n.is_integer() else 0.1
    return (int(n) if float(n).is_integer() else round(n, 3)), m.end() + v.end(), 0


def _ordinal(a: Any, m: re.Match[str], after: str, text: str) -> Found:
    v = re.match(r"\s*(?:of\s+|:\s*|is\s+|class\s+|stage\s+)?((?:iv|v?i{1,3}|ix|x)[a-d]?|"
                 r"\d{1,2}[a-d]?|[a-e]\d{0,2})(?![\w])", after)
    said = ordinal_value(v.group(1).upper()) if v else ""
    same = [x for x in a.values if ordinal_value(x) == said]
    if v and not same:  # a sub-value of a value drawn: "Child-Pugh A6" is class A, "IIB" is II
        group = re.sub(r"(?<=[A-E])\d{1,2}$|(?<=[0-9IVX])[A-D]$", "", said)
        same = [x for x in a.values if ordinal_value(x) == group] if group != said else []
    if v and same:
        return same[0], m.end() + v.end(), 0
    words = [x for x in a.values if re.fullmatch(r"[a-z][a-z_]{2,}", str(x))]
    near = text[max(0, m.start() - 24):m.start()] + " " + after[:24]
    said_words = [x for x in words if re.search(rf"\b{re.escape(str(x).replace('_', ' '))}\b", near)]
    # "very low" is said, not also "low"
    spoken = {x: str(x).replace("_", " ") for x in said_words}
    said_words = [x for x in said_words if not any(x != y and spoken[y].endswith(" " + spoken[x]) for y in said_words)]
    if len(said_words) != 1:
        return None  # "within Milan criteria", "Milan: beyond": one of the guideline's words
    return said_words[0], m.end(), 0


def _polar(a: Any, m: re.Match[str], after: str, before: str) -> Found:
    v = re.match(r"(?:[\s-]*(?:v\d+[a-z]?|mutation|fusion|gene|status|test(?:ing)?|is|was|are|"
                 r"were))*[\s:-]*(positive|negative|pos|neg|mutated|mutant|wild[\s-]?type|wt|"
                 r"detected|not detected|present|absent|\+|-(?![\w]))", after)
    no = re.search(r"(?:\bno\s+|\bwithout\s+|\bnegative for\s+)$", before)
    if not v and not (no and "absent" in a.values):
        return None
    yes = v is not None and v.group(1) in ("positive", "pos", "+", "mutated", "mutant", "detected", "present")
    value = ("present" if yes else "absent") if "absent" in a.values or "present" in a.values \
        else ("positive" if yes else "negative")
    return value, m.end() + (v.end() if v else 0), len(no.group(0)) if no and not v else 0


def _qualifier(a: Any, m: re.Match[str], before: str) -> Found:
    """"bulky" / "non-bulky" / "not transplant eligible"."""
    neg = re.search(r"(?:\bnon[\s-]?|\bnot\s+|\bno\s+|\bwithout\s+|\ba)$", before)
    value = "no" if neg else "yes"
    if value not in a.values:
        return None
    return value, m.end(), len(neg.group(0)) if neg else 0


def _value(a: Any, m: re.Match[str], text: str) -> Found:
    """The value the words after (or before) the attribute's name ``m`` give it."""
    after = text[m.end():m.end() + 40]
    before = text[max(0, m.start() - 8):m.start()]
    if a.type == "number" and re.fullmatch(r"[×x]\s*(?:uln|lln)", str(a.unit or "").lower()):
        return _multiple(m, text)
    if a.type == "number":
        return _number(a, m, after)
    if a.type == "ordinal" or (a.type == "category" and a.values and
                               not set(a.values) <= {"yes", "no", "positive", "negative"} and
                               not set(a.values) <= {"present", "absent"}):
        return _ordinal(a, m, after, text)
    if a.values and (set(a.values) <= {"positive", "negative"} or set(a.values) <= {"present", "absent"}):
        return _polar(a, m, after, before)
    return _qualifier(a, m, before)


def _patterns(a: Any, names: list[str], keyword_attrs: set[str]) -> list[str]:
    qualifier = bool(a.values) and set(a.values) <= {"yes", "no"}
    pats = []
    for name in names:
        stem = re.sub(r"\s*status$", "", name) if a.name.endswith("_status") else name
        pat = _phrase_regex(stem)
        if qualifier and re.fullmatch(r"[a-z]{7,}", stem) and not stem.endswith("ly") and \
                a.name not in keyword_attrs:  # (the keyword rules read those in their own forms)
            # a one-word finding in any of its forms: "ulcerated" / "ulceration", "progression" / "progressed"
            pat = rf"(?<![\w+-]){re.escape(stem[:-3])}[a-z]*(?![\w+])"
        pats.append(pat)
    return pats


def _with_synonyms(names: set[str], ctx: Context) -> set[str]:
    """The names with the other words clinicians use for a part of them ("clinically detected nodes" is said as
    "palpable nodes"; general clinical language, ``conf/clinical.yaml`` ``attribute_word_synonyms``)."""
    out = set(names)
    for phrase, others in ctx.clinical.get("attribute_word_synonyms", {}).items():
        for n in names:
            if re.search(rf"\b{re.escape(str(phrase))}\b", n):
                out |= {re.sub(rf"\b{re.escape(str(phrase))}\b", str(o), n) for o in others}
    return out


@component("registry_facts")
def read_registry_facts(doc: QuestionDoc, ctx: Context) -> None:
    text = doc.text
    read = doc.read_attrs()
    registry = load_registry()
    short = registry_short_names(registry)
    keyword_attrs = ctx.memo("keyword_attrs", lambda: {k.attr for k in load_vocabulary().keywords})
    criteria = ctx.kb.criteria_attributes  # what a footnote's definition of a term bounds
    attributes = {**criteria, **registry.approved()}
    for a in attributes.values():
        if a.name in read or a.type == "text" or (a.name not in ctx.kb.used_attrs and a.name not in criteria):
            continue  # (an attribute no loaded guideline decides on, nor defines a term by, answers nothing)
        counted = _counted_lesions(text, {x.lower() for x in [a.name.replace("_", " "), *a.aliases]})
        if a.type == "number" and counted is not None:  # "5 bone lesions", "innumerable liver mets"
            doc.add(counted[1], a.name, counted[0], text[counted[1]:counted[2]], "registry attribute")
            doc.take(counted[1], counted[2])
            read.add(a.name)
            continue
        # a risk index's categories are said after its name alone ("IPSS-R low" for the attribute "IPSS-R risk")
        index = [re.sub(r"\s+risk$", "", x) for x in a.aliases if re.fullmatch(MARKER + r"\s+risk", x)]
        names = sorted(_with_synonyms({n.lower() for n in [a.name.replace("_", " "), *a.aliases, *index,
                                                           *short.get(a.name, [])] if len(n) > 1}, ctx),
                       key=len, reverse=True)
        for pat in _patterns(a, names, keyword_attrs):
            for m in re.finditer(pat, text):
                if a.name in read or not doc.free(m.start(), m.end()):
                    continue
                found = _value(a, m, text)
                if found is None:
                    continue
                value, end, lead = found  # a negation before the name belongs to the fact's words
                start = m.start() - lead
                doc.add(start, a.name, value, text[start:end], "registry attribute")
                doc.take(start, end)
                read.add(a.name)
