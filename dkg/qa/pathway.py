"""Where a patient stands in a guideline's pathway, and whether an answer really fits the question.

The text-to-Cypher query finds the most specific decision path that the patient's facts satisfy
and the boxes it leads to. These rules check that result against everything the question said
(``dkg.qa.answer`` applies them):

* treatments already given place the patient: the constraints of the decisions before a given
  treatment hold (someone who had the wide excision was resectable), and when the matched box is
  itself a treatment already given, the answer is the step after it;
* a box that only points to another page ("(See ALL-2)") is never an answer: either facts are
  missing to continue there, or no branch there covers the patient;
* when the question states facts that a consistent path would use and the matched path does not
  (a % necrosis, when resectability was not said), the answer would ignore part of the question,
  so the missing facts are asked for instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from dkg import rx as re
from dkg.constraints.models import attrs_of, items_from_json
from dkg.constraints.vocabulary import load_vocabulary
from dkg.graph.paths import DecisionPath, Scope, expand, furthest
from dkg.qa.clinical import load_clinical
from dkg.qa.config import QAConfig
from dkg.qa.knowledge import Knowledge

Facts = Mapping[str, Any]


@dataclass(frozen=True)
class Implied:
    attr: str
    value: Any
    because: str


@dataclass
class Placement:
    """The boxes that answer, or why there are none."""

    kind: Literal["answer", "more", "none"]
    uids: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    why: str = ""


def code_of(uid: str) -> str:
    return uid.split(":", 1)[0]


def box_items(kb: Knowledge, code: str, uid: str) -> list[Any]:
    b = kb.states[code].boxes.get(uid)
    return items_from_json(json.loads(b.constraints)) if b and b.constraints not in ("", "[]") else []


def constrained(kb: Knowledge, uid: str) -> bool:
    b = kb.states.get(code_of(uid))
    box = b.boxes.get(uid) if b else None
    return box is not None and box.constraints not in ("", "[]")


def is_pointer(kb: Knowledge, uid: str) -> bool:
    """A box that sends the reader to another page and does nothing else."""
    st = kb.states.get(code_of(uid))
    if st is None or uid not in st.boxes:
        return False
    outs = [e for e in st.edges if e.head == uid]
    return bool(outs) and all(e.type == "LINKS_TO" for e in outs) and \
        bool(re.search(r"\(\s*see [A-Z]", st.boxes[uid].textPlain, re.IGNORECASE))


def consistent(kb: Knowledge, codes: Iterable[str], facts: Facts) -> list[DecisionPath]:
    return [p for c in codes for p in kb.paths.get(c, [])
            if p.scope.consistent(facts) and p.upstream_consistent(facts, _FIXED)]


def holding(kb: Knowledge, codes: Iterable[str], facts: Facts) -> list[DecisionPath]:
    return [p for c in codes for p in kb.paths.get(c, [])
            if p.scope.holds(facts) and p.upstream_consistent(facts, _FIXED)]


def best(paths: list[DecisionPath]) -> list[DecisionPath]:
    """The holding paths that go furthest (the rule of the matching query)."""
    return furthest(paths)


def implied_by_done(kb: Knowledge, codes: Iterable[str], facts: Facts, done: Iterable[str]) -> list[Implied]:
    """Facts that hold because a treatment after a decision was given (one value on every way there)."""
    vocab = load_vocabulary()
    out: list[Implied] = []
    seen: dict[str, set[str]] = {}
    for uid in dict.fromkeys(done):
        code = code_of(uid)
        if code not in codes:
            continue
        prefixes: list[Scope] = []
        later: set[str] = set()
        after = {e.head for e in kb.states[code].edges if e.tail == uid}
        for p in kb.paths.get(code, []):
            if uid not in p.boxes and p.decision not in after:
                continue
            if uid not in p.boxes:  # the given treatment follows this path's decision: all of it held
                if p.scope.consistent(facts):
                    prefixes.append(p.scope)
                continue
            if p.scope.consistent(facts):  # an attribute asked again further on (a second CR) is not implied
                later |= {a for b in p.boxes[p.boxes.index(uid) + 1:] for a in attrs_of(box_items(kb, code, b))}
            scopes = [Scope()]
            for b in p.boxes[: p.boxes.index(uid)]:
                scopes = [s2 for s in scopes for s2 in expand(s, box_items(kb, code, b), vocab)]
            prefixes += [s for s in scopes if s.consistent(facts)]
        if not prefixes:
            continue
        cats = [dict(s.cats) for s in prefixes]
        for attr in set(cats[0]):
            values = {tuple(c.get(attr, ())) for c in cats}
            if len(values) == 1 and len(next(iter(values))) == 1 and attr not in facts and attr not in later:
                seen.setdefault(attr, set()).add(next(iter(values))[0])
                if all(i.attr != attr for i in out):
                    out.append(Implied(attr, next(iter(values))[0], kb.states[code].boxes[uid].textPlain))
    return [i for i in out if len(seen[i.attr]) == 1]  # given treatments that disagree imply nothing


def implied_by_facts(kb: Knowledge, codes: Iterable[str], facts: Facts, stated_only: Iterable[str] | None = None
                     ) -> list[Implied]:
    """Prerequisites of a stated fact: every way that asks about it has passed decisions that agree on
    another attribute first (a histologic response is judged only after the high-grade branch, so it
    implies a high grade). Only decisions *before* the one that uses the stated fact count, only
    categories with a single value on all those ways, never a baseline descriptor."""
    vocab = load_vocabulary()
    baseline = set(load_clinical().get("baseline_facts", []))
    ways = consistent(kb, codes, facts)
    out: list[Implied] = []
    said = set(facts if stated_only is None else stated_only)
    for stated in sorted(a for a in facts if a not in baseline and a in said):
        prefixes: list[dict[str, tuple[str, ...]]] = []
        later: set[str] = set()
        for p in ways:
            at = next((i for i, b in enumerate(p.boxes) if stated in attrs_of(box_items(kb, p.code, b))), None)
            if at is None:
                continue
            later |= {a for b in p.boxes[at + 1:] for a in attrs_of(box_items(kb, p.code, b))}
            scopes = [Scope()]
            for b in p.boxes[:at]:
                scopes = [s2 for sc in scopes for s2 in expand(sc, box_items(kb, p.code, b), vocab)]
            prefixes += [dict(sc.cats) for sc in scopes if sc.consistent(facts)]
        if not prefixes:
            continue
        for attr in sorted(set.intersection(*(set(c) for c in prefixes))):
            values = {tuple(c[attr]) for c in prefixes}
            if attr in facts or attr in baseline or attr in later or len(values) != 1 or len(next(iter(values))) != 1:
                continue  # (an attribute asked again further on, a second CR, is not implied)
            if all(i.attr != attr for i in out):
                out.append(Implied(attr, next(iter(values))[0], f"{stated} = {facts[stated]}"))
    return out


def coverage_gap(kb: Knowledge, codes: list[str], facts: Facts, chosen: list[DecisionPath]) -> list[str]:
    """Facts to ask for when the question states a fact of a later step than the chosen paths reach.

    A stated fact that the chosen paths do not use is harmless when another way to the same decision
    uses it ("age ≥ 60 or substantial comorbidities": the comorbidity decided, the age is consistent);
    it is a gap when only paths further on use it (a % necrosis, when the resection was not said).
    """
    used_anywhere = {a for c in codes for a in kb.attrs.get(c, set())}
    # baseline descriptors (age, performance status, comorbidities) are stated of every patient: they
    # mark no later step
    baseline = set(load_clinical().get("baseline_facts", []))
    stated = {a for a in facts if a in used_anywhere and a not in baseline}
    decisions = {p.decision for p in chosen}
    here = {a for c in codes for p in kb.paths.get(c, []) if p.decision in decisions for a in p.scope.attrs}
    later = stated - here - {a for p in chosen for a in p.scope.attrs}
    if not later:
        return []
    have = max((len(stated & p.scope.attrs) for p in chosen), default=0)
    better = [p for p in consistent(kb, codes, facts) if len(stated & p.scope.attrs) > have
              and p.scope.attrs & later]
    if not better:
        return []
    top = max(len(stated & p.scope.attrs) for p in better)
    cands = [p for p in better if len(stated & p.scope.attrs) == top]
    fewest = min(len(p.scope.missing(facts)) for p in cands)
    return sorted({a for p in cands if len(p.scope.missing(facts)) == fewest for a in p.scope.missing(facts)})


def _after(kb: Knowledge, uids: Iterable[str]) -> list[str]:
    out: set[str] = set()
    for u in uids:
        st = kb.states.get(code_of(u))
        if st:
            out |= {e.tail for e in st.edges if e.head == u}
    return sorted(out)


def _box_holds(kb: Knowledge, uid: str, facts: Facts) -> bool:
    """A decision box's own condition holds for ``facts`` (not the way to it)."""
    scopes = expand(Scope(), box_items(kb, code_of(uid), uid), load_vocabulary())
    return any(sc.holds(facts) for sc in scopes)


