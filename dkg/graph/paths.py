"""Decision paths: the patient constraints accumulated from an entry box down to a decision.

A decision box says only what changes at its step ("MRD negative"); who reaches it is said by the
boxes before it ("Ph- ALL", "age < 60", "complete response"). A :class:`DecisionPath` is one way
through the flowchart from an entry box (one no arrow points to) to a decision, with the
conjunction of every constraint met on the way — the paper's decision node carrying its full
"decision dimension". OR-constraints are expanded, so each path is a plain conjunction.

The paths are derived data: they are recomputed from a version's boxes and edges on every load
and stored as ``(:Path)-[:REACHES]->(:Decision)``, so a question can be answered by one query:
the paths that hold for the patient's facts, the most specific first (most attributes used,
then the deepest), and the boxes their decisions lead to. :func:`best_paths` is the same rule in
Python, used to generate and check questions.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dkg.constraints.models import AnyOf, Constraint, Item, items_from_json
from dkg.constraints.vocabulary import Vocabulary, load_vocabulary
from dkg.graph.model import VersionState, _camel

EPS = 1e-6
"""Strict bounds become inclusive ones: ``age < 65`` is ``age <= 65 - EPS``."""

MAX_PATHS_PER_DECISION = 64
MAX_DEPTH = 40

Facts = Mapping[str, Any]
"""Patient facts in the shared vocabulary: ``{"age": 45, "ph_status": "negative"}``."""


@dataclass(frozen=True)
class Scope:
    """A conjunction of constraints: allowed values per category, an inclusive range per number."""

    cats: tuple[tuple[str, tuple[str, ...]], ...] = ()
    nums: tuple[tuple[str, float, float], ...] = ()

    @property
    def attrs(self) -> set[str]:
        return {a for a, _ in self.cats} | {a for a, _, _ in self.nums}

    def key(self) -> str:
        return json.dumps([self.cats, self.nums])

    def holds(self, facts: Facts) -> bool:
        """True when every constraint holds; a constraint on a fact not given does not hold."""
        for a, values in self.cats:
            v = facts.get(a)
            if v is None or str(v) not in values:
                return False
        for a, lo, hi in self.nums:
            v = facts.get(a)
            if not isinstance(v, int | float) or isinstance(v, bool) or not lo <= v <= hi:
                return False
        return True

    def consistent(self, facts: Facts) -> bool:
        """True when no given fact contradicts the scope (facts not given are unknown)."""
        # ``holds`` over the given facts only, without building that smaller scope (a reader calls this for
        # every path of every loaded guideline)
        for a, values in self.cats:
            v = facts.get(a)
            if v is not None and str(v) not in values:
                return False
        for a, lo, hi in self.nums:
            v = facts.get(a)
            if v is not None and (not isinstance(v, int | float) or isinstance(v, bool) or not lo <= v <= hi):
                return False
        return True

    def missing(self, facts: Facts) -> list[str]:
        """Attributes the scope constrains that the facts do not give."""
        return sorted(a for a in self.attrs if facts.get(a) is None)

    def props(self) -> dict[str, Any]:
        """Typed properties for the Path node (camelCase, as the decision layer)."""
        out: dict[str, Any] = {"catAttrs": sorted(_camel(a) for a, _ in self.cats),
                               "numAttrs": sorted(_camel(a) for a, _, _ in self.nums)}
        for a, values in self.cats:
            out[_camel(a)] = list(values)
        for a, lo, hi in self.nums:
            out[_camel(a) + "Min"] = lo
            out[_camel(a) + "Max"] = hi
        return out


def _and(scope: Scope, c: Constraint, vocab: Vocabulary) -> Scope | None:
    """``scope`` and ``c``, or None when they contradict."""
    spec = vocab.attributes.get(c.attr, {})
    if spec.get("type") == "number" and isinstance(c.value, int | float):
        v = float(c.value)
        lo, hi = {"<": (-math.inf, v - EPS), "<=": (-math.inf, v), ">": (v + EPS, math.inf),
                  ">=": (v, math.inf), "=": (v, v)}.get(c.op, (-math.inf, math.inf))
        nums = dict((a, (x, y)) for a, x, y in scope.nums)
        old = nums.get(c.attr, (-math.inf, math.inf))
        new = (max(old[0], lo), min(old[1], hi))
        if new[0] > new[1]:
            return None
        nums[c.attr] = new
        return Scope(scope.cats, tuple(sorted((a, x, y) for a, (x, y) in nums.items())))
    if spec.get("type") == "category":
        allowed = [str(v) for v in spec.get("values", [])]
        if c.op == "!=":
            values = {v for v in allowed if v != str(c.value)}
        else:
            values = {str(v) for v in (c.value if isinstance(c.value, list) else [c.value])}
        cats = dict(scope.cats)
        if c.attr in cats:
            values &= set(cats[c.attr])
        if not values:
            return None
        cats[c.attr] = tuple(sorted(values))
        return Scope(tuple(sorted(cats.items())), scope.nums)
    return scope  # free text (prior treatment …) is shown, not matched


def expand(scope: Scope, items: Iterable[Item], vocab: Vocabulary) -> list[Scope]:
    """``scope`` and every item, one scope per combination of OR-alternatives."""
    out = [scope]
    for item in items:
        nxt: list[Scope] = []
        alts = item.alternatives if isinstance(item, AnyOf) else ((item,),)
        for s in out:
            for alt in alts:
                r: Scope | None = s
                for c in alt:
                    r = _and(r, c, vocab) if r is not None else None
                if r is not None:
                    nxt.append(r)
        out = nxt
    return out


@dataclass(frozen=True)
class DecisionPath:
    """One way to a decision and who travels it."""

    code: str
    decision: str
    boxes: tuple[str, ...]
    scope: Scope
    uid: str = field(default="")
    upstream: tuple[Scope, ...] = ()
    """For a way that starts on a page another page links to: the scopes of the ways that reach that link (the
    conditions before the page). Empty for a way from the flowchart's first box."""

    def upstream_consistent(self, facts: Facts, fixed: Iterable[str] = ()) -> bool:
        """False when the facts that never change (``fixed``: what the tumour is) contradict every way to the page
        this way starts on (a page only one histology is sent to); true when there is no such page or the facts
        leave one open. Facts that change over time (response, relapse) describe the patient now, not when the page
        was entered, and are not compared."""
        kept = {a: v for a, v in facts.items() if a in set(fixed)}
        return not self.upstream or not kept or any(s.consistent(kept) for s in self.upstream)

    @property
    def size(self) -> int:
        return len(self.scope.attrs)

    @property
    def depth(self) -> int:
        return len(self.boxes)

    def row(self) -> dict[str, Any]:
        """The Path node's properties."""
        return {"uid": self.uid, "decision": self.decision,
                "props": {**self.scope.props(), "uid": self.uid, "code": self.code, "size": self.size,
                          "depth": self.depth, "boxes": list(self.boxes)}}


