"""Category facts a box states without a number: polarity ("CD20-positive", "non-bulky"), findings of genes and
karyotypes, metastases at a site, counts of tumours and metastases, named criteria, prior treatments and the
words a guideline contrasts across its boxes (split out of :mod:`dkg.constraints.comparisons`, which finds the
numeric comparisons)."""

from __future__ import annotations

from dataclasses import replace

from dkg import rx as re
from dkg.constraints.comparisons import BETWEEN, EQ, GT, GTEQ, IN, LT, LTEQ, Comparison

# --- polarity and qualifiers --------------------------------------------------------------

# Qualifier adjectives whose negation is a patient category of its own. A seed, not a limit: any
# "non-X" in a text makes X a qualifier there too ("non-bulky" → bulky = no).
QUALIFIERS = ("bulky", "symptomatic", "measurable", "transplant-eligible")
_MARKER = r"(?<![\w-])([A-Z][A-Za-z0-9]*\d[A-Za-z0-9]*|[A-Z]{2,}[A-Za-z0-9]*(?:-[A-Z0-9]+)?)"
MARKER = _MARKER  # a gene, protein or index name as written ("EGFR", "PD-L1", "IPSS-R"), captured
_POLAR = {"positive": "positive", "pos": "positive", "+": "positive", "negative": "negative", "neg": "negative",
          "-": "negative", "−": "negative", "–": "negative"}


_FINDING = r"(?:mutations?|fusions?|rearrangements?|amplifications?|deletions?|alterations?|variants?|expression)"
_CYTOGENETIC = r"(?<![\w])((?:del|inv|dup|ins|der|t|i)\([^()\s]{1,12}\)(?:\([^()\s]{1,12}\))?)"
COMPOUND_STATE = (r"(refractory|resistant|sensitive|naive|naïve|unresponsive|intolerant|exposed|eligible|ineligible|"
                  r"dependent|independent)")
# What a compound state is attached to: a word of three letters or more ("BCG-naive", "radioiodine-refractory").
COMPOUND_STEM = r"([a-z][a-z0-9]{2,})"
# States that are a yes/no of their own (eligible or not), never one of a treatment's several states.
_BINARY_STATES = ("eligible", "ineligible", "dependent", "independent")


# Metastases at a named site are a finding of their own, with the state the words give: "Symptomatic brain
# metastases", "No brain metastases", "bone metastases present" (the site's usual synonyms as one name).
_SITES = {"brain": "brain", "cns": "brain", "cerebral": "brain", "bone": "bone", "bony": "bone", "skeletal": "bone",
          "osseous": "bone", "liver": "liver", "hepatic": "liver", "lung": "lung", "pulmonary": "lung",
          "peritoneal": "peritoneal", "leptomeningeal": "leptomeningeal", "visceral": "visceral",
          "adrenal": "adrenal", "pleural": "pleural", "regional lymph node": "nodal", "lymph node": "nodal",
          "regional nodal": "nodal", "nodal": "nodal"}
_SITE_NAMES = "|".join(k.replace(" ", r"\s+") for k in sorted(_SITES, key=len, reverse=True))
SITE_METASTASES = re.compile(
    r"(?<![\w-])(?:(a?symptomatic|untreated|treated|stable|progressive|active)\s+)?"
    rf"({_SITE_NAMES})\s+"
    r"(?:metastas[ei]s|mets|metastatic\s+(?:disease|lesions?))(?![\w-])", re.IGNORECASE)


def at_site(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]`` inside a site's metastases ("metastases" in "brain metastases") or a count of
    lesions ("more than 3 metastases"): a finding of its own, not the general one its words name?"""
    return any(m.start() <= start and end <= m.end()
               for m in (*SITE_METASTASES.finditer(text), *LESION_COUNT.finditer(text)))


def _site_metastases(text: str) -> list[Comparison]:
    out = []
    for m in SITE_METASTASES.finditer(text):
        state = (m.group(1) or "present").lower()
        site = _SITES[re.sub(r"\s+", " ", m.group(2).lower())]
        out.append(Comparison(EQ, (state,), None, m.start(), m.end(), f"{site} metastases",
                              m.start(2), m.end(), "category"))
    return out


def in_compound_state(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]`` the state word of a compound ("refractory" in "radioiodine-refractory")?"""
    return bool(re.search(r"[A-Za-z][A-Za-z0-9]{2,}-$", text[:start]) and
                re.fullmatch(COMPOUND_STATE, text[start:end], re.IGNORECASE))


