"""Patient facts stated in a question, found by rules (the entity tagger in front of the model).

The lexicon is the one the dataset is phrased with (``conf/qa.yaml``) plus the constraint
extractor's keyword rules (``conf/constraints.yaml``), so a new guideline's words are added in one
place. The tagger's output is given to the text-to-Cypher model next to the question, and the
literal values of the Cypher the model writes are verified against it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from dkg import rx as re
from dkg.constraints.vocabulary import load_vocabulary
from dkg.graph.model import VersionState
from dkg.qa.config import QAConfig, apply_implications, current_config, load_config, number_words, treatment_phrase

_DIGITS_WORDS = {number_words(n): n for n in range(0, 120)}
_WORD_NUM = re.compile(r"\b(" + "|".join(sorted((re.escape(w) for w in _DIGITS_WORDS), key=len, reverse=True))
                       + r")\b")

_AGE = [
    r"(\d{1,3})\s*(?:-|\s)?\s*(?:years?|yrs?|y)\s*(?:-|\s)?\s*old",
    r"(\d{1,3})\s*(?:y/o|yo|y\.o\.|yr old|yrs old)\b",
    r"\baged?\s*(?:of\s*|is\s*)?(\d{1,3})\b",
    r"(\d{1,3})\s*years? of age",
    r"\bwho is (\d{1,3})\b(?!\s*(?:kg|cm|%|months?))",
    r"\bat (\d{1,3})\s*(?:years?|yrs?)\b",
    r"(\d{1,3})\s*(?:-|\s)?year\b",
    r"\b(\d{1,3})\s*(?:m|f|male|female)\b(?!\w)",
    r"\b(?:(?:m|f),?\s+|(?:male|female|man|woman),?\s*)(\d{1,3})\b(?!\s*(?:kg|cm|%|months?|mg|g/dl|°))",  # not "M0"
    r"\b(?:father|mother|dad|mum|mom|son|daughter|husband|wife|he|she|boy|girl|man|woman|patient|pt|"
    r"grandfather|grandmother|brother|sister|friend)\s+(?:is|was|turned)\s+(\d{1,3})\b"
    r"(?!\s*(?:kg|cm|%|months?|mg|weeks?|days?))",
]
_ECOG = [r"\b(?:ecog|who|zubrod)(?:\s*(?:ps|performance status))?\s*(?:of\s*|score\s*|=\s*|:\s*)?(\d)\b",
         r"\bperformance status\s*(?:of\s*|score\s*|=\s*|:\s*)?(\d)\b", r"\bps\s*(\d)\b"]
_TTR = [r"(\d{1,3})\s*months?\s*(?:after|from|since)\s*(?:the\s*)?(?:initial\s*|first\s*)?"
        r"(?:diagnosis|dx|cr1|remission)"]


@dataclass
class Tagged:
    """What the rules found in a question."""

    facts: dict[str, Any] = field(default_factory=dict)
    guidelines: list[str] = field(default_factory=list)
    other_disease: str | None = None
    treatment: str | None = None
    """A treatment of a loaded guideline the question names (see :class:`Linker`)."""
    page: str | None = None
    spans: list[tuple[int, int]] = field(default_factory=list)


def normalise(text: str) -> str:
    t = text.lower()
    t = t.replace("\u2013", "-").replace("\u2014", "-").replace("\u2212", "-").replace("\u2011", "-")
    t = t.replace("≥", ">=").replace("≤", "<=").replace("’", "'")
    t = _WORD_NUM.sub(lambda m: str(_DIGITS_WORDS[m.group(1)]), t)
    # a TNM stage written in one word ("cT3bN0M0") is three categories
    t = _GLUED_T.sub(r"\1 ", t)
    t = _GLUED_N.sub(r"\1 ", t)
    return re.sub(r"\s+", " ", t)


_GLUED_T = re.compile(r"(?<![\w-])((?:yp|p|c)?t(?:[0-4][a-d]?|is|x))(?=(?:yp|p|c)?n(?:[0-3][a-c]?|x))")
_GLUED_N = re.compile(r"(?<![\w-])((?:yp|p|c)?n(?:[0-3][a-c]?|x))(?=(?:p|c)?m(?:[01][a-d]?|x)(?![\w-]))")


def _phrase_regex(phrase: str) -> str:
    """Case-folded phrase; inner spaces and hyphens are interchangeable; a trailing ``-``/``+`` is literal."""
    low = phrase.lower()
    tail = ""
    while low and not low[-1].isalnum() and low[-1] not in ")":
        tail = low[-1] + tail
        low = low[:-1]
    p = re.escape(low).replace(r"\ ", r"[\s-]+").replace(r"\-", r"[\s-]*")
    p += re.escape(tail)
    return rf"(?<![\w+]){p}(?![\w+])"


@lru_cache(maxsize=2)
def _lexicon(conf_id: int = 0) -> list[tuple[re.Pattern[str], str, str]]:
    conf = load_config()
    rules: list[tuple[str, str, str]] = []
    for attr, spec in conf.facts.items():
        if "clinical" in spec:  # numeric attributes are handled by the patterns above
            continue
        for value, forms in spec.items():
            for phrase in forms.get("clinical", []) + forms.get("lay", []) + forms.get("synonyms", []):
                rules.append((phrase, attr, str(value)))
    rules.sort(key=lambda r: -len(r[0]))
    return [(re.compile(_phrase_regex(p)), a, v) for p, a, v in rules]


_HEAD = re.compile(r"\w+")


class _NameIndex:
    """The guidelines' names by the word each begins with.

    A name can only be found where one of the question's words begins with the name's first word (the
    pattern starts after a non-word character and spells that word literally), so a question is searched
    for those names alone, not for every loaded guideline's, and the patterns are compiled once per
    configuration. The codes come out in the configuration's order, as a search for every name gives them.
    """

    def __init__(self, diseases: dict[str, list[str]]) -> None:
        self.by_head: dict[str, list[tuple[int, re.Pattern[str], str]]] = {}
        self.always: list[tuple[int, re.Pattern[str], str]] = []
        rank = 0
        for code, names in diseases.items():
            for n in sorted(names, key=len, reverse=True):
                head = _HEAD.match(n.lower())
                entry = (rank, re.compile(_phrase_regex(n)), code)
                (self.by_head.setdefault(head.group(0), []) if head else self.always).append(entry)
                rank += 1

    def codes(self, text: str) -> list[str]:
        seen: dict[int, tuple[re.Pattern[str], str]] = {r: (p, c) for r, p, c in self.always}
        for word in _HEAD.findall(text):
            for k in range(1, len(word) + 1):
                for r, p, c in self.by_head.get(word[:k], ()):
                    seen[r] = (p, c)
        out: list[str] = []
        for _, (pat, code) in sorted(seen.items()):
            if code not in out and pat.search(text):
                out.append(code)
        return out


_NAME_INDEXES: dict[int, tuple[QAConfig, _NameIndex]] = {}
_NAME_INDEXES_LOCK = threading.Lock()  # the API serves questions from several threads


def _names_index(conf: QAConfig) -> _NameIndex:
    """The index of ``conf``'s names, kept while ``conf`` is one of the last few configurations used."""
    with _NAME_INDEXES_LOCK:
        hit = _NAME_INDEXES.get(id(conf))
        if hit is None or hit[0] is not conf:
            if len(_NAME_INDEXES) >= 8:
                _NAME_INDEXES.pop(next(iter(_NAME_INDEXES)))
            hit = _NAME_INDEXES[id(conf)] = (conf, _NameIndex(conf.diseases))
        return hit[1]


