"""Answering a question: model → Cypher → strict checks → read-only run → answer with evidence.

The checks, in order (a query failing any of them is not run; the answer says which failed):

1. the question is non-empty, at most 1,000 characters, and English (or states facts we know);
2. Neo4j itself plans the query (``EXPLAIN``): it must be valid Cypher of query type ``r``;
3. its literal values match the question: the patient facts are exactly those the tagger read in
   it, a guideline code is a loaded one (and one the question names, if it names any), a
   treatment or disease string occurs in the question, a page exists;
4. it runs with every literal as a parameter, in a read transaction with a timeout.

Then: no row → ``not_covered``, unless the facts are consistent with some decision path of a
named guideline and only incomplete → ``needs_more_info`` naming the missing facts; rows that are
themselves decisions (the facts do not decide between branches) → ``needs_more_info``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

import neo4j
from neo4j.exceptions import Neo4jError, ServiceUnavailable
from pydantic import BaseModel, Field

from dkg.constraints.models import AnyOf, items_from_json
from dkg.errors import ServiceUnavailableError
from dkg.graph import queries as q
from dkg.graph.loader import current_state, guidelines
from dkg.graph.paths import decision_paths
from dkg.qa import cypher
from dkg.qa.dataset import QAConfig, load_config
from dkg.qa.facts import Linker, Tagged, linker_for, looks_english, squash, tag_all
from dkg.qa.model import Seq2Seq, slot_params
from dkg.services.neo4j import open_driver
from dkg.settings import Settings

MAX_QUESTION = 1000
Status = Literal["answered", "not_covered", "needs_more_info", "rejected"]


class Evidence(BaseModel):
    """Where an answer comes from."""

    guideline: str
    version: str
    page: str
    box: str
    text: str


class Answer(BaseModel):
    """One answer, as ``dkg ask --json`` prints it."""

    question: str
    status: Status
    answer: str
    advisable: bool | None = None
    cypher: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    missing_facts: list[str] = Field(default_factory=list)
    facts: dict[str, Any] = Field(default_factory=dict)
    message: str = ""

    @property
    def nodes(self) -> list[str]:
        return sorted(e.box for e in self.evidence) if self.status == "answered" else []


def _reject(question: str, why: str, query: str | None = None, facts: dict[str, Any] | None = None) -> Answer:
    return Answer(question=question, status="rejected", answer=f"Not answered: {why}.", cypher=query,
                  facts=facts or {}, message=why)


def check_literals(query: str, question: str, tags: Tagged, loaded: set[str], settings: Settings) -> str | None:
    """Why the query's literal values do not fit the question (None when they do)."""
    kind = query_kind(query)
    if kind is None:
        return "the query has none of the known shapes"
    qtext = squash(question)
    if kind in ("next_step", "advisable") and "$facts" not in query:
        facts = cypher.facts_in(query)
        if not cypher.same_facts(facts, tags.facts):
            return f"its patient facts {facts} are not the ones the question states {tags.facts}"
    code = re.search(r"\{code:\s*'([^']*)'", query)
    if code:
        if code.group(1) not in loaded:
            return f"guideline {code.group(1)!r} is not loaded"
        if tags.guidelines and code.group(1) not in tags.guidelines:
            return f"guideline {code.group(1)!r} is not the one the question names ({', '.join(tags.guidelines)})"
    for phrase in re.findall(r"CONTAINS\s*'((?:[^'\\]|\\.)*)'", query):
        if squash(phrase) not in qtext and phrase != tags.treatment:
            return f"{phrase!r} does not occur in the question"
    page_lit = re.search(r"page:\s*'([^']*)'", query)
    page = page_lit.group(1) if page_lit else (tags.page if "$page" in query else None)
    if page and code:
        with open_driver(settings) as driver:
            recs, _, _ = driver.execute_query(q.PAGE_EXISTS, code=code.group(1), page=page,
                                              database_=settings.neo4j_database, routing_=neo4j.RoutingControl.READ)
            if not recs or not recs[0]["exists"]:
                return f"page {page!r} does not exist in {code.group(1)}"
    return None


def query_kind(query: str) -> str | None:
    if "AS facts" in query and "AS advisable" in query:
        return "advisable"
    if "AS facts" in query:
        return "next_step"
    if "HAS_DECISION" in query and "CONTAINS" in query:
        return "constraints"
    if "(g:Guideline)" in query:
        return "not_covered"
    return None