def _molecular_qualifiers(text: str, states: tuple[str, ...] = ()) -> list[Comparison]:
    """Findings of a test named by a gene or a karyotype: "BRAF V600 mutation positive", "BRAF V600 wild-type",
    "RET fusion or NTRK fusion", "No RET or NTRK fusion", "TP53 mutation", "with del(5q)"; each gene its own
    attribute ("RET fusion status"), positive unless the words say wild-type or negative (negation by "no",
    "without" is applied by the extractor to the group that holds it)."""
    out: list[Comparison] = []

    def free(a: int, b: int) -> bool:
        return not any(c.start < b and a < c.end for c in out)

    gene = r"(?:[A-Z][A-Z0-9]+\s+)?(?:[A-Z][A-Za-z0-9]*\d[A-Za-z0-9]*|[A-Z]{2,}[A-Za-z0-9]*(?:-[A-Z0-9]+)?)"
    polar = r"(positive|negative|pos|neg|wild[- ]?type|wt|mutant|mutated)"
    pat = re.compile(rf"(?<![\w-])({gene}(?:\s*(?:,|or|and|/)\s*{gene})*)(?:\s*[- ]\s*({_FINDING}))?"
                     rf"(?:\s*[- ]\s*{polar})?(?![\w])")
    for m in pat.finditer(text):
        finding, pol = m.group(2), m.group(3)
        if not finding and not pol:
            continue
        plain = pol and re.fullmatch(r"positive|negative|pos|neg", pol, re.IGNORECASE)
        if plain and not finding and " " not in m.group(1):
            continue  # "CD20-positive": the single-marker rule below reads it
        value = "negative" if pol and re.match(r"neg|wild|wt", pol, re.IGNORECASE) else "positive"
        noun = re.sub(r"s$", "", finding.lower()) if finding else ""
        if not noun and pol and re.match(r"wild|wt|mutant|mutated", pol, re.IGNORECASE):
            noun = "mutation"  # "BRAF V600 wild-type" and "BRAF V600 mutation positive" are one finding
        for g in re.finditer(gene, m.group(1)):
            a, b = m.start(1) + g.start(), m.start(1) + g.end()
            if not free(a, b):
                continue
            name = f"{g.group(0)} {noun} status" if noun else f"{g.group(0)} status"
            out.append(Comparison(EQ, (value,), None, a, m.end() if g.end() == len(m.group(1)) else b, name, a, b,
                                  "category"))
    for m in re.finditer(_CYTOGENETIC, text):
        if free(m.start(), m.end()):
            name = re.sub(r"\s+", " ", re.sub(r"[()]", " ", m.group(1))).strip()  # "del 5q": brackets spell no name
            out.append(Comparison(EQ, ("positive",), None, m.start(), m.end(), f"{name} status", m.start(),
                                  m.end(), "category"))
    # "radioiodine-refractory", "transplant-ineligible", "not radioiodine-refractory": a state of its own; where
    # the guideline contrasts several states of the same treatment ("BCG-naive", "BCG-unresponsive"), the
    # treatment's status, valued by the state
    for m in re.finditer(rf"\b(not\s+)?{COMPOUND_STEM}-{COMPOUND_STATE}\b", text, re.IGNORECASE):
        if free(m.start(2), m.end()):
            state = m.group(3).lower().replace("ï", "i")
            negated = bool(m.group(1))
            if f"{m.group(2).lower()}-*" in states and state not in _BINARY_STATES and not negated:
                out.append(Comparison(EQ, (state,), None, m.start(), m.end(), f"{m.group(2)} status", m.start(2),
                                      m.end(), "category"))
                continue
            if state in ("ineligible", "independent"):  # "cisplatin-ineligible" is cisplatin-eligible = no
                state, negated = state[2:], not negated
            out.append(Comparison(EQ, ("no" if negated else "yes",), None, m.start(), m.end(),
                                  f"{m.group(2).lower()} {state}", m.start(2), m.end(), "category"))
    # "Candidate for allogeneic HCT", "Not a candidate for surgery": candidacy for what is named
    for m in re.finditer(r"\b(not\s+(?:an?\s+)?)?(?:candidate|eligible)\s+for\s+(?:an?\s+|the\s+)?"
                         r"((?:[A-Za-z][\w-]*\s+){0,2}?[A-Za-z][\w-]*)(?=\s*(?:$|[,;.(]|\s(?:and|or|if|with|but)\b))",
                         text, re.IGNORECASE):
        if free(m.start(), m.end()):
            out.append(Comparison(EQ, ("no" if m.group(1) else "yes",), None, m.start(), m.end(),
                                  f"{m.group(2)} candidate", m.start(2), m.end(2), "category"))
    # "Anti-Tg antibodies absent", "brain metastases present": a finding stated after its name
    for m in re.finditer(r"((?:[A-Za-z][\w-]*\s+){0,2}[A-Za-z][\w-]*)\s+(present|absent|detected|not\s+detected)\b",
                         text, re.IGNORECASE):
        words = [w for w in m.group(1).split() if w.lower() not in ("and", "or", "with", "no", "the", "is", "are")]
        if words and words[-1].lower().endswith("ly"):
            continue  # "clinically detected nodes": how it was found, not what
        if words and free(m.start(), m.end()):
            name = " ".join(words)
            a = m.start(1) + m.group(1).find(words[0])
            value = "present" if m.group(2).lower() in ("present", "detected") else "absent"  # the words' own
            out.append(Comparison(EQ, (value,), None, a, m.end(), name, a, m.start(2), "category"))
    return out


