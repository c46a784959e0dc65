"""The CPG-QA dataset, generated from the decision paths of the loaded graph: its items, their splits and what
each should answer (:mod:`dkg.qa.generator` writes them).

Four question types (the paper's three, plus questions the guideline cannot answer):

* ``next_step`` — the next treatment for a patient described by facts;
* ``constraints`` — which patients a treatment is for, at a given step;
* ``advisable`` — whether a named treatment is right for a patient (yes and no cases);
* ``not_covered`` — another disease, or a patient state the guideline has no branch for.

Each item is in the paper's JSON form (``QUESTION``, ``ANSWER``, ``QUERY``, ``Expected_Node``,
``DKG_response``) plus ``type``, ``guideline``, ``version``, ``split`` and what it was made from
(``facts``, ``template``, ``decision``), so it can be re-checked when the guideline changes.

Splits (documented in docs/qa-dataset.md): a question's split is the split of the decision that
answers it (by a hash of the decision's uid), and its template is drawn only from the templates
of that split (by a hash of the template id). A test question therefore neither asks about a
decision seen in training nor reuses a training template, so it cannot be a paraphrase of one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from dkg import rx as re
from dkg.graph.model import VersionState
from dkg.graph.paths import DecisionPath, Facts, best_paths, decision_paths, next_boxes
from dkg.qa.config import QAConfig

QTYPES = ("next_step", "constraints", "advisable", "not_covered")
QType = Literal["next_step", "constraints", "advisable", "not_covered"]
Split = Literal["train", "validation", "test"]


class QAItem(BaseModel):
    """One question/answer/Cypher triple."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    QUESTION: str
    ANSWER: str
    QUERY: str
    Expected_Node: list[str]
    DKG_response: list[str] | None = None
    type: QType
    guideline: str
    version: str
    split: Split
    template: str
    decision: str = ""
    """The decision that answers (or, for ``constraints``, the treatment box asked about)."""
    facts: str = "{}"
    """The patient facts the question states (JSON), for regeneration."""
    phrase: str = ""
    """The treatment named in the question (``constraints``, ``advisable``)."""
    advisable: bool | None = None


def _fraction(key: str) -> float:
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) / 0x100000000


def split_of(key: str, splits: Mapping[str, float]) -> Split:
    """Deterministic split of a decision uid or a template id."""
    f = _fraction(key)
    if f < splits["train"]:
        return "train"
    return "validation" if f < splits["train"] + splits["validation"] else "test"


def templates_for(conf: QAConfig, qtype: str, split: Split) -> list[dict[str, str]]:
    """Templates of one type reserved for one split."""
    kind = "next_step" if qtype == "not_covered" else qtype
    out = [t for t in conf.templates[kind] if split_of("template:" + t["id"], conf.splits) == split]
    return out or conf.templates[kind][:1]


@dataclass(frozen=True)
class GuidelineView:
    """What the generator needs to know about one loaded guideline."""

    state: VersionState
    paths: tuple[DecisionPath, ...]

    @property
    def code(self) -> str:
        return self.state.code

    @property
    def name(self) -> str:
        return self.state.name or self.state.code

    def pointer(self, uid: str) -> bool:
        """A box whose only way on is a link to another page ("(See ALL-3)")."""
        kinds = {e.type for e in self.state.edges if e.head == uid}
        return kinds == {"LINKS_TO"}

    def constrained(self, uid: str) -> bool:
        b = self.state.boxes.get(uid)
        return b is not None and b.constraints not in ("", "[]")

    def answer(self, facts: Facts) -> tuple[list[str], list[str]] | None:
        """(best decisions, next boxes) for ``facts``; None when the facts do not decide."""
        best = best_paths(self.paths, facts)
        if not best:
            return [], []
        # branches that end in a recommendation win over branches that still branch (the query's rule)
        ends = [d for d in sorted({p.decision for p in best}) if next_boxes(self.state, [d])]
        closed = [d for d in ends
                  if not any(self.constrained(u) or self.pointer(u) for u in next_boxes(self.state, [d]))]
        if not closed:
            return None
        return closed, next_boxes(self.state, closed)

    def text(self, uids: Iterable[str]) -> str:
        return " | ".join(self.state.boxes[u].textPlain for u in sorted(uids))


def view(state: VersionState) -> GuidelineView:
    return GuidelineView(state, tuple(decision_paths(state)))


def expected_answer(item: QAItem, views: Mapping[str, GuidelineView], conf: QAConfig) -> tuple[list[str], str] | None:
    """What an item's answer is on the given graph state (None: the question no longer has one)."""
    if item.type == "not_covered" and not item.guideline:
        return [], conf.not_covered_answer
    v = views.get(item.guideline)
    if v is None:
        return None
    facts = json.loads(item.facts)
    if item.type == "not_covered":
        return ([], conf.not_covered_answer) if not best_paths(v.paths, facts) else None
    if item.type == "constraints":
        page_m = re.search(r"page: '([^']*)'", item.QUERY)
        deciders = {e.head for e in v.state.edges if v.constrained(e.head)
                    and item.phrase in v.state.boxes[e.tail].textPlain.lower()}
        exp = sorted(d for d in deciders if page_m is None or v.state.boxes[d].page == page_m.group(1))
        return (exp, v.text(exp)) if exp else None
    res = v.answer(facts)
    if not res or not res[0]:
        return None
    _, nxt = res
    if item.type == "advisable":
        yes = any(item.phrase in v.state.boxes[u].textPlain.lower() for u in nxt)
        return nxt, ("Yes. Recommended: " if yes else "No. Recommended instead: ") + v.text(nxt)
    return nxt, v.text(nxt)


class DatasetSummary(BaseModel):
    """Counts of a built dataset."""

    items: int
    by_type: dict[str, int]
    by_split: dict[str, int]
    by_guideline: dict[str, int]
    versions: dict[str, str] = Field(default_factory=dict)


def summarize(items: Sequence[QAItem]) -> DatasetSummary:
    def count(key: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for it in items:
            k = str(getattr(it, key)) or "-"
            out[k] = out.get(k, 0) + 1
        return dict(sorted(out.items()))
    versions = {it.guideline: it.version for it in items if it.guideline}
    return DatasetSummary(items=len(items), by_type=count("type"), by_split=count("split"),
                          by_guideline=count("guideline"), versions=dict(sorted(versions.items())))
