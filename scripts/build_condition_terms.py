"""Build ``conf/condition_terms_en.txt``: names of diseases and conditions, general clinical knowledge for the
chatbot's scope decision (`dkg.web.entities`).

Sources (open data, licences in the file's header):

* ICD-10-CM tabular list (CDC/NCHS, public domain; the April 2026 XML as the ``simple-icd-10-cm`` wheel ships
  it, MIT): every code's description and inclusion term, cut to its head phrase ("Idiopathic gout, right
  shoulder" → "idiopathic gout"; "Calculus of kidney" → "calculus"), chapters 1–19 (diseases, symptoms,
  injuries; not external causes or encounters) and the codes of chapter 22 (COVID-19, vaping-related disorder);
* the LCT corpus's ``Condition-Name`` annotations (MIT, ``../shared/data/external/leaf-clinical-trials``).

A head phrase is kept when it has one to four words, letters and hyphens only (a number after a dash only when
it is the whole description: "COVID-19", also kept as "covid"), and is not a generic word ("other", "disease",
"disorder"): those are the words a question around any guideline uses; a one-word head only when ICD-10-CM
gives it at least twice or it carries a number; an LCT name only when two annotations give it (single
annotations hold stray words: "eye drops" annotated as a condition).

Usage: python scripts/build_condition_terms.py ICD10CM_TABULAR.xml LCT_FOLDER > conf/condition_terms_en.txt
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

CUT = re.compile(r",|\(|\[|:|;| - | (?:of|with|without|due to|in|and|or|following|associated|complicating|"
                 r"during|affecting|involving|not elsewhere|as|at|by|from|for|to|on|other than|except|after|"
                 r"unspecified|nos)\b")
LEAD = {"other", "unspecified", "acute", "chronic", "recurrent", "primary", "secondary", "personal", "family",
        "history", "specified", "unsp", "oth", "mild", "moderate", "severe", "left", "right", "bilateral",
        "initial", "subsequent", "sequela", "late", "early", "multiple", "single", "partial", "complete",
        "unilateral", "congenital", "localized", "generalized", "simple", "certain", "nontraumatic", "traumatic",
        "a", "an", "the", "any", "some", "possible", "suspected", "current"}
GENERIC = {"disease", "diseases", "disorder", "disorders", "syndrome", "syndromes", "condition", "conditions",
           "injury", "injuries", "complication", "complications", "abnormal", "abnormality", "abnormalities",
           "findings", "finding", "problems", "problem", "encounter", "status", "care", "effects", "effect",
           "type", "stage", "lesion", "lesions", "sequelae", "symptoms", "signs", "state", "states", "body",
           "unknown", "causes", "cause", "use", "reaction", "reactions", "failure", "deficiency", "infection",
           "infections", "disease nos", "malignant neoplasm", "neoplasm", "benign neoplasm", "tumor", "tumour",
           "cancer", "pain", "deformity", "dysfunction", "stenosis", "obstruction", "insufficiency", "poisoning",
           "exposure", "contact", "examination", "screening", "observation", "therapy", "treatment",
           "procedure", "surgery", "test", "person", "persons", "patient", "patients", "adult", "child", "children",
           "newborn", "mother", "pregnancy", "delivery", "labor", "birth", "age", "old age", "weight", "blood",
           "water", "food", "diet", "exercise", "alcohol", "drug", "drugs", "medication", "work", "fall", "falls"}
FINDING = {"abnormal", "elevated", "decreased", "increased", "raised", "low", "high", "positive", "negative",
           "borderline", "inconclusive", "nonspecific"}
WORD = re.compile(r"[a-z][a-z'-]*[a-z]|[a-z]|[a-z][a-z'-]*-\d{1,2}")
NUMBERED = re.compile(r"-\d{1,2}$")
"""A name ending in a number after a dash ("covid-19") is also written without it ("covid")."""


def heads(text: str) -> list[str]:
    t = text.lower().strip()
    t = CUT.split(t)[0].strip()
    words = t.split()
    while words and words[0] in LEAD:
        words = words[1:]
    phrase = " ".join(words)
    if not 1 <= len(words) <= 4 or not all(WORD.fullmatch(w) for w in words) or len(phrase) < 4:
        return []
    # a finding ("abnormal result", "raised ESR") is no condition's name; "high blood pressure" is one
    if phrase in GENERIC or (words[0] in FINDING and len(words) < 3):
        return []
    if any(ch.isdigit() for ch in phrase) and phrase != text.lower().strip():
        return []  # a number in a head cut from a longer description names a protein or a gene ("factor-1")
    bare = NUMBERED.sub("", phrase)
    return [phrase, bare] if bare != phrase and len(bare) >= 4 else [phrase]


def icd_terms(xml: Path) -> Counter[str]:
    out: Counter[str] = Counter()
    for chapter in ET.parse(xml).getroot().iter("chapter"):
        number = int(chapter.findtext("name", "0"))
        if number == 22:  # codes for special purposes: only the codes' own names (COVID-19), not the sections'
            for diag in chapter.iter("diag"):
                if "." in diag.findtext("name", ""):  # a code (U07.1), not its category ("Emergency use of U07")
                    out.update(heads(diag.findtext("desc", "")))
                    for note in diag.findall("inclusionTerm/note"):
                        out.update(heads(note.text or ""))
            continue
        if not 1 <= number <= 19:
            continue
        for node in chapter.iter():
            if node.tag == "desc" and node.text:
                out.update(heads(node.text))
            elif node.tag == "inclusionTerm":
                for note in node.iter("note"):
                    out.update(heads(note.text or ""))
    return out


def lct_terms(folder: Path) -> Counter[str]:
    out: Counter[str] = Counter()
    for ann in folder.glob("*/*.ann"):
        for line in ann.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and parts[1].startswith("Condition-Name "):
                out.update(heads(parts[2]))
    return out


def main() -> None:
    # a one-word head met once is as often a stray word of a long description ("target") as a name
    icd, lct = icd_terms(Path(sys.argv[1])), lct_terms(Path(sys.argv[2]))
    # (a name with a number, "covid-19", is no stray word)
    terms = {t for t, n in icd.items() if n >= 2 or " " in t or any(c.isdigit() for c in t)} | \
        {t for t, n in lct.items() if n >= 2}
    terms |= {NUMBERED.sub("", t) for t in terms if NUMBERED.search(t) and len(NUMBERED.sub("", t)) >= 4}
    print("# Names of diseases and conditions (lower case, one per line), built by scripts/build_condition_terms.py")
    print("# from the ICD-10-CM tabular list, April 2026 (CDC/NCHS, public domain; the XML as the simple-icd-10-cm")
    print("# 1.5.0 wheel ships it, MIT) and the LCT corpus's Condition-Name annotations (MIT licence).")
    for t in sorted(terms):
        print(t)


if __name__ == "__main__":
    main()
