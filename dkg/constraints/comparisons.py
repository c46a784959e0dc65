"""Open-vocabulary comparisons: *what* a criterion constrains and *how*, with no attribute list.

A criterion such as "ECOG performance status 0~2", "creatinine clearance ≥ 50 mL/min",
"aged 18 years or older", "Body mass index between 18 and 30 kg/m2" or "stage II–IIIA" states
an operator, one or more values, maybe a unit, and names the attribute in the words around
it. :func:`find_comparisons` finds them with rules over the raw text and keeps character spans,
so a caller (the constraint extractor, ``dkg eval criteria``) can show which words produced
which comparison.

Comparisons that do not describe the patient's state are recognised and set aside rather
than reported: time windows ("within 3 months", "at least 6 months prior"), doses ("≥ 10 mg"),
and counts of things ("at least 2 episodes").
"""

from __future__ import annotations

from dataclasses import dataclass

from dkg import rx as re

# Operators in the LCT scheme's names; ``IN`` is an explicit set of values ("stage 4 or 5").
EQ, LT, LTEQ, GT, GTEQ, BETWEEN, IN = "EQ", "LT", "LTEQ", "GT", "GTEQ", "BETWEEN", "IN"
PLUS_MINUS = "PLUS-MINUS"  # a value with a tolerance: "40 ± 2 weeks", "weight stable (± 3 kg)"

