"""What a loaded guideline defines about its own terms, read from its footnotes and box texts.

A clinician writes "MRD 0.004 %", "95 % necrosis", "6.1 cm mass, N0 M0" or "KPS 70, Ca 11.4, Hb 9.8";
the flowchart branches on "MRD negative", "good histologic response", "Stage I, T1b" or "poor
risk". The bridge is in the guideline itself: footnotes define the cut-offs ("MRD negative means
below 0.01 %", "good response means at least 90 % tumor necrosis"), the T categories by size,
which findings make a "high risk of relapse", and how many risk factors make each risk group;
stage boxes name the categories they group ("Stage III (T3 or N1)"). :func:`definitions_of`
reads those statements from a version's resolved box texts, so a new version that moves a
cut-off moves the reading of questions with it, and :mod:`dkg.qa.reader` applies them.
General clinical knowledge (lab cut-offs, Karnofsky → ECOG, bones of the skeleton) lives in
``conf/clinical.yaml``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from dkg import rx as re
from dkg.errors import ConfigError
from dkg.graph.model import VersionState
from dkg.yamlio import load_yaml

CONF = Path(__file__).resolve().parents[2] / "conf" / "clinical.yaml"


@lru_cache(maxsize=2)
def load_clinical(path: Path = CONF) -> dict[str, Any]:
    """``conf/clinical.yaml``.

    Raises:
        ConfigError: missing or malformed.
    """
    try:
        d = load_yaml(path.read_text(encoding="utf-8"))
        if not isinstance(d, dict) or "phrases" not in d:
            raise ValueError("no 'phrases' section")
        return d
    except (OSError, ValueError, yaml.YAMLError) as e:
        raise ConfigError(f"clinical reading configuration {path} is unreadable: {e}") from e


@dataclass(frozen=True)
class RiskCount:
    """A risk grouping by number of factors ("Favorable: 0 factors; intermediate: 1–2; poor: 3 or more")."""

    factors: tuple[str, ...]
    groups: tuple[tuple[str, int, float], ...]
    """(risk group value, fewest factors, most factors)."""
    kps_below: float | None = None

    def group(self, present: int, unknown: int) -> str | None:
        """The group when every possible count of the unknown factors gives the same one."""
        found = {g for g, lo, hi in self.groups for n in range(present, present + unknown + 1) if lo <= n <= hi}
        return found.pop() if len(found) == 1 else None


@dataclass(frozen=True)
class Definitions:
    """Cut-offs and groupings one guideline version states about its own terms."""

    mrd_negative_below: float | None = None
    """Per cent; MRD below it is negative."""
    necrosis_good_from: float | None = None
    """Per cent necrosis from which the histologic response is good."""
    t_sizes: tuple[tuple[str, float, float], ...] = ()
    """(T category, more than cm, at most cm)."""
    t_words: tuple[tuple[str, frozenset[str]], ...] = ()
    """(T category, words that describe it without a size: "veins", "perinephric")."""
    stages: tuple[tuple[str, frozenset[str]], ...] = ()
    """(stage, the T/N/M categories that put a patient there), highest stage first."""
    high_risk: tuple[tuple[str, int | None], ...] = ()
    """Findings that make a high risk of relapse: (T, N or M category prefix, minimum grade or None)."""
    risk_count: RiskCount | None = None
    low_grade_subtypes: tuple[str, ...] = ()
    population_from_age: float | None = None
    """The youngest age of the patient groups the guideline names ("AYA … aged 15 to 39", "adults … 40 or older")."""
    relapse_blasts_above: float | None = None
    """Per cent blasts after a remission that the guideline calls a relapse."""
    extra: dict[str, Any] = field(default_factory=dict)


_ROMAN = {"1": "I", "2": "II", "3": "III", "4": "IV", "i": "I", "ii": "II", "iii": "III", "iv": "IV"}
_GENERIC = {"tumor", "tumour", "limited", "kidney", "extension", "tissue", "major", "more", "than", "into", "with",
            "without", "regional", "metastasis", "metastases", "edition", "clinical", "stage", "disease"}


def _texts(state: VersionState) -> str:
    seen: list[str] = []
    for b in state.boxes.values():
        if b.text not in seen:
            seen.append(b.text)
    return "\n".join(seen)


def _num(s: str) -> float:
    return float(s.replace(",", "."))


def _t_sizes(text: str) -> tuple[tuple[tuple[str, float, float], ...], tuple[tuple[str, frozenset[str]], ...]]:
    sizes: list[tuple[str, float, float]] = []
    words: list[tuple[str, frozenset[str]]] = []
    for m in re.finditer(r"\b(T[1-4][a-c]?)\b\s+([^;.)]*)", text):
        cat, desc = m.group(1), m.group(2).lower()
        if any(c == cat for c, _, _ in sizes) or any(c == cat for c, _ in words):
            continue
        lo, hi = -math.inf, math.inf
        if r := re.search(r"more than (\d+(?:\.\d+)?) ?cm but not more than (\d+(?:\.\d+)?) ?cm", desc):
            lo, hi = _num(r.group(1)), _num(r.group(2))
        elif r := re.search(r"(\d+(?:\.\d+)?) ?cm or less|(?:up to|at most|≤|<=) ?(\d+(?:\.\d+)?) ?cm", desc):
            hi = _num(r.group(1) or r.group(2))
        elif r := re.search(r"(?:more than|greater than|over|>) ?(\d+(?:\.\d+)?) ?cm", desc):
            lo = _num(r.group(1))
        if (lo, hi) != (-math.inf, math.inf):
            sizes.append((cat, lo, hi))
        else:
            ws = {w.rstrip("s") for w in re.findall(r"[a-z]{4,}", desc) if w not in _GENERIC}
            if ws:
                words.append((cat, frozenset(ws)))
    return tuple(sizes), tuple(words)


def _stages(state: VersionState) -> tuple[tuple[str, frozenset[str]], ...]:
    groups: dict[str, set[str]] = {}
    for b in state.boxes.values():
        for m in re.finditer(r"\bstage\s+(iv|iii|ii|i|[1-4])\b\s*(?:,|\()\s*([^)]*)", b.textPlain, re.IGNORECASE):
            stage, what = _ROMAN[m.group(1).lower()], m.group(2)
            cats = set(re.findall(r"\b([TNM][0-4][a-c]?)\b", what))
            if re.search(r"metasta|distant", what, re.IGNORECASE):
                cats.add("M1")
            if cats:
                groups.setdefault(stage, set()).update(cats)
    order = ["IV", "III", "II", "I"]
    return tuple((s, frozenset(groups[s])) for s in order if s in groups)


def _high_risk(text: str) -> tuple[tuple[str, int | None], ...]:
    m = re.search(r"high risk of (?:relapse|recurrence) (?:means|is defined as|includes?)\s*([^.]*)", text,
                  re.IGNORECASE)
    if not m:
        return ()
    out: list[tuple[str, int | None]] = []
    for part in re.split(r",\s*|\s+or\s+", m.group(1)):
        cat = re.search(r"\bp?([TNM][0-4])", part)
        if not cat:
            continue
        grade = re.search(r"grade\s*(\d)", part)
        out.append((cat.group(1), int(grade.group(1)) if grade else None))
    return tuple(out)


def _risk_count(text: str) -> RiskCount | None:
    m = re.search(r"risk factors?:\s*([^.]*)\.\s*([^\n)]*)", text, re.IGNORECASE)
    if not m:
        return None
    factors = tuple(f.strip().lower() for f in re.split(r",\s*", m.group(1)) if f.strip())
    groups = []
    for g in re.finditer(r"(favou?rable|intermediate|poor|low|high)\w*:\s*(\d+)(?:\s*[–-]\s*(\d+))?(\s*or more)?",
                         m.group(2), re.IGNORECASE):
        name = g.group(1).lower().replace("favourable", "favorable")
        lo = int(g.group(2))
        hi = math.inf if g.group(4) else float(g.group(3) or lo)
        groups.append((name, lo, hi))
    if not factors or not groups:
        return None
    kps = next((_num(k.group(1)) for f in factors if (k := re.search(r"kps (?:below|under|<|less than)\s*(\d+)", f))),
               None)
    return RiskCount(factors, tuple(groups), kps)


def definitions_of(state: VersionState) -> Definitions:
    """Read the cut-offs and groupings ``state`` states in its own words."""
    text = _texts(state)
    mrd = re.search(r"mrd negative means (?:below|less than|under|<)\s*(\d+(?:\.\d+)?)\s*%", text, re.IGNORECASE)
    nec = re.search(r"good (?:histologic )?response means (?:at least|≥|>=)\s*(\d+(?:\.\d+)?)\s*%", text,
                    re.IGNORECASE)
    sizes, words = _t_sizes(text)
    low = re.search(r"low[- ]grade subtypes include ([^;.]*)", text, re.IGNORECASE)
    subtypes = tuple(w for w in re.findall(r"[a-z]{5,}", low.group(1).lower()) if w not in {"grade", "osteosarcoma"}) \
        if low else ()
    rel = re.search(r"relapse is the reappearance of blasts[^.]*?more than (\d+(?:\.\d+)?)\s*%", text, re.IGNORECASE)
    groups = re.findall(r"(?:defined as|are) patients aged (\d+)(?: to \d+| years or older| or older)", text,
                        re.IGNORECASE)
    return Definitions(population_from_age=min(float(g) for g in groups) if groups else None,
                       relapse_blasts_above=float(rel.group(1)) if rel else None,
                       mrd_negative_below=float(mrd.group(1)) if mrd else None,
                       necrosis_good_from=float(nec.group(1)) if nec else None, t_sizes=sizes, t_words=words,
                       stages=_stages(state), high_risk=_high_risk(text), risk_count=_risk_count(text),
                       low_grade_subtypes=subtypes)
