"""The chatbot's ``best`` mode: passages, BM25, the site's own aliases, and a scope check.

The ``protocol`` mode (``dkg.web.rag``) is the paper's method and stays as it is. This mode is free
to use what retrieval work shows to help on guideline sites:

* **Passages, not pages.** Every page is cut at its headings (``Page.sections``) and each section
  into runs of whole sentences of at most ``PASSAGE_CHARS`` characters; a passage carries its page's
  URL and title and the heading path above it ("Treatment › Stage I"), whose words count as its own.
* **BM25** (Okapi, k1 = 1.2, b = 0.75) over the processed words (stems, or MeCab nouns) of the
  passages, with the question's own words as the query (not two keywords).
* **Aliases from the site's own text**: abbreviations defined in parentheses ("acute lymphoblastic
  leukemia (ALL)") and names given with "also called", "formerly called", "also known as"… A
  question that uses one side of such a pair is searched with the words of the other as well, so
  an old disease name the site mentions once finds the pages written under the new name.
* **References** are the best passages, in rank order, whose score is at least ``RELATIVE_FLOOR``
  of the best one, until their text fills the budget (``rag_max_chars``, 4,096): each reference is
  a page (URL and title) with the heading of its best passage.

Whether the passages found are about the question is decided in ``dkg.web.scope`` (and ``dkg.web.entities``);
the answer's sentences are chosen in ``dkg.web.extract``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from dkg.web.crawl import Page, Section
from dkg.web.text import Lang, collapse, detect_language, english_tokens, japanese_nouns

PASSAGE_CHARS = 900
K1 = 1.2
B = 0.75
RELATIVE_FLOOR = 0.35
"""A reference must score at least this share of the best passage's score."""


@dataclass(frozen=True)
class Passage:
    url: str
    title: str
    heading: str
    text: str
    language: str


_ABBREVIATIONS = re.compile(r"(?:\b(?:[A-Z]\.){1,3}[A-Z]?|\b(?:e\.g|i\.e|et al|vs|approx|etc|Dr|Mr|Mrs|Ms|No|Fig|"
                            r"cf|ca|resp|incl|min|max|Inc|Jr|Sr|St)\.)$")
"""Text ending like this does not end a sentence ("the U.S.", "e.g.", "Smith et al.")."""


def sentences(text: str) -> list[str]:
    """Sentences of an English or Japanese text: split after . ! ? (not after "U.S.", "e.g.", "et al.", an
    initial) and after 。！？, and at line breaks."""
    out: list[str] = []
    for line in re.split(r"\n+", text):
        parts = re.split(r"(?<=[.!?])\s+(?=[\"'“(\[]?[A-Z0-9])|(?<=[。！？])", line)
        buf = ""
        for part in parts:
            buf = f"{buf} {part}" if buf else part
            if _ABBREVIATIONS.search(buf.rstrip()) is None:
                if len(collapse(buf)) > 2:
                    out.append(collapse(buf))
                buf = ""
        if buf and len(collapse(buf)) > 2:
            out.append(collapse(buf))
    return out


def words(text: str, lang: str) -> list[str]:
    """The processed words: MeCab nouns (ja) or stems without stop words (en)."""
    return japanese_nouns(text) if lang == "ja" else english_tokens(text)


def passages_of(page: Page, max_chars: int = PASSAGE_CHARS) -> list[Passage]:
    """A page's passages: each section's sentences packed in order up to ``max_chars``."""
    sections = page.sections or [Section(heading="", text=page.text)]
    out = []
    for sec in sections:
        buf: list[str] = []
        size = 0
        for s in sentences(sec.text):
            if buf and size + len(s) + 1 > max_chars:
                out.append(Passage(page.url, page.title, sec.heading, " ".join(buf), page.language))
                buf, size = [], 0
            buf.append(s)
            size += len(s) + 1
        if buf:
            out.append(Passage(page.url, page.title, sec.heading, " ".join(buf), page.language))
    return out


# --- aliases -------------------------------------------------------------------------------------

_ABBREV = re.compile(r"([A-Za-z][\w'-]*(?:[ -][\w'-]+){0,7})\s*[(\[]([A-Z][A-Za-z0-9+-]{1,9})[)\]]")
_CALLED = re.compile(r"([A-Za-z][\w'-]*(?: [\w'-]+){0,7})\s*[(\[,]\s*(?:which is |that is |was |is )?"
                     r"(?:also|formerly|previously|sometimes|once|often|now)\s+(?:called|known as|named|termed)\s+"
                     r"(?:an? |the )?([^)\],;.:]+)")
