"""Which loaded guidelines the question is about (their names, their disease words, a histology only one of them
draws), and a disease none of them covers ("colon ca", "Wilms tumor", "myeloma", "T-cell ALL"): such a question
is not covered. A family member's or a past disease names nothing."""

from __future__ import annotations

from dkg import rx as re
from dkg.constraints.registry import american, either_spelling
from dkg.qa.facts import _DISEASE_HEAD, _phrase_regex
from dkg.qa.reading.doc import Context, QuestionDoc, Reading, component
from dkg.qa.reading.text import in_brackets

# Heads of disease names (the tagger's, and rarer tumours): a named disease no guideline draws is not covered.
_OTHER_HEAD = re.compile(rf"{_DISEASE_HEAD.pattern}|\b(?:chordoma|carcinoid|blastoma|thymoma)\b|"
                         r"\b[a-z]{3,}(?:sarcoma|carcinoma|blastoma|lymphoma)\b")

# Tumours that are neither a carcinoma, a sarcoma nor a leukaemia: benign or other tumours of an organ a guideline
# is about ("angiomyolipoma" of the kidney, "enchondroma" of bone) or other malignancies ("myeloma").
_OTHER_TUMOUR = re.compile(r"\b[a-z]*(?:lipoma|adenoma|oncocytoma|chondroma|osteoma|fibroma|angioma|hamartoma|"
                           r"myeloma|glioma|melanoma|mesothelioma|teratoma|neuroma|meningioma|plasmacytoma)s?\b")

# Words that describe a tumour without naming another disease.
_DESCRIPTORS = {"high", "low", "grade", "intermediate", "residual", "primary", "recurrent", "metastatic", "localized",
                "localised", "viable", "malignant", "aggressive", "large", "small", "new", "an", "area", "focus", "of",
                "dedifferentiated", "component", "foci", "within"}

# Polarity words that describe a finding of the disease named ("Philadelphia-positive leukaemia").
_POLARITY = {"positive", "negative", "pos", "neg"}

_FAMILY = (r"\b(?:mother|father|mum|mom|dad|sister|brother|aunt|uncle|grand\w+|cousin|daughter|son|family|"
           r"fhx|fh)\b")

_ORGAN_STATE = (r"(?:\s*/\s*[a-z]+)*\s+(?:problems?|failure|function|insufficiency|impairment|dysfunction|"
                r"disease|issues|transplant|stones?|cysts?|reserve)")


def _named(doc: QuestionDoc, ctx: Context) -> None:
    """Guidelines named by their disease's names or words."""
    r, text = doc.reading, doc.text
    for code, names in ctx.conf.diseases.items():
        # an upper-case short name ("ALL") is matched as written, never as the word "all"
        if code in ctx.kb.states and any(re.search(rf"(?<![\w+]){re.escape(n)}(?![\w+])", r.question)
                                         if n.isupper() and len(n) <= 4 else re.search(_phrase_regex(n), text)
                                         for n in names):
            r.guidelines.append(code)
    for code, words in ctx.conf.disease_words.items():
        # "no cardiac/pulmonary/hepatic/renal problems" is an organ's health, not the kidney cancer guideline
        if code in ctx.kb.states and code not in r.guidelines and any(
                any(not re.match(_ORGAN_STATE, text[m.end():]) for m in re.finditer(_phrase_regex(w), text))
                for w in words):
            r.guidelines.append(code)