# "no gross extrathyroidal extension", "No brain metastases", "without contraindication to bevacizumab": a finding
# the patient does not have, named in the guideline's words (up to the end of the clause, a place it was seen on
# left out: "No structural disease on neck ultrasound")
_NO_FINDING = re.compile(r"(?<![\w-])(?:no|without)\s+((?:[A-Za-z][\w-]*\s+){0,4}?[A-Za-z][\w-]*)"
                         r"(?=\s*(?:$|[,;.)]|\s(?:or|and|on|in|at|after|before|by|from|for|with|but)\b))",
                         re.IGNORECASE)
_NOT_A_FINDING = re.compile(r"\b(?:response|treatment|therapy|prior|previous|evidence|change|need|one|more|other|"
                            r"further|longer|than|less|cycles?|doses?|months?|weeks?|years?|days?)\b", re.IGNORECASE)


_PRIOR = re.compile(r"(?<![\w-])(no\s+|without\s+)?(?:prior|previous)\s+"
                    r"((?:[A-Za-z][\w/-]*\s+){0,3}?[A-Za-z][\w/-]*)"
                    r"(?=\s*(?:$|[,;.(]|\s(?:and|or|with|for|but|in|on|at)\b))", re.IGNORECASE)


_CANDIDATE = re.compile(r"(?<![\w-])(not\s+(?:an?\s+)?|non-?|(?:an?\s+)?(?:poor|unsuitable)\s+|(?:an?\s+)?"
                        r"(?:good|suitable|fit)\s+|an?\s+)?((?:[A-Za-z][\w-]*\s+)?[A-Za-z][\w-]*)\s+candidate\b",
                        re.IGNORECASE)


def _candidacy(text: str) -> list[Comparison]:
    """Candidacy named before the word ("Transplant candidate", "Not a cystectomy candidate", "poor surgical
    candidate"): yes or no for what is named (the form "candidate for surgery" is read with the other states)."""
    out = []
    for m in _CANDIDATE.finditer(text):
        words = [w for w in m.group(2).split() if w.lower() not in ("a", "an", "the", "not", "no")]
        if not words:
            continue
        lead = (m.group(1) or "").lower()
        value = "no" if lead.startswith(("not", "non", "poor", "unsuitable", "a poor", "an unsuitable")) else "yes"
        a = m.start(2) + m.group(2).find(words[0])
        out.append(Comparison(EQ, (value,), None, m.start(), m.end(), f"{' '.join(words)} candidate", a, m.end(),
                              "category"))
    return out