def place(kb: Knowledge, uids: list[str], facts: Facts, done: set[str], depth: int = 0,
          later: Facts | None = None) -> Placement:
    """The answer boxes once pointers are followed and treatments already given are passed.

    ``later``: values a later finding restates (final pathology). A decision after a given treatment
    that no way reaches with one value per attribute (low grade at first, a high-grade component on
    the specimen) is judged on its own condition with those values.
    """
    if not uids:
        return Placement("none", why="no decision path holds")
    codes = sorted({code_of(u) for u in uids})
    if depth > 6:
        return Placement("answer", uids)
    pointers = [u for u in uids if is_pointer(kb, u)]
    given = [u for u in uids if u in done]
    if not pointers and not given:
        return Placement("answer", uids)
    rest = [u for u in uids if u not in pointers and u not in given]
    if rest:
        return Placement("answer", rest)
    targets = _after(kb, pointers + given)
    if not targets:
        return Placement("none", why="the pathway ends after the treatment already given")
    if all(not constrained(kb, t) for t in targets):
        return place(kb, targets, facts, done, depth + 1, later)
    # decisions follow: which of them the facts take
    through = [p for p in consistent(kb, codes, facts) if any(t in p.boxes for t in targets)]
    hold = [p for p in through if p.scope.holds(facts)]
    if hold:
        top = best(hold)
        nxt = _after(kb, {p.decision for p in top})
        if any(constrained(kb, n) for n in nxt):
            return place(kb, nxt, facts, done, depth + 1, later) if all(n in done for n in nxt) else \
                Placement("more", missing=sorted({a for p in through for a in p.scope.missing(facts)}))
        return place(kb, nxt, facts, done, depth + 1, later)
    if later:
        local = [t for t in targets if constrained(kb, t) and _box_holds(kb, t, {**facts, **later})]
        if local:
            return place(kb, _after(kb, local), {**facts, **later}, done, depth + 1)
    open_steps = [t for t in targets if not constrained(kb, t)]
    if not through and open_steps:
        # the decisions a pointer leads to are for other patients ("if dedifferentiated … (See BONE-2)" for a
        # grade 3 chondrosarcoma): the way goes on through the steps that ask nothing
        return place(kb, open_steps, facts, done, depth + 1, later)
    if through:
        # every way the facts leave open goes on to the same steps: what they do not say decides nothing here
        # (after "blinatumomab then allo-HCT", comorbidities chose the induction, not what follows the transplant)
        steps = {frozenset(_after(kb, {p.decision})) for p in through}
        if len(steps) == 1:
            (same,) = steps
            if same and not any(constrained(kb, n) for n in same):
                return place(kb, sorted(same), facts, done, depth + 1, later)
        fewest = min(len(p.scope.missing(facts)) for p in through)
        return Placement("more", missing=sorted({a for p in through if len(p.scope.missing(facts)) == fewest
                                                 for a in p.scope.missing(facts)}))
    where = kb.states[codes[0]].boxes[(pointers + given)[0]].textPlain
    return Placement("none", why=f"no branch after “{where}” covers this patient")