_ABBREV_TAIL = re.compile(r"[(\[][A-Z][A-Za-z0-9+-]{1,9}[)\]]")
_CALLED_WORDS = ("called", "known as", "named", "termed")
_LOOKBACK = 400
"""How far before an abbreviation's parenthesis its name may start (eight words)."""
_CUT = frozenset({"and", "or", "of", "for", "with", "the", "a", "an", "in", "on", "to", "is", "are", "as", "by",
                  "from", "that", "which", "this", "these", "than", "at", "its", "their", "about", "includes",
                  "include", "including", "called"})


def _tail_phrase(words: list[str], limit: int = 5) -> list[str]:
    """The name a parenthesis follows: the words after the last function word, at most ``limit``."""
    out: list[str] = []
    for w in reversed(words):
        if w.lower() in _CUT or len(out) == limit:
            break
        out.append(w)
    return list(reversed(out))


def _initials_match(words: list[str], abbrev: str) -> list[str] | None:
    """The shortest tail of ``words`` whose initials spell ``abbrev`` (function words inside may be skipped,
    a hyphenated word may give one initial or one per part)."""
    letters = "".join(c.lower() for c in abbrev if c.isalpha())
    if len(letters) < 2:
        return None
    for k in range(1, min(len(words), 8) + 1):
        cand = words[-k:]
        if cand[0].lower() in _CUT:
            continue
        content = [w for w in cand if w.lower() not in _CUT]
        plain = "".join(w[0].lower() for w in content)
        parts = "".join(p[0].lower() for w in content for p in w.split("-") if p)
        if letters in (plain, parts):
            return cand
    return None


def _abbreviations(text: str) -> Iterator[re.Match[str]]:
    """``_ABBREV``'s matches, each searched only just before a parenthesised abbreviation (the pattern tried at
    every word of a long page costs milliseconds; a site has many thousands of pages)."""
    last = 0
    for tail in _ABBREV_TAIL.finditer(text):
        if tail.start() < last:
            continue
        m = _ABBREV.search(text, max(last, tail.start() - _LOOKBACK), tail.end())
        if m is not None and m.end() == tail.end():
            last = m.end()
            yield m


def harvest_aliases(texts: Iterable[str]) -> dict[str, frozenset[tuple[str, ...]]]:
    """Alias pairs a site defines, as processed-word keys to the other names (their processed words).

    Keys are the alias's processed words joined by spaces; an abbreviation is also kept under its
    upper-case form (``"ALL"``), since English processing drops it as a stop word.
    """
    pairs: dict[str, set[tuple[str, ...]]] = {}

    def abbreviation(x: str) -> bool:
        return re.fullmatch(r"[A-Z][A-Za-z0-9+-]{1,9}", x) is not None and sum(c.isupper() for c in x) >= 2

    def add(a: str, b: str) -> None:
        ta, tb = english_tokens(a), english_tokens(b)
        if not tb or abbreviation(b):  # a name is never searched as its stemmed abbreviation ("UPS" → "up")
            return
        # an abbreviation is a key only as written: "UPS", never the word "up"
        keys = [a] if abbreviation(a) else [" ".join(ta)] if ta else []
        for k in keys:
            if k and k != " ".join(tb) and tb:
                pairs.setdefault(k, set()).add(tuple(tb))

    for text in texts:
        for m in _abbreviations(text):
            words = m.group(1).split()
            name = _initials_match(words, m.group(2))
            if name:
                add(m.group(2), " ".join(name))
                add(" ".join(name), m.group(2))
        plain = re.sub(r"\s*[(\[][A-Z][A-Za-z0-9+-]{1,9}[)\]]", "", text)
        # the pattern is tried at every word; most pages have none of its verbs
        for m in (_CALLED.finditer(plain) if any(w in plain for w in _CALLED_WORDS) else ()):
            x = _tail_phrase(m.group(1).split())
            y = [w for w in m.group(2).split()[:6]]
            y = y[: next((i for i, w in enumerate(y) if w.lower() in _CUT - {"of"}), len(y))]
            tx, ty = english_tokens(" ".join(x)), english_tokens(" ".join(y))
            # two names of one thing: each of two words or more, neither inside the other
            if len(tx) >= 2 and len(ty) >= 2 and not set(tx) <= set(ty) and not set(ty) <= set(tx):
                add(" ".join(y), " ".join(x))
                add(" ".join(x), " ".join(y))
    return {k: frozenset(v) for k, v in pairs.items()}


