"""The extractor's vocabulary, loaded from ``conf/constraints.yaml`` into typed, compiled rules."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from dkg.errors import ConfigError
from dkg.yamlio import load_yaml

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "conf" / "constraints.yaml"


@dataclass(frozen=True)
class KeywordRule:
    """A phrase that states ``attr = value`` (``negated`` when it is negated)."""

    attr: str
    value: str
    negated: str | None
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Vocabulary:
    """Everything the rules need, compiled."""

    attributes: dict[str, dict[str, Any]]
    operators: tuple[str, ...]
    negation_cues: tuple[str, ...]
    non_patient_contexts: tuple[str, ...]
    action_verbs: frozenset[str]
    action_nouns: frozenset[str]
    keywords: tuple[KeywordRule, ...]
    numeric: dict[str, Any]
    before: tuple[tuple[str, str], ...]
    after: tuple[tuple[str, str], ...]

    def allowed_values(self, attr: str) -> set[str] | None:
        """Values of a categorical attribute, None for numeric or free-text ones."""
        spec = self.attributes.get(attr, {})
        return set(map(str, spec["values"])) if spec.get("type") == "category" else None


def load_vocabulary(path: Path = DEFAULT_PATH) -> Vocabulary:
    """The vocabulary file, compiled, with the approved attributes of the registry added.

    The registry (``<state>/registry/attributes.json``, see :mod:`dkg.constraints.registry`) is
    read again whenever it changed, so an approval is seen by the next call in any process.

    Raises:
        ConfigError: the file is missing or malformed.
    """
    from dkg.constraints.registry import registry_path
    from dkg.settings import current_settings

    reg_file = registry_path(current_settings())
    try:
        stamp = reg_file.stat().st_mtime_ns
    except OSError:
        return load_base_vocabulary(path)
    return _with_registry(path, reg_file, stamp)


@lru_cache(maxsize=8)
def _with_registry(path: Path, reg_file: Path, stamp: int) -> Vocabulary:  # stamp: the file's version
    from dataclasses import replace

    from dkg.constraints.registry import read_registry

    base = load_base_vocabulary(path)
    reg = read_registry(reg_file, base_seed(path))
    attrs = dict(base.attributes)
    for name, a in reg.approved().items():
        if name not in attrs:
            attrs[name] = a.vocab_spec()
        elif a.values and attrs[name].get("type") == "category":  # approved new values ("stage IIB")
            known = [str(v) for v in attrs[name].get("values", [])]
            attrs[name] = {**attrs[name], "values": known + [v for v in a.values if v not in known]}
    return replace(base, attributes=attrs)


def base_seed(path: Path = DEFAULT_PATH) -> Any:
    """The registry's seed: the file's attributes, approved."""
    from dkg.constraints.registry import seed_registry

    base = load_base_vocabulary(path)
    return seed_registry(base.attributes, base.numeric)


@lru_cache(maxsize=4)
def load_base_vocabulary(path: Path = DEFAULT_PATH) -> Vocabulary:
    """Load and compile the vocabulary file alone (the registry's seed).

    Raises:
        ConfigError: the file is missing or malformed.
    """
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
        rules = []
        for k in data["keywords"]:
            for pat in k["patterns"]:
                rules.append(KeywordRule(
                    attr=k["attr"], value=str(k["value"]),
                    negated=str(k["negated"]) if k.get("negated") is not None else None,
                    pattern=re.compile(rf"(?<![\w+]){pat}(?![\w+])", re.IGNORECASE),
                ))
        numeric = data["numeric"]
        return Vocabulary(
            attributes=data["attributes"], operators=tuple(data["operators"]),
            negation_cues=tuple(data["negation_cues"]),
            non_patient_contexts=tuple(data.get("non_patient_contexts", [])),
            action_verbs=frozenset(w.lower() for w in data.get("action_verbs", [])),
            action_nouns=frozenset(w.lower() for w in data.get("action_nouns", [])),
            keywords=tuple(rules), numeric=numeric,
            before=tuple(sorted(numeric["before"].items(), key=lambda kv: -len(kv[0]))),
            after=tuple(sorted(numeric["after"].items(), key=lambda kv: -len(kv[0]))),
        )
    except (OSError, KeyError, TypeError, yaml.YAMLError, re.error) as e:
        raise ConfigError(f"constraint vocabulary {path} is unreadable: {e}") from e


def load_registry() -> Any:
    """The attribute registry as it is now (the seed when none was written), read again when it changed."""
    from dkg.constraints.registry import registry_path
    from dkg.settings import current_settings

    reg_file = registry_path(current_settings())
    try:
        stamp = reg_file.stat().st_mtime_ns
    except OSError:
        stamp = 0
    return _registry_at(reg_file, stamp)


@lru_cache(maxsize=8)
def _registry_at(reg_file: Path, stamp: int) -> Any:  # stamp: the file's version
    from dkg.constraints.registry import read_registry

    return read_registry(reg_file, base_seed())