_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10}
_UNI_ROMAN = dict(zip("ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩ", ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"], strict=True))

# 100,000 and 100 000 are one number; 10^4 is a number
NUM = (r"(?<![\w.,])(?<!(?-i:[A-Z]{2})-)"  # not the number of an identifier ("VAC-2021-004")
       r"(10\^\d{1,2}|\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<!\d\s)\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?![\d.])|"
       r"\d+(?:\.\d+)?)(?![\d^]|,\d{3}|-(?!(?:years?|months?|weeks?|days?)-old)[a-z])")  # not "28-day cycles"
_NUM_NC = r"(?<![\w.])\d+(?:\.\d+)?(?!\d)"

# Units: the generic shape (a known unit word, a %, or a ratio such as mL/min/1.73 m2).
_UNIT_WORDS = (
    r"years?|yrs?|y/o|y\.?o\.?|y|months?|mos?|weeks?|wks?|days?|hours?|hrs?|h|minutes?|mins?|"
    r"kg/m2|kg/m²|kg|g|mg|mcg|µg|μg|ng|pg|mmol|µmol|μmol|umol|mol|iu|u|units?|meq|"
    r"ml|l|dl|cm|mm\s?hg|mm|m|mmhg|bpm|beats|points?|score|%|percent|microns?|fl|"
    r"sds?|sd|x|times|fold|uln|lln|cells|copies|"
    r"degrees?|°c|°f|°|pack-years?|packs?|pounds?|lbs?|kilograms?|grams?|msec|ms|breaths|kpa|db|hz|"
    r"seconds?|secs?|logs?|mosm|nmol|pmol|miu|µiu|cfu|meq|mm3|mm²|cm2|cm²|m2|ppm|ng|pg|mcl|µl|μl|ul|µm|μm|um|gy|cgy"
)
_UNIT = (
    # any "word/word": mg/dL, cells/µL, mL/min/1.73 m2
    r"(?:[a-zµμ%]{1,6}\s?/\s?[a-zµμ0-9.²³]{1,8}(?:\s?/\s?[a-zµμ0-9.²³]{1,8}(?:\s?m[2²])?)?(?![a-z])|"
    r"[x×*]\s?10\s?(?:\^|e)?\s?\d{1,2}\s?/\s?[lµμu]l?|"  # × 10^9/L
    r"(?:x|×|times)\s*(?:the\s+)?(?:uln|lln|upper\s+limit\s+of\s+normal|lower\s+limit\s+of\s+normal)|"  # "2 × ULN"
    r"/\s?(?:mm3|mm³|µl|μl|ul|l|dl|ml|hpf|min|h|day|d|week|kg)(?![a-z])|"  # per volume: "/mm3", "/µL"
    rf"(?:{_UNIT_WORDS})(?:\s*/\s*[a-zµμ0-9.²³]+(?:\s*m[2²](?![a-z]))?)*"
    r"(?:\s+per\s+(?:day|week|month|year|hour|night|minute|min)(?![a-z]))?"
    r"(?:\s*(?:x|×|times)?\s*(?:the\s+)?(?:uln|lln|upper\s+limit\s+of\s+normal|lower\s+limit\s+of\s+normal))?)"
    r"(?![a-z])"
)
_TIME_UNIT = re.compile(r"^(?:years?|yrs?|y|months?|mos?|weeks?|wks?|days?|hours?|hrs?|h|minutes?|mins?)$",
                        re.IGNORECASE)
_DOSE_UNIT = re.compile(r"^(?:g|mg|mcg|µg|μg|ng|iu|gy|cgy)(?:\s*/\s*(?:kg|m2|m²|day|d|dose|week|wk|min|h|hr))*"
                        r"(?:\s+per\s+(?:day|week|dose|kg))?$",
                        re.IGNORECASE)

_SYMBOL_OPS = {">/=": GTEQ, "</=": LTEQ, "=/>": GTEQ, "=/<": LTEQ, "≥": GTEQ, ">=": GTEQ, "=>": GTEQ, "⩾": GTEQ,
               "≧": GTEQ, "≤": LTEQ, "<=": LTEQ, "=<": LTEQ,
               "⩽": LTEQ, "≦": LTEQ, ">": GT, "<": LT, "=": EQ, "＞": GT, "＜": LT, "> =": GTEQ, "< =": LTEQ,
               "＞＝": GTEQ, "＜＝": LTEQ}

# Words before a value, longest first. ``None`` marks phrases that are not a patient bound.
_WORD_OPS: list[tuple[str, str]] = [
    ("greater than or equal to", GTEQ), ("more than or equal to", GTEQ), ("higher than or equal to", GTEQ),
    ("equal to or greater than", GTEQ), ("equal to or more than", GTEQ), ("equal to or higher than", GTEQ),
    ("equal to or older than", GTEQ), ("equal to or above", GTEQ), ("older than or equal to", GTEQ),
    ("less than or equal to", LTEQ), ("lower than or equal to", LTEQ), ("equal to or less than", LTEQ),
    ("equal to or lower than", LTEQ), ("equal to or below", LTEQ), ("younger than or equal to", LTEQ),
    ("greater or equal to", GTEQ), ("greater or equal", GTEQ), ("more or equal to", GTEQ), ("more or equal", GTEQ),
    ("higher or equal to", GTEQ), ("less or equal to", LTEQ), ("less or equal", LTEQ), ("lower or equal to", LTEQ),
    ("not less than", GTEQ), ("no less than", GTEQ), ("not lower than", GTEQ), ("no lower than", GTEQ),
    ("not below", GTEQ), ("not more than", LTEQ), ("no more than", LTEQ), ("not greater than", LTEQ),
    ("no greater than", LTEQ), ("not higher than", LTEQ), ("no higher than", LTEQ), ("not exceeding", LTEQ),
    ("not to exceed", LTEQ), ("not over", LTEQ), ("not above", LTEQ), ("no older than", LTEQ),
    ("at least", GTEQ), ("a minimum of", GTEQ), ("minimum of", GTEQ), ("minimum", GTEQ), ("min", GTEQ),
    ("at most", LTEQ), ("a maximum of", LTEQ), ("maximum of", LTEQ), ("maximum", LTEQ), ("max", LTEQ),
    ("up to", LTEQ), ("no more", LTEQ),
    ("greater than", GT), ("more than", GT), ("higher than", GT), ("larger than", GT), ("older than", GT),
    ("in excess of", GT), ("exceeding", GT), ("exceeds", GT), ("exceed", GT), ("over", GT), ("above", GT),
    ("less than", LT), ("lower than", LT), ("fewer than", LT), ("smaller than", LT), ("younger than", LT),
    ("under", LT), ("below", LT), ("beneath", LT),
    ("equal to or better than", GTEQ), ("equal to or worse than", LTEQ), ("better than", GT), ("worse than", LT),
    ("equal to", EQ), ("equals", EQ),
]
_WORD_OP = dict(_WORD_OPS)  # "at least" → GTEQ

_AFTER_OPS: list[tuple[str, str]] = [
    (r"(?:or|and)\s+(?:older|over|above|more|greater|higher|beyond|up|upwards?|elder)", GTEQ),
    (r"or\s+(?:greater|more|higher)\s+than(?!\s*[\d<>≤≥])", GTEQ),  # not "> 21 or less than 2"
    (r"(?:or|and)\s+(?:younger|under|below|less|fewer|lower)", LTEQ),
    (r"(?:or|and)\s+(?:less|lower)\s+than(?!\s*[\d<>≤≥])", LTEQ),
    (r"at\s+(?:least|minimum)", GTEQ), (r"at\s+most", LTEQ), (r"(?:minimum|or\s+more)", GTEQ),
    (r"(?:maximum)", LTEQ),
]

# Words that name a stage-like ordinal scale; the value follows ("stage IIB", "class III-IV").
_SCALE = (r"stages?|grades?|class(?:es)?|categor(?:y|ies)|skin\s+type|phases?|levels?|ratings?|"
          r"(?<!patient )(?<!study )(?<!treatment )groups?(?!\s*\d\s*\+)|"  # not a study's arms ("groups 1+2")
          r"tanner(?:\s+stage)?|physical\s+status|"
          r"nyha(?:\s+class)?|child[- ]pugh(?:\s+class)?|asa(?:\s+class)?|figo(?:\s+stage)?|gold|bclc|"
          r"kellgren[- ]lawrence(?:\s+grade)?|score")
_ORD_VALUE = (r"(?:[ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩ](?-i:[A-C])?|(?:IV|V?I{1,3}|IX|V|X)(?:[a-c]\d?|[A-C]\d?(?![a-z]))?|\d{1,2}[a-c]?|"
              r"(?-i:[A-D])(?![\w])|[A-Z]\d)")

_TEMPORAL_CUES = re.compile(
    r"\b(?:within|prior|before|after|ago|since|last|past|previous(?:ly)?|preceding|following|during|"
    r"for|duration|lasting|history|diagnosed|onset|interval|washout|period|elapsed|post|since|in)\b",
    re.IGNORECASE)
_AGE_WORDS = re.compile(r"\b(?:age[sd]?|aging|old|years?[- ]old|yo|y/o|birthday)\b", re.IGNORECASE)
_POPULATION = {
    "patients", "patient", "participants", "participant", "subjects", "subject", "adults", "adult", "men",
    "women", "man", "woman", "male", "males", "female", "females", "children", "child", "infants", "infant",
    "individuals", "individual", "persons", "person", "people", "volunteers", "volunteer", "girls", "boys",
    "adolescents", "youth", "pts", "those", "residents", "mothers", "fathers", "parents", "caregivers",
}
_AGE_LEFT = {"aged", "age", "ages"}
_UNITISH = {"g", "kg", "mg", "ml", "l", "dl", "mm", "cm", "m", "mmhg", "kpa", "years", "months", "weeks", "days",
            "hours", "uln", "lln", "units", "points", "percent"}
_KEEP_TIME_ATTRS = re.compile(r"\b(?:expectancy|gestation(?:al)?|survival|pregnan\w*|postmenstrual|corrected)\b|"
                              r"(?<!since )(?<!from )\btime$", re.IGNORECASE)  # "onset-to-alarm time ≤ 4 hours"
_STOP_LEFT = {
    "with", "without", "and", "or", "who", "whom", "which", "that", "have", "has", "had", "having", "must", "should",
    "will", "be", "been", "being", "are", "were", "if", "in", "on", "at", "by", "for", "from", "to", "than", "as",
    "when", "where", "while", "the", "a", "an", "any", "all", "no", "not", "nor", "per", "into", "after", "before",
    "within", "during", "defined", "including", "include", "includes", "e.g", "i.e", "eg", "ie", "such",
    "between", "either", "both", "also", "only", "more", "less", "greater", "under", "over",
}
_SKIP_LEFT = {"of", "is", "was", "=", ":", "must", "be", "≥", "≤", ">", "<", "equal", "at", "least", "[", "("}
_FUNCTION_AFTER = {
    "and", "or", "nor", "but", "on", "in", "at", "within", "for", "as", "to", "the", "of", "by", "with", "without",
    "prior", "before", "after", "during", "per", "than", "if", "when", "while", "from", "since", "until",
    "point", "ppm", "respectively", "are", "is", "was", "were", "be", "must", "should", "will", "who", "which",
    "that", "not", "also", "both", "either", "according", "based", "using", "measured", "assessed", "determined",
    "defined", "confirmed", "calculated", "estimated", "documented", "unless", "except", "including", "following",
    "despite", "due", "because", "among", "plus", "any", "all", "out", "over", "under",
    "class", "grade", "stage", "score", "scores", "level", "points", "categories", "category",
}
_COUNTED = re.compile(
    r"^\s*(?:(?:prior(?!\s+(?:to|admission|surgery|enrol+ment|randomi[sz]ation|inclusion|screening|entry)\b)|"
    r"previous|documented|separate|distinct|consecutive|different|additional|lifetime)\s+)*"
    r"(?:of\s+the\s+following|of\s+\w+|episodes?|relapses?|exacerbations?|times|attacks?|occasions?|visits?|admissions?|"
    r"hospitali[sz]ations?|lines?|cycles?|doses?|courses?|sessions?|treatments?|therap\w+|"
    r"regimens?|drugs?|medications?|agents?|children|pregnanc\w+|births?|teeth|tooth|lesions?|sites?|"
    r"nodules?|fractures?|falls?|criteria|symptoms?|risk\s+factors?|months?\s+(?:prior|before|after|ago)|"
    r"weeks?\s+(?:prior|before|after|ago)|days?\s+(?:prior|before|after|ago))\b",
    re.IGNORECASE)


@dataclass(frozen=True)
class Comparison:
    """One comparison in a text: ``op`` over ``values`` (with ``unit``) on the attribute ``attr``.

    ``kind`` is ``age``, ``measure`` (a lab, score or vital), ``stage`` (an ordinal scale);
    the set-aside kinds are ``temporal``, ``dose`` and ``count``.
    """

    op: str
    values: tuple[str, ...]
    unit: str | None
    start: int
    end: int
    attr: str | None
    attr_start: int | None
    attr_end: int | None
    kind: str

    @property
    def is_patient_bound(self) -> bool:
        """True when the comparison bounds a property of the patient (not a time window, dose or count)."""
        return self.kind in ("age", "measure", "stage")


def ordinal_value(v: str) -> str:
    """One spelling for a scale value: roman numerals become arabic, letters keep their case."""
    v = v.strip()
    if v and v[0] in _UNI_ROMAN:
        v = _UNI_ROMAN[v[0]] + v[1:]
    m = re.fullmatch(r"(IX|IV|V?I{1,3}|V|X)([a-cA-C]?)", v, flags=re.IGNORECASE)
    if m and (v.isupper() or (m.group(2) and m.group(1).isupper())):
        return f"{_ROMAN[m.group(1).lower()]}{m.group(2).upper()}"
    m = re.fullmatch(r"(\d+)([a-cA-C]?)", v)
    if m:
        return f"{int(m.group(1))}{m.group(2).upper()}"
    return v.upper()


def number_value(v: str) -> float | None:
    """The number in a value, or None when it is not numeric."""
    v = v.strip().replace("−", "-")
    if re.fullmatch(r"\d{1,3}(?:[, \u00a0\u2009\u202f]\d{3})+(?:\.\d+)?", v):  # thousands: "100,000", "100 000"
        v = re.sub(r"[, \u00a0\u2009\u202f]", "", v)
    power = re.fullmatch(r"10\^(\d{1,2})", v)
    if power:
        return float(10 ** int(power.group(1)))
    try:
        return float(v.replace(",", "."))
    except ValueError:
        return None


@dataclass
class _Hit:
    op: str
    values: list[str]
    unit: str | None
    start: int
    end: int
    op_start: int
    scale: bool = False
    named: bool = False  # the value follows a scale word ("stage", "class") that names the attribute
    tnm: str | None = None  # T, N or M: the value names its own category
    rank: int = 5  # lower wins an overlap: ranges, then phrases after a value, symbols, words


_TNM_WORD = r"[cpy]?[TNM](?:\d[a-d]?|is|a)"


def _clean_unit(u: str | None) -> str | None:
    if not u:
        return None
    u = re.sub(r"\s+", " ", u.strip())
    # one spelling for a multiple of a reference limit: "2 x ULN", "2 times the upper limit of normal" → "× ULN"
    ref = re.fullmatch(r"(?:x|×|times)?\s*(?:the\s+)?(uln|lln|upper\s+limit\s+of\s+normal|lower\s+limit\s+of\s+normal)",
                       u, re.IGNORECASE)
    if ref:
        return "× ULN" if ref.group(1).lower().startswith(("u", "upper")) else "× LLN"
    return u or None


def _raw_hits(text: str) -> list[_Hit]:
    hits: list[_Hit] = []
    unit = rf"(?:\s*({_UNIT}))?"
    flags = re.IGNORECASE
    # ranges: "between 18 and 65 years", "from 13 to 32.6", "18-65", "0~2", "18 to 65 years"
    pat_between = re.compile(
        rf"\bbetween\s+(?:the\s+ages?\s+of\s+|ages?\s+(?:of\s+)?)?{NUM}{unit}\s*(?:and|-|–|—|to|&)\s*{NUM}{unit}",
        flags)
    for m in pat_between.finditer(text):
        hits.append(_Hit(BETWEEN, [m.group(1), m.group(3)], _clean_unit(m.group(4) or m.group(2)),
                         m.start(), m.end(), m.start(), rank=0))
    pat_range = re.compile(
        rf"(?<![<>≤≥]\s)(?<![<>≤≥])(?<!\d-)(?<!\d–)(?:\bfrom\s+)?{NUM}\s*(%)?{unit}\s*(?:-|–|—|－|~|～|to|through|thru|until)\s*(?:[<≤]\s*)?{NUM}(?![/\d]|[a-c]\b)(?!\s*[-–]\s*\d){unit}",
        flags)
    for m in pat_range.finditer(text):
        lo, hi = number_value(m.group(1)), number_value(m.group(4))
        if lo is not None and hi is not None and lo > hi and float(lo).is_integer() and float(hi).is_integer():
            continue  # "Humphrey 24-2": a name, not a range
        if re.match(r"\s*(?:-?point\s+|-?item\s+)?(?:scale|range of the scale)\b", text[m.end():], re.IGNORECASE):
            continue  # "VAS ≥ 40 mm (0-100 mm scale)": the scale's span, not a bound
        hits.append(_Hit(BETWEEN, [m.group(1), m.group(4)], _clean_unit(m.group(5) or m.group(3) or m.group(2)),
                         m.start(), m.end(), m.start(), rank=1))
    # symbols: "≥ 18", "<200/mm3"
    sym = "|".join(re.escape(s) for s in sorted(_SYMBOL_OPS, key=len, reverse=True))
    pat_sym = re.compile(rf"({sym})\s*{NUM}(?:\s*([/:])\s*(\d+(?:\.\d+)?)(?!\d|\.\d))?\s*(%)?{unit}", flags)
    for m in pat_sym.finditer(text):
        values = [m.group(2)] + ([m.group(4)] if m.group(4) else [])  # a ratio: "> 140/90", "≥ 1.5:1"
        hits.append(_Hit(_SYMBOL_OPS[m.group(1)], values, _clean_unit(m.group(6) or m.group(5)),
                         m.start(), m.end(), m.start(), rank=3))
    # both bounds around the attribute: "18 ≤ age ≤ 75", "18 years ≤ age ≤ 80 years", "1 month≤age＜5 years"
    lt = r"(<=|=<|≤|≦|<|＜|＜＝)"
    pat_sandwich = re.compile(rf"{NUM}\s*{unit}\s*{lt}\s*([A-Za-z][\w .-]{{0,30}}?)\s*{lt}\s*{NUM}\s*{unit}", flags)
    for m in pat_sandwich.finditer(text):
        hits.append(_Hit(BETWEEN, [m.group(1), m.group(6)], _clean_unit(m.group(7) or m.group(2)), m.start(),
                         m.end(), m.start(4), rank=0))
    # a decimal comma after a symbol: "DAS28-CRP > 3,2"; a per cent sign before the number: "HbA1c > %8"
    for m in re.finditer(rf"({sym})\s*(\d+,\d{{1,2}})(?![\d,])\s*{unit}", text, flags):
        hits.append(_Hit(_SYMBOL_OPS[m.group(1)], [m.group(2)], _clean_unit(m.group(3)), m.start(), m.end(),
                         m.start(), rank=2))
    for m in re.finditer(rf"({sym})\s*%\s*{NUM}", text, flags):
        hits.append(_Hit(_SYMBOL_OPS[m.group(1)], [m.group(2)], "%", m.start(), m.end(), m.start(), rank=2))
    # a letter-and-number stage after a symbol: "fibrosis stage ≥ F3", "≤ G2"
    for m in re.finditer(rf"({sym})\s*([A-Z]\d[a-c]?)(?![\w*])", text):
        hits.append(_Hit(_SYMBOL_OPS[m.group(1)], [m.group(2)], None, m.start(), m.end(), m.start(), True, rank=3))
    # a negative bound: "T-score ≤ -2.5", "base excess > −4"
    for m in re.finditer(rf"({sym})\s*([-−–])\s?(\d+(?:\.\d+)?)(?![\d.])\s*(%)?{unit}", text, flags):
        hits.append(_Hit(_SYMBOL_OPS[m.group(1)], ["-" + m.group(3)], _clean_unit(m.group(5) or m.group(4)),
                         m.start(), m.end(), m.start(), rank=3))
    # a tolerance: "40 ± 2 weeks", "(± 3 kg)", "+/- 5 %"
    for m in re.finditer(rf"(?:{NUM}\s*)?(?:±|\+/-|\+-)\s*{NUM}\s*(%)?{unit}", text, flags):
        vals = [v for v in (m.group(1), m.group(2)) if v]
        hits.append(_Hit(PLUS_MINUS, vals, _clean_unit(m.group(4) or m.group(3)), m.start(), m.end(), m.start(),
                         rank=1))
    for m in re.finditer(rf"({sym})\s*((?:IV|V?I{{1,3}}|IX|V|X)(?:[a-c])?)(?![\w])", text):
        hits.append(_Hit(_SYMBOL_OPS[m.group(1)], [m.group(2)], None, m.start(), m.end(), m.start(), True, rank=3))
    # a list of scores after a name: "ECOG 0 or 1", "ASA physical status I and II", "grades 1, 2 or 3"
    small = r"(?:\d{1,2}|IV|V?I{1,3}|IX|V|X)"
    pat_list = re.compile(
        r"(?<!trisomy\s)(?<!monosomy\s)(?<!chromosome\s)(?<!chromosomes\s)(?<!exon\s)(?<!exons\s)(?<!codon\s)"
        r"(?<!including\s)(?<!inclusive\s)(?<!both\s)(?<!bipolar\s)(?<!type\s)(?<!genotype\s)(?<!genotypes\s)"
        rf"(?<=[A-Za-z)]\s)({small}(?:\s*,\s*{small})*\s*,?\s*(?:or|and)\s+{small})(?![\w%/-]|,\S|\.\d|\s*[-–]\s*\d)")
    for m in pat_list.finditer(text):
        vals = [v for v in re.split(r"\s*(?:,|\bor\b|\band\b)\s*", m.group(1)) if v.strip()]
        roman = any(not v.isdigit() for v in vals)
        hits.append(_Hit(IN, vals, None, m.start(), m.end(), m.start(), roman, rank=4))
    # words before: "at least 18 years", "less than 80 fl", "over 65"
    words = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w, _ in _WORD_OPS)
    pat_word = re.compile(rf"\b({words})\s+(?:the\s+age\s+of\s+|age\s+|an?\s+)?([-−]\s?)?{NUM}\s*(%)?{unit}", flags)
    for m in pat_word.finditer(text):
        key = re.sub(r"\s+", " ", m.group(1).lower())
        value = ("-" if m.group(2) else "") + m.group(3)  # "worse than -12 dB"
        hits.append(_Hit(_WORD_OP[key], [value], _clean_unit(m.group(5) or m.group(4)),
                         m.start(), m.end(), m.start()))
    # words after: "18 years or older", "65 and above", "18+"
    for after, op in _AFTER_OPS:
        pat_after = re.compile(
            rf"{NUM}\s*(%)?{unit}(?:\s+(?:of\s+age|old|of\s+age\s+old))?\s*,?\s*(?:{after})\b(?!\s+than)"
            r"(?!\s*[\d<>≤≥＜＞])", flags)
        for m in pat_after.finditer(text):
            hits.append(_Hit(op, [m.group(1)], _clean_unit(m.group(3) or m.group(2)), m.start(), m.end(), m.start(),
                             rank=2))
    pat_age = re.compile(rf"\b(minimum|maximum|min\.?|max\.?)\s+age\s*(?::|=|of|is)?\s*{NUM}\s*({_UNIT})?", flags)
    for m in pat_age.finditer(text):
        op = GTEQ if m.group(1).lower().startswith("min") else LTEQ
        hits.append(_Hit(op, [m.group(2)], _clean_unit(m.group(3)), m.start(), m.end(), m.start(), rank=2))
    # the bound word before the attribute: "a minimum life expectancy of 12 weeks", "maximum BMI of 35"
    pat_lead = re.compile(
        rf"\b(minimum|maximum)\s+(?:[A-Za-z][\w-]*\s+){{1,3}}?(?:(?:of|:|=|is)\s*)?{NUM}\s*(%)?{unit}", flags)
    for m in pat_lead.finditer(text):
        op = GTEQ if m.group(1).lower() == "minimum" else LTEQ
        hits.append(_Hit(op, [m.group(2)], _clean_unit(m.group(4) or m.group(3)), m.start(), m.end(), m.start(2),
                         rank=2))
    # a performance status stated with no operator: "ECOG performance status 0", "WHO PS 1", "ECOG: 2"
    pat_ps = re.compile(r"\b(?:ECOG|Zubrod|WHO|performance\s+status|PS)\s*(?:score\s*)?(?:of|:|=|is)?\s*([0-4])"
                        r"(?![\w.%]|\s*(?:[-–~/]|,\s*[0-4](?![\w.])|or\b|and\b|to\b))")  # "ECOG 0, 1": a list
    # a score stated with no operator: "CDR global score of 0.5", "MELD score: 12"
    pat_score = re.compile(r"\b(?:score|rating|index)\s*(?:of|:|=|is)\s*(\d+(?:\.\d+)?)"
                           r"(?![\d.]|\s*(?:[-–~,/%]|or\b|and\b|to\b))", flags)
    for m in (*pat_ps.finditer(text), *pat_score.finditer(text)):
        hits.append(_Hit(EQ, [m.group(1)], None, m.start(1), m.end(), m.start(1), rank=6))
    # an age stated with no operator: "an infant age of 6 months", "Age: 45 years" (the weakest reading)
    pat_age_eq = re.compile(rf"\bage[sd]?\s*(?::|of|is)?\s*{NUM}(?!\s*(?:%|[-–~+]))\s*({_UNIT})?", flags)
    for m in pat_age_eq.finditer(text):
        hits.append(_Hit(EQ, [m.group(1)], _clean_unit(m.group(2)), m.start(), m.end(), m.start(), rank=6))
    for m in re.finditer(rf"{NUM}\s*\+(?!\d)\s*(?:({_UNIT}))?", text, flags):
        if re.search(r"(?:[×*]|(?<![A-Za-z])x)\s*$", text[:m.start()]) or re.match(r"\s*\d", text[m.end():]):
            continue  # "ABVD × 1 + 20 Gy": a count of cycles and a sum, not "1 or more"
        hits.append(_Hit(GTEQ, [m.group(1)], _clean_unit(m.group(2)), m.start(), m.end(), m.start()))
    # ordinal scales: "stage IIB", "class III-IV", "grade 3 or 4", "stages I, II or III", "child pugh B or worse"
    ov = _ORD_VALUE
    pat_scale = re.compile(
        rf"\b({_SCALE})(?![a-z])\s*(?:of\s+|:\s*)?(?!\d+\.\d)({ov}(?:\s*(?:-|–|—|－|to|through|~|～)\s*{ov})?"
        rf"(?:\s*(?:,|/|or|and|and/or|,\s*or|,\s*and)\s*{ov}(?![\w]))*)(?![\w])"
        r"(\s+or\s+(?:worse|higher|greater|more|above|better|lower|less|below))?",
        flags)
    for m in pat_scale.finditer(text):
        scale_word = m.group(1).lower()
        vals_text = m.group(2)
        if scale_word in ("score", "rating", "ratings") and not re.match(r"\d", vals_text):
            continue
        if re.fullmatch(r"[a-d]", vals_text.strip()) and vals_text.strip().islower():
            continue  # "grade a" is prose; letter grades are capitals ("Child-Pugh B")
        if re.fullmatch(_TNM_WORD, vals_text.strip()):
            continue  # "low-grade T1" is low grade and T1: a T category is no grade
        rng = re.fullmatch(rf"({ov})\s*(?:-|–|—|－|to|through|~|～)\s*({ov})", vals_text.strip(), flags)
        if rng:
            hits.append(_Hit(BETWEEN, [rng.group(1), rng.group(2)], None, m.start(2), m.end(), m.start(), True, True,
                             rank=2))
            continue
        vals = [v for v in re.split(r"\s*(?:,|/|\bor\b|\band/or\b|\band\b)\s*", vals_text) if v.strip()]
        tail = (m.group(3) or "").lower()
        op = IN if len(vals) > 1 else EQ
        if tail and len(vals) == 1:
            op = GTEQ if re.search(r"worse|higher|greater|more|above", tail) else LTEQ
        lead = re.search(rf"(?:({sym})|\b(at least|at most|greater than|more than|higher than|less than|lower than|"
                         r"up to|no more than|not more than))\s*$", text[max(0, m.start() - 16):m.start()], flags)
        if lead and len(vals) == 1 and not tail:  # "≥ grade 2", "at least grade 3": the bound comes first
            op = _SYMBOL_OPS[lead.group(1)] if lead.group(1) else \
                _WORD_OP[re.sub(r"\s+", " ", lead.group(2).lower())]
        hits.append(_Hit(op, vals, None, m.start(2), m.end(), m.start(), True, True, rank=2))
    # TNM categories: "T3 or T4", "T1–T2", "N0", "cT2a"
    tnm = r"[cpy]?([TNM])(\d[a-d]?|is|a|x)"
    pat_tnm = re.compile(rf"(?<![\w-]){tnm}(?:\s*(?:-|–|or|,|/|to)\s*(?:[cpy]?\1)?(\d[a-d]?|is|a))*(?![\w*-])")
    for m in pat_tnm.finditer(text):
        letter = m.group(1)
        vals = re.findall(rf"(?:^|[\s,/–-]|or|to)[cpy]?{letter}?(\d[a-d]?|is|a|x)(?![\w*-])", m.group(0))
        if letter != "T" and "a" in vals:
            continue  # "Ta" is a T category (non-invasive papillary); "Na", "Ma" are no categories
        is_range = bool(re.search(r"(?:\d[a-d]?|is|a)\s*(?:-|–|to)\s*", m.group(0))) and len(vals) == 2
        if is_range:
            vals = tnm_between(vals[0], vals[1])
        vals = [f"{letter}{v}" for v in vals]
        op = IN if len(vals) > 1 else EQ
        hits.append(_Hit(op, vals, None, m.start(), m.end(), m.start(), True, True, rank=2, tnm=letter))
    return hits


def _select(text: str, hits: list[_Hit]) -> list[_Hit]:
    """Non-overlapping hits, longest first (a range beats the bare symbol inside it)."""
    chosen: list[_Hit] = []
    for h in hits:  # patterns may end on the blank before an absent unit
        while h.end > h.start and text[h.end - 1].isspace():
            h.end -= 1
    for h in sorted(hits, key=lambda h: (h.rank, -(h.end - h.start), h.start)):
        if any(h.start < c.end and c.start < h.end for c in chosen):
            continue
        chosen.append(h)
    return sorted(chosen, key=lambda h: h.start)


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-'’]*|\d+(?:\.\d+)?|[^\sA-Za-z0-9]")


def _left_attribute(text: str, end: int) -> tuple[str, int, int] | None:
    """The words naming the attribute just left of ``end``, within the clause."""
    words = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text, 0, end)]
    picked: list[tuple[str, int, int]] = []
    i = len(words) - 1
    while i >= 0 and not picked:  # skip the glue between name and value
        w = words[i][0].lower()
        if w in _SKIP_LEFT:
            i -= 1
            continue
        break
    while i >= 0:
        w, s, e = words[i]
        lw = w.lower()
        if lw in {"the", "a", "an"} and picked and i >= 1 and words[i - 1][0].lower() == "of" and i >= 2 \
                and re.match(r"[A-Za-z]", words[i - 2][0]) and words[i - 2][0].lower() not in _STOP_LEFT:
            picked += [words[i], words[i - 1]]  # "Axial deformity of the lower limbs"
            i -= 2
            continue
        if lw in {"and", "or", "and/or"} and picked and i >= 1 and re.match(r"[A-Za-z]{2,}", words[i - 1][0]) \
                and words[i - 1][0].lower() not in _STOP_LEFT | _UNITISH and len(picked) <= 4 \
                and (i < 2 or words[i - 2][0].lower() in _STOP_LEFT | {",", ";", ":", "(", "•", "·"}):
            # "ALT and AST < 2.5 ULN": both are bounded; not "not a transplant candidate or AFP > 1000", where the
            # word before the conjunction ends a longer phrase of its own
            picked.append(words[i])
            i -= 1
            if words[i][0].lower() == "the":
                i -= 1
            continue
        if lw in _STOP_LEFT or lw in {",", ";", ".", "(", "[", "•", "·", "-", "–", "*"} or (
                re.fullmatch(r"\d+(?:\.\d+)?", w) and picked) or lw in _POPULATION:
            break
        if lw == ")":  # "creatinine clearance (CrCl) ≥ 30", "ECOG (Eastern …) performance status": keep it
            j = i - 1
            while j >= 0 and words[j][0] != "(":
                j -= 1
            if j >= 0:
                picked.extend(reversed(words[j:i + 1]))
                i = j - 1
                continue
        if lw in {":", "=", ")", "]"} and picked:
            break
        picked.append((w, s, e))
        i -= 1
        if len(picked) >= 8:
            break
    picked = [p for p in picked if p[0] not in {":", "="}]
    while picked and picked[-1][0].lower() in _SKIP_LEFT | {"of", "the", "a", "an"}:
        picked.pop()
    if not picked:
        return None
    picked.reverse()
    s, e = picked[0][1], picked[-1][2]
    return text[s:e], s, e


