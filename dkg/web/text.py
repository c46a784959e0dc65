"""Language detection and the protocol's text processing: MeCab nouns (Japanese), stems (English)."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml

from dkg.errors import ConfigError
from dkg.yamlio import load_yaml

CONF = Path(__file__).resolve().parents[2] / "conf" / "web.yaml"
Lang = Literal["ja", "en"]
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")


@dataclass(frozen=True)
class WebConfig:
    system_prompt: str
    keyword_prompt: str
    refusals: dict[str, dict[str, str]]
    medical: dict[str, Any]
    stopwords_en: frozenset[str]
    frame_words_en: frozenset[str]
    min_focus_share: float
    best_frame_words_en: frozenset[str] = frozenset()
    best_frame_words_ja: frozenset[str] = frozenset()
    cite_prompt: str = ""
    lay_condition_names_en: frozenset[str] = frozenset()
    asker_words_en: frozenset[str] = frozenset()
    asker_words_ja: frozenset[str] = frozenset()


@lru_cache(maxsize=2)
def load_web_config(path: Path = CONF) -> WebConfig:
    """Read ``conf/web.yaml``.

    Raises:
        ConfigError: missing or malformed.
    """
    try:
        d = load_yaml(path.read_text(encoding="utf-8"))
        return WebConfig(str(d["system_prompt"]), str(d["keyword_prompt"]), d["refusals"], d["medical"],
                         frozenset(d["stopwords_en"]), frozenset(d.get("frame_words_en", [])),
                         float(d.get("min_focus_share", 0.6)), frozenset(d.get("best_frame_words_en", [])),
                         frozenset(d.get("best_frame_words_ja", [])), str(d.get("cite_prompt", "")),
                         frozenset(d.get("lay_condition_names_en", [])),
                         frozenset(d.get("asker_words_en", [])), frozenset(d.get("asker_words_ja", [])))
    except (OSError, KeyError, TypeError, yaml.YAMLError) as e:
        raise ConfigError(f"web configuration {path} is unreadable: {e}") from e


def detect_language(text: str) -> Lang:
    """``ja`` when kana/kanji make up more than 10 % of the letters, else ``en``."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "en"
    return "ja" if sum(1 for c in letters if _CJK.match(c)) / len(letters) > 0.1 else "en"


_local = threading.local()


def _tagger() -> Any:
    """This thread's MeCab tagger. A tagger is not thread-safe: ``parseToNode`` hands out nodes of the
    tagger's one lattice, which the next parse frees, so a tagger shared by the threads of `dkg serve`
    crashed the process (segfault in libc) under concurrent Japanese questions."""
    tagger = getattr(_local, "tagger", None)
    if tagger is None:
        import MeCab
        import unidic_lite

        tagger = _local.tagger = MeCab.Tagger(f"-d {unidic_lite.DICDIR}")
    return tagger


def japanese_nouns(text: str) -> list[str]:
    """Nouns (名詞) of a Japanese text, in order, as MeCab with UniDic reads them."""
    out = []
    node = _tagger().parseToNode(text)
    while node:
        if node.surface and node.feature.split(",")[0] == "名詞":
            out.append(node.surface)
        node = node.next
    return out


@lru_cache(maxsize=1)
@lru_cache(maxsize=4096)
def japanese_circumstance(word: str) -> bool:
    """A Japanese word that says when or how, not what (UniDic: a noun usable as an adverb, "昨日", "毎晩";
    a verb or an adjective, "いく"): never a question's subject."""
    parts = []
    node = _tagger().parseToNode(word)
    while node:
        if node.surface:
            parts.append(node.feature.split(","))
        node = node.next
    if len(parts) != 1:
        return False
    f = parts[0]
    return (f[0] == "名詞" and f[2] == "副詞可能") or f[0] in ("動詞", "形容詞", "副詞")


def _stemmer() -> Any:
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    """Porter stem of one lower-cased word, remembered (a site repeats a small vocabulary; stemming costs ~30 µs)."""
    return str(_stemmer().stem(word))


def english_tokens(text: str, stopwords: frozenset[str] | None = None) -> list[str]:
    """Lower-cased word stems without stop words."""
    stop = stopwords if stopwords is not None else load_web_config().stopwords_en
    return [_stem(w) for w in re.findall(r"[a-z][a-z0-9+-]*", text.lower()) if w not in stop and len(w) > 1]


def process(text: str, lang: Lang | None = None) -> str:
    """The protocol's processed text: nouns (ja) or stems (en), joined by spaces."""
    lang = lang or detect_language(text)
    return " ".join(japanese_nouns(text) if lang == "ja" else english_tokens(text))


def collapse(text: str) -> str:
    """Whitespace collapsed to single spaces."""
    return re.sub(r"\s+", " ", text).strip()


def sentences(text: str) -> list[str]:
    """Sentences of an English or Japanese text."""
    parts = re.split(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+", text)
    return [collapse(p) for p in parts if p and len(collapse(p)) > 2]