class Answerer:
    """Answers questions with a loaded model; the model is loaded once."""

    def __init__(self, settings: Settings, model: Seq2Seq, conf: QAConfig | None = None) -> None:
        self.settings, self.model, self.conf = settings, model, conf or load_config()
        self._linker: Linker | None = None

    def linker(self) -> Linker:
        """Treatments of every loaded guideline (built once per answerer)."""
        if self._linker is None:
            states = [current_state(self.settings, str(g["code"])) for g in guidelines(self.settings)]
            self._linker = linker_for(s for s in states if s is not None)
        return self._linker

    def ask(self, question: str) -> Answer:
        return self.ask_many([question])[0]

    def ask_many(self, questions: Sequence[str]) -> list[Answer]:
        """Answer many questions (generation in batches)."""
        pre: list[Answer | None] = []
        tags: list[Tagged] = []
        linker = self.linker()
        for qn in questions:
            t = tag_all(qn, linker) if qn and qn.strip() and len(qn) <= MAX_QUESTION else Tagged()
            tags.append(t)
            if not qn or not qn.strip():
                pre.append(_reject(qn, "the question is empty"))
            elif len(qn) > MAX_QUESTION:
                pre.append(_reject(qn[:200], f"the question is longer than {MAX_QUESTION} characters ({len(qn)})"))
            elif not looks_english(qn) and not t.facts:
                pre.append(_reject(qn, "only English questions are supported"))
            else:
                pre.append(None)
        todo = [i for i, a in enumerate(pre) if a is None]
        generated = self.model.generate([questions[i] for i in todo], linker,
                                        tags=[tags[i] for i in todo]) if todo else []
        try:
            loaded = {str(g["code"]) for g in guidelines(self.settings)}
            out: list[Answer] = []
            gen = dict(zip(todo, generated, strict=True))
            with open_driver(self.settings) as driver, driver.session(
                    database=self.settings.neo4j_database, default_access_mode=neo4j.READ_ACCESS) as session:
                for i, qn in enumerate(questions):
                    a = pre[i]
                    out.append(a if a is not None else self._answer(session, qn, gen[i], tags[i], loaded))
            return out
        except (ServiceUnavailable, OSError) as e:
            raise ServiceUnavailableError(f"Neo4j at {self.settings.bolt_uri} is not answering") from e

    def _answer(self, session: neo4j.Session, question: str, query: str, tags: Tagged, loaded: set[str]) -> Answer:
        facts = dict(tags.facts)
        if tags.other_disease and not tags.guidelines:
            # A disease no loaded guideline is named for is never answered from another guideline.
            guard = cypher.other_disease_query(tags.other_disease)
            gtext, gparams = cypher.parameterize(guard)
            if not session.execute_read(lambda tx: list(tx.run(gtext, gparams))):
                return Answer(question=question, status="not_covered", answer=self.conf.not_covered_answer,
                              cypher=guard, facts=facts,
                              message=f"no loaded guideline covers {tags.other_disease}")
        slots = slot_params(query, tags)
        if isinstance(slots, str):
            return _reject(question, slots, query, facts)
        text, params = cypher.parameterize(query)
        params.update(slots)
        try:
            summary = session.run("EXPLAIN " + text, params).consume()
        except Neo4jError as e:
            return _reject(question, f"the generated query is not valid Cypher ({e.code})", query, facts)
        if summary.query_type != "r":
            return _reject(question, f"the generated query is not read-only (type {summary.query_type})", query, facts)
        why = check_literals(query, question, tags, loaded, self.settings)
        if why:
            return _reject(question, why, query, facts)
        try:
            rows = [r.data() for r in session.execute_read(
                neo4j.unit_of_work(timeout=10.0)(lambda tx: list(tx.run(text, params))))]
        except Neo4jError as e:
            return _reject(question, f"the query failed on Neo4j ({e.code})", query, facts)
        kind = query_kind(query)
        if not rows or kind == "not_covered":
            return self._not_covered_or_incomplete(question, query, tags, loaded)
        ev = {r["uid"]: r for r in session.execute_read(
            lambda tx: [x.data() for x in tx.run(q.BOX_EVIDENCE, uids=[str(r["uid"]) for r in rows])])}
        evidence = [Evidence(guideline=str(x["guideline"]), version=str(x["version"]), page=str(x["page"]),
                             box=str(x["uid"]), text=str(x["text"])) for x in ev.values()]
        evidence.sort(key=lambda e: e.box)
        if kind in ("next_step", "advisable"):
            deciding = [x for x in ev.values() if x["constraints"] not in (None, "", "[]")]
            if deciding:
                missing = set()
                for x in deciding:
                    for item in items_from_json(json.loads(x["constraints"])):
                        members = [c for alt in item.alternatives for c in alt] if isinstance(item, AnyOf) else [item]
                        missing |= {c.attr for c in members if c.attr not in facts}
                names = [self.conf.labels.get(a, a) for a in sorted(missing)] or [
                    "a fact that decides between: " + " / ".join(e.text for e in evidence)]
                return Answer(question=question, status="needs_more_info", cypher=query, facts=facts,
                              answer="The guideline branches here; please give: " + ", ".join(names) + ".",
                              evidence=evidence, missing_facts=names)
        answer = " | ".join(e.text for e in evidence)
        advisable = None
        if kind == "advisable":
            advisable = any(bool(r.get("advisable")) for r in rows)
            answer = ("Yes. Recommended: " if advisable else "No. Recommended instead: ") + answer
        return Answer(question=question, status="answered", answer=answer, advisable=advisable, cypher=query,
                      evidence=evidence, facts=facts)

    def _not_covered_or_incomplete(self, question: str, query: str, tags: Tagged, loaded: set[str]) -> Answer:
        facts = dict(tags.facts)
        codes = [c for c in tags.guidelines if c in loaded]
        code = re.search(r"\{code:\s*'([^']*)'", query)
        if code and code.group(1) in loaded and code.group(1) not in codes:
            codes.append(code.group(1))
        if not tags.other_disease:
            best: tuple[int, list[str]] | None = None
            for c in codes:
                state = current_state(self.settings, c)
                if state is None:
                    continue
                for p in decision_paths(state):
                    if p.scope.consistent(facts) and p.scope.missing(facts):
                        cand = (len(p.scope.missing(facts)), p.scope.missing(facts))
                        if best is None or cand[0] < best[0]:
                            best = cand
            if best is not None:
                names = [self.conf.labels.get(a, a) for a in best[1]]
                return Answer(question=question, status="needs_more_info", cypher=query, facts=facts,
                              answer="Not enough facts to follow the guideline; please give: " + ", ".join(names) + ".",
                              missing_facts=names)
        return Answer(question=question, status="not_covered", answer=self.conf.not_covered_answer, cypher=query,
                      facts=facts)