def expand(question: str, qtokens: list[str], aliases: dict[str, frozenset[tuple[str, ...]]],
           ) -> list[tuple[str, ...]]:
    """The other names (processed words) of every alias the question uses (its words in order, or an
    abbreviation as written)."""
    extra: list[tuple[str, ...]] = []
    joined = " " + " ".join(qtokens) + " "
    shouting = sum(c.isupper() for c in question) > 0.5 * max(1, sum(c.isalpha() for c in question))
    for key, other in aliases.items():
        if key == key.lower():  # processed words of a name, in order
            hit = f" {key} " in joined
        else:
            hit = not shouting and re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", question) is not None
        if hit:
            extra.extend(sorted(other))
    return list(dict.fromkeys(extra))


def _spell_out(text: str, aliases: dict[str, frozenset[tuple[str, ...]]]) -> str:
    """Abbreviations the site defines replaced by their names plus themselves ("ALL" → "ALL acute…")."""
    def name(m: re.Match[str]) -> str:
        others = aliases.get(m.group(0))
        return m.group(0) + " " + " ".join(sorted(others)[0]) if others else m.group(0)
    return re.sub(r"(?<![\w-])[A-Z][A-Za-z0-9+-]{1,9}(?![\w-])", name, text)


CONTENT_SIMILARITY = 0.3
"""A page the clinical-word rule turned down still counts as guideline text when its words are at least this
share of the median medical page's similarity to the site's medical pages."""


def content_pages(pages: Sequence[Page]) -> list[Page]:
    """The pages to search: the medical ones, and pages the fixed clinical-word list turned down for too
    few of its words (not for being short or a link list) whose vocabulary is the site's own.

    The protocol's rule counts words of a fixed list, written for cancer sites; a guideline on pain or
    opioids uses other words ("taper", "Veteran"). Each page is compared (TF-IDF cosine) with the centroid
    of the site's medical pages; a turned-down page is kept when its similarity is at least
    ``CONTENT_SIMILARITY`` of the median medical page's (an "about the society" page is far below).
    """
    medical = [p for p in pages if p.medical]
    doubtful = [p for p in pages if not p.medical and p.reason.startswith("few clinical terms")]
    if len(medical) < 3 or not doubtful:
        return medical
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = [" ".join(words(p.text, p.language)) for p in medical + doubtful]
    x = TfidfVectorizer(sublinear_tf=True).fit_transform(docs)
    centroid = np.asarray(x[: len(medical)].mean(axis=0)).ravel()
    norm = float(np.linalg.norm(centroid))
    if norm == 0:
        return medical
    sims = np.asarray(x @ (centroid / norm)).ravel()
    floor = CONTENT_SIMILARITY * float(np.median(sims[: len(medical)]))
    keep = {p.url for p, v in zip(doubtful, sims[len(medical):], strict=True) if v >= floor}
    return [p for p in pages if p.medical or p.url in keep]


# --- the index -----------------------------------------------------------------------------------