_DISEASE_HEAD = re.compile(r"\b(?:cancer|carcinoma|lymphoma|leuka?emia|melanoma|myeloma|glioma|glioblastoma|"
                           r"mesothelioma|tumou?r|neoplasm|sarcoma)\b")
_NOT_DISEASE_WORDS = {"a", "an", "the", "with", "has", "have", "of", "for", "and", "my", "his", "her", "is", "in",
                      "to", "treat", "treatment", "therapy", "patient", "pt", "what", "how", "about", "on", "stage",
                      "metastatic", "advanced", "early", "recurrent", "relapsed", "newly", "diagnosed", "from"}


def _disease_by_head(text: str, free: Callable[[int, int], bool]) -> str | None:
    """A disease that neither a guideline's name nor ``other_diseases`` names: the first disease head word no rule
    has read ("cancer", "lymphoma") with up to three words before it that no rule has read either."""
    for m in _DISEASE_HEAD.finditer(text):
        if not free(m.start(), m.end()):
            continue
        words: list[str] = []
        for w in reversed(list(re.finditer(r"[a-z0-9+-]+", text[max(0, m.start() - 60):m.start()]))):
            a = max(0, m.start() - 60) + w.start()
            if len(words) >= 3 or not free(a, a + len(w.group(0))) or w.group(0) in _NOT_DISEASE_WORDS:
                break
            words.insert(0, w.group(0))
        return " ".join([*words, m.group(0)])
    return None