def _negated_findings(text: str) -> list[Comparison]:
    out: list[Comparison] = []
    for m in _NO_FINDING.finditer(text):
        phrase = m.group(1)
        if _NOT_A_FINDING.search(phrase) or re.search(r"\d", phrase) or \
                (len(phrase) < 4 and not re.fullmatch(r"[A-Z]{3}", phrase)):  # "no CIS": an abbreviation counts
            continue
        out.append(Comparison(EQ, ("no",), None, m.start(), m.end(), phrase.lower(), m.start(1), m.end(1),
                              "category"))
    return out


def contrast_words(texts: list[str]) -> tuple[str, ...]:
    """Words a guideline contrasts across its boxes: "Non-major pathologic response" in one box and "Major
    pathologic response" in another, "favorable" and "unfavorable": each such word is a two-valued attribute of
    that guideline, read in every box (the bare word is yes, the prefixed one no). A treatment written with two
    or more states ("BCG-naive", "BCG-unresponsive") is given as ``"bcg-*"``: its status is one attribute."""
    joined = "\n".join(texts)
    # (a hyphenated compound is one word: "Non-muscle-invasive" beside "Muscle-invasive" contrasts
    # "muscle-invasive", not "muscle")
    bare = {w.lower() for w in re.findall(r"(?<![\w-])([A-Za-z]{4,}(?:-[A-Za-z]{3,})?)(?![\w-])", joined)}
    bare |= {w.lower() for w in re.findall(r"(?<![\w-])([A-Za-z]{4,})\b", joined)}
    out = set()
    for m in re.finditer(r"(?<![\w-])(non-?|un)([a-z]{4,}(?:-[a-z]{3,})?)(?![\w-])", joined, re.IGNORECASE):
        w = m.group(2).lower()
        if w in bare and (m.group(1).lower() != "un" or len(w) >= 6):
            out.add(w)
    # a finding one box negates ("No brain metastases") and another states ("Brain metastases, symptomatic")
    for c in (c for t in texts for c in _negated_findings(t)):
        if len(re.findall(rf"(?<![\w-]){re.escape(c.attr or '')}\b", joined, re.IGNORECASE)) > \
                len(re.findall(rf"\b(?:no|without)\s+{re.escape(c.attr or '')}\b", joined, re.IGNORECASE)):
            out.add(c.attr or "")
    # a treatment in several states across the boxes ("castration-sensitive", "castration-resistant"): its status
    states: dict[str, set[str]] = {}
    for m in re.finditer(rf"(?<![\w-]){COMPOUND_STEM}-{COMPOUND_STATE}\b", joined, re.IGNORECASE):
        if m.group(2).lower() not in _BINARY_STATES:
            states.setdefault(m.group(1).lower(), set()).add(m.group(2).lower().replace("ï", "i"))
    out |= {f"{x}-*" for x, seen in states.items() if len(seen) >= 2}
    return tuple(sorted(w for w in out if w))


# How many tumours or metastases a patient has, as a guideline's condition box counts them: "single tumour",
# "up to 3 nodules", "2–3 nodules", "more than 3 metastases", "1–3 metastatic lesions". (Counts of episodes,
# cycles or lines stay set aside by :func:`find_comparisons`; a lesion count is the disease's extent.)
_LESION = (r"(?:(?P<tum>tumou?rs?|nodules?|masses)|"
           r"(?P<met>metastas[ei]s|mets|metastatic\s+(?:lesions?|sites?|deposits?)|lesions?))(?![\w-])")
_COUNT_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "single": "1", "solitary": "1",
                "a single": "1", "unifocal": "1"}
_COUNT_OPS = [("more than", GT), ("greater than", GT), ("over", GT), ("fewer than", LT), ("less than", LT),
              ("up to", LTEQ), ("at most", LTEQ), ("no more than", LTEQ), ("at least", GTEQ), ("≥", GTEQ),
              ("≤", LTEQ), (">", GT), ("<", LT)]