def _classify(text: str, hit: _Hit, attr: tuple[str, int, int] | None) -> str:
    unit = (hit.unit or "").lower()
    after = text[hit.end:hit.end + 40]
    before = text[max(0, hit.op_start - 40):hit.op_start]
    unit_word = unit.split("/")[0].strip() if unit else ""
    attr_text = attr[0].lower() if attr else ""
    if hit.named:
        return "stage"
    if hit.scale:
        return "measure"
    hit_text = text[hit.start:hit.end]
    if re.search(r"gestation|(?<!last )menstrual|bone age|corrected age",
                 f"{attr_text} {after[:30]} {before[-30:]}", re.IGNORECASE):
        return "measure"
    ageish = bool(re.search(r"\bage[sd]?\b", attr_text + " " + hit_text, re.IGNORECASE)) or bool(
        re.search(r"\b(?:older|younger|elder)\b", hit_text, re.IGNORECASE)) or bool(
        re.match(r"\s*(?:years?|yrs?|y)?\s*(?:of\s+age|old|years?\s+old|-year-old|\s*yo\b|y/o)", after, re.I)) or bool(
        re.search(r"\b(?:age[sd]?|aged between|ages of|age of)\s*(?:between|from|of|is|:|=|\[)?\s*$", before, re.I))
    time_unit = bool(_TIME_UNIT.match(unit_word)) if unit_word else False
    ageish = ageish or bool(re.search(r"\b(?:older|younger|aged?|age\s+range)\b", attr_text)) or bool(
        re.search(r"\bage\s+range\s*(?:between|from|of|is|:)?\s*$", before, re.I))
    if ageish and (time_unit or not unit_word):
        return "age"
    if not unit_word and re.match(r"\s*(?:age|years?\s+(?:of\s+age|old))\b", after, re.I):
        return "age"
    if time_unit:
        lead = before.lower()
        words_before = re.findall(r"[a-z]+", lead)[-3:]
        population_left = bool(words_before) and words_before[-1] in _POPULATION | _AGE_LEFT
        if _KEEP_TIME_ATTRS.search(attr_text or before[-30:]):
            return "measure"
        if unit_word.startswith(("y", "yr")) and (population_left or not attr) and not _TEMPORAL_CUES.search(
                " ".join(words_before[-2:])) and not re.match(
                r"\s*(?:of|in|with|on|prior|before|after|ago|since|duration|past|post|from)\b(?!\s+age)", after):
            return "age"
        return "temporal"
    if unit and _DOSE_UNIT.match(unit.strip()) and not re.search(
            r"weight|mass|birth|uria\b|protein|excretion|consumption|intake|alcohol", attr_text):
        return "dose"
    if attr_text in ("n", "n ="):  # a sample size
        return "count"
    if not unit and re.match(r"\s*(?:days?|times|nights?|hours?|occasions?)\s+(?:per|a|each|every)\s+"
                             r"(?:day|week|month|year)\b", after, re.IGNORECASE):
        return "count"  # "on 10 or more days per month"
    per = re.match(r"(\S+)\s+per\s", unit.strip())
    if per and (_TIME_UNIT.match(per.group(1)) or per.group(1) in ("times", "time", "x")):
        return "count"  # "20 hours per week", "4 times per week": how often, not a patient value
    if unit.strip() in ("times", "time", "x") and not re.match(
            r"\s*(?:of\s+)?(?:the\s+)?(?:uln|lln|upper|lower|normal|baseline|above|higher|greater|institutional|"
            r"reference|ref|the\s+(?:upper|lower))", after, re.IGNORECASE):
        return "count"  # "at least 2 times a day", "TACE more than 2 times": how often, not a patient value
    if not unit and _COUNTED.match(after):
        return "count"
    nxt = re.match(r"\s+([a-z][a-z-]{2,})\b", after)
    rate = re.match(r"\s+[a-z][a-z-]{2,}\s*(?:/|per)\s*(?:day|week|minute|min|hour|month|year)\b", after)
    measured = re.search(r"\b(?:level|count|score|rate|index|value|concentration|ratio|pressure|clearance|"
                         r"fraction|titer|titre|volume|saturation|time|interval|size|diameter|length|weight)s?\b",
                         attr_text)
    if re.match(r"-(?:week|day|month|year|hour)s?\b", after):  # "at least a 4-week period"
        return "temporal"
    if not unit and nxt and not rate and not measured and nxt.group(1) not in _FUNCTION_AFTER:
        # "at least 2 episodes", "more than 3 previous concussions", "at least 1 measurable lesion"
        phrase = re.match(r"\s+((?:[a-z][a-z-]+\s+){0,2}[a-z][a-z-]+)", after)
        words = phrase.group(1).split() if phrase else []
        content = []
        for w in words:
            if w in _FUNCTION_AFTER:
                break
            content.append(w)
        plural = any(w.endswith("s") and not w.endswith(("ss", "us", "is")) for w in content)
        if plural or hit.values == ["1"]:
            return "count"
    return "measure"


