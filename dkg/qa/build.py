"""Steps of building the QA dataset from the graph (the flows compose them)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from dkg.fingerprint import code_digest, digest
from dkg.graph import queries as q
from dkg.graph.loader import _run_read, current_state, current_versions, guidelines, refresh_paths
from dkg.qa.config import DEFAULT_CONF
from dkg.qa.dataset import GuidelineView, QAItem, summarize, view
from dkg.qa.generator import Generator
from dkg.qa.store import Manifest
from dkg.qa.validate import StaleReport, ValidationReport
from dkg.settings import Settings


def graph_views(settings: Settings) -> dict[str, GuidelineView]:
    """Every loaded guideline as the generator sees it (decision paths computed if missing)."""
    out: dict[str, GuidelineView] = {}
    for g in guidelines(settings):
        code = str(g["code"])
        if not _run_read(settings, q.PATH_COUNT, code=code)[0]["paths"]:
            refresh_paths(settings, code)
        state = current_state(settings, code)
        if state is not None:
            out[code] = view(state)
    return out


def graph_fingerprint(settings: Settings, conf: Path = DEFAULT_CONF) -> str:
    """What a saved dataset depends on: each guideline's current version (and load), the generator's code and
    configuration. Equal fingerprints mean re-validating the dataset would find nothing stale."""
    versions = [(r["code"], r["version"], r["sha256"], r["seq"]) for r in current_versions(settings)]
    return digest({"versions": versions, "conf": conf.read_text(encoding="utf-8"),
                   "code": code_digest("qa/dataset.py", "qa/config.py", "qa/generator.py", "qa/cypher.py",
                                       "qa/facts.py", "qa/validate.py", "graph/paths.py")})


def generator_fingerprint(conf: Path = DEFAULT_CONF) -> str:
    """The generator's code and configuration: items written by another generator are not maintained but
    generated anew (their questions and queries would teach the model an old query language)."""
    return digest({"conf": conf.read_text(encoding="utf-8"),
                   "code": code_digest("qa/dataset.py", "qa/config.py", "qa/generator.py", "qa/cypher.py",
                                       "qa/facts.py", "graph/paths.py")})


def save_result(folder: Path, result: QABuildResult) -> None:
    """Keep the last build's report beside the dataset (returned again when nothing changed)."""
    (folder / "build.json").write_text(result.model_dump_json(indent=1), encoding="utf-8")


def unchanged_result(folder: Path, manifest: Manifest | None, fingerprint: str) -> QABuildResult | None:
    """The saved report when the dataset was built against this very graph, code and configuration."""
    path = folder / "build.json"
    if manifest is None or manifest.graph_fingerprint != fingerprint or not path.exists():
        return None
    prior = QABuildResult.model_validate_json(path.read_text(encoding="utf-8"))
    if prior.dataset_version != manifest.dataset_version:
        return None
    return prior.model_copy(update={"skipped": True, "stale": 0, "stale_ids": [], "regenerated": 0, "added": 0,
                                    "reasons": {}, "replaced": 0, "changes": "", "dropped": 0, "seconds": 0.0,
                                    "reason": f"dataset {manifest.dataset_version} was validated against this graph "
                                              "and generator; nothing to do"})


def generate(views: dict[str, GuidelineView]) -> list[QAItem]:
    """A fresh dataset for the guidelines given."""
    return Generator(list(views.values())).generate()


class LeakageReport(BaseModel):
    """Evidence that test questions are not paraphrases of training questions."""

    shared_decisions: int
    """Decisions asked about in both train and test (must be 0)."""
    shared_templates: int
    """Templates used in both train and test (must be 0)."""
    identical_questions: int
    """Test questions whose normalised text is also a training question (must be 0)."""
    max_trigram_jaccard: float
    """Highest word-trigram Jaccard between a test question and any training question (sampled)."""
    mean_trigram_jaccard: float
    sampled: int

    @property
    def clean(self) -> bool:
        return not (self.shared_decisions or self.shared_templates or self.identical_questions)


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _trigrams(text: str) -> set[tuple[str, ...]]:
    w = _norm(text).split()
    return {tuple(w[i:i + 3]) for i in range(max(0, len(w) - 2))}


def leakage(items: Sequence[QAItem], sample: int = 150) -> LeakageReport:
    """Compare the test split with the training split: decisions, templates, wording."""
    train = [i for i in items if i.split == "train"]
    test = [i for i in items if i.split == "test"]
    dec = {(i.guideline, i.decision) for i in train if i.decision} & {(i.guideline, i.decision) for i in test
                                                                      if i.decision}
    tpl = {(i.type == "not_covered", i.template) for i in train} & {(i.type == "not_covered", i.template)
                                                                     for i in test}
    # not_covered shares the next_step templates by design only within the same split.
    tpl_ids = {t for _, t in tpl}
    ident = len({_norm(i.QUESTION) for i in train} & {_norm(i.QUESTION) for i in test})
    step = max(1, len(test) // sample) if test else 1
    picked = test[::step][:sample]
    train_grams = [_trigrams(i.QUESTION) for i in train]
    best: list[float] = []
    for t in picked:
        g = _trigrams(t.QUESTION)
        if not g:
            continue
        best.append(max((len(g & h) / len(g | h) for h in train_grams if h), default=0.0))
    return LeakageReport(shared_decisions=len(dec), shared_templates=len(tpl_ids), identical_questions=ident,
                         max_trigram_jaccard=round(max(best, default=0.0), 3),
                         mean_trigram_jaccard=round(sum(best) / len(best), 3) if best else 0.0, sampled=len(best))



class QABuildResult(BaseModel):
    """Counts of the dataset as saved."""

    items: int
    valid: int
    stale: int
    stale_ids: list[str]
    regenerated: int
    added: int
    dropped: int
    by_type: dict[str, int]
    by_split: dict[str, int]
    by_guideline: dict[str, int]
    failures: int
    schema_ok: bool
    leakage: LeakageReport
    dataset_version: str | None
    export: str | None
    data_docs: str | None
    seconds: float
    skipped: bool = False
    """True when the graph had not changed since the dataset was validated (no query was run)."""
    reason: str = ""
    reasons: dict[str, int] = Field(default_factory=dict)
    """Why items changed (see :class:`dkg.qa.validate.StaleReport`)."""
    replaced: int = 0
    changes: str = ""
    """One line: what changed in the dataset and why."""


def result_of(items: Sequence[QAItem], report: ValidationReport, stale: StaleReport | None, leak: LeakageReport,
              manifest: Manifest | None, seconds: float) -> QABuildResult:
    s = summarize(items)
    return QABuildResult(items=s.items, valid=report.valid, stale=len(stale.stale) if stale else 0,
                         stale_ids=stale.stale if stale else [],
                         regenerated=stale.regenerated if stale else 0, added=stale.added if stale else 0,
                         dropped=stale.dropped if stale else 0, by_type=s.by_type, by_split=s.by_split,
                         by_guideline=s.by_guideline, failures=len(report.failures), schema_ok=report.schema_ok,
                         leakage=leak, dataset_version=manifest.dataset_version if manifest else None,
                         export=manifest.export if manifest else None, data_docs=report.data_docs,
                         seconds=round(seconds, 1), reasons=stale.reasons if stale else {},
                         replaced=stale.replaced if stale else 0,
                         changes=stale.summary() if stale else "generated anew")