LESION_COUNT = re.compile(
    r"(?<![\w-])(?:(?P<op>" + "|".join(re.escape(w) for w, _ in _COUNT_OPS) + r")\s*)?"
    r"(?:(?P<lo>\d{1,2})\s*(?:[–-]|to)\s*(?P<hi>\d{1,2})|(?P<n>\d{1,2}|one|two|three|four|five)|"
    r"(?P<word>a single|single|solitary|unifocal))\s+(?:(?:[a-z]+)\s+)?" + _LESION, re.IGNORECASE)


def find_lesion_counts(text: str) -> list[Comparison]:
    """Counts of tumours (nodules, masses) or of metastases (metastatic lesions) a condition states."""
    out = []
    for m in LESION_COUNT.finditer(text):
        between = text[m.end("hi") if m.group("hi") else m.end("n") if m.group("n") else m.end("word"):
                       m.start("tum") if m.group("tum") else m.start("met")].strip()
        if (between and not re.fullmatch(r"[a-z]+", between, re.IGNORECASE)) or between.lower() in (
                "more", "prior", "previous", "new", "treated"):
            continue  # "3 new lesions", "2 prior tumours": not the count a branch is decided on
        name = "tumour count" if m.group("tum") else "metastasis count"
        values: tuple[str, ...]
        if m.group("lo"):
            op, values = BETWEEN, (m.group("lo"), m.group("hi"))
        else:
            n = m.group("n") or m.group("word")
            values = (_COUNT_WORDS.get(n.lower(), n),)
            op = dict(_COUNT_OPS).get((m.group("op") or "").lower(), EQ)
        out.append(Comparison(op, values, None, m.start(), m.end(), name, m.start(), m.end(), "measure"))
    return out


def lesion_size(c: Comparison) -> Comparison:
    """A length bound named by the lesions it measures ("nodules each ≤ 3 cm", "tumours ≤ 5 cm") is their size."""
    m = re.fullmatch(r"(?:(tumou?rs?|nodules?|masses|mass)|(metastas[ei]s|lesions?))(?:\s+each)?",
                     (c.attr or "").strip(), re.IGNORECASE)
    if m is None or (c.unit or "").strip().lower() not in ("cm", "mm"):
        return c
    return replace(c, attr="tumour size" if m.group(1) else "metastasis size")


# The categories a named risk index sorts patients into ("IPSS-R very low, low or intermediate", "FLIPI high risk").
RISK_CATEGORY = r"(?:very[\s-]+low|low|intermediate(?:[\s-]*[12])?|high|very[\s-]+high|favou?rable|poor)"
_INDEX_CATEGORIES = re.compile(
    _MARKER + rf"\s+(?:risk\s+(?:category\s+|group\s+)?)?(?P<cats>{RISK_CATEGORY}(?:\s*,\s*{RISK_CATEGORY})*"
    rf"(?:\s*,?\s+(?:or|and|to)\s+{RISK_CATEGORY})?)(?P<risk>[\s-]+risk\b)?(?![\w-])")


def risk_category(words: str) -> str:
    """One spelling for a risk category ("Very  low" → very_low, "intermediate-2" → intermediate_2)."""
    return re.sub(r"[\s-]+", "_", words.strip().lower())


_NO_RESPONSE = re.compile(
    r"\b(?:not\s+respond(?:ing|ed)?|no\s+response|unresponsive|refractory|failing|failed|failure\s+of)\b"
    r"[^.;:()]{0,40}?\bto\s+((?:first|second|third|1st|2nd|3rd)[- ]line(?:\s+(?:therapy|treatment))?)",
    re.IGNORECASE)