_TUMOUR = re.compile(r"(?:^|\s)(?:\w+\s+)?(?:carcinoma|cancer|tumou?r|mass|neoplasm|primary)$", re.IGNORECASE)
_COORD_GAP = re.compile(r"^\s*(?:(?:for|in)\s+(?:wo)?men|(?:for|in)\s+(?:fe)?males)?\s*[,;]?\s*"
                        r"(?:and/or|and|or|but|to|-|–)?\s*$", re.IGNORECASE)
_RIGHT_STOP = _STOP_LEFT - {"the", "a", "an", "in", "on", "of"} | {"within", "prior", "before", "after", "at", "for"}


def _right_attribute(text: str, start: int) -> tuple[str, int, int] | None:
    """The words naming the attribute right after a value ("≥ 140 mmHg systolic", "5% or more blasts")."""
    words = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text, start)]
    picked: list[tuple[str, int, int]] = []
    for w, s, e in words:
        lw = w.lower()
        if not picked and lw in {"of", "on", "in", "the", "a", "an", "on the"}:
            continue
        if lw in _RIGHT_STOP or not re.match(r"[A-Za-z]", w) or lw in _POPULATION:
            break
        picked.append((w, s, e))
        if len(picked) >= 5:
            break
    while picked and picked[-1][0].lower() in {"of", "the", "a", "an", "in", "on"}:
        picked.pop()
    if not picked:
        return None
    return text[picked[0][1]:picked[-1][2]], picked[0][1], picked[-1][2]