def decision_paths(state: VersionState, vocab: Vocabulary | None = None) -> list[DecisionPath]:
    """Every distinct (decision, scope) of a version, keeping the deepest way for each."""
    vocab = vocab or load_vocabulary()
    items = {u: items_from_json(json.loads(b.constraints)) for u, b in state.boxes.items()}
    out_edges: dict[str, list[str]] = {}
    has_arrow_in: set[str] = set()
    has_edge_in: set[str] = set()
    for e in sorted(state.edges, key=lambda e: (e.head, e.tail)):
        out_edges.setdefault(e.head, []).append(e.tail)
        has_edge_in.add(e.tail)
        if e.type == "ARROW":
            has_arrow_in.add(e.tail)
    entries = sorted(u for u in state.boxes if u not in has_arrow_in)
    linked = {u for u in entries if u in has_edge_in}  # a page's first box, reached by a page link
    arrivals: dict[str, dict[str, Scope]] = {}
    found: dict[tuple[str, str], DecisionPath] = {}
    per_decision: dict[str, int] = {}

    def walk(uid: str, trail: tuple[str, ...], scopes: list[Scope]) -> None:
        if trail and uid in linked:
            for s in scopes:
                if len(arrivals.setdefault(uid, {})) < MAX_PATHS_PER_DECISION:
                    arrivals[uid].setdefault(s.key(), s)
        trail = (*trail, uid)
        own = items.get(uid, [])
        if own:
            scopes = [s2 for s in scopes for s2 in expand(s, own, vocab)]
            if not scopes:
                return
            for s in scopes:
                k = (uid, s.key())
                old = found.get(k)
                if old is None and per_decision.get(uid, 0) >= MAX_PATHS_PER_DECISION:
                    continue
                if old is None or len(trail) > old.depth:
                    if old is None:
                        per_decision[uid] = per_decision.get(uid, 0) + 1
                    found[k] = DecisionPath(state.code, uid, trail, s)
        if len(trail) >= MAX_DEPTH:
            return
        for nxt in out_edges.get(uid, []):
            if nxt not in trail:
                walk(nxt, trail, scopes)

    for entry in sorted(entries, key=lambda u: u in linked):  # the flowchart's first boxes first
        walk(entry, (), [Scope()])
    paths = []
    for (decision, skey), p in sorted(found.items()):
        uid = f"{state.code}:path:" + hashlib.sha1(f"{decision}|{skey}".encode()).hexdigest()[:12]
        upstream = tuple(arrivals.get(p.boxes[0], {}).values()) if p.boxes[0] in linked else ()
        paths.append(DecisionPath(p.code, p.decision, p.boxes, p.scope, uid, upstream))
    return paths