def index_categories(text: str) -> list[Comparison]:
    """A named risk index's categories: "IPSS-R very low, low or intermediate" (an attribute ``IPSS-R risk`` with
    three values), "FLIPI high-risk". One category alone counts only with "risk" beside it or a name with a one-letter
    revision suffix ("IPSS-R low"): "LDH high" is a laboratory value, not an index; a name with a digit is a gene or
    a protein ("PD-L1 high", "HER2 low": expression levels)."""
    out: list[Comparison] = []
    for m in _INDEX_CATEGORIES.finditer(text):
        cats = [risk_category(c) for c in re.split(r"\s*,\s*(?:or\s+|and\s+)?|\s+(?:or|and|to)\s+",
                                                   m.group("cats")) if c.strip()]
        named_risk = bool(m.group("risk")) or bool(re.match(r"\s+risk\b", text[m.end(1):], re.IGNORECASE))
        if re.search(r"\d", m.group(1)):
            continue  # a gene or protein ("PD-L1 high", "HER2 low"): an expression level, not an index
        if len(cats) < 2 and not named_risk and not re.search(r"-[A-Z]$", m.group(1)):
            continue
        op = EQ if len(cats) == 1 else IN
        out.append(Comparison(op, tuple(cats), None, m.start(), m.end(), f"{m.group(1)} risk", m.start(1), m.end(1),
                              "category"))
    return out


