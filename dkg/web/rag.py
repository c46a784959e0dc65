"""The protocol's retrieval and answer: TF-IDF cosine ≥ threshold, references cut, grounded answer or refusal.

Steps for one question (each independent of the others, as the protocol requires):

1. language of the question; two keywords (an LLM with the protocol's prompt, or a local extractor:
   the question's processed words with the highest IDF on this site);
2. scikit-learn ``TfidfVectorizer`` (default parameters) over the processed pages plus the processed
   keywords; cosine similarity of the keywords with every page; pages at or above the threshold
   (0.2) kept in rank order;
3. their text, whitespace collapsed, joined and cut to 4,096 characters;
4. the answer: the LLM (system prompt, one user message "Reference information: … / Question: …",
   temperature 0.1, at most 1,024 tokens) or, without one, the extractive generator (the reference
   sentences that share the most content words with the question); the two fixed refusals in the
   question's language when nothing passed the threshold, or when the references do not answer.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from dkg.errors import DkgError, TransientError
from dkg.inputs import question_problem
from dkg.settings import Settings
from dkg.web.crawl import Page
from dkg.web.retrieve import PassageIndex, run_share
from dkg.web.text import Lang, collapse, detect_language, english_tokens, load_web_config, process, sentences

MAX_QUESTION = 1000
Status = Literal["answered", "no_references", "not_enough_information", "rejected", "llm_unavailable"]


class LLMError(DkgError):
    """The LLM endpoint failed (after retries)."""


class LLMUnavailableError(LLMError, TransientError):
    """The LLM endpoint did not answer."""


class Reference(BaseModel):
    url: str
    title: str
    score: float
    section: str | None = None
    """The heading path of the passage that made this page a reference (best mode)."""


class RagAnswer(BaseModel):
    """``dkg web ask --json``."""

    status: Status
    answer: str
    keywords: list[str]
    references: list[Reference] = Field(default_factory=list)
    language: str = "en"
    generator: str = "extractive"
    reference_chars: int = 0
    detail: str | None = None
    """Why the LLM could not be used (time-out, error), when status is ``llm_unavailable``; in the best
    mode also why a question was refused (its subject not found, or only mentioned in passing)."""
    mode: str = "protocol"
    scope: list[dict[str, Any]] = Field(default_factory=list)
    """Best mode: every condition the question names and what the site says of it (``subject``, ``about``,
    ``mentioned``: in scope; ``passing``, ``absent``: the question is refused), with the passages that name it."""


class SiteIndex:
    """Processed pages of one site and their TF-IDF matrix (refit whenever pages change)."""

    def __init__(self, pages: Sequence[Page], processed: dict[str, str], title: str = "") -> None:
        self.all_pages = list(pages)
        self.pages = [p for p in pages if p.medical]
        self.processed = processed
        self.title = title
        self._passages: PassageIndex | None = None
        self._lock = threading.Lock()
        self._fit([processed[p.url] for p in self.pages])

    @property
    def passages(self) -> PassageIndex:
        """The best mode's passage index, built on first use."""
        with self._lock:
            if self._passages is None:
                self._passages = PassageIndex.build(self.all_pages, self.title)
            return self._passages

    def _fit(self, docs: list[str]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer()
        self.matrix = self.vectorizer.fit_transform(docs) if docs else None
        self._idf = dict(zip(self.vectorizer.get_feature_names_out(), self.vectorizer.idf_, strict=True)) \
            if docs else {}

    def idf(self, token: str) -> float:
        return float(self._idf.get(token.lower(), 0.0))

    def rank(self, query: str, threshold: float) -> list[tuple[Page, float]]:
        """Pages with cosine similarity ≥ threshold, best first."""
        if self.matrix is None or not query.strip():
            return []
        from sklearn.metrics.pairwise import cosine_similarity

        q = self.vectorizer.transform([query])
        if q.nnz == 0:
            return []
        sims = cosine_similarity(q, self.matrix)[0]
        order = sorted(range(len(sims)), key=lambda i: -sims[i])
        return [(self.pages[i], float(sims[i])) for i in order if sims[i] >= threshold]


def local_keywords(question: str, index: SiteIndex, lang: Lang, n: int = 2) -> list[str]:
    """The question's most specific processed words: those the site never uses first (rarer than
    any word it has), then the site's words by IDF."""
    # only words TfidfVectorizer's default token pattern keeps (two characters or more) can match
    frame = _frame_stems() if lang == "en" else set()
    tokens = [t for t in dict.fromkeys(process(question, lang).split())
              if re.fullmatch(r"\w\w+", t) and t not in frame] or \
        [t for t in dict.fromkeys(process(question, lang).split()) if re.fullmatch(r"\w\w+", t)]
    known = [t for t in tokens if index.idf(t) > 0]
    ranked = [t for t in tokens if t not in known] + sorted(known, key=lambda t: -index.idf(t))
    return ranked[:n]


def _client(settings: Settings) -> Any:
    from openai import OpenAI

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "not-needed"
    return OpenAI(base_url=settings.llm_base_url, api_key=key, timeout=settings.llm_timeout_s,
                  max_retries=settings.llm_retries)


def _chat(settings: Settings, system: str | None, user: str, max_tokens: int) -> str:
    import openai

    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
    try:
        r = _client(settings).chat.completions.create(model=settings.llm_model, messages=messages,
                                                      temperature=0.1, max_tokens=max_tokens)
    except (openai.APIConnectionError, openai.APITimeoutError) as e:
        raise LLMUnavailableError(f"the LLM at {settings.llm_base_url} did not answer ({type(e).__name__})") from e
    except openai.APIError as e:
        raise LLMError(f"the LLM at {settings.llm_base_url} returned an error: {str(e)[:200]}") from e
    return (r.choices[0].message.content or "").strip()


def llm_keywords(settings: Settings, question: str) -> list[str]:
    """Two keywords by the protocol's prompt."""
    cfg = load_web_config()
    text = _chat(settings, None, f"{cfg.keyword_prompt}\n\n{question}", 50)
    words = [collapse(w) for w in re.split(r"[,、，\n]", text) if collapse(w)]
    return words[:2]


def _content(text: str, lang: Lang) -> set[str]:
    return set(process(text, lang).split())


def extractive_answer(question: str, reference: str, lang: Lang, keywords: Sequence[str], max_sentences: int = 3,
                      ) -> str | None:
    """The reference sentences sharing the most content words with the question, or None."""
    q = _content(question, lang) | set(process(" ".join(keywords), lang).split())
    if not q:
        return None
    # the question's most specific words must be in the references, or they cannot answer it
    key = set(process(" ".join(keywords), lang).split())
    if key - _content(reference, lang):
        return None
    scored = []
    for i, s in enumerate(sentences(reference)):
        words = _content(s, lang)
        hits = len(q & words)
        if hits and (words & key or not key):
            scored.append((hits / math.sqrt(len(q)), i, s))
    if not scored:
        return None
    best = max(h for h, _, _ in scored)
    need = max(0.5, 0.6 * best)
    # enough of the question must be in the sentence: at least two content words, or the only one asked
    if best < (min(2, len(q)) / math.sqrt(len(q))):
        return None
    keep = sorted([x for x in scored if x[0] >= need], key=lambda x: (-x[0], x[1]))[:max_sentences]
    joiner = "" if lang == "ja" else " "
    return joiner.join(s for _, _, s in sorted(keep, key=lambda x: x[1]))


@lru_cache(maxsize=1)
def _frame_stems() -> frozenset[str]:
    return frozenset(t for w in load_web_config().frame_words_en for t in english_tokens(w))


def focus_share(question: str, reference: str) -> float:
    """English: the longest run of the question's subject words (frame words such as "treatments"
    removed, stemmed, in order) found contiguous in the reference, as a share of those words."""
    stem_frame = _frame_stems()
    focus = [t for t in english_tokens(question) if t not in stem_frame]
    return run_share(focus, english_tokens(reference))


def grounding(answer: str, reference: str, lang: Lang) -> float:
    """Share of answer sentences whose content words all (≥ 80 %) appear in the reference."""
    ref = _content(reference, lang)
    sents = sentences(answer)
    if not sents:
        return 0.0
    ok = 0
    for s in sents:
        words = _content(s, lang)
        if not words or len(words & ref) / len(words) >= GROUNDED:
            ok += 1
    return ok / len(sents)


def ask(settings: Settings, index: SiteIndex, question: str, use_llm: bool | None = None,
        mode: str | None = None) -> RagAnswer:
    """Answer one question from the site, or refuse with the protocol's sentences (``mode``: ``best`` or
    ``protocol``; the setting ``rag_mode`` by default)."""
    cfg = load_web_config()
    problem = question_problem(question, MAX_QUESTION)
    if problem is not None:
        return RagAnswer(status="rejected", answer=problem[0].upper() + problem[1:] + ".", keywords=[])
    lang = detect_language(question)
    refusal = cfg.refusals[lang]
    llm = settings.llm_base_url is not None if use_llm is None else use_llm
    mode = mode or settings.rag_mode
    try:
        if mode == "best":
            return _ask_best(settings, index, question, llm, lang, refusal)
        return _ask(settings, index, question, llm, lang, refusal)
    except LLMError as e:
        # a hanging or failing endpoint never hangs the chat nor answers without it: the fixed sentence
        return RagAnswer(status="llm_unavailable", answer=refusal["not_enough"], keywords=[], language=lang,
                         generator="llm", detail=str(e), mode=mode)


@lru_cache(maxsize=2)
def best_frame(lang: Lang) -> frozenset[str]:
    """The words that frame a question rather than name its subject, as processed (best mode)."""
    cfg = load_web_config()
    if lang == "ja":
        return frozenset(cfg.best_frame_words_ja) | asker_words(lang)
    return _frame_stems() | frozenset(t for w in cfg.best_frame_words_en for t in english_tokens(w)) | \
        asker_words(lang)


@lru_cache(maxsize=2)
def asker_words(lang: Lang) -> frozenset[str]:
    """Who asks or for whom ("my mother", "母が"), as processed: never the subject of a question."""
    cfg = load_web_config()
    if lang == "ja":
        return frozenset(cfg.asker_words_ja)
    return frozenset(t for w in cfg.asker_words_en for t in english_tokens(w))


def _llm_answer(settings: Settings, question: str, reference: str, refusal: dict[str, str], cite: bool = False,
                ) -> str:
    """The protocol's prompt, unchanged, over the given references (best mode: numbered, and the model asked to
    cite them as [n])."""
    cfg = load_web_config()
    user = f"Reference information: {reference}\nQuestion: {question}"
    system = cfg.system_prompt + f" No-references sentence: \"{refusal['no_references']}\"" \
        f" Not-enough-information sentence: \"{refusal['not_enough']}\""
    if cite:
        system += " " + cfg.cite_prompt
    return _chat(settings, system, user, 1024)


_CITATION = re.compile(r"\s*\[(\d{1,3})\]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
GROUNDED = 0.8
"""Share of the content words of every sentence of an answer that its references must hold (``grounding``)."""
MODEL_GROUNDED = 0.5
"""The same for a model's answer, which rephrases; what it may not do is bring a number or a name of its own."""


def outside_references(answer: str, references: Sequence[str], lang: Lang) -> str | None:
    """Why a model's answer is not from its references, or None: it cites a reference it was not given, states a
    number or names a condition, drug or test the references do not, or a sentence of it holds less than
    ``MODEL_GROUNDED`` of its words from them."""
    from dkg.web.entities import conditions, foreign_names

    cited = [int(n) for n in _CITATION.findall(answer)]
    wrong = sorted({n for n in cited if not 1 <= n <= len(references)})
    if wrong:
        return f"the model cited references it was not given ({', '.join(f'[{n}]' for n in wrong)})"
    plain = _CITATION.sub("", answer)
    text = " ".join(references)
    numbers = sorted(set(_NUMBER.findall(plain)) - set(_NUMBER.findall(text)))
    if numbers:
        return f"the model's answer states numbers the references do not ({', '.join(numbers)})"
    have = set(process(text, lang).split())
    names = [t.text for t in [*conditions(plain, lang), *foreign_names(plain, lang, text)]
             if not (t.text in text if lang == "ja" else set(t.words) <= have)]
    if names:
        return f"the model's answer names what the references do not ({', '.join(names)})"
    ref = _content(text, lang)
    for sentence in sentences(plain):
        words = _content(sentence, lang)
        if words and len(words & ref) / len(words) < MODEL_GROUNDED:
            return f"a sentence of the model's answer is not from the references: {sentence[:80]}"
    return None


def _ask_best(settings: Settings, index: SiteIndex, question: str, llm: bool, lang: Lang,
              refusal: dict[str, str]) -> RagAnswer:
    """Passages by BM25 (with the site's aliases), the scope check, then the LLM or the extractive generator."""
    from dkg.web.entities import COVERED, OUT_OF_SCOPE, together, verdicts
    from dkg.web.extract import extract
    from dkg.web.retrieve import retrieve, words
    from dkg.web.scope import scope, topic_question, unrelated

    pindex = index.passages
    frame = best_frame(lang)
    found = retrieve(pindex, question, lang, settings.rag_max_chars, frame)
    gen = "llm" if llm else "extractive"
    refs: dict[str, Reference] = {}  # a page once, with its best passage
    for p, score in found.passages:
        refs.setdefault(p.url, Reference(url=p.url, title=p.title, score=round(score, 3), section=p.heading or None))
    common: dict[str, Any] = {"keywords": found.focus, "references": list(refs.values()), "language": lang,
                              "generator": gen, "mode": "best", "reference_chars": len(found.reference)}
    if not found.passages or unrelated(found, pindex, lang):
        common.update(references=[], reference_chars=0)
        return RagAnswer(status="no_references", answer=refusal["no_references"], **common)
    terms = verdicts(question, lang, pindex, found.focus, [p for p, _ in found.passages])
    common["scope"] = [t.as_dict() for t in terms]
    foreign = [t for t in terms if t.verdict in OUT_OF_SCOPE]
    if foreign:
        t = foreign[0]
        where = "never mentions" if t.verdict == "absent" else \
            f"mentions only in passing ({t.passages} passage{'s' if t.passages != 1 else ''})"
        return RagAnswer(status="not_enough_information", answer=refusal["not_enough"],
                         detail=f"the question is about {t.term}, which this site {where}", **common)
    if not together(terms, found, lang):
        return RagAnswer(status="not_enough_information", answer=refusal["not_enough"],
                         detail="no passage of the site speaks of " + " and ".join(
                             t.term for t in terms if t.verdict != "subject") + " together", **common)
    # a question naming the site's own subject, or (unless it asks about a subject as a whole: "What are the
    # treatments for X?") a condition or name the site covers, is about the site; any other question is when its
    # references hold its words (``scope``)
    asked = [w for w in words(question, lang) if w not in asker_words(lang)]
    covered = any(t.verdict == "subject" for t in terms) or (
        any(t.verdict in COVERED for t in terms) and not topic_question(question, asked, found.focus, frame))
    ok, why = (True, "") if covered else scope(found, question, lang, pindex, frame,
                                                  names_condition=any(t.verdict == "about" for t in terms))
    if not ok:
        return RagAnswer(status="not_enough_information", answer=refusal["not_enough"], detail=why, **common)
    if llm:
        # the scope decision above ran before the model is called; its answer must stay within the references
        numbered = " ".join(f"[{i}] {p.text}" for i, (p, _) in enumerate(found.passages, 1))[: settings.rag_max_chars]
        text = _llm_answer(settings, question, numbered, refusal, cite=True)
        if collapse(text) == refusal["not_enough"] or not text:
            return RagAnswer(status="not_enough_information", answer=refusal["not_enough"], **common)
        problem = outside_references(text, [p.text for p, _ in found.passages], lang)
        if problem:
            return RagAnswer(status="not_enough_information", answer=refusal["not_enough"], detail=problem, **common)
        return RagAnswer(status="answered", answer=text, **common)
    extract_ = extract(found, question, lang, pindex)
    if extract_ is None:
        return RagAnswer(status="not_enough_information", answer=refusal["not_enough"],
                         detail="no sentence of the references holds the question's words", **common)
    return RagAnswer(status="answered", answer=extract_, **common)


def _ask(settings: Settings, index: SiteIndex, question: str, llm: bool, lang: Lang,
         refusal: dict[str, str]) -> RagAnswer:
    cfg = load_web_config()
    keywords = llm_keywords(settings, question) if llm else local_keywords(question, index, lang)
    query = process(" ".join(keywords), lang)
    if settings.rag_query == "keywords+question":
        query += " " + process(question, lang)
    ranked = index.rank(query, settings.rag_threshold)
    refs = [Reference(url=p.url, title=p.title, score=round(s, 4)) for p, s in ranked]
    if not ranked:
        return RagAnswer(status="no_references", answer=refusal["no_references"], keywords=keywords, language=lang,
                         generator="llm" if llm else "extractive")
    reference = collapse(" ".join(p.text for p, _ in ranked))[: settings.rag_max_chars]
    if llm:
        text = _llm_answer(settings, question, reference, refusal)
        if collapse(text) == refusal["not_enough"] or not text:
            return RagAnswer(status="not_enough_information", answer=refusal["not_enough"], keywords=keywords,
                             references=refs, language=lang, generator="llm", reference_chars=len(reference))
        return RagAnswer(status="answered", answer=text, keywords=keywords, references=refs, language=lang,
                         generator="llm", reference_chars=len(reference))
    extract = extractive_answer(question, reference, lang, keywords)
    if extract is not None and lang == "en" and focus_share(question, reference) < cfg.min_focus_share:
        extract = None  # the references talk about something else ("soft tissue" is not "soft tissue sarcoma")
    if extract is None:
        return RagAnswer(status="not_enough_information", answer=refusal["not_enough"], keywords=keywords,
                         references=refs, language=lang, reference_chars=len(reference))
    return RagAnswer(status="answered", answer=extract, keywords=keywords, references=refs, language=lang,
                     reference_chars=len(reference))


class Site(BaseModel):
    """A crawled site as kept in the state folder."""

    name: str
    toc: str
    crawled_at: float
    pages: list[Page]
    processed: dict[str, str]
    title: str = ""
    """The table of contents' title and first heading (what the whole site is about)."""


def sites_root(settings: Settings) -> Path:
    return settings.state_path / "web"


def site_name(toc: str) -> str:
    from urllib.parse import urlparse

    p = urlparse(toc)
    return re.sub(r"[^\w.-]+", "_", f"{p.netloc}{p.path.rsplit('/', 1)[0]}").strip("_") or "site"


def save_site(settings: Settings, site: Site) -> Path:
    """Write the site atomically and make it the default."""
    root = sites_root(settings)
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{site.name}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(site.model_dump_json(), encoding="utf-8")
    tmp.replace(path)
    (root / "default").write_text(site.name, encoding="utf-8")
    return path


def load_site(settings: Settings, name: str | None = None) -> Site:
    """A kept site (the last crawled when ``name`` is None).

    Raises:
        DkgError: no site kept, or the name is unknown.
    """
    root = sites_root(settings)
    if name is None:
        default = root / "default"
        if not default.exists():
            raise DkgError(f"no web guideline crawled yet in {root}; run `dkg web ingest TOC_URL`")
        name = default.read_text(encoding="utf-8").strip()
    path = root / f"{name}.json"
    if not path.exists():
        known = sorted(p.stem for p in root.glob("*.json"))
        raise DkgError(f"no site {name!r} in {root} (known: {', '.join(known) or 'none'})")
    return Site.model_validate_json(path.read_text(encoding="utf-8"))


def index_site(site: Site) -> SiteIndex:
    return SiteIndex(site.pages, site.processed, site.title)


def process_pages(pages: dict[str, Page], previous: Site | None, changed: set[str]) -> dict[str, str]:
    """Processed text per page; only new or changed pages are processed again (MeCab is the slow part)."""
    old = previous.processed if previous else {}
    out = {}
    for url, p in pages.items():
        out[url] = old[url] if url in old and url not in changed else process(p.text, p.language)  # type: ignore[arg-type]
    return out


def dumps(answer: RagAnswer) -> str:
    return json.dumps(answer.model_dump(exclude={"language", "generator", "reference_chars"}), ensure_ascii=False)


def now() -> float:
    return time.time()
