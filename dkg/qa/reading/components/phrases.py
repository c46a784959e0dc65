"""Phrase rules, longest match first, each span read once: ``conf/clinical.yaml`` (clinical shorthand),
``conf/qa.yaml`` (the dataset's own phrasings) and ``conf/constraints.yaml`` (the extractor's keywords), with the
negation before a phrase ("no high-grade features") and the uses of a histology word that name no tumour
("osteosarcoma-type chemo"). Phrases that say something and decide nothing are read first, as no fact."""

from __future__ import annotations

from dkg import rx as re
from dkg.constraints.vocabulary import load_vocabulary
from dkg.qa.facts import _lexicon
from dkg.qa.reading.doc import Context, QuestionDoc, component

Rule = tuple[re.Pattern[str], str, str, str]

# A phrase negated by the words just before it ("no high-grade features", "without bulky disease", "papillary
# rather than clear cell").
_NEGATED = re.compile(r"\b(?:no|not|none|nothing|nor|without|absence of|free of|lack of|(?:negative|neg) for|"
                      r"rather than|instead of|as opposed to)\s+"
                      r"(?:(?:(?!and\b|or\b|but\b|with\b|then\b)[\w-]+(?:\s+|\s*/\s*)){0,2}|"
                      # "no lung, bone or liver lesions", "no lymph node or distant spread"
                      r"(?:[\w-]+\s*,\s*){0,2}(?:(?!and\b|but\b|with\b)[\w-]+\s+){1,2}(?:or|nor)\s+)$")
# A clause whose subject denies what follows ("no one thinks these are resectable", "nobody felt it was operable").
# (number words are digits by now: "no one" reads "no 1")
_NOBODY = re.compile(r"\b(?:no[- ](?:one|1)|nobody|none of (?:us|them|the \w+))\s+(?:[\w'-]+\s+){0,4}$")
_NEGATION_WORD = re.compile(r"(?:no|not|non|without|un|never|none|negative)\b")


def _rules(ctx: Context) -> list[Rule]:
    rules: list[Rule] = []
    for attr, forms in ctx.clinical["phrases"].items():
        for value, pats in forms.items():
            for p in pats:
                plural = "s?" if p[-1:].isalpha() and len(p) >= 6 else ""  # "osteosarcomas"
                rules.append((re.compile(rf"(?<![\w+]){p}{plural}(?![\w+])"), attr, str(value), "clinical phrase"))
    for pat, attr, value in _lexicon():
        rules.append((pat, attr, value, "qa phrase"))
    for k in load_vocabulary().keywords:
        rules.append((re.compile(k.pattern.pattern, re.IGNORECASE),
                      k.attr, k.value, "constraint keyword" + (f"|neg:{k.negated}" if k.negated else "")))
    return rules


@component("no_fact_phrases")
def read_no_fact_phrases(doc: QuestionDoc, ctx: Context) -> None:
    for pat in ctx.clinical.get("no_fact_phrases", []):  # said, understood, and deciding nothing
        for m in re.finditer(pat, doc.text):
            if doc.free(m.start(), m.end()):
                doc.take(m.start(), m.end())


def _not_the_tumour(text: str, a: int, b: int) -> bool | None:
    """Whether a histology word at ``text[a:b]`` names a treatment or a comparison, not the tumour (None: it is
    the tumour; True: a comparison, understood; False: a treatment's name)."""
    if not (re.match(r"-(?:type|like|style|based|directed)\b|\s*(?:regimen|protocol)\b|"
                     r"\s+(?:type|like|style)\s+(?:chemo\w*|regimen|therapy|treatment)", text[b:b + 24]) or
            re.search(r"\b(?:as for|as in|as with|like|unlike|similar to|"
                      r"along the lines (?:of|(?:used |given )?(?:for|in))|"
                      r"(?:like|as|than) (?:we|you|one|they|i)(?: \w+){1,3}?"
                      r"(?: (?:for|in|with|on))?)\s+$", text[max(0, a - 40):a])):
        return None
    # "osteosarcoma-type chemo", "chemo as for osteosarcoma", "ipi/nivo like we would for clear cell"
    return bool(re.search(r"\b(?:unlike|(?:like|as|than) (?:we|you|one|they|i) \w+)", text[max(0, a - 40):a]))


def _own_organs(doc: QuestionDoc, ctx: Context) -> set[str]:
    """The organ the linked guidelines' disease is of, in every word that names it ("liver", "hepatic")."""
    organs = ctx.organs()
    words = set().union(*(organs.get(c, set()) for c in doc.reading.guidelines))
    for names in ctx.clinical.get("metastasis_sites", {}).values():
        if words & {str(n) for n in names}:
            words |= {str(n) for n in names}
    return words


def _hit(doc: QuestionDoc, a: int, b: int, attr: str, value: str, rule: str, own: set[str] | None = None) -> None:
    text = doc.text
    if attr == "metastatic" and value == "yes" and own and set(re.findall(r"[a-z]+", text[a:b])) & own and \
            not re.search(r"met|spread|deposit", text[a:b]):
        doc.take(a, b)  # "3 liver lesions" of a liver cancer are the tumour itself, not metastases
        return
    if "|neg:" in rule:
        before = text[max(0, a - 24):a]
        if re.search(r"\b(?:no|not|without|free of|absence of|never|none|zero|nil)\b[^,;.]*$", before):
            value = rule.split("|neg:")[1]
        rule = rule.split("|")[0]
    elif (denied := _NOBODY.search(text[max(0, a - 40):a])) and value == "yes":
        doc.take(a, b)  # "no one thinks these are resectable": the finding is denied
        doc.add(a, attr, "no", text[max(0, a - 40) + denied.start():b], rule + " (denied)")
        return
    elif _NEGATED.search(text[max(0, a - 40):a]) and not _NEGATION_WORD.match(text[a:b]):
        doc.take(a, b)  # "no high-grade features": understood, and it states no value
        if value == "yes" and re.search(r"\b(?:no|not|none|nothing|without|(?:neg|negative) for)\s+$",
                                        text[max(0, a - 30):a]):
            doc.add(a, attr, "no", text[max(0, a - 12):b], rule + " (negated)")  # "none resectable"
        return
    if attr == "histology":
        comparison = _not_the_tumour(text, a, b)
        if comparison is not None:
            if comparison:
                doc.take(a, b)  # a comparison is understood, and says nothing of this patient
            return
    if re.search(r"\bc[oa]me back$", text[a:b]) and re.match(r"\s+(?:as\s+)?(?:positive|negative|normal|clear|"
                                                             r"abnormal|equivocal|inconclusive|benign)\b", text[b:]):
        doc.take(a, b)  # "the test came back positive": a result, not a relapse
        return
    if text[a:b] == "cr" and re.match(r"\s*[:=]?\s*\d", text[b:b + 6]):
        doc.take(a, b)  # "Cr 0.9": creatinine, not a complete remission
        return
    doc.take(a, b)
    doc.add(a, attr, value, text[a:b], rule)


@component("phrases")
def read_phrases(doc: QuestionDoc, ctx: Context) -> None:
    hits: list[tuple[int, int, str, str, str]] = []
    for pat, attr, value, rule in ctx.memo("phrase_rules", lambda: _rules(ctx)):
        for m in pat.finditer(doc.text):
            hits.append((m.start(), m.end(), attr, value, rule))
    hits.sort(key=lambda h: (-(h[1] - h[0]), h[0]))
    own = _own_organs(doc, ctx)
    for a, b, attr, value, rule in hits:
        if doc.free(a, b):
            _hit(doc, a, b, attr, value, rule, own)
