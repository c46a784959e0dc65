"""Writing the CPG-QA dataset's questions: facts sampled from each decision path, a patient described by
them, templates filled in, and the :class:`Generator` that makes every item of every loaded guideline (the items,
splits and expected answers are :mod:`dkg.qa.dataset`'s)."""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Iterable, Sequence
from typing import Any

from dkg import rx as re
from dkg.constraints.vocabulary import load_vocabulary
from dkg.graph.paths import DecisionPath, Facts, PathIndex, best_paths, most_specific, next_boxes, not_passed
from dkg.qa import cypher
from dkg.qa.config import (
    QAConfig,
    apply_implications,
    current_config,
    names_of,
    note_loaded_guidelines,
    number_words,
    treatment_phrase,
)
from dkg.qa.dataset import GuidelineView, QAItem, QType, Split, split_of, templates_for
from dkg.qa.facts import tag

DOMAINS = {"age": (1, 95), "performance_status": (0, 4), "time_to_relapse": (1, 120)}


def open_fact_phrase(attr: str, value: Any, rng: random.Random | None = None) -> str:
    """A fact on an attribute the templates do not know, phrased from the registry: its names and unit
    ("Deauville score 2", "creatinine clearance 25 mL/min", "CD30-positive", "non-bulky", "stage IIB")."""
    from dkg.constraints.vocabulary import load_registry

    a = load_registry().attributes.get(attr)
    names = [n for n in ([*a.aliases, attr.replace("_", " ")] if a else [attr.replace("_", " ")]) if n]
    name = (rng.choice(names) if rng is not None else names[0]).strip()
    if not name.isupper() and not re.match(r"[A-Z][A-Za-z]*[A-Z0-9]", name):
        name = name[:1].lower() + name[1:]
    v = str(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        n = int(value) if float(value).is_integer() else value
        unit = (a.unit if a else None) or ""
        return f"{name} {n}{unit if unit == '%' else ' ' + unit if unit else ''}"
    if attr.endswith("_status") and v in ("positive", "negative"):
        marker = re.sub(r"\s*status$", "", name, flags=re.IGNORECASE)
        return f"{marker}-{v}" if rng is None or rng.random() < 0.7 else f"{marker} {v}"
    if v in ("yes", "no"):
        if v == "yes":
            return name
        return f"non-{name}" if " " not in name and "-" not in name else f"not {name}"
    return f"{name} {v}"


class _Writer:
    """Turns facts into a patient description, and templates into questions."""

    def __init__(self, conf: QAConfig, rng: random.Random) -> None:
        self.conf, self.rng = conf, rng

    def fact(self, attr: str, value: Any) -> str:
        spec = self.conf.facts.get(attr)
        if spec is None or (not isinstance(value, int | float) and str(value) not in spec):
            return open_fact_phrase(attr, value, self.rng)
        if isinstance(value, int | float) and not isinstance(value, bool):
            n = int(value)
            register = "lay" if self.rng.random() < 0.25 else "clinical"
            phrase = self.rng.choice(spec[register])
            return str(phrase).replace("{n}", str(n)).replace("{words}", number_words(n))
        forms = spec[str(value)]
        register = "lay" if self.rng.random() < 0.25 else "clinical"
        return str(self.rng.choice(forms[register]))

    def patient(self, facts: Facts, disease: str | None) -> str:
        parts = [(a, self.fact(a, v)) for a, v in facts.items()]
        self.rng.shuffle(parts)
        age = next((p for a, p in parts if a == "age"), None)
        rest = [p for a, p in parts if a != "age"]
        subject = self.rng.choice(self.conf.subjects)
        head = subject
        if age:
            prefix = any(s in age for s in ("-year-old", "y/o", "yo", "-yr-old"))
            head = f"{age} {subject}" if prefix else f"{subject} {age}"
        if disease:
            head += f" with {disease}"
        if self.rng.random() < 0.25:
            extra = self.rng.choice(self.conf.irrelevant)
            extra = extra.replace("{w}", str(self.rng.randint(48, 110))).replace(
                "{b}", str(self.rng.randint(18, 34))).replace("{h}", str(self.rng.randint(8, 15))).replace(
                "{t}", str(self.rng.randint(0, 9)))
            rest.insert(self.rng.randint(0, len(rest)), extra)
        if not rest:
            return head
        joiner = self.rng.choice([", ", ", ", "; "])
        tail = joiner.join(rest) if len(rest) < 2 or self.rng.random() < 0.5 else \
            joiner.join(rest[:-1]) + " and " + rest[-1]
        return f"{head}, {tail}"

    def typo(self, text: str) -> str:
        """Swap two letters of one template word (never a fact or a treatment)."""
        words = [m for m in re.finditer(r"(?<!\{)\b[a-z]{5,}\b(?!\})", text)]
        if not words:
            return text
        m = self.rng.choice(words)
        w = m.group(0)
        i = self.rng.randrange(len(w) - 1)
        w2 = w[:i] + w[i + 1] + w[i] + w[i + 2:]
        return text[:m.start()] + w2 + text[m.end():]

    def render(self, template: str, **slots: str) -> str:
        if self.rng.random() < 0.08:
            template = self.typo(template)
        out = template
        for k, v in slots.items():
            out = out.replace("{" + k + "}", v).replace("{" + k.capitalize() + "}", v[:1].upper() + v[1:])
        out = re.sub(r"\ba (?=[aeiouAEIOU])", "an ", out)
        return re.sub(r"\s+", " ", out).strip()


def _sample_value(attr: str, lo: float, hi: float, mode: str, rng: random.Random) -> int | None:
    dlo, dhi = DOMAINS.get(attr, (0, 120))
    a = dlo if math.isinf(lo) else max(dlo, math.ceil(lo))
    b = dhi if math.isinf(hi) else min(dhi, math.floor(hi))
    if mode == "outside":
        cands = [v for v in (a - 1, a - rng.randint(2, 10), b + 1, b + rng.randint(2, 10)) if dlo <= v <= dhi
                 and not lo <= v <= hi]
        return rng.choice(cands) if cands else None
    if a > b:
        return None
    if mode == "edge":
        return rng.choice([a, b])
    return rng.randint(a, b)


def sample_facts(path: DecisionPath, mode: str, rng: random.Random) -> dict[str, Any] | None:
    """Facts that meet the path's scope (``inside``/``edge``), or move one number ``outside``."""
    facts: dict[str, Any] = {}
    for a, values in path.scope.cats:
        facts[a] = rng.choice(values)
    nums = list(path.scope.nums)
    outside_attr = rng.choice(nums)[0] if mode == "outside" and nums else None
    for a, lo, hi in nums:
        v = _sample_value(a, lo, hi, "outside" if a == outside_attr else mode, rng)
        if v is None:
            return None
        facts[a] = v
    if mode == "outside" and outside_attr is None:
        return None
    return facts


class Generator:
    """Builds the items of every loaded guideline."""

    def __init__(self, views: Sequence[GuidelineView], conf: QAConfig | None = None,
                 per_path: int = 26, per_treatment: int = 36, per_other: int = 60) -> None:
        self.views = {v.code: v for v in views}
        self._index = PathIndex(p for v in views for p in v.paths)
        note_loaded_guidelines({v.code: names_of(v.state) for v in views})
        self.conf = conf or current_config()
        self.order = list(load_vocabulary().attributes)
        self.per_path, self.per_treatment, self.per_other = per_path, per_treatment, per_other

    def _diseases(self, v: GuidelineView) -> list[str]:
        return self.conf.diseases.get(v.code) or [v.name]

    def _rng(self, *key: str) -> random.Random:
        return random.Random(f"{self.conf.seed}|" + "|".join(key))

    def _split(self, decisions: Iterable[str]) -> Split:
        return split_of(min(decisions), self.conf.splits)

    def _item(self, qtype: QType, v: GuidelineView | None, split: Split, template: str, question: str,
              answer: str, query: str, expected: list[str], **extra: Any) -> QAItem:
        ident = hashlib.sha1(f"{qtype}|{question}".encode()).hexdigest()[:16]
        return QAItem(id=ident, QUESTION=question, ANSWER=answer, QUERY=query, Expected_Node=sorted(expected),
                      type=qtype, guideline=v.code if v else "", version=v.state.version if v else "",
                      split=split, template=template, **extra)

    @staticmethod
    def _names(question: str, v: GuidelineView) -> bool:
        """Does the question name the guideline (as the question tagger reads it)?"""
        return v.code in tag(question).guidelines

    def _route(self, v: GuidelineView, facts: Facts, nxt: list[str]) -> bool:
        """True when the facts alone (no guideline named) lead to the same boxes: the best paths of all
        guidelines together (``best_paths``) are this guideline's and lead to ``nxt``.

        Only the guidelines whose categories admit the facts are looked at (``PathIndex``), and the look
        stops at the first other guideline sure to be among the best: one with a path that holds, that no
        path of its own passes, and whose attributes no such path of this guideline strictly extends (the
        most specific of all the paths above it is then another guideline's too). Without the stop, each
        question would be checked against every loaded guideline, and generation would grow with
        items × guidelines.
        """
        mine = not_passed([p for p in self._index.paths(v.code, facts) if p.scope.holds(facts)])
        if not mine:
            return False
        leaves = list(mine)
        for code in sorted(self._index.codes(facts) - {v.code}):
            theirs = not_passed([p for p in self._index.paths(code, facts) if p.scope.holds(facts)])
            if any(not any(y.scope.attrs < x.scope.attrs for x in mine) for y in theirs):
                return False
            leaves += theirs
        best = most_specific(leaves)
        return {p.code for p in best} == {v.code} and next_boxes(v.state, {p.decision for p in best}) == nxt

    def _naming(self, v: GuidelineView, template: str, facts: Facts, key: tuple[str, ...],
                **slots: str) -> str | None:
        """The question asked again with the guideline's disease in it, for facts that other guidelines' boxes
        match too (a question that names no guideline would be ambiguous); None when no wording names it.
        Its own random stream, so that the items after it are drawn as before."""
        rng = self._rng("named", *key)
        w = _Writer(self.conf, rng)
        for disease in rng.sample(self._diseases(v), k=len(self._diseases(v))):
            question = w.render(template, patient=w.patient(facts, disease), **slots)
            if self._names(question, v):
                return question
        return None

    def _sample(self, v: GuidelineView, path: DecisionPath, mode: str,
                rng: random.Random) -> tuple[dict[str, Any], list[str], list[str]] | None:
        """Facts for ``path`` and the decisions and boxes they lead to; None when they decide nothing."""
        facts = sample_facts(path, mode, rng)
        if facts is None:
            return None
        facts = apply_implications(facts, [v.code], self.conf)
        res = v.answer(facts)
        if not res or not res[0]:
            return None
        return facts, res[0], res[1]

    def next_step_items(self, v: GuidelineView) -> list[QAItem]:
        out: list[QAItem] = []
        for path in v.paths:
            rng = self._rng("next", path.uid)
            w = _Writer(self.conf, rng)
            for i in range(self.per_path):
                sampled = self._sample(v, path, ("inside", "edge", "outside")[i % 3], rng)
                if sampled is None:
                    continue
                facts, decisions, nxt = sampled
                split = self._split(decisions)
                tpl = rng.choice(templates_for(self.conf, "next_step", split))
                disease = rng.choice(self._diseases(v)) if rng.random() < 0.8 else None
                question = w.render(tpl["text"], patient=w.patient(facts, disease))
                named = self._names(question, v)
                if not named and not self._route(v, facts, nxt):
                    renamed = self._naming(v, tpl["text"], facts, ("next", path.uid, str(i)))
                    if renamed is None:
                        continue
                    question, named = renamed, True
                query = cypher.next_step_query(facts, v.code if named else None, self.order)
                out.append(self._item("next_step", v, split, tpl["id"], question, v.text(nxt), query, nxt,
                                      decision=decisions[0], facts=json.dumps(facts, sort_keys=True)))
        return out

    def _phrases(self, v: GuidelineView) -> dict[str, str]:
        """Treatment boxes a decision leads to → the phrase that names each."""
        out: dict[str, str] = {}
        for p in v.paths:
            for u in next_boxes(v.state, [p.decision]):
                if not v.constrained(u):
                    phrase = treatment_phrase(v.state.boxes[u].textPlain)
                    if len(phrase) >= 4:
                        out[u] = phrase
        return out

    def constraint_items(self, v: GuidelineView) -> list[QAItem]:
        out: list[QAItem] = []
        phrases = self._phrases(v)
        deciders: dict[str, set[str]] = {}
        for e in v.state.edges:
            if v.constrained(e.head) and e.tail in phrases:
                deciders.setdefault(e.tail, set()).add(e.head)
        for tbox, phrase in sorted(phrases.items()):
            page = v.state.boxes[tbox].page
            low = phrase.lower()
            def expected_for(pg: str | None, low: str = low) -> list[str]:
                # as the query reads it: every constrained box with a next box that names the treatment, the
                # condition boxes that name it too ("Candidate for allogeneic HCT" beside "Allogeneic HCT")
                return sorted({e.head for e in v.state.edges if v.constrained(e.head)
                               and low in v.state.boxes[e.tail].textPlain.lower()
                               and (pg is None or v.state.boxes[e.head].page == pg)})
            on_page = expected_for(page)
            if not on_page:
                continue
            whole = expected_for(None)
            split = self._split(on_page)
            rng = self._rng("constraints", tbox)
            w = _Writer(self.conf, rng)
            for _ in range(self.per_treatment):
                disease = rng.choice(self._diseases(v))
                use_page = whole != on_page or rng.random() < 0.6
                if use_page:
                    where = rng.choice([f" in {disease} ({page})", f" on page {page} of the {disease} guideline",
                                        f" for {disease}, step {page}", f" in the {disease} pathway at {page}"])
                    expected, query = on_page, cypher.constraints_query(v.code, page, low)
                else:
                    where = rng.choice([f" in {disease}", f" for {disease}", f" in the {disease} guideline"])
                    expected, query = whole, cypher.constraints_query(v.code, None, low)
                shown = rng.choice([phrase, phrase.lower(), phrase[:1].lower() + phrase[1:]])
                tpl = rng.choice(templates_for(self.conf, "constraints", split))
                question = w.render(tpl["text"], treatment=shown, where=where)
                out.append(self._item("constraints", v, split, tpl["id"], question, v.text(expected), query,
                                      expected, decision=tbox, phrase=low))
        return out

    def advisable_items(self, v: GuidelineView) -> list[QAItem]:
        out: list[QAItem] = []
        phrases = self._phrases(v)
        pool = sorted(set(phrases.values()), key=str.lower)
        for path in v.paths:
            rng = self._rng("advisable", path.uid)
            w = _Writer(self.conf, rng)
            for i in range(self.per_path):
                sampled = self._sample(v, path, ("inside", "edge")[i % 2], rng)
                if sampled is None:
                    continue
                facts, decisions, nxt = sampled
                texts = [v.state.boxes[u].textPlain.lower() for u in nxt]
                yes = i % 4 < 2
                cands = [p for p in pool if any(p.lower() in t for t in texts) == yes]
                if not cands:
                    continue
                phrase = rng.choice(cands)
                split = self._split(decisions)
                tpl = rng.choice(templates_for(self.conf, "advisable", split))
                disease = rng.choice(self._diseases(v)) if rng.random() < 0.8 else None
                shown = rng.choice([phrase, phrase.lower()])
                question = w.render(tpl["text"], treatment=shown, patient=w.patient(facts, disease))
                named = self._names(question, v)
                if not named and not self._route(v, facts, nxt):
                    renamed = self._naming(v, tpl["text"], facts, ("advisable", path.uid, str(i)), treatment=shown)
                    if renamed is None:
                        continue
                    question, named = renamed, True
                answer = ("Yes. Recommended: " if yes else "No. Recommended instead: ") + v.text(nxt)
                query = cypher.advisable_query(facts, v.code if named else None, phrase, self.order)
                out.append(self._item("advisable", v, split, tpl["id"], question, answer, query, nxt,
                                      decision=decisions[0], facts=json.dumps(facts, sort_keys=True),
                                      phrase=phrase.lower(), advisable=yes))
        return out

    def not_covered_items(self) -> list[QAItem]:
        out: list[QAItem] = []
        views = list(self.views.values())
        for disease in self.conf.other_diseases:
            split = split_of("disease:" + disease, self.conf.splits)
            rng = self._rng("other", disease)
            w = _Writer(self.conf, rng)
            for _ in range(self.per_other):
                v = rng.choice(views)
                path = rng.choice(v.paths)
                facts = sample_facts(path, "inside", rng) or {}
                facts = apply_implications(
                    {a: x for a, x in facts.items() if a in ("age", "stage", "performance_status", "metastatic",
                                                              "relapse", "comorbidities") and rng.random() < 0.7},
                    [], self.conf)
                tpl = rng.choice(templates_for(self.conf, "not_covered", split))
                question = w.render(tpl["text"], patient=w.patient(facts, disease))
                out.append(self._item("not_covered", None, split, tpl["id"], question, self.conf.not_covered_answer,
                                      cypher.other_disease_query(disease), [], facts=json.dumps(facts, sort_keys=True)))
        for v in views:
            used: dict[str, set[str]] = {}
            for p in v.paths:
                for a, values in p.scope.cats:
                    used.setdefault(a, set()).update(values)
            vocab = load_vocabulary()
            rng = self._rng("uncovered", v.code)
            w = _Writer(self.conf, rng)
            foreign = sorted((a, str(x)) for a in used for x in (vocab.allowed_values(a) or set()) - used[a]
                             if a in self.conf.facts and str(x) in self.conf.facts[a])
            for a, x in foreign:
                split = split_of(f"uncovered:{v.code}:{a}:{x}", self.conf.splits)
                for _ in range(self.per_other // 2):
                    base = sample_facts(rng.choice(v.paths), "inside", rng) or {}
                    facts = apply_implications({**base, a: x}, [v.code], self.conf)
                    if best_paths(v.paths, facts):
                        continue
                    tpl = rng.choice(templates_for(self.conf, "not_covered", split))
                    disease = rng.choice(self._diseases(v))
                    question = w.render(tpl["text"], patient=w.patient(facts, disease))
                    out.append(self._item("not_covered", v, split, tpl["id"], question, self.conf.not_covered_answer,
                                          cypher.next_step_query(facts, v.code, self.order), [],
                                          facts=json.dumps(facts, sort_keys=True)))
        return out

    def generate(self) -> list[QAItem]:
        """All items, de-duplicated by question (first kept), in a stable order."""
        items: list[QAItem] = []
        for v in self.views.values():
            items += self.next_step_items(v) + self.constraint_items(v) + self.advisable_items(v)
        items += self.not_covered_items()
        seen: set[str] = set()
        out = []
        for it in items:
            key = re.sub(r"\W+", " ", it.QUESTION.lower()).strip()
            if key not in seen:
                seen.add(key)
                out.append(it)
        return out