def _by_histology(doc: QuestionDoc, ctx: Context) -> None:
    """With no guideline named, a histology (or a subtype or regimen that names one) links its guideline."""
    r, text = doc.reading, doc.text
    if r.guidelines:
        return
    histo = {v: [rf"(?<![\w+]){p}(?![\w+])" for p in pats]
             for v, pats in ctx.clinical["phrases"].get("histology", {}).items()}
    for st in ctx.clinical.get("subtypes", []):
        if "histology" in st["facts"]:  # "parosteal", "MAP x 10 weeks": a subtype or regimen names the tumour
            histo.setdefault(str(st["facts"]["histology"]), []).append(st["pattern"])
    for value, pats in histo.items():
        said = [m.group(0) for p in pats for m in [re.search(p, text)] if m]
        if not said:
            continue
        owners = [code for code, attrs_ in ctx.kb.paths.items()
                  if any(value in dict(p.scope.cats).get("histology", ()) for p in attrs_)]
        for code in owners:
            # a histology word that another loaded guideline's boxes also use ("papillary" tumours of the
            # bladder and of the kidney) names neither disease
            shared = any(re.search(rf"(?<![\w-]){re.escape(w.lower())}(?![\w-])", ctx.kb.box_text(c))
                         for c in ctx.kb.states if c != code for w in said)
            if code not in r.guidelines and not shared:
                r.guidelines.append(code)


# What a question calls the tumour of an organ without a disease's name ("thyroid nodule", "liver lesions",
# "salvage radiotherapy to the prostate bed", "carcinoma of the prostate").
_SITE_NOUNS = r"(?:nodules?|tumou?rs?|lesions?|mass(?:es)?|primary|bed|neoplasms?|malignanc(?:y|ies)|biops(?:y|ies))"
_OF_NOUNS = r"(?:cancers?|carcinomas?|adenocarcinomas?|tumou?rs?|malignanc(?:y|ies)|nodules?|lesions?|mass(?:es)?)"


def _removal(organ: str) -> str:
    """The operation that removes an organ, by the organ's word ("thyroid" → "thyroidectomy", "prostate" →
    "prostatectomy"), as a pattern; "" where the word gives no stem to build it on."""
    stem = re.sub(r"(?:e|ic)$", "", organ)
    return rf"{re.escape(stem)}ectom(?:y|ies|ised|ized)\b" if len(stem) >= 5 else ""


def _by_organ(doc: QuestionDoc, ctx: Context) -> None:
    """With no guideline named, the tumour of an organ that one loaded guideline's names hold and no other's
    ("a Bethesda VI thyroid nodule", "3 liver lesions", "carcinoma of the prostate"), or the operation that
    removed that organ ("total thyroidectomy for a follicular carcinoma"), links that guideline. A metastasis of
    that organ is no tumour of it ("liver mets" are not said so); another disease named beside it still makes the
    question not covered."""
    r, text = doc.reading, doc.text
    if r.guidelines:
        return
    organs = ctx.organs()
    hits = set()
    for code, words in organs.items():
        for w in words:
            said = (rf"(?<![\w-]){re.escape(w)}\s+{_SITE_NOUNS}(?![\w-])|"
                    rf"{_OF_NOUNS}\s+of\s+the\s+{re.escape(w)}(?![\w-])")
            removal = _removal(w)
            if removal:
                said += "|" + removal
            if any(not _kin(text, m.start()) for m in re.finditer(said, text)) and \
                    not any(w in other for c, other in organs.items() if c != code):
                hits.add(code)
    if len(hits) == 1:
        r.guidelines.append(hits.pop())


def _kin(text: str, start: int) -> bool:
    """"mother had breast cancer": the family's history, not the patient's."""
    return bool(re.search(_FAMILY + r"(?:\s+\S+){0,4}\s*$", text[max(0, start - 40):start]))


def _past(r: Reading, text: str, h: re.Match[str]) -> bool:
    """With a loaded guideline's disease named, another one in the history ("Hx: melanoma in situ excised 2015")
    or in brackets describing the tumour ("(… high-grade spindle-cell sarcoma)") is no other disease."""
    if not r.guidelines:
        return False
    before, after = text[max(0, h.start() - 60):h.start()], text[h.end():h.end() + 50]
    return bool(re.search(r"\b(?:hx|h/o|history of|pmh|past (?:medical )?history|previous(?:ly)?|prior|"
                          r"remote|treated for|survivor)\b[^.;?]*$", before) or
                re.match(r"[^.;?]{0,40}?\b(?:in situ|excised|resected|treated|in remission|cured|"
                         r"(?:19|20)\d\d|years? ago)\b", after) or
                in_brackets(text, h.start(), after))