# Facts no later finding changes (the tumour's histology, the Ph chromosome, the bone it is in): a condition
# box that names another value is another patient's, even when deciders are relaxed.
_FIXED = frozenset(str(a) for a in load_clinical().get("fixed_facts", []))


def deciders(kb: Knowledge, box_uids: Iterable[str], facts: Facts, relax: bool = False,
             loosest: bool = True) -> list[str]:
    """Condition boxes with an arrow into the given boxes whose paths the facts do not contradict.

    With ``relax``, a fact on an attribute the condition box sets again may describe the patient before
    it: "low-grade osteosarcoma: who gets postoperative chemotherapy?" is answered by "high-grade
    component on final pathology", a box that changes the grade, and not by "high-grade osteosarcoma",
    whose way never had a low grade. When no box passes so, the facts need only agree with the way
    *to* the condition box (a fact the question states loosely about the very thing it asks for);
    ``loosest=False`` leaves that last reading to the caller.
    """
    uids = list(box_uids)
    if not relax:
        return _deciders(kb, uids, facts, 0)
    return _deciders(kb, uids, facts, 1) or (_deciders(kb, uids, facts, 2) if loosest else [])


def _deciders(kb: Knowledge, box_uids: list[str], facts: Facts, relax: int) -> list[str]:
    out: set[str] = set()
    for uid in box_uids:
        code = code_of(uid)
        st = kb.states.get(code)
        if st is None:
            continue
        # a box that only follows another treatment ("whole-lung RT" after the chemotherapy of metastatic disease)
        # is decided by the condition before that treatment: walk up through boxes that decide nothing
        frontier, seen = [uid], {uid}
        for _ in range(3):
            heads = [e.head for u in frontier for e in st.edges if e.tail == u]
            deciding = [h for h in heads if constrained(kb, h)]
            for head in deciding:
                own = attrs_of(box_items(kb, code, head))
                ways = [p for p in kb.paths.get(code, []) if p.decision == head]
                for p in ways:
                    # relaxed, a fact on an attribute this box sets again may describe the patient before it, but
                    # only where the way to it stated that attribute earlier (low grade at diagnosis, then "high-grade
                    # component on final pathology"); on a way that never did, the fact still holds at this box
                    earlier = set().union(*(attrs_of(box_items(kb, code, b)) for b in p.boxes if b != head)) \
                        if relax == 1 else set(own) if relax == 2 else set()
                    mine = {a: v for a, v in facts.items() if a not in own or a in _FIXED or a not in earlier}
                    if p.scope.consistent(mine):
                        out.add(head)
                        break
                if relax and not ways:
                    out.add(head)  # (no way at all: the flowchart's own conditions contradict; its box still answers)
            if deciding:
                break
            frontier = [h for h in heads if h not in seen and not is_pointer(kb, h)]
            seen.update(frontier)
            if not frontier:
                break
    return sorted(out)