@dataclass
class PassageIndex:
    """BM25 over the passages of a site's medical pages."""

    passages: list[Passage]
    aliases: dict[str, frozenset[tuple[str, ...]]]
    _vocab: dict[str, int] = field(default_factory=dict)
    _weights: object = None  # scipy CSC matrix: passages × words, the BM25 weight of each word in each passage
    df: dict[str, int] = field(default_factory=dict)
    headings: list[tuple[str, ...]] = field(default_factory=list)
    """Every page title with a section's heading path, abbreviations spelt out (processed words)."""
    site_words: frozenset[str] = frozenset()
    word_sets: list[frozenset[str]] = field(default_factory=list)
    """Each passage's processed words (its heading, or its page's title, included)."""
    site_subject: tuple[str, ...] = ()
    """What the whole site is about, from its title: English stems ("asthma"), or Japanese compounds ("骨粗鬆症")."""
    heading_words: frozenset[str] = frozenset()
    """The words of the site's own title: what every page of it is about ("adult treatment summaries")."""
    _sentences: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    raw_headings: list[str] = field(default_factory=list)
    """Every section's heading (its page's title when it has none), as written."""
    section_headings: list[tuple[str, ...]] = field(default_factory=list)
    """The same, as processed words."""
    site_text: str = ""
    """All the passages' text and headings, as written (a name is looked for in it as written)."""

    @classmethod
    def build(cls, pages: Sequence[Page], site_title: str = "") -> PassageIndex:
        import numpy as np
        from scipy.sparse import csr_matrix

        content = content_pages(pages)
        passages = [p for page in content for p in passages_of(page)]
        aliases = harvest_aliases(s.text for page in content if page.language == "en"
                                  for s in (page.sections or [Section(heading="", text=page.text)]))
        vocab: dict[str, int] = {}
        word_sets: list[frozenset[str]] = []
        rows, cols, vals = [], [], []
        lengths = []
        for i, p in enumerate(passages):
            head = p.heading or p.title
            plain = words(f"{head} {p.text}", p.language)
            toks = plain + bigrams(plain)
            word_sets.append(frozenset(plain))
            lengths.append(len(toks))
            counts: dict[str, int] = {}
            for t in toks:
                counts[t] = counts.get(t, 0) + 1
            for t, c in counts.items():
                rows.append(i)
                cols.append(vocab.setdefault(t, len(vocab)))
                vals.append(c)
        index = cls(passages, aliases, vocab, word_sets=word_sets)
        index.site_words = frozenset(english_tokens(site_title) if site_title else [])
        index.site_subject = site_subject(site_title)
        index.heading_words = frozenset(t for h in index.headings for t in h)
        index.headings = list(dict.fromkeys(
            tuple(words(_spell_out(f"{p.title} › {p.heading}", aliases), p.language)) for p in passages))
        index.raw_headings = list(dict.fromkeys(p.heading or p.title for p in passages))
        index.site_text = "\n".join([*dict.fromkeys(f"{p.title}\n{p.heading}" for p in passages),
                                     *(p.text for p in passages)])
        index.section_headings = [tuple(words(_spell_out(h, aliases), detect_language(h))) for h in index.raw_headings]
        if not passages:
            return index
        n = len(passages)
        tf = csr_matrix((np.array(vals, dtype=float), (rows, cols)), shape=(n, len(vocab)))
        df = np.bincount(np.array(cols), minlength=len(vocab))
        idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        length = np.array(lengths, dtype=float)
        norm = K1 * (1 - B + B * length / max(1.0, float(length.mean())))
        tf = tf.tocoo()
        w = idf[tf.col] * tf.data * (K1 + 1) / (tf.data + norm[tf.row])
        index._weights = csr_matrix((w, (tf.row, tf.col)), shape=tf.shape).tocsc()
        index.df = {t: int(df[j]) for t, j in vocab.items()}
        return index

    def mentions(self, variants: Sequence[Sequence[str]], lang: str) -> int:
        """How many passages name the subject (one of its variants, all its words together and in order)
        in a sentence that does not point elsewhere."""
        n = 0
        needles = [" " + " ".join(v) + " " for v in variants if v]
        rare = [min(v, key=lambda t: self.df.get(t, 0)) for v in variants if v]
        for i, have in enumerate(self.word_sets):
            if not any(t in have for t in rare):
                continue
            for s, text in self.sentence_words(i):
                if lang == "en" and _XREF.search(s):
                    continue
                if any(x in text for x in needles):
                    n += 1
                    break
        return n

    def sentence_words(self, i: int) -> list[tuple[str, str]]:
        """Passage ``i``'s sentences, each with its processed words as " w1 w2 … " (computed once: the scope
        decision asks for them on every question)."""
        cached = self._sentences.get(i)
        if cached is None:
            p = self.passages[i]
            cached = self._sentences[i] = [(s, " " + " ".join(words(s, p.language)) + " ") for s in sentences(p.text)]
        return cached

    def idf(self, token: str) -> float:
        n = len(self.passages)
        d = self.df.get(token, 0)
        return math.log(1 + (n - d + 0.5) / (d + 0.5))

    def scores(self, query: Sequence[str]) -> list[float]:
        """BM25 of every passage for the query words (a word asked twice counts twice)."""
        import numpy as np

        if self._weights is None:
            return [0.0] * len(self.passages)
        cols = [self._vocab[t] for t in query if t in self._vocab]
        if not cols:
            return [0.0] * len(self.passages)
        m = self._weights[:, cols]  # type: ignore[index]
        return list(np.asarray(m.sum(axis=1)).ravel())

    def search(self, query: Sequence[str], limit: int = 50) -> list[tuple[int, float]]:
        """The best passages (their positions in ``passages``) with their scores, best first."""
        s = self.scores(query)
        order = sorted((i for i, v in enumerate(s) if v > 0), key=lambda i: -s[i])[:limit]
        return [(i, s[i]) for i in order]


