"""The QA configuration: ``conf/qa.yaml`` read into :class:`QAConfig` and completed by the names of the loaded
guidelines, with the phrasing rules that the dataset generator and the question tagger share (implied facts, number
words, the phrase that names a treatment box)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from dkg import rx as re
from dkg.errors import ConfigError
from dkg.graph.model import VersionState
from dkg.yamlio import load_yaml

DEFAULT_CONF = Path(__file__).resolve().parents[2] / "conf" / "qa.yaml"


@dataclass(frozen=True)
class QAConfig:
    """Phrasings and templates from ``conf/qa.yaml``."""

    seed: int
    splits: dict[str, float]
    not_covered_answer: str
    facts: dict[str, Any]
    diseases: dict[str, list[str]]
    other_diseases: list[str]
    subjects: list[str]
    irrelevant: list[str]
    templates: dict[str, list[dict[str, str]]]
    labels: dict[str, str]
    disease_words: dict[str, list[str]]
    implies: list[dict[str, Any]]


_LOADED_NAMES: dict[str, tuple[str, ...]] = {}


def note_loaded_guidelines(names: Mapping[str, str | Sequence[str] | None]) -> None:
    """Record the loaded guidelines' names (code → its title, or every name learned from it by
    :func:`dkg.qa.names.guideline_names`), read from the graph by whoever built the process's view of it (the
    question reader, the dataset generator)."""
    _LOADED_NAMES.clear()
    lists = {code: (n,) if isinstance(n, str) else tuple(n or ()) for code, n in names.items()}
    # a name two loaded guidelines taught (a histology both name) names neither
    owners: dict[str, set[str]] = {}
    for code, listed in lists.items():
        for x in listed:
            owners.setdefault(x.lower(), set()).add(code)
    for code, listed in lists.items():
        kept = tuple(x for x in listed if len(owners[x.lower()]) == 1) or listed[:1]
        if listed:
            _LOADED_NAMES[code] = kept


def names_of(state: VersionState) -> list[str]:
    """Every name of a loaded guideline, learned from its title, code, boxes and footnotes."""
    from dkg.qa.clinical import load_clinical
    from dkg.qa.names import guideline_names

    synonyms = {str(k): [str(x) for x in v] for k, v in load_clinical().get("disease_synonyms", {}).items()}
    return guideline_names(state.name, state.code, [b.text for b in state.boxes.values()], synonyms,
                           [b.textPlain for b in state.boxes.values()])


def current_config() -> QAConfig:
    """``conf/qa.yaml`` completed by the loaded guidelines: a guideline the file does not list is named
    by what it calls itself ("Differentiated Thyroid Cancer", "thyroid cancer", "DTC"), and those names are then no
    longer ``other_diseases``."""
    return _config_with(tuple(sorted(_LOADED_NAMES.items())))


@lru_cache(maxsize=16)
def _config_with(names: tuple[tuple[str, tuple[str, ...]], ...]) -> QAConfig:
    base = load_config()
    new = {c: list(n) for c, n in names if c not in base.diseases}
    if not new:
        return base
    lowered = [x.lower() for n in new.values() for x in n]
    # an other disease a loaded guideline names (as a whole word: "small cell lung cancer" is not inside "non-small
    # cell lung cancer") is that guideline's; a more specific one ("small cell lung cancer" beside "lung cancer")
    # stays another disease
    others = [o for o in base.other_diseases
              if not any(re.search(rf"(?<![\w-]){re.escape(o.lower())}(?![\w-])", n) for n in lowered)]
    return replace(base, diseases={**base.diseases, **new}, other_diseases=others)


@lru_cache(maxsize=4)
def load_config(path: Path = DEFAULT_CONF) -> QAConfig:
    """Read ``conf/qa.yaml``.

    Raises:
        ConfigError: missing or malformed.
    """
    try:
        d = load_yaml(path.read_text(encoding="utf-8"))
        return QAConfig(int(d["seed"]), dict(d["splits"]), str(d["not_covered_answer"]), d["facts"],
                        d["diseases"], list(d["other_diseases"]), list(d["subjects"]), list(d["irrelevant"]),
                        d["templates"], dict(d.get("labels", {})), dict(d.get("disease_words", {})),
                        list(d.get("implies", [])))
    except (OSError, KeyError, TypeError, ValueError, yaml.YAMLError) as e:
        raise ConfigError(f"QA configuration {path} is unreadable: {e}") from e


def apply_implications(facts: dict[str, Any], codes: Sequence[str], conf: QAConfig) -> dict[str, Any]:
    """Facts that follow from others (``conf/qa.yaml`` ``implies``), added when not stated."""
    out = dict(facts)
    for rule in conf.implies:
        if all(str(out.get(a)) == str(v) for a, v in rule["if"].items()) and \
                not set(rule.get("unless", [])) & set(codes):
            for a, v in rule["then"].items():
                out.setdefault(a, v)
    return out


_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
         "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def number_words(n: int) -> str:
    """``67`` → ``sixty-seven`` (0–199)."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    return "one hundred" + ("" if n == 100 else " and " + number_words(n - 100))


def treatment_phrase(text: str) -> str:
    """The part of a box's text that names the treatment: no "(See …)", first clause."""
    t = re.sub(r"\(\s*see [^)]*\)", "", text, flags=re.IGNORECASE)
    t = re.split(r";|\s\((?!preferred)", t)[0]
    t = re.sub(r"\s+", " ", t).strip(" ,.")
    return t