def conditions_on_the_way(kb: Knowledge, deciders_: Iterable[str], facts: Facts) -> list[str]:
    """The condition boxes before each decider on the ways that reach it for patients the facts allow:
    "who gets reduced-intensity HCT?" is answered by "complete response" *and* by the age or comorbidity
    box that the way to that response passed."""
    out: dict[str, None] = {}
    for d in deciders_:
        st = kb.states.get(code_of(d))
        if st is None or d not in st.boxes:
            continue
        page = st.boxes[d].page  # the conditions of this page of the flowchart, not every way into it
        ways = [p for p in kb.paths.get(code_of(d), []) if p.decision == d]
        open_ = [p for p in ways if p.scope.consistent(facts)] or ways
        for p in open_:
            for b in p.boxes:
                if b != d and constrained(kb, b) and st.boxes[b].page == page and not is_pointer(kb, b):
                    out[b] = None
    return list(out)


def downstream(kb: Knowledge, src: str) -> set[str]:
    """Every box after box ``src`` (arrows and page links)."""
    st = kb.states.get(code_of(src))
    if st is None:
        return set()
    outs: dict[str, list[str]] = {}
    for e in st.edges:
        outs.setdefault(e.head, []).append(e.tail)
    seen: set[str] = set()
    todo = [src]
    while todo:
        for t in outs.get(todo.pop(), []):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen - {src}


