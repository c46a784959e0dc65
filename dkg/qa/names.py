"""The names by which a question calls a guideline, learned from the guideline itself.

A clinician writes "DTC", "thyroid cancer" or "papillary thyroid carcinoma" for a guideline titled
"Differentiated Thyroid Cancer", and "MDS" for "Myelodysplastic Syndromes". Nothing here names a disease: the
names come from the guideline's title, its code, and what its own boxes and footnotes write —

- the title, its plural or singular, and the title without its leading qualifiers as long as what is left still
  names one disease ("Cutaneous Melanoma" → "melanoma"; "Differentiated Thyroid Cancer" → "thyroid cancer", not
  "cancer");
- the title's initials ("DTC") unless the guideline writes them as an ordinary word or a unit ("cm"); two
  letters only when they are its code or its boxes write them ("HL" for Hodgkin Lymphoma, not "MS" for MDS);
- the guideline's code when its boxes use it as a word ("Lower-risk MDS");
- abbreviations the guideline defines ("papillary thyroid carcinoma (PTC)") and subtypes it names that end in the
  title's disease word or share a title word ("Classic Hodgkin lymphoma").

An abbreviation that the guideline also writes in lower case as an ordinary word ("all patients") is not used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

# Words that head a disease's name; alone they name no disease in particular.
GENERIC_HEADS = {"cancer", "cancers", "carcinoma", "carcinomas", "tumor", "tumors", "tumour", "tumours", "neoplasm",
                 "neoplasms", "disease", "diseases", "syndrome", "syndromes", "lymphoma", "lymphomas", "leukemia",
                 "leukaemia", "leukemias", "sarcoma", "sarcomas", "malignancy", "malignancies", "disorder",
                 "disorders"}
_HEAD = re.compile(r"\b(cancers?|carcinomas?|tumou?rs?|neoplasms?|syndromes?|lymphomas?|leuka?emias?|sarcomas?|"
                   r"melanomas?|myelomas?|gliomas?|blastomas?|[a-z]+omas?)\b", re.IGNORECASE)
_SMALL = {"and", "of", "the", "in", "with", "for", "or", "a", "an"}
_UNITS = {"cm", "mm", "ml", "mg", "kg", "dl", "hr", "gy", "iu", "pt", "ps", "cr", "pr", "sd", "pd"}


def _plural_variants(phrase: str) -> list[str]:
    words = phrase.split()
    last = words[-1]
    if not last.isalpha():
        return [phrase]  # "… (synthetic abc1)": no plural of a code or a bracket
    alt = last[:-1] if last.endswith("s") and not last.endswith("ss") and len(last) > 4 else last + "s"
    return [phrase, " ".join([*words[:-1], alt])]


def _shortened(title: str) -> list[str]:
    """The title without leading qualifiers, while what is left still names one disease."""
    words = title.split()
    out = []
    # "Non-Small Cell Lung Cancer": "Cell Lung Cancer" would be inside "small cell lung cancer", another disease
    first = 2 if words and words[0].lower().startswith("non-") else 1
    for k in range(first, len(words)):
        rest = words[k:]
        if len(rest) == 1 and rest[0].lower() in GENERIC_HEADS:
            break
        if rest[0].lower() in _SMALL:
            continue
        out.append(" ".join(rest))
    return out


def _initials(title: str, parts: bool = False) -> str:
    """The initials of a name; with ``parts`` each part of a hyphenated word counts ("Non-Small Cell Lung Cancer"
    is NSCLC, as "Non-Hodgkin Lymphoma" is NHL)."""
    words = re.findall(r"[A-Za-z][\w']*" if parts else r"[A-Za-z][\w'-]*", title)
    return "".join(w[0] for w in words if w.lower() not in _SMALL).upper()


def _spelled(phrase: str, letters: str) -> bool:
    return letters in (_initials(phrase), _initials(phrase, True))


def _words_used(texts: Iterable[str]) -> tuple[set[str], set[str]]:
    """Upper-case tokens the guideline writes as words (not in page labels), and its lower-case words."""
    upper: set[str] = set()
    lower: set[str] = set()
    for t in texts:
        t = re.sub(r"\b[A-Z][A-Z0-9]{1,7}-\d{1,3}\b", " ", t)  # page labels and links ("See MDS-3")
        upper |= set(re.findall(r"(?<![\w-])([A-Z][A-Z0-9]{1,6})(?![\w])", t))
        lower |= set(re.findall(r"(?<![\w-])([a-z]{2,7})(?![\w])", t))
    return upper, lower


def _defined(texts: Iterable[str], title_words: set[str], head: str | None) -> list[str]:
    """Abbreviations the guideline defines, and the names they stand for, when they name its disease."""
    out: list[str] = []
    for t in texts:
        for m in re.finditer(r"((?:[A-Za-z][\w-]*\s+){0,5}[A-Za-z][\w-]*)\s*\(([A-Z][A-Za-z]{1,6})\)", t):
            abbr, before = m.group(2), m.group(1).split()
            letters = abbr.upper()
            long: list[str] = []
            for w in reversed(before):  # take words back until the initials are spelled
                long.insert(0, w)
                if _spelled(" ".join(long), letters) or len(long) >= len(letters) + 2:
                    break
            phrase = " ".join(long)
            if not _spelled(phrase, letters):
                continue
            named = {w.lower() for w in long}
            h = _HEAD.search(phrase)
            if named & title_words or (h and head and h.group(1).lower().rstrip("s") == head.rstrip("s")):
                out += [phrase.lower(), abbr]
    return out


def _subtypes(texts: Iterable[str], title_words: set[str], head: str | None) -> list[str]:
    """Phrases of the guideline that end in a disease word and share a word with its title."""
    out = []
    for t in texts:
        for m in re.finditer(r"((?:[A-Za-z][\w'-]*\s+){1,3})(" + _HEAD.pattern[2:-2] + r")\b", t, re.IGNORECASE):
            words = [w for w in m.group(1).split() if w.lower() not in _SMALL]
            if not words:
                continue
            h = m.group(2).lower()
            shares = {w.lower() for w in words} & title_words
            if shares and (head is None or h.rstrip("s") == head.rstrip("s") or h not in GENERIC_HEADS):
                kept = words[-3:]
                while kept and re.fullmatch(r"[a-z]+ed|newly|early|late|advanced|recurrent|metastatic", kept[0],
                                            re.IGNORECASE) and kept[0].lower() not in title_words:
                    kept = kept[1:]  # "relapsed classic Hodgkin lymphoma": the state is no part of the name
                if kept:
                    out.append(" ".join([*kept, m.group(2)]).lower())
    return out


_SOLID_HEADS = ("cancer", "cancers", "carcinoma", "carcinomas")
_SAME_THING = ("cancer", "carcinoma", "tumor", "tumors", "tumour", "tumours", "neoplasm", "malignancy", "mass")


def _organ_heads(title: str, upper: set[str]) -> list[str]:
    """A solid cancer's title said with another head ("Bladder Cancer" → "bladder tumour", "bladder carcinoma",
    "bladder mass"), and the acronyms the guideline writes that end in the title's initials ("NMIBC", "MIBC" for
    Bladder Cancer: four letters or more, so that "RBC" stays a blood count)."""
    words = title.split()
    if len(words) < 2 or words[-1].lower() not in _SOLID_HEADS:
        return []
    out: list[str] = []
    stem = " ".join(words[:-1]).lower()  # the whole qualifier: "medullary thyroid carcinoma" is no "Differentiated
    if stem not in GENERIC_HEADS and stem not in _SMALL:  # Thyroid Cancer"
        out += [f"{stem} {h}" for h in _SAME_THING]
    initials = _initials(title)
    if len(initials) >= 2:
        out += [u for u in upper if len(u) >= 4 and u.endswith(initials) and u != initials and u.isalpha()]
    return out


def _histologies(texts: Iterable[str]) -> list[str]:
    """A histology the guideline writes as an adjective and a carcinoma ("urothelial carcinoma"): a name of its
    disease (one that another loaded guideline also writes names neither, :func:`note_loaded_guidelines`)."""
    return [f"{m.group(1).lower()} carcinoma" for t in texts
            for m in re.finditer(r"(?<![\w-])([a-z]{5,}(?:al|ar|ic|ous|ial))\s+carcinomas?\b", t, re.IGNORECASE)
            if m.group(1).lower() not in _NOT_HISTOLOGY]


_NOT_HISTOLOGY = {"metastatic", "invasive", "residual", "primary", "regional", "clinical", "localized", "advanced",
                  "differentiated", "unresectable", "recurrent", "previous", "original", "typical", "classical"}


def guideline_names(title: str | None, code: str, texts: Iterable[str],
                    synonyms: dict[str, list[str]] | None = None, printed: Iterable[str] | None = None) -> list[str]:
    """Every name of the guideline, longest first, without repeats (see the module's description).

    Args:
        title: the guideline's name as its pages print it ("Hodgkin Lymphoma"), if known.
        code: its short code ("HL").
        texts: its box texts (with footnotes resolved) and page titles.
        synonyms: general clinical names of diseases (``conf/clinical.yaml`` ``disease_synonyms``: "hepatoma" for
            hepatocellular carcinoma): added where a name the guideline taught is one of them.
        printed: the boxes' own words without their footnotes (default ``texts``): a histology counts as a name
            where a box prints it, not where a footnote mentions it in passing.
    """
    texts = list(texts)
    upper, lower = _words_used(texts)
    names: list[str] = []
    title_words: set[str] = set()
    head = None
    if title:
        clean = re.sub(r"\s+", " ", title).strip()
        title_words = {w.lower() for w in re.findall(r"[A-Za-z][\w'-]*", clean)
                       if w.lower() not in _SMALL and w.lower() not in GENERIC_HEADS}
        h = _HEAD.search(clean)
        head = h.group(1).lower() if h else None
        names += _plural_variants(clean.lower())
        for short in _shortened(clean):
            names += _plural_variants(short.lower())
        for initials in dict.fromkeys((_initials(clean), _initials(clean, True))):
            if initials.lower() not in lower | _UNITS and (len(initials) >= 3 or initials in upper or
                                                            initials == code):
                names.append(initials)  # two letters only where the guideline uses them: "MS" is not "MDS"
    if code in upper and code.lower() not in lower and len(code) >= 2:
        names.append(code)
    if title:
        names += _organ_heads(clean, upper)
    names += _histologies(texts if printed is None else printed)
    names += _defined(texts, title_words, head)
    names += _subtypes(texts, title_words, head)
    # a histology the guideline names in one word (a prefix glued to carcinoma or sarcoma) is one of its subtypes
    names += [m.group(1).lower() for t in texts
              for m in re.finditer(r"(?<![\w-])([a-z]{3,}(?:carcinoma|sarcoma))s?(?![\w-])", t, re.I)]
    # clinicians shorten cancer and carcinoma to "ca": "lung ca", "squamous cell ca"
    names += [re.sub(r"\s(?:cancer|carcinoma)s?$", " ca", n) for n in names
              if re.search(r"\S\s(?:cancer|carcinoma)s?$", n) and n.lower() not in GENERIC_HEADS]
    learned = {n.lower() for n in names}
    for disease, others in (synonyms or {}).items():
        group = {disease.lower(), *(o.lower() for o in others)}
        if group & learned:
            names += [disease, *others]
    seen: set[str] = set()
    out = []
    for n in sorted(names, key=lambda n: (-len(n), n)):
        key = n.lower()
        if key not in seen and len(key) >= 2:
            seen.add(key)
            out.append(n)
    return out


def attribute_short_names(attrs: Sequence[Any]) -> dict[str, list[str]]:
    """Shorter names a question uses for a registry attribute: a word of its name that is written like a term
    of its own (an acronym or a capitalised name: "EPO" of "Serum EPO", "Breslow" of "Breslow thickness", "BRAF" of
    "BRAF V600 mutation status"), when no other approved attribute's names hold that word."""
    words: dict[str, set[str]] = {}
    for a in attrs:
        if set(getattr(a, "values", None) or ()) <= {"yes", "no"} and getattr(a, "values", None):
            # a finding of several words ("beyond Milan criteria", "allogeneic HCT candidate"): one word of it
            # drops what states the value ("within Milan", "post-HCT relapse"), so it has no short name
            continue
        for alias in a.aliases:
            for w in re.findall(r"(?<![\w-])([A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*|[A-Z][a-z]{3,})(?![\w-])", alias):
                if w.lower() not in _SHORT_STOP:
                    words.setdefault(w.lower(), set()).add(a.name)
    out: dict[str, list[str]] = {}
    for w, owners in words.items():
        if len(owners) == 1 and len(w) >= 2:
            out.setdefault(next(iter(owners)), []).append(w)
    return out


_SHORT_STOP = {"serum", "stage", "status", "total", "grade", "score", "level", "count", "bone", "marrow", "tumor",
               "tumour", "disease", "risk", "stimulated", "suppressed", "recurrent", "clinical", "clinically", "with",
               "without", "patients", "patient", "group", "candidate", "mutation", "fusion"}


_SHORT_CACHE: dict[int, tuple[Any, dict[str, list[str]]]] = {}


def registry_short_names(registry: Any) -> dict[str, list[str]]:
    """:func:`attribute_short_names` of a registry's approved attributes, worked out once per registry version
    (the reader asks for them with every question; the registry object is kept while its file is unchanged)."""
    hit = _SHORT_CACHE.get(id(registry))
    if hit is None or hit[0] is not registry:
        if len(_SHORT_CACHE) >= 8:
            _SHORT_CACHE.pop(next(iter(_SHORT_CACHE)))
        hit = _SHORT_CACHE[id(registry)] = (registry, attribute_short_names(list(registry.approved().values())))
    return hit[1]


# Words that describe a tumour without naming its organ.
_QUALIFIERS = {"high", "low", "grade", "intermediate", "residual", "primary", "recurrent", "metastatic", "localized",
               "localised", "viable", "malignant", "aggressive", "large", "small", "new", "dedifferentiated",
               "differentiated", "advanced", "invasive", "early", "cutaneous"}


def organ_words(names: Sequence[str]) -> set[str]:
    """The organ a guideline's names call its disease by ("thyroid" of "thyroid cancer", "liver" of "liver
    cancer"): the one word before a solid tumour's head, a qualifier such as "differentiated" left out."""
    out = set()
    for n in names:
        m = re.fullmatch(r"([a-z]{4,})\s+(?:cancers?|carcinomas?|ca|tumou?rs?|neoplasms?|malignancy|mass)", n.lower())
        if m and m.group(1) not in _QUALIFIERS:
            out.add(m.group(1))
    return out