def bigrams(w: Sequence[str]) -> list[str]:
    return [f"{a}_{b}" for a, b in pairwise(w)]


def query_terms(question: str, lang: Lang, index: PassageIndex) -> tuple[list[str], list[tuple[str, ...]]]:
    """(the BM25 query: the question's words, their pairs and the words of the other names its aliases
    have; those other names)."""
    w = words(question, lang)
    other = expand(question, w, index.aliases) if lang == "en" else []
    q = w + bigrams(w)
    for name in other:
        q += [t for t in name if t not in w] + bigrams(name)
    return list(dict.fromkeys(q)), other


# --- answering -----------------------------------------------------------------------------------

@dataclass
class Retrieval:
    """What the best mode found for one question."""

    passages: list[tuple[Passage, float]]
    """The passages whose text makes the references, best first."""
    reference: str
    focus: list[str]
    """The question's subject words (frame words removed), as processed."""
    other_names: list[tuple[str, ...]]
    word_sets: list[frozenset[str]] = field(default_factory=list)
    """Each chosen passage's processed words (from the index, not processed again)."""


def retrieve(index: PassageIndex, question: str, lang: Lang, max_chars: int, frame: frozenset[str]) -> Retrieval:
    """The best passages until their text fills ``max_chars``; each at least ``RELATIVE_FLOOR`` of the best."""
    terms, other = query_terms(question, lang, index)
    w = words(question, lang)
    focus = [t for t in dict.fromkeys(w) if t not in frame] or list(dict.fromkeys(w))
    ranked = index.search(terms)
    chosen: list[int] = []
    size = 0
    for i, score in ranked:
        if score < RELATIVE_FLOOR * ranked[0][1] or size >= max_chars:
            break
        chosen.append(i)
        size += len(index.passages[i].text) + 1
    scores = dict(ranked)
    passages = [(index.passages[i], scores[i]) for i in chosen]
    reference = " ".join(p.text for p, _ in passages)[:max_chars]
    return Retrieval(passages, reference, focus, other, [index.word_sets[i] for i in chosen])


_XREF = re.compile(r"\b(?:see|for more information|refer to|described in|go to)\b", re.I)
"""A sentence that sends the reader elsewhere names a subject without being about it."""
def run_share(focus: Sequence[str], toks: Sequence[str]) -> float:
    """The longest run of ``focus`` (in order) found contiguous in ``toks``, as a share of ``focus``."""
    if not focus:
        return 1.0
    text = " " + " ".join(toks) + " "
    best = 0
    for i in range(len(focus)):
        for j in range(len(focus), i + best, -1):
            if f" {' '.join(focus[i:j])} " in text:
                best = j - i
                break
    return best / len(focus)


_GENERIC_TITLE = frozenset({"guidelin", "guid", "content", "home", "index", "site", "inform", "page", "welcom", "menu",
                            "tabl", "summari", "overview", "adult", "patient", "clinic", "practic", "recommend",
                            "目次", "ガイド", "ブック", "ガイドブック", "トップ", "ホーム", "案内", "ページ", "一覧"})


def site_subject(title: str) -> tuple[str, ...]:
    """The words of a site's title that name its subject (not "guideline", "contents"): English stems, or the
    Japanese title's compounds of nouns ("骨粗鬆症ガイドブック" → "骨粗鬆症")."""
    if not title:
        return ()
    from dkg.web.text import detect_language

    if detect_language(title) == "ja":
        from dkg.web.entities import japanese_compounds
        from dkg.web.rag import asker_words

        out = []
        # MeCab's compounds ("胃がん" is one, though its kana break a run of kanji), less the generic words
        for run in japanese_compounds(title):
            for g in sorted(_GENERIC_TITLE | {"患者", "さん", "さま", "様"}, key=len, reverse=True):
                run = run.replace(g, " ")
            out += [x for x in run.split() if len(x) >= 2 and x not in asker_words("ja")]
        return tuple(dict.fromkeys(out))
    return tuple(t for t in dict.fromkeys(english_tokens(title)) if t not in _GENERIC_TITLE)