def past_workup(kb: Knowledge, uids: list[str], furthest: list[DecisionPath]
                ) -> tuple[list[str], list[DecisionPath]]:
    """For the work-up found (``uids``) of a patient the facts stage past it ("cT2N0M0 …: treatment?"): the boxes
    after the other furthest ways the facts hold where they branch (what the question leaves open; else ``uids``),
    and the ways that lead to the work-up (the facts past it are then a later step's)."""
    def leads(p: DecisionPath) -> bool:
        return any(e.head == p.decision and e.tail in uids for e in kb.states[code_of(p.decision)].edges)

    past = sorted({e.tail for p in furthest if not leads(p) for e in kb.states[code_of(p.decision)].edges
                   if e.head == p.decision})
    return (past if any(constrained(kb, u) for u in past) else uids), ([p for p in furthest if leads(p)] or furthest)


def workup_boxes(kb: Knowledge, code: str) -> list[str]:
    """The work-up: the unconditioned boxes right after the first box of the guideline's first page."""
    st = kb.states.get(code)
    if st is None:
        return []
    into = {e.tail for e in st.edges}
    pages = sorted({b.page for b in st.boxes.values()}, key=lambda p: [int(x) if x.isdigit() else x
                                                                        for x in re.split(r"(\d+)", p)])
    if not pages:
        return []
    entry = [u for u, b in st.boxes.items() if b.page == pages[0] and u not in into]
    out = [e.tail for e in st.edges if e.head in entry and e.type == "ARROW" and e.tail in st.boxes
           and st.boxes[e.tail].constraints in ("", "[]")]
    return sorted(set(out))


def outside_flowchart(kb: Knowledge, conf: QAConfig, codes: list[str], stated: Facts, question: str,
                      facts: Facts) -> str:
    """Why the patient is outside what the flowchart of one of ``codes`` draws, or "" (``stated``: the facts the
    question states; ``facts``: those the ways open to the patient are held against)."""
    scope = load_clinical().get("scope_facts", {})
    for code in codes:
        youngest = kb.defs[code].population_from_age if code in kb.defs else None
        age = stated.get("age")
        if youngest is not None and isinstance(age, int | float) and age < youngest:
            return f"the {code} guideline's patient groups start at age {youngest:g}; the patient is {age:g}"
        for attr, value in scope.items():
            if str(stated.get(attr)) == str(value) and attr not in kb.attrs.get(code, set()):
                return f"the {code} flowchart has no branch for {conf.labels.get(attr, attr)} = {value}"
        # a subtype the question names against the one the boxes draw ("T-ALL" where the path says "B-ALL")
        for name in conf.diseases.get(code, []):
            if not (name.isupper() and len(name) <= 4):
                continue
            asked = set(re.findall(rf"\b([A-Z])[- ]?{re.escape(name)}\b", question))
            if not asked:
                continue
            # outside only when every way open to the patient draws another subtype (a late relapse of any
            # subtype has its own box)
            per_way = [{m for b in p.boxes for m in re.findall(rf"\b([A-Z])-{re.escape(name)}\b",
                                                               kb.states[code].boxes[b].textPlain)}
                       for p in best(holding(kb, [code], facts))]
            drawn = set().union(*per_way) if per_way else set()
            if per_way and all(d and not asked & d for d in per_way):
                shown = ", ".join(sorted(d + "-" + name for d in drawn))
                return (f"the flowchart draws {shown} here; the question "
                        f"is about {', '.join(sorted(a + '-' + name for a in asked))}")
    return ""