def find_qualifiers(text: str, extra: tuple[str, ...] = ()) -> list[Comparison]:
    """Category facts stated by polarity: "CD20-positive", "HER2+", "EGFR negative", "non-bulky",
    "bulky disease", "asymptomatic" (attribute and value; negation by "non-", "a-", "not"), and findings of
    genes, karyotypes and named states (see :func:`_molecular_qualifiers`)."""
    out: list[Comparison] = []
    out += _site_metastases(text)
    out += [c for c in _molecular_qualifiers(text, extra) if not any(c.start < o.end and o.start < c.end for o in out)]
    for m in re.finditer(_MARKER + r"(?:\s*[- ]\s*|\s*)(positive|negative|pos|neg)\b", text):
        if any(c.start <= m.start() < c.end or m.start() <= c.start < m.end() for c in out):
            continue
        out.append(Comparison(EQ, (_POLAR[m.group(2).lower()],), None, m.start(), m.end(), f"{m.group(1)} status",
                              m.start(1), m.end(1), "category"))
    for m in re.finditer(_MARKER + r"(\+|−|-|–)(?=[\s,;.)/]|$)", text):
        if any(c.start <= m.start() < c.end for c in out):
            continue
        out.append(Comparison(EQ, (_POLAR[m.group(2)],), None, m.start(), m.end(), f"{m.group(1)} status",
                              m.start(1), m.end(1), "category"))
    # "Within Milan criteria" beside "Beyond Milan criteria": a named criterion the patient meets or exceeds
    for m in re.finditer(r"\b(within|inside|meets?|meeting|fulfil?ls?|beyond|outside|exceed(?:s|ing)?)\s+(?:the\s+)?"
                         r"((?:[A-Za-z][\w-]*\s+){0,2}?[A-Za-z][\w-]*)\s+(criteri(?:on|a)|rules?)\b", text,
                         re.IGNORECASE):
        if any(c.start <= m.start() < c.end or m.start() <= c.start < m.end() for c in out):
            continue
        inside = m.group(1).lower() in ("within", "inside", "meet", "meets", "meeting", "fulfil", "fulfils",
                                        "fulfill", "fulfills")
        name = f"{m.group(2)} {'criteria' if m.group(3).lower().startswith('criteri') else 'rule'}"
        out.append(Comparison(EQ, ("within" if inside else "beyond",), None, m.start(), m.end(), name,
                              m.start(2), m.end(3), "category"))
    # "Progression on sorafenib", "Progression after prior anti-PD-1 therapy": the disease progressed on a treatment
    for m in re.finditer(r"\b(progression|progressing|progressed)\s+(?:on|after|during|despite|following|through)\b",
                         text, re.IGNORECASE):
        before = text[max(0, m.start() - 12):m.start()]
        if not any(c.start <= m.start() < c.end for c in out) and \
                not re.search(r"\b(?:no|not|without|before)\s+$", before, re.IGNORECASE):
            out.append(Comparison(EQ, ("yes",), None, m.start(), m.end(1), "progression", m.start(1), m.end(1),
                                  "category"))
    out += [c for c in index_categories(text) if not any(c.start < o.end and o.start < c.end for o in out)]
    # "anemia not responding, or unlikely to respond, to first-line therapy": no response to a line of treatment
    for m in _NO_RESPONSE.finditer(text):
        if not any(c.start < m.end() and m.start() < c.end for c in out):
            out.append(Comparison(EQ, ("no",), None, m.start(), m.end(), f"response to {m.group(1).lower()}",
                                  m.start(1), m.end(1), "category"))
    # "Lower-risk MDS" beside "Higher-risk MDS": a risk group named by its comparative
    for m in re.finditer(r"\b(lower|higher)[- ]risk\b", text, re.IGNORECASE):
        if not any(c.start <= m.start() < c.end for c in out):
            out.append(Comparison(EQ, (m.group(1).lower(),), None, m.start(), m.end(), "risk group", m.start(),
                                  m.end(), "category"))
    # "Prior ARPI", "no prior docetaxel", "no prior systemic therapy for advanced disease": a treatment the patient
    # has or has not had
    for m in _PRIOR.finditer(text):
        if not any(c.start < m.end() and m.start() < c.end for c in out):
            out.append(Comparison(EQ, ("no" if m.group(1) else "yes",), None, m.start(), m.end(),
                                  f"prior {m.group(2)}", m.start(2), m.end(2), "category"))
    # "previously untreated", "treatment-naive": no treatment before this box (the same finding as "no prior therapy")
    for m in re.finditer(r"\b(?:previously\s+untreated|(?:treatment|therapy)[- ]na[iï]ve)\b", text, re.IGNORECASE):
        if not any(c.start < m.end() and m.start() < c.end for c in out):
            out.append(Comparison(EQ, ("no",), None, m.start(), m.end(), "prior therapy", m.start(), m.end(),
                                  "category"))
    # "High-volume disease" beside "Low-volume disease", "high tumour burden": a group named by its level
    for m in re.finditer(r"\b((?:very\s+)?(?:low|high|lower|higher|intermediate))[- ](volume|burden)\b", text,
                         re.IGNORECASE):
        if not any(c.start < m.end() and m.start() < c.end for c in out):
            out.append(Comparison(EQ, (re.sub(r"\s+", " ", m.group(1).lower()),), None, m.start(), m.end(),
                                  f"disease {m.group(2).lower()}", m.start(), m.end(), "category"))
    out += [c for c in _candidacy(text) if not any(c.start < o.end and o.start < c.end for o in out)]
    out += [c for c in _negated_findings(text) if not any(c.start < o.end and o.start < c.end for o in out)]
    extra = tuple(w for w in extra if not w.endswith("-*"))  # (treatments with several states: read above)
    words = {w.lower() for w in (*QUALIFIERS, *extra)}
    words |= {m.group(1).lower() for m in re.finditer(r"\bnon[- ]?([a-z]{4,}(?:-[a-z]+)?)\b", text, re.IGNORECASE)}
    learned = {w.lower() for w in extra}
    for w in sorted(words, key=len, reverse=True):
        un = "|un(?=" + re.escape(w) + ")" if w in learned else ""
        no = r"|no\s+|without\s+" if w in learned else ""
        pat = rf"\b(non[- ]?|not\s+|a(?=symptomatic){un}{no})?({re.escape(w)})\b"
        for m in re.finditer(pat, text, re.IGNORECASE):
            if any(c.start <= m.start() < c.end or m.start() <= c.start < m.end() for c in out):
                continue
            value = "no" if m.group(1) else "yes"
            if w in learned and w not in QUALIFIERS and " " not in w and "-" not in w and \
                    (not m.group(1) or re.match(r"(?i)non|un", m.group(1))):
                # a word the guideline contrasts ("favorable" / "unfavorable", "squamous" / "non-squamous") names
                # the values of its attribute itself (a compound, "muscle-invasive", is yes or no)
                value = re.sub(r"\s+", "-", m.group(0).lower())
            out.append(Comparison(EQ, (value,), None, m.start(), m.end(), m.group(2).lower(), m.start(2), m.end(2),
                                  "category"))
    return sorted(out, key=lambda c: c.start)