def _listed_other(doc: QuestionDoc, ctx: Context) -> str | None:
    """A disease the configuration lists as not covered, its abbreviation, or an organ's cancer none is about."""
    r, text = doc.reading, doc.text
    for other in sorted(ctx.conf.other_diseases, key=len, reverse=True):
        named = either_spelling(_phrase_regex(american(other.lower())))  # British or American
        hit = next((h for h in re.finditer(named, text) if not _kin(text, h.start()) and not _past(r, text, h)), None)
        if hit:
            doc.take(hit.start(), hit.end())
            return other.lower()
    loaded_names = {n.lower() for names in ctx.conf.diseases.values() for n in names}
    for short, name in ctx.clinical.get("other_disease_abbreviations", {}).items():
        if str(short).lower() in loaded_names or str(name).lower() in loaded_names:
            continue  # a loaded guideline is named so: "HCC" is no other disease once a liver guideline is loaded
        if re.search(rf"(?<![\w-]){re.escape(short)}(?![\w-])", text):
            return str(name)
    # "colon ca", "rectal adenoca": an organ no loaded guideline is about, with a cancer word
    organ = re.search(r"\b(colon|colorectal|rectal|rectum|breast|lung|prostate|prostatic|pancreatic|pancreas|"
                      r"ovarian|"
                      r"gastric|stomach|bladder|urothelial|cervical|cervix|esophageal|oesophageal|thyroid|"
                      r"endometrial|uterine|hepatocellular|liver|tongue|laryngeal|testicular|skin)\s+"
                      r"(?:ca|cancer|carcinoma|adenocarcinoma|adenoca|malignancy)\b", text)
    if organ and not _kin(text, organ.start()) and \
            not any(organ.group(1) in n.lower() for names in ctx.conf.diseases.values() for n in names):
        return organ.group(0)
    # "the prostate bed", "a thyroid nodule": the tumour of an organ none is about (an organ that metastases often
    # reach, such as the liver or the lungs, says nothing alone)
    site = re.search(rf"\b(prostate|prostatic|thyroid|bladder|breast|pancreatic|pancreas|ovarian|testicular|"
                     rf"uterine|endometrial|gastric|oesophageal|esophageal|laryngeal)\s+{_SITE_NOUNS}(?![\w-])", text)
    if site and not r.guidelines and not _kin(text, site.start()) and \
            not any(site.group(1) in n.lower() for names in ctx.conf.diseases.values() for n in names):
        return site.group(0)
    return None


def _other_tumour(doc: QuestionDoc, ctx: Context) -> str | None:
    """An eponymous tumour ("Wilms tumor") no loaded guideline names, or another kind of tumour of the same
    organ ("renal angiomyolipoma", "enchondroma of the femur", "myeloma")."""
    r, text = doc.reading, doc.text
    own_words = {w.lower() for names in [*ctx.conf.diseases.values(), *ctx.conf.disease_words.values()]
                 for n in names for w in re.findall(r"\w+", n)}
    for m in re.finditer(r"(?<![.?!]\s)(?<!^)\b([A-Z][a-z]+)(?:'s)?\s+(?:tumou?r|sarcoma|carcinoma|lymphoma)\b",
                         r.question):
        if m.group(1).lower() not in own_words and m.group(1).lower() not in ("the", "a", "this", "primary"):
            return m.group(0).lower()
    own_names = {n.lower() for names in [*ctx.conf.diseases.values(), *ctx.conf.disease_words.values()]
                 for n in names}
    for m in _OTHER_TUMOUR.finditer(text):
        if not _kin(text, m.start()) and not _past(r, text, m) and m.group(0) not in own_names and \
                not any(m.group(0) in n.lower() for names in ctx.conf.diseases.values() for n in names):
            return m.group(0)
    return None


