"""What a question is about: the things it names, and whether the site is about them (best mode's scope).

A question near a site's topic uses the site's words ("diet", "exercise", "flare", "blood test") about another
disease ("… to prevent rheumatoid arthritis?" on a gout site). Word overlap cannot tell it apart; what can is
the thing it names. This module finds the conditions, drugs and tests a question names and asks the site about
each:

* **English conditions**: names from general clinical knowledge (``conf/condition_terms_en.txt``: ICD-10-CM
  head phrases and LCT condition names, built by ``scripts/build_condition_terms.py``; everyday names such as
  "high blood pressure" in ``conf/web.yaml``), a word built like a disease name (``-itis``, ``-osis``, ``-oma``,
  ``-emia``, ``-pathy``), a word before a disease head noun ("bowel cancer", "Crohn's disease"), or a word the
  site itself gives as another name of a condition ("haemorrhoids (piles)"). A name is widened by the word
  before it when that word is rare on the site ("psoriatic arthritis" on a site about arthritis), never by how
  much or when ("acute"), and never away from the site's own subject ("a proper migraine").
* **English names**: drugs by their INN stem ("-statin", "-mab"), tests and operations by their shape
  ("-gram", "-scopy", "-ectomy"), abbreviations the site never writes ("HPV").
* **Japanese**: MeCab's compounds of nouns and noun suffixes that end like a disease name (症, 炎, 病, がん, 癌,
  腫, 瘍, 症候群, 疾患, 障害, 結石, 内障) or hold the adjectival 性 inside ("逆流性食道炎"); compounds the site lists
  beside such names ("変形性関節症、痛風、…"); katakana names (a drug, a device: "インフルエンザ"); tests of one
  organ ("大腸カメラ").

Each gets a verdict from the site: ``subject`` (the site's title names it), ``about`` (a section heading names it
as its subject, or enough passages do), ``mentioned`` (a few passages name it, and one of their sentences also
holds the question's other words: "glaucoma eye drops … wheeze" on an asthma site; or the question relates it to
the site's own subject), ``related`` (a name the site never writes, asked about the site's subject: a brand
name), ``partial`` (a test the site names otherwise), ``passing`` (named only in sentences about something else)
or ``absent`` (never named). ``passing`` and ``absent`` make the question out of scope: the site does not cover
that thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from dkg.web.text import Lang, english_tokens, load_web_config

if TYPE_CHECKING:
    from dkg.web.retrieve import Passage, PassageIndex, Retrieval

TERMS_EN = Path(__file__).resolve().parents[2] / "conf" / "condition_terms_en.txt"
Verdict = Literal["subject", "about", "mentioned", "related", "partial", "passing", "absent"]
OUT_OF_SCOPE: frozenset[str] = frozenset({"passing", "absent"})
COVERED: frozenset[str] = frozenset({"subject", "about", "mentioned", "related"})

_DISEASE_WORD = re.compile(r"[a-z]{3,}(?:itis|osis|oma|omas|emia|aemia|pathy|pathies|plasia)$")
_NOT_DISEASE = frozenset({"diagnosis", "prognosis", "hypnosis", "osmosis", "diploma", "aroma", "coma", "stoma",
                          "sympathy", "empathy", "soma", "trauma", "dogma", "stigma", "gloma"})
_HEADS = frozenset({"cancer", "cancers", "disease", "diseases", "syndrome", "disorder", "disorders", "tumour",
                    "tumours", "tumor", "tumors", "infection", "infections", "failure", "stone", "stones",
                    "ulcer", "ulcers", "palsy", "fever", "sclerosis", "dystrophy", "deficiency"})
_JA_UNIT = re.compile(r"名詞|接頭辞|接尾辞-名詞的")
_JA_DISEASE_END = ("症候群", "感染症", "疾患", "障害", "結石", "不全", "症", "炎", "病", "がん", "癌", "腫", "瘍",
                   "内障")
_JA_NAMED_PAIN = re.compile(r".+頭痛|.*神経痛")
_KATAKANA = re.compile(r"[\u30a0-\u30ffー]{3,}")
_JA_HYPER_HYPO = re.compile(r"[高低](?:血圧|血糖|体温|尿酸血|脂血|ナトリウム血|カリウム血|カルシウム血)")
_JA_ORGANS = frozenset({"肺", "心", "心臓", "腎", "腎臓", "肝", "肝臓", "脳", "眼", "目", "胃", "腸", "大腸", "小腸",
                        "膵", "膵臓", "胆", "胆道", "食道", "甲状腺", "副腎", "皮膚", "骨", "骨髄", "関節", "血管",
                        "門脈", "頭蓋内", "子宮", "卵巣", "乳", "乳房", "前立腺", "膀胱", "耳", "鼻", "口腔", "歯"})
"""Organs: a disease name that puts one before the site's subject is another disease ("肺高血圧症" beside
"高血圧"), unlike a kind of it ("腎性高血圧", "閉経後骨粗鬆症")."""
_KANJI = re.compile(r"[\u3400-\u9fff]+")
_PROCEDURE = re.compile(r"[a-z]{3,}(?:grams?|graphy|scopy|scopies|ectomy|otomy|ostomy|plasty)$")
"""A word built like a test's or an operation's name ("mammogram", "gastroscopy", "cholecystectomy")."""
_ABBREVIATION = re.compile(r"(?<![\w-])(?![IVXLC]+\b)[A-Z][A-Z0-9]{2,5}(?![\w-])")
_ONOMATOPOEIA = re.compile(r"(.{2})\1|(.)ー?(.)ー?\2ー?\3ー?")
"""A doubled sound ("ドキドキ", "ズキズキ"): how it feels, not a name."""
_JA_PROCEDURE_END = ("カメラ", "検査", "検診", "手術", "注射", "療法", "内視鏡", "造影")
_DRUG_STEM = re.compile(r"[a-z]{2,}(?:vastatin|statin|formin|gliptin|gliflozin|glitazone|olol|pril|sartan|dipine|"
                        r"prazole|tidine|mab|nib|cillin|mycin|cycline|floxacin|azole|vir|profen|oxacin|parin|"
                        r"xaban|gatran|semide|thiazide|olone|asone|afil|triptan|setron|pam|lam|codone|morphone|quine|trexate|"
                        r"mustine|platin|taxel|rubicin|tinib|parib|lukast|terol|tropium|sonide|casone|grel)$")
"""International nonproprietary name stems (WHO's stem book): a word built like a drug name."""
_NOT_DRUG = frozenset({"cholesterol", "sterol", "pram", "tram", "exam", "program", "diagram", "gram", "balsam",
                       "madam", "islam", "adam", "vietnam", "ecstatin"})
"""Words that end like a stem and are no drug ("cholesterol" is not a β2 agonist)."""
_JA_GENERIC = frozenset({"病気", "病院", "病棟", "病状", "病期", "病名", "病理", "合併症", "後遺症", "副作用", "症状",
                         "炎症",
                         "疾患", "障害", "がん", "癌", "腫瘍", "病", "症", "重症", "軽症", "発症", "既往症", "感染症"})


@dataclass(frozen=True)
class Term:
    """A condition the question names: its words as written and as processed (stems; one compound in Japanese)."""

    text: str
    words: tuple[str, ...]
    kind: Literal["condition", "name", "procedure"] = "condition"
    """A condition, another name (a drug by its stem, a word in katakana: a site that names it can say what it
    is), or a test of one organ or kind."""
    phrase: tuple[str, ...] = ()
    """The processed words of the noun phrase it ends ("non-small cell lung cancer" for "lung cancer"): its
    modifiers are none of the other things the question asks about."""
    widened: bool = False
    """Widened to the word before the name ("psoriatic" of "psoriatic arthritis")."""


@dataclass(frozen=True)
class TermVerdict:
    """``dkg web ask --json``'s ``scope`` entries: a named condition and what the site says of it."""

    term: str
    verdict: Verdict
    kind: str
    passages: int
    """Passages of the site that name it."""
    heading: bool
    """A page title or section heading names it."""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


_SPELLING = ((re.compile(r"oe"), "e"), (re.compile(r"ae"), "e"), (re.compile(r"our$"), "or"),
             (re.compile(r"([^s])s$"), r"\1"), (re.compile(r"ies$"), "y"))
_ADJECTIVE = re.compile(r".*(?:ive|ory|ed|al|ic|ous|ing|ly|ary|ar|ble|ant|ent|ile)$")
_NOT_A_NAME = frozenset({"risk", "malignancy", "malignancie", "growth", "mass", "lump", "problem", "issue",
                         "change", "level", "result", "finding", "sign", "symptom", "complaint", "history", "target",
                         "exacerbation", "attack", "flare", "relapse", "episode", "onset", "crisis", "remission",
                         "recurrence", "combination", "adverse effect", "side effect"})
_PRODUCTS = frozenset({"drop", "tablet", "cream", "injection", "inhaler", "patch", "spray", "ointment", "capsule",
                       "inhalation", "ingestion", "infusion", "transfusion", "aspiration", "pill", "jab"})
"""A name ending in a product or a way of giving it ("eye drops", "inhalation") names no condition."""
_QUALIFIERS = frozenset({"acute", "chronic", "severe", "mild", "moderate", "early", "late", "recurrent", "active",
                         "stable", "new", "old", "current", "previous", "advanced", "uncontrolled", "controlled",
                         "well-controlled", "poorly-controlled", "persistent", "frequent", "occasional", "bad", "worse",
                         "big", "small", "sudden", "long-term", "short-term", "first", "second"})
"""Words that say how much or when, not which condition: a name is never widened by them ("acute asthma" on
an asthma site is asthma)."""


def _drug(word: str) -> bool:
    """Built like a drug's name: an INN stem ("atorvastatin", "clopidogrel"), or the stem's class ("statin")."""
    return word not in _NOT_DRUG and (_DRUG_STEM.match(word) is not None or word in ("statin", "statins"))


def norm(word: str) -> str:
    """A word for looking up the list of names: lower case, British spelling and a plural -s folded
    ("tumours" → "tumor", "anaemia" → "anemia")."""
    w = word.lower().replace("’", "'")
    w = w[:-2] if w.endswith("'s") else w
    for pattern, repl in _SPELLING:
        w = pattern.sub(repl, w)
    return w


@lru_cache(maxsize=1)
def _lexicon() -> frozenset[tuple[str, ...]]:
    """The names, as normalised word tuples; a one-word name is a noun (not "obstructive"), and not a word that
    names no condition of its own ("risk")."""
    out = set()
    lay = sorted(load_web_config().lay_condition_names_en)
    for line in [*TERMS_EN.read_text(encoding="utf-8").splitlines(), *lay]:
        if not line or line.startswith("#"):
            continue
        t = tuple(norm(w) for w in line.split())
        if " ".join(t) in _NOT_A_NAME or any(_drug(w) for w in t) or t[-1] in _PRODUCTS:
            continue
        if len(t) == 1 and ((_ADJECTIVE.match(t[0]) and not _DISEASE_WORD.match(t[0])) or t[0] in _NOT_A_NAME
                            or (english_tokens(t[0])[:1] and english_tokens(t[0])[0] in _frame())):
            continue
        out.add(t)
    return frozenset(out)


def _english_words(question: str) -> list[tuple[str, str, int]]:
    """(word as written, stem, position in the text's words) of the content words, stop words dropped."""
    from dkg.web.text import _stem

    stop = load_web_config().stopwords_en
    out = []
    for i, m in enumerate(re.finditer(r"[A-Za-z][A-Za-z0-9+'’-]*", question)):
        w = m.group(0).lower().replace("’", "'")
        w = w[:-2] if w.endswith("'s") else w
        if w in stop or len(w) <= 1:
            continue
        out.append((m.group(0), _stem(w), i))
    return out


def english_conditions(question: str, rare: Sequence[str] = ()) -> list[Term]:
    """The conditions an English question names, longest first at each place; ``rare``: stems the site seldom
    uses, by which a name is widened to the word before it."""
    lex = _lexicon()
    toks = _english_words(question)
    stems = [s for _, s, _ in toks]
    normed = [norm(w) for w, _, _ in toks]
    out: list[Term] = []
    i = 0
    while i < len(toks):
        n = next((n for n in range(min(4, len(toks) - i), 0, -1)
                  if tuple(normed[i:i + n]) in lex and _adjacent(toks, i, n)), 0)
        if not n and ((_DISEASE_WORD.match(toks[i][0].lower()) and toks[i][0].lower() not in _NOT_DISEASE)
                      or _drug(toks[i][0].lower()) or _PROCEDURE.match(toks[i][0].lower())):
            n = 1
        if not n and i + 1 < len(toks) and toks[i + 1][0].lower() in _HEADS and _adjacent(toks, i, 2) \
                and stems[i] not in _frame():
            n = 2
        if not n:
            i += 1
            continue
        start = i
        drug = n == 1 and (_drug(toks[i][0].lower()) or _PROCEDURE.match(toks[i][0].lower()))
        if not drug and start > 0 and _adjacent(toks, start - 1, n + 1) and stems[start - 1] in rare and \
                stems[start - 1] not in _frame() and toks[start - 1][0].lower() not in _QUALIFIERS:
            start -= 1
        kind: Literal["condition", "name"] = "name" if drug else "condition"
        lo = start
        while lo > 0 and _adjacent(toks, lo - 1, 2):
            lo -= 1
        out.append(Term(" ".join(w for w, _, _ in toks[start:i + n]), tuple(stems[start:i + n]), kind,
                        tuple(stems[lo:i + n]), widened=start < i))
        i += n
    return out


def _adjacent(toks: Sequence[tuple[str, str, int]], i: int, n: int) -> bool:
    """The ``n`` content words from ``i`` follow each other in the text (no stop word between them)."""
    return all(toks[k + 1][2] == toks[k][2] + 1 for k in range(i, i + n - 1))


@lru_cache(maxsize=1)
def _frame() -> frozenset[str]:
    from dkg.web.rag import best_frame

    return best_frame("en")


def _compound_runs(text: str) -> Iterator[tuple[str, str, str]]:
    """Each run of nouns, noun prefixes and noun suffixes (MeCab, UniDic) as written, with the word after it and
    that word's part of speech."""
    from dkg.web.text import _tagger

    buf = ""
    node = _tagger().parseToNode(text)
    while node:
        pos = "-".join(node.feature.split(",")[:2])
        if node.surface and _JA_UNIT.match(pos) and not pos.startswith("名詞-数詞"):
            buf += node.surface
        else:
            if buf:
                yield buf, node.surface, pos
            buf = ""
        node = node.next
    if buf:
        yield buf, "", ""


def japanese_compounds(text: str) -> list[str]:
    """Runs of nouns, noun prefixes and noun suffixes (MeCab, UniDic), as written."""
    return [c for c, _, _ in _compound_runs(text)]


def japanese_topics(text: str) -> list[str]:
    """Compounds that a Japanese question makes its topic (followed by は, って or とは: "駐車場は何時まで…")."""
    return [c for c, after, pos in _compound_runs(text) if after in ("は", "って", "とは") and pos.startswith("助詞")]


def japanese_conditions(question: str) -> list[Term]:
    """The conditions a Japanese question names: compounds ending like a disease name, or with 性 inside; a
    longer compound is cut after its disease name ("乳がん検診" → "乳がん")."""
    out = []
    for c in japanese_compounds(question):
        if _KATAKANA.fullmatch(c) and not _ONOMATOPOEIA.fullmatch(c):
            out.append(Term(c, (c,), "name"))  # a name in katakana: a drug, a disease, a device
            continue
        name = ""
        for k in range(len(c), 1, -1):
            if c[:k].endswith(_JA_DISEASE_END):
                name = c[:k]
                break
        m = _JA_HYPER_HYPO.match(c)
        if not name and m:
            name = m.group(0)  # too high or too low a measure is a condition ("低血圧", "高血糖")
        pain = _JA_NAMED_PAIN.match(c)
        if not name and pain:
            name = pain.group(0)  # a named pain is a disorder ("片頭痛", "三叉神経痛"); a headache alone is a symptom
        if not name and "性" in c[1:-1]:
            name = c
        if name and name not in _JA_GENERIC and len(name) >= 2:
            out.append(Term(name, (name,)))
        elif c.endswith(_JA_PROCEDURE_END) and not c.startswith(_JA_PROCEDURE_END) and len(c) >= 4:
            out.append(Term(c, (c,), "procedure"))  # a test or procedure of one organ or kind ("大腸カメラ")
    return out


def conditions(question: str, lang: Lang, rare: Sequence[str] = (), site_text: str = "") -> list[Term]:
    """The conditions (and names of drugs, tests, devices) a question names."""
    if lang == "ja":
        found = japanese_conditions(question)
        return found + listed_conditions(question, site_text, found)
    found = english_conditions(question, rare)
    return found + other_names(question, site_text, found)


_PAREN = re.compile(r"([A-Za-z][A-Za-z' -]{2,40}?)\s*\(([a-z][a-z' -]{2,30})\)")


@lru_cache(maxsize=8)
def _lay_names(site_text: str) -> frozenset[str]:
    """Words the site gives in parentheses after a condition's name, or the other way round ("haemorrhoids
    (piles)"): other names of a condition, as normalised words."""
    out = set()
    for m in _PAREN.finditer(site_text):
        left, right = m.group(1).split()[-3:], m.group(2).split()
        for name, other in ((left, right), (right, left)):
            if len(other) == 1 and any(english_conditions(" ".join(name[k:])) for k in range(len(name))):
                out.add(norm(other[0]))
    return frozenset(out)


def other_names(question: str, site_text: str, found: Sequence[Term]) -> list[Term]:
    """English words of the question that the site gives as another name of a condition ("piles")."""
    lay = _lay_names(site_text)
    taken = {s for t in found for s in t.words}
    return [Term(w, (s,)) for w, s, _ in _english_words(question) if norm(w) in lay and s not in taken]


def listed_conditions(question: str, site_text: str, found: Sequence[Term]) -> list[Term]:
    """Japanese compounds the site lists beside a disease name ("変形性関節症、痛風、乾癬性関節炎"): named like a
    disease where the site enumerates diseases, so a disease name though no suffix shows it ("痛風")."""
    out: list[Term] = []
    for c in japanese_compounds(question):
        if len(c) < 2 or not _KANJI.fullmatch(c) or any(c in t.text or t.text in c for t in found):
            continue
        for m in re.finditer(re.escape(c), site_text):
            before = site_text[max(0, m.start() - 40):m.start()].rstrip("、・や，, ")
            left = re.findall(r"[^、・や，,。\n（）()]+$", before)
            right = re.findall(r"^[^、・や，,。\n（）()]+", site_text[m.end():m.end() + 40].lstrip("、・や，, "))
            sep_left = site_text[max(0, m.start() - 1):m.start()] in ("、", "・")
            sep_right = site_text[m.end():m.end() + 1] in ("、", "・")
            neighbours = ([left[0]] if left and sep_left else []) + ([right[0]] if right and sep_right else [])
            # a neighbour of a list is a disease name and nothing more ("乾癬性関節炎", "乾癬性関節炎など")
            if any(len(x) <= 14 and any(re.sub(r"(?:など|等)$", "", x) == t.text for t in japanese_conditions(x))
                   for x in neighbours):
                out.append(Term(c, (c,)))
                break
    return out


def foreign_names(question: str, lang: Lang, site_text: str) -> list[Term]:
    """Names the site never writes: Japanese words in katakana (three or more: "インフルエンザ", "グリオーマ"),
    a loanword naming a disease, drug or test of another subject; in English, abbreviations ("HPV", "PSA")."""
    if lang != "ja":
        shouting = sum(c.isupper() for c in question) > 0.5 * max(1, sum(c.isalpha() for c in question))
        return [] if shouting else [Term(m.group(0), (m.group(0).lower(),), "name")
                                    for m in _ABBREVIATION.finditer(question) if m.group(0) not in site_text]
    return [Term(m.group(0), (m.group(0),), "name") for m in _KATAKANA.finditer(question)
            if m.group(0) not in site_text and not _ONOMATOPOEIA.fullmatch(m.group(0))]


def verdicts(question: str, lang: Lang, index: PassageIndex, focus: Sequence[str],
             references: Sequence[Passage]) -> list[TermVerdict]:
    """What the site says of every condition the question names (see the module's docstring)."""
    from dkg.web.retrieve import words
    from dkg.web.scope import MENTION_SHARE, MIN_MENTIONS, definitional, subject_variants

    limit = max(MIN_MENTIONS, MENTION_SHARE * len(index.passages))
    subject_words = set(index.site_subject)
    # a name is widened to the word before it ("psoriatic arthritis"), but never away from the site's own subject
    # ("a proper migraine" on a migraine site is migraine)
    rare = [t for t in focus if index.df.get(t, 0) < limit]
    about = max(ABOUT_MENTIONS, ABOUT_SHARE * len(index.passages))
    out = []
    position = {id(p): k for k, p in enumerate(index.passages)}
    ref_ids = [position[id(p)] for p in references if id(p) in position]
    foreign = foreign_names(question, lang, index.site_text)
    for t in foreign:
        # a brand name the site does not use, asked about the site's own subject ("ワーファリン … 骨のために"), is
        # answered from that subject's pages; asked about anything else it names another subject
        relates = any(s in question.replace(t.text, "") for s in index.site_subject)
        out.append(TermVerdict(t.text, "related" if relates else "absent", "name", 0, False))
    for term in conditions(question, lang, rare, index.site_text):
        if term in foreign:
            continue
        if term.widened and term.words[0] not in subject_words and set(term.words[1:]) <= subject_words:
            term = Term(term.text.split(" ", 1)[1], term.words[1:], term.kind, term.phrase)
        if lang == "ja":
            name = term.words[0]
            subject = any(name in s or (s in name and len(s) >= 2 and not _another_disease(name, s))
                          for s in index.site_subject)
            n = sum(1 for p in index.passages if name in p.text)
            heading = any(name in h and not any(x in h.replace(name, "") for x in index.site_subject)
                          for h in index.raw_headings)
            holders = [s for k in ref_ids for s, _ in index.sentence_words(k) if name in s]
            others = [t for t in focus if t not in name and name not in t]
            relates = bool(holders) and any(s in question.replace(name, "") for s in index.site_subject)

            def holds(sentence: str, t: str) -> bool:
                return t in sentence
        else:
            variants = subject_variants(question, list(term.words), index.aliases)
            subject = bool(subject_words) and any(set(v) <= subject_words for v in variants)
            n = index.mentions(variants, "en")
            # a heading names it as its subject, not beside the site's ("Asthma and COPD")
            heading = any(_run(v, h) and not (set(h) - set(v)) & subject_words
                          for v in variants for h in index.section_headings)
            needles = [" " + " ".join(v) + " " for v in variants]
            holders = [s for k in ref_ids for s, text in index.sentence_words(k) if any(x in text for x in needles)]
            own = set(term.words) | set(term.phrase) | index.site_words | _qualifier_stems()
            others = [t for t in focus if t not in own]
            relates = bool(holders) and bool(set(focus) & subject_words - set(term.words))

            def holds(sentence: str, t: str) -> bool:
                return t in words(sentence, "en")
        verdict: Verdict
        if subject:
            verdict = "subject"
        elif n >= about or heading:
            verdict = "about"
        elif term.kind == "procedure" and n == 0 and _common_modifier(term, index):
            verdict = "partial"  # the site names the test otherwise ("関節エコー" for "関節のエコー検査"): the
            # question's words decide
        elif n == 0 and not holders:
            verdict = "absent"
        elif term.kind == "name" and definitional(question, lang):
            verdict = "mentioned"  # a site that names a drug or device can say what it is
        elif relates or _shares(holders, others, index, holds) or (n and _kind_of_subject(term, lang, index)) or \
                (term.kind == "name" and any(holds(s, t) for s in holders for t in others
                                            if 0 < index.df.get(t, 0) < NAME_SHARE * len(index.passages))) or \
                (term.kind == "name" and n > 0 and all(index.df.get(t, 0) > 0 for t in others)):
            verdict = "mentioned"
        else:
            verdict = "passing"
        out.append(TermVerdict(term.text, verdict, term.kind, n, heading))
    # a name that is not a condition, asked about together with the site's subject, is asked about the subject
    # ("リウマチに効くサプリ")
    if any(v.verdict == "subject" for v in out):
        out = [TermVerdict(v.term, "related", v.kind, v.passages, v.heading)
               if v.kind != "condition" and v.verdict == "passing" else v for v in out]
    return out


ABOUT_MENTIONS = 4
ABOUT_SHARE = 0.02
"""A name that no heading gives is what the site is about when this many of its passages (at least
``ABOUT_MENTIONS``) name it; fewer name it in passing, or beside what the question asks."""
NAME_SHARE = 0.25
"""A word in fewer than this share of the site's passages is specific: a drug's sentence that holds one of the
question's specific words is what the question asks about ("a biologic such as mepolizumab")."""
SHARED_WEIGHT = 0.5
"""Share of the question's other subject words (by their weight on the site, IDF) that one sentence naming a
condition mentioned in passing must hold for the question to be about what that sentence says."""


@lru_cache(maxsize=1)
def _qualifier_stems() -> frozenset[str]:
    return frozenset(t for w in _QUALIFIERS for t in english_tokens(w))


def _another_disease(name: str, subject: str) -> bool:
    """A Japanese disease name that holds the site's subject but names another disease: an organ before it
    ("肺高血圧症"), pregnancy before it ("妊娠高血圧症候群"), or a syndrome after it."""
    before, _, after = name.partition(subject)
    return before in _JA_ORGANS or before.startswith("妊娠") or after.startswith("症候群")


def _common_modifier(term: Term, index: PassageIndex) -> bool:
    """A test the site names otherwise: its first part stands beside a word of tests on the site ("関節エコー
    （超音波検査）" for "エコー検査", "DXA法" for "DXA検査"); "大腸" in "大腸がん" does not make "大腸カメラ" the
    site's."""
    head = next(e for e in _JA_PROCEDURE_END if term.text.endswith(e))
    modifier = term.text[: -len(head)]
    for m in re.finditer(re.escape(modifier), index.site_text):
        around = index.site_text[max(0, m.start() - 8):m.end() + 8]
        if any(x in around for x in (*_JA_PROCEDURE_END, "法", "測定", "撮影")):
            return True
    return False


def _shares(holders: Sequence[str], others: Sequence[str], index: PassageIndex,
            holds: Callable[[str, str], bool]) -> bool:
    """One sentence naming the condition holds ``SHARED_WEIGHT`` of the question's other words (by IDF)."""
    total = sum(index.idf(t) for t in others)
    if not total:
        return False
    return any(sum(index.idf(t) for t in others if holds(s, t)) / total >= SHARED_WEIGHT for s in holders)


def _kind_of_subject(term: Term, lang: Lang, index: PassageIndex) -> bool:
    """The name is a kind of the site's own subject ("occupational asthma" on an asthma site, "閉経後骨粗鬆症")."""
    if lang == "ja":
        return any(s in term.words[0] and s != term.words[0] for s in index.site_subject if len(s) >= 2)
    if not index.site_subject or len(term.words) < 2 or not set(term.words) & set(index.site_subject):
        return False
    # the other words say which kind or what event ("occupational", "exercise-induced", "attack"), not another
    # organ or disease ("breast cancer" on a bowel cancer site, "irritable bowel syndrome")
    rest = [w.lower() for w, s in zip(term.text.split(), term.words, strict=False) if s not in index.site_subject]
    return all(norm(w) in _NOT_A_NAME or w in _QUALIFIERS or (_ADJECTIVE.match(w) and w not in _HEADS)
               for w in rest) and not any(norm(w) in _HEADS or w in _HEADS for w in term.text.lower().split())


def _run(needle: Sequence[str], hay: Sequence[str]) -> bool:
    k = len(needle)
    return any(list(hay[i:i + k]) == list(needle) for i in range(len(hay) - k + 1))


def together(verdicts_: Sequence[TermVerdict], found: Retrieval, lang: Lang) -> bool:
    """One passage of the references names every thing the question names (the site's own subject aside):
    "leukemia … nephrectomy" are each a page's subject, and no page speaks of both."""
    from dkg.web.retrieve import words

    named = [v.term for v in verdicts_ if v.verdict != "subject"]
    if len(named) < 2:
        return True
    if lang == "ja":
        return any(all(n in p.text for n in named) for p, _ in found.passages)
    wanted = [set(words(n, "en")) for n in named]
    return any(all(w <= have for w in wanted) for have in found.word_sets)