def best_paths(paths: Iterable[DecisionPath], facts: Facts) -> list[DecisionPath]:
    """The paths that hold for ``facts`` and go furthest: every holding path whose decision no other
    holding path passes on its way to a later decision.

    Two sibling branches that both hold (a Ph- adult whose relapse is also a late one) are both
    kept: the guideline offers both; a branch whose attributes are a strict subset of another's
    (Ph- AYA induction beside Ph- AYA *relapse*) gives way to it. The matching query applies the same
    rule, and then prefers the branches that end in a recommendation over those that still branch
    (see ``dkg.qa.cypher``).
    """
    return furthest([p for p in paths if p.scope.holds(facts)])


def furthest(holding: list[DecisionPath]) -> list[DecisionPath]:
    """Of paths that hold, those no other passes on its way further, less the ones using only part of
    what another uses (the less specific reading)."""
    return most_specific(not_passed(holding))


def not_passed(holding: list[DecisionPath]) -> list[DecisionPath]:
    """Of paths that hold, those no other passes on its way further. A path passes only boxes of its own
    guideline (box ids begin with the guideline's code), so this can be taken guideline by guideline."""
    return [x for x in holding if not any(y.decision != x.decision and x.decision in y.boxes for y in holding)]


def most_specific(leaves: list[DecisionPath]) -> list[DecisionPath]:
    """Less the paths whose attributes are a strict subset of another's."""
    return [x for x in leaves if not any(x.scope.attrs < y.scope.attrs for y in leaves)]


class PathIndex:
    """The paths of many guidelines by guideline and by a category each requires.

    ``codes(facts)`` names the guidelines, and ``paths(code, facts)`` gives the paths of one, whose first
    categorical constraint the facts satisfy (and those with none): a path requiring ``ph_status =
    negative`` can hold only for facts with that value, so a kidney patient's facts are never checked
    against the ALL paths.
    """

    def __init__(self, paths: Iterable[DecisionPath]) -> None:
        self._keyed: dict[tuple[str, str], dict[str, list[tuple[int, DecisionPath]]]] = {}
        self._free: dict[str, list[tuple[int, DecisionPath]]] = {}
        for i, p in enumerate(paths):
            if p.scope.cats:
                a, values = p.scope.cats[0]
                for x in values:
                    self._keyed.setdefault((a, x), {}).setdefault(p.code, []).append((i, p))
            else:
                self._free.setdefault(p.code, []).append((i, p))

    def codes(self, facts: Facts) -> set[str]:
        """The guidelines with a path that may hold for ``facts``."""
        out = set(self._free)
        for a, x in facts.items():
            if x is not None:
                out.update(self._keyed.get((a, str(x)), {}))
        return out

    def paths(self, code: str, facts: Facts) -> list[DecisionPath]:
        """The paths of guideline ``code`` that may hold for ``facts``, in their original order."""
        found = dict(self._free.get(code, []))
        for a, x in facts.items():
            if x is not None:
                found.update(self._keyed.get((a, str(x)), {}).get(code, []))
        return [found[i] for i in sorted(found)]


def next_boxes(state: VersionState, decisions: Iterable[str]) -> list[str]:
    """Boxes the decisions lead to (arrows and page links), sorted."""
    ds = set(decisions)
    return sorted({e.tail for e in state.edges if e.head in ds})