def _describes_own(ctx: Context, text: str, m: re.Match[str], words: list[str]) -> bool:
    """Whether a disease head names the loaded guideline's own tumour, a specialty or a histology it draws."""
    if any(re.search(rf"(?<![\w+]){p}(?![\w+])", " ".join(words)) for p in ctx.histology):
        return True  # "collecting duct carcinoma": a histology a loaded guideline draws
    if re.match(r"\s*(?:surgeons?|oncologists?|teams?|services?|clinics?|cent(?:er|re)s?|units?|"
                r"specialists?|mdt|boards?|programs?|programmes?|nurses?|wards?|conferences?)\b",
                text[m.end():]):
        return True  # "sarcoma surgeon": a specialty, not a disease
    own = [w for names in ctx.conf.diseases.values() for w in names]
    near = text[max(0, m.start() - 40):m.end() + 5]
    # whole words: "thyroid ca" is not inside "medullary thyroid carcinoma"
    return any(re.search(rf"(?<![\w-]){re.escape(n.lower())}(?![\w-])", near) for n in own) or \
        any(re.search(rf"{re.escape(p)}[\s-]*{re.escape(m.group(0))}", text[max(0, m.start() - 30):m.end()])
            for p in ("renal cell", "kidney", "renal", "bone", "ewing", "ewing's", "clear cell",
                      "lymphoblastic", "papillary", "chromophobe"))


def _own_head(ctx: Context, head: str, words: list[str]) -> bool:
    """"Philadelphia-negative leukaemia": a loaded guideline's disease word (in either spelling), described by
    words its own boxes use, is that guideline's disease ("chronic myeloid leukaemia" is not: the ALL boxes do not
    say "chronic")."""
    head = american(head)
    for code, names in ctx.conf.diseases.items():
        if code not in ctx.kb.states or not any(re.search(rf"\b{re.escape(head)}\b", american(n.lower()))
                                                for n in names):
            continue
        boxes = ctx.kb.box_text(code)
        if words and all(w in _POLARITY or re.search(rf"(?<![\w-]){re.escape(w[:6])}", boxes) for w in words):
            return True
    return False


_UNITS = {"cm", "mm", "kg", "ml", "mg", "yo", "y", "m", "f"}


def _other_head(doc: QuestionDoc, ctx: Context) -> str | None:
    """A disease head ("… carcinoma", "lymphoma") that is not the loaded guideline's own tumour."""
    r, text = doc.reading, doc.text
    known = {n.lower() for names in ctx.conf.diseases.values() for n in names}
    own_names = {n.lower() for names in [*ctx.conf.diseases.values(), *ctx.conf.disease_words.values()]
                 for n in names}
    for m in _OTHER_HEAD.finditer(text):
        # (a unit or a sex after a number is no word of the disease: "4 cm follicular carcinoma", "45m …")
        words = [w for w in re.findall(r"(?<![\d.])[a-z]+", text[max(0, m.start() - 40):m.start()])
                 if w not in _UNITS][-2:]
        if words and words[-1] in {"the", "this", "that", "his", "her", "its", "their", "your", "my", "a", "an",
                                   "of", "with", "has", "had", "up", "for", "about", "any", "no", "some", "residual",
                                   "detectable", "in", "on", "from", "to", "by", "at", "against", "into"}:
            continue  # "the cancer has spread", "the test still picks up the disease": already named
        if _kin(text, m.start()) or _past(r, text, m) or (words and all(w in _DESCRIPTORS for w in words)):
            continue  # a family member's, or only described ("high grade sarcoma" of the bone tumour asked about)
        phrase = " ".join([*words, m.group(0)])
        if _describes_own(ctx, text, m, words):
            continue
        if m.group(0) in ("tumor", "tumour", "neoplasm") or phrase in known or m.group(0) in own_names:
            continue
        if _own_head(ctx, m.group(0), words):
            continue
        return phrase
    return None


@component("diseases")
def read_diseases(doc: QuestionDoc, ctx: Context) -> None:
    _named(doc, ctx)
    _by_histology(doc, ctx)
    _by_organ(doc, ctx)
    doc.reading.other_disease = _listed_other(doc, ctx) or _other_tumour(doc, ctx) or _other_head(doc, ctx)