def tag(question: str, conf: QAConfig | None = None) -> Tagged:
    """Facts, guideline mentions and any other disease named in ``question``."""
    conf = conf or current_config()
    text = normalise(question)
    out = Tagged()
    taken = [False] * len(text)

    def free(a: int, b: int) -> bool:
        return not any(taken[a:b])

    def take(a: int, b: int) -> None:
        for i in range(a, b):
            taken[i] = True
        out.spans.append((a, b))

    out.guidelines.extend(_names_index(conf).codes(text))  # not consumed: "osteosarcoma" is a fact too
    for pats, attr, lo, hi in ((_AGE, "age", 0, 120), (_ECOG, "performance_status", 0, 5),
                               (_TTR, "time_to_relapse", 0, 600)):
        for p in pats:
            for m in re.finditer(p, text):
                if attr in out.facts or not free(m.start(1), m.end(1)):
                    continue
                n = int(m.group(1))
                if lo <= n <= hi:
                    out.facts[attr] = n
                    take(m.start(), m.end())
    for pat, attr, value in _lexicon():
        for m in pat.finditer(text):
            if free(m.start(), m.end()):
                take(m.start(), m.end())
                out.facts.setdefault(attr, value)
    vocab = load_vocabulary()
    for rule in sorted(vocab.keywords, key=lambda r: -len(r.pattern.pattern)):
        for m in rule.pattern.finditer(text):
            if free(m.start(), m.end()):
                take(m.start(), m.end())
                before = text[max(0, m.start() - 24):m.start()]
                negated = rule.negated and re.search(r"\b(?:no|not|without|free of|absence of|never|none)\b[^,;.]*$",
                                                     before)
                out.facts.setdefault(rule.attr, rule.negated if negated and rule.negated else rule.value)
    for other in sorted(conf.other_diseases, key=len, reverse=True):
        hit = re.search(_phrase_regex(other), text)
        if hit and free(hit.start(), hit.end()):
            out.other_disease = other.lower()
            take(hit.start(), hit.end())
            break
    if out.other_disease is None and not out.guidelines:
        out.other_disease = _disease_by_head(text, free)
    for code, words in conf.disease_words.items():
        if code not in out.guidelines and any(re.search(_phrase_regex(w), text) for w in words):
            out.guidelines.append(code)
    out.facts = apply_implications(out.facts, out.guidelines, conf)
    return out


_PAGE = re.compile(r"\b([A-Z][A-Z0-9]{1,7}-\d{1,3})\b")


def squash(text: str) -> str:
    """Lower case, numbers as digits, spaces and hyphens collapsed (for phrase comparisons)."""
    return re.sub(r"[\s\-]+", " ", normalise(text)).strip()


_STOP = {"or", "and", "the", "a", "an", "of", "with", "for", "to", "in", "if", "by", "then", "on", "+", "±"}


class Linker:
    """Links a question to a treatment box of the loaded guidelines (exact, else by word overlap)."""

    def __init__(self, phrases: set[str]) -> None:
        self.phrases = {squash(p): p.lower() for p in phrases if len(p) >= 4}
        self._words = {p: {w for w in p.split() if w not in _STOP} for p in self.phrases}

    def link(self, question: str) -> str | None:
        q = squash(question)
        exact = [p for p in self.phrases if re.search(r"(?<![\w])" + re.escape(p) + r"(?![\w])", q)]
        if exact:
            return self.phrases[max(exact, key=len)]
        qw = set(q.split())
        best: tuple[float, int, str] | None = None
        for p, words in self._words.items():
            if len(words) < 2:
                continue
            share = len(words & qw) / len(words)
            if share >= 0.75 and (best is None or (share, len(words)) > best[:2]):
                best = (share, len(words), p)
        return self.phrases[best[2]] if best else None


def tag_all(question: str, linker: Linker | None) -> Tagged:
    """:func:`tag`, plus the linked treatment and a page label the question names."""
    treatment = linker.link(question) if linker is not None else None
    rest = question
    if treatment:  # a treatment's words ("relapsed/refractory") are not patient facts
        pat = re.escape(treatment).replace(r"\ ", r"[\s-]+").replace(r"\-", r"[\s-]*")
        rest = re.sub(pat, " ", question, flags=re.IGNORECASE)
    t = tag(rest)
    t.treatment = treatment
    page = _PAGE.search(question)
    if page:
        t.page = page.group(1)
    return t


_ENGLISH = re.compile(r"\b(the|a|an|is|are|what|which|who|how|for|with|of|should|next|patient|pt|and|to|in|"
                      r"treatment|therapy|recommended|does|do|can|when|after|per|this|that|post|pre|criteria|chart|"
                      r"guideline|pathway|or|on|not|no|be|if|why|from|by|at|any|get|gets|give|given|indicated|"
                      r"eligible|candidate|options?|ok|okay|yes)\b", re.IGNORECASE)


def looks_english(question: str) -> bool:
    """False for questions in another script, or with no English word at all."""
    letters = [c for c in question if c.isalpha()]
    if not letters:
        return False
    latin = sum(1 for c in letters if c.isascii())
    return latin / len(letters) > 0.8 and bool(_ENGLISH.search(question))


def linker_for(states: Iterable[VersionState]) -> Linker:
    """A treatment linker over every box without constraints of the given guideline versions."""
    phrases = set()
    for st in states:
        for b in st.boxes.values():
            if b.constraints in ("", "[]"):
                p = treatment_phrase(b.textPlain)
                if len(p) >= 4:
                    phrases.add(p.lower())
    return Linker(phrases)