def left_attribute(text: str, end: int) -> tuple[str, int, int] | None:
    """The words naming the attribute just left of ``end`` (public for the extractor's own number rules)."""
    return _left_attribute(text, end)


def find_comparisons(text: str, *, keep_all: bool = False) -> list[Comparison]:
    """Every comparison in ``text``, left to right; only patient bounds unless ``keep_all``.

    A comparison coordinated with the one before it ("BMI < 18.5 or ≥ 30", "≥ 3 and ≤ 18 years of
    age") shares its attribute; with no attribute on the left, the words after the value name it
    ("≥ 140 mmHg systolic").
    """
    hits = _select(text, _raw_hits(text))
    attrs: list[tuple[str, int, int] | None] = []
    kinds: list[str] = []
    for hit in hits:
        attr = _left_attribute(text, hit.op_start)
        if attr and re.search(rf"(?<![\w-]){_TNM_WORD}$", attr[0]):
            attr = None  # "high-grade Ta ≤ 3 cm": the words before are the tumour's category, not the size's name
        if hit.tnm:
            attrs.append((f"{hit.tnm} category", hit.start, hit.start + 1))
            kinds.append("stage")
            continue
        if hit.named:
            scale = re.match(rf"\s*({_SCALE})", text[hit.op_start:], re.IGNORECASE)
            left = _left_attribute(text, hit.op_start)
            name = left[0] + " " + scale.group(1) if left and scale else (scale.group(1) if scale else None)
            s0 = left[1] if left else hit.op_start
            e0 = hit.op_start + (scale.end(1) if scale else 0)
            attr = (name, s0, e0) if name else None
        attrs.append(attr)
        kinds.append(_classify(text, hit, attr))
    for i in range(1, len(hits)):
        if not _COORD_GAP.match(text[hits[i - 1].end:hits[i].start]):
            continue
        if attrs[i] is None and attrs[i - 1] is not None and not (hits[i - 1].tnm and not hits[i].tnm):
            attrs[i] = attrs[i - 1]  # (a size after a T category is no T category: "low-grade Ta, ≤ 3 cm")
            if kinds[i - 1] == "age" and kinds[i] in ("measure", "temporal", "count"):
                kinds[i] = "age"
            elif kinds[i] == "count" or (kinds[i] == "dose" and hits[i].unit == hits[i - 1].unit):
                kinds[i] = kinds[i - 1]  # "alcohol > 20 g/day for women or > 30 g/day for men"
        if kinds[i] == "age" and kinds[i - 1] in ("measure", "count") and not hits[i - 1].unit:
            kinds[i - 1] = "age"
        if kinds[i] == "age" and kinds[i - 1] == "temporal" and _TIME_UNIT.match((hits[i - 1].unit or "").split()[0]):
            kinds[i - 1] = "age"  # "> 12 months and ≤ 21 years of age"
    out: list[Comparison] = []
    for hit, attr, kind in zip(hits, attrs, kinds, strict=True):
        nxt = re.match(r"\s*(?:of\s+)?([A-Za-z][A-Za-z-]{2,})", text[hit.end:])
        opened = re.search(r"\(\s*$", text[:hit.start])
        if kind == "measure" and hit.unit and nxt and nxt.group(1).lower() not in _FUNCTION_AFTER | _RIGHT_STOP and (
                opened or re.match(r"gestation|pregnan", nxt.group(1), re.IGNORECASE)):
            attr = _right_attribute(text, hit.end) or attr  # "(≥ 140 mmHg systolic", "16-24 weeks of gestation"
        if kind == "stage" and not hit.tnm and nxt and nxt.group(1).lower() not in _FUNCTION_AFTER | _RIGHT_STOP:
            right = _right_attribute(text, hit.end)  # "class IV congestive heart failure": what is staged
            if right and attr:
                attr = (text[attr[1]:right[2]], attr[1], right[2])
        if attr is None and kind in ("measure", "stage"):
            attr = _right_attribute(text, hit.end)
        values = [v.strip() for v in hit.values]  # as written ("IIB"); ordinal_value() compares spellings
        name = "age" if kind == "age" else (attr[0] if attr else None)
        unit = (hit.unit or "").lower()
        sized = unit in ("mm", "cm") and bool(name and _TUMOUR.search(name))
        if kind == "measure" and (sized or (unit == "cm" and not name)):
            name = "tumor size"  # "Tumor 1–4 cm", "Papillary carcinoma < 1 cm", "solitary, ≤ 3 cm": the tumour's size
        out.append(Comparison(op=hit.op, values=tuple(values), unit=hit.unit, start=hit.start, end=hit.end,
                              attr=name, attr_start=attr[1] if attr else None, attr_end=attr[2] if attr else None,
                              kind=kind))
    return out if keep_all else [c for c in out if c.is_patient_bound]


def tnm_between(lo: str, hi: str) -> list[str]:
    """The categories of a TNM range, as written at its ends and by main number between them ("2"–"4a": 2, 3, 4a;
    "a"–"1": a, 1). Tis and Ta come before 1."""
    def rank(v: str) -> float:
        return float(v[0]) if v[:1].isdigit() else {"is": 0.5, "a": 0.6}.get(v, -1.0)

    a, b = rank(lo), rank(hi)
    if a < 0 or b <= a:
        return [lo, hi]
    return [lo, *(str(n) for n in range(int(a) + 1, int(b)) if n > a), hi]
