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

The steps have their own modules: the checks and the run :mod:`dkg.qa.querycheck`, the slots shown to the model
and the rules' query :mod:`dkg.qa.slots`, "who gets X?" :mod:`dkg.qa.who_gets`, the patient's place after the
treatments given :mod:`dkg.qa.placing`, the guideline of a question that names none :mod:`dkg.qa.which_guideline`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import neo4j
from neo4j.exceptions import ServiceUnavailable
from pydantic import BaseModel, Field

from dkg import rx as re
from dkg.constraints.models import attrs_of
from dkg.errors import ServiceUnavailableError
from dkg.graph import queries as q
from dkg.graph.loader import current_state, current_states
from dkg.graph.model import VersionState
from dkg.graph.paths import decision_paths
from dkg.inputs import question_problem
from dkg.qa import cypher
from dkg.qa.alone import given_with_another, said_alone
from dkg.qa.clinical import load_clinical
from dkg.qa.config import QAConfig, current_config, load_config
from dkg.qa.facts import Linker, Tagged, linker_for, looks_english, squash
from dkg.qa.fields import MissingFact, missing_fields
from dkg.qa.knowledge import Knowledge, content_words, split_options, without_schedule
from dkg.qa.model import Seq2Seq
from dkg.qa.pathway import (
    Placement,
    best,
    box_items,
    code_of,
    conditions_on_the_way,
    constrained,
    coverage_gap,
    downstream,
    holding,
    outside_flowchart,
    past_workup,
    workup_boxes,
)
from dkg.qa.placing import place_patient
from dkg.qa.querycheck import known_shapes, query_kind, query_shape, run_checked
from dkg.qa.reader import Reader
from dkg.qa.reading.doc import FactSource, Reading
from dkg.qa.slots import model_slots, rules_query
from dkg.qa.which_guideline import foreign_words, names_guideline, unsettled_disease
from dkg.qa.who_gets import allowed_deciders, treatment_targets
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
    role: Literal["answer", "on the way", "treatment"] = "answer"
    """``on the way``: a condition box the way to the answer passed before it ("who gets X?" answers with the
    decision into X and with the conditions met on the way there); ``treatment``: the box of X itself, which
    such an answer names after its conditions."""


class Answer(BaseModel):
    """One answer, as ``dkg ask --json`` prints it."""

    question: str
    status: Status
    answer: str
    advisable: bool | None = None
    cypher: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    missing_facts: list[str] = Field(default_factory=list)
    """What the answer needs, as the clinician reads it ("MRD status", "treatment")."""
    missing: list[MissingFact] = Field(default_factory=list)
    """The attributes among ``missing_facts``, each with its name, label, type and values (the page's fields)."""
    facts: dict[str, Any] = Field(default_factory=dict)
    facts_read: list[dict[str, Any]] = Field(default_factory=list)
    """Each fact with the words of the question it was read from and the rule that read it."""
    unread: list[str] = Field(default_factory=list)
    """Words that decide branches of a loaded guideline but that no rule understood."""
    query_source: str = ""
    message: str = ""

    @property
    def nodes(self) -> list[str]:
        return sorted(e.box for e in self.evidence if e.role == "answer") if self.status == "answered" else []


def _reject(question: str, why: str, query: str | None = None, facts: dict[str, Any] | None = None) -> Answer:
    return Answer(question=question, status="rejected", answer=f"Not answered: {why}.", cypher=query,
                  facts=facts or {}, message=why)


# Intents a decision flowchart never answers, and why.
_OUTSIDE = {"dose": "the flowchart gives no doses, schedules or durations",
            "outcome": "the flowchart gives no survival, prognosis or outcome figures",
            "outside": "the flowchart gives no drug interactions, monitoring intervals or supportive care",
            "later_line": "the flowchart draws no line of therapy after progression on the one it recommends"}


@dataclass
class _Case:
    """One question on its way to an answer: what the steps of :meth:`Answerer._answer` share."""

    session: neo4j.Session
    question: str
    tags: Tagged
    r: Reading
    loaded: set[str]
    facts: dict[str, Any]
    query: str = ""
    """The query run: the model's, or the rules' where the model's could not be used."""
    source: str = "model"
    """Who wrote the query."""
    from_history: bool = False
    """The answer follows the treatments given, whatever the facts leave open."""

    @property
    def base(self) -> dict[str, Any]:
        """What every answer to the question says once its query ran."""
        source = f"{self.source}; placed after the treatments given" if self.from_history else self.source
        return {"question": self.question, "cypher": self.query, "facts": self.facts, "query_source": source}


class Answerer:
    """Answers questions with a loaded model; the model and the question reader are built once."""

    def __init__(self, settings: Settings, model: Seq2Seq, conf: QAConfig | None = None) -> None:
        self.settings, self.model, self.conf = settings, model, conf or load_config()
        self._explicit_conf = conf is not None
        self._linker: Linker | None = None
        self._reader: Reader | None = None
        self.shapes = known_shapes()

    def _states(self) -> list[VersionState]:
        return current_states(self.settings)

    def linker(self) -> Linker:
        """Treatments of every loaded guideline (built once per answerer)."""
        if self._linker is None:
            self._linker = linker_for(self._states())
        return self._linker

    def reader(self) -> Reader:
        """The question reader over the loaded guidelines (built once per answerer)."""
        if self._reader is None:
            self._reader = Reader(Knowledge(self._states()))
            if not self._explicit_conf:  # now that the loaded guidelines' names are known
                self.conf = current_config()
        return self._reader

    def ask(self, question: str, facts: Mapping[str, Any] | None = None) -> Answer:
        """Answer one question; ``facts`` are patient facts given beside it (a form's fields)."""
        return self.ask_many([question], [facts] if facts else None)[0]

    def ask_many(self, questions: Sequence[str], given: Sequence[Mapping[str, Any] | None] | None = None
                 ) -> list[Answer]:
        """Answer many questions (generation in batches); ``given[i]`` adds facts to question ``i``.

        Given facts win over what the question's words say about the same attribute; each is recorded
        in ``facts_read`` with the rule "given with the question"."""
        pre: list[Answer | None] = []
        readings: list[Reading | None] = []
        tags: list[Tagged] = []
        linker = self.linker()
        reader = self.reader()
        for n, qn in enumerate(questions):
            problem = question_problem(qn, MAX_QUESTION)
            r = reader.read(qn) if problem is None else None
            extra = given[n] if given is not None and n < len(given) else None
            if r is not None and extra:
                for attr, value in extra.items():
                    r.facts[attr] = value
                    r.sources = [s for s in r.sources if s.attr != attr]
                    r.sources.append(FactSource(attr, value, f"{attr} = {value}", "given with the question"))
            readings.append(r)
            tags.append(model_slots(reader.kb, r) if r is not None else Tagged())
            if problem is not None:
                pre.append(_reject((qn or "")[:200], problem))
            elif r is not None and not looks_english(qn) and not r.facts:
                pre.append(_reject(qn, "only English questions are supported"))
            elif r is not None and r.intent in _OUTSIDE:
                pre.append(Answer(question=qn, status="not_covered", answer=self.conf.not_covered_answer,
                                  facts=r.facts, facts_read=r.facts_json(), message=_OUTSIDE[r.intent]))
            else:
                pre.append(None)
        todo = [i for i, a in enumerate(pre) if a is None]
        generated = self.model.generate([questions[i] for i in todo], linker,
                                        tags=[tags[i] for i in todo]) if todo else []
        try:
            out: list[Answer] = []
            gen = dict(zip(todo, generated, strict=True))
            with open_driver(self.settings) as driver, driver.session(
                    database=self.settings.neo4j_database, default_access_mode=neo4j.READ_ACCESS) as session:
                loaded = set(session.execute_read(
                    lambda tx: [str(x["code"]) for x in tx.run(q.GUIDELINE_CODES)]))  # the graph now, not at start
                for i, qn in enumerate(questions):
                    a = pre[i]
                    r = readings[i]
                    if a is None and r is not None:
                        a = self._answer(session, qn, gen[i], tags[i], r, loaded)
                        a.facts_read = r.facts_json()
                        a.unread = list(r.unread)
                    out.append(a if a is not None else _reject(qn, "the question could not be read"))
            return out
        except (ServiceUnavailable, OSError) as e:
            raise ServiceUnavailableError(f"Neo4j at {self.settings.bolt_uri} is not answering") from e

    def _answer(self, session: neo4j.Session, question: str, query: str, tags: Tagged, r: Reading,
                loaded: set[str]) -> Answer:
        """One question's answer, in steps: what is answered before any query, the query to run (the model's or
        the rules'), its checks and run, then the boxes it found placed and checked against the question."""
        facts = dict(tags.facts) if r.intent != "constraints" else dict(r.facts)
        case = _Case(session, question, tags, r, loaded, facts)
        early = self._before_query(case)
        if early is not None:
            return early
        chosen = self._query_to_run(case, query)
        if isinstance(chosen, Answer):
            return chosen
        case.query, case.source = chosen
        rows = run_checked(session, case.query, question, tags, loaded, self.settings)
        if isinstance(rows, str):
            return _reject(question, rows, case.query, facts)
        kind = query_kind(case.query)
        uids = [str(x["uid"]) for x in rows]
        if kind == "constraints":
            return self._who_gets(case, uids)
        found = sorted({code_of(u) for u in uids} | set(r.guidelines))
        outside = outside_flowchart(self.reader().kb, self.conf, found, r.facts, r.question, facts)
        if outside:
            return Answer(status="not_covered", answer=self.conf.not_covered_answer, message=outside, **case.base)
        placed = self._placed(case, rows, uids, kind)
        if isinstance(placed, Answer):
            return placed
        uids = placed
        codes = sorted({code_of(u) for u in uids})
        unsettled = unsettled_disease(self.reader().kb, r, codes, facts, self.conf.labels)
        if unsettled is not None:
            message, text = unsettled
            return Answer(status="needs_more_info", missing_facts=["disease"], message=message, answer=text,
                          **case.base)
        refused = self._not_answerable(case, uids, codes)
        if refused is not None:
            return refused
        return self._recommended(case, uids, kind)

    def _before_query(self, case: _Case) -> Answer | None:
        """Answers given before any query runs: another disease, the work-up, an advisable question naming
        no treatment."""
        r, question, facts = case.r, case.question, case.facts
        if r.other_disease:
            # A disease no loaded guideline is named for is never answered from another guideline.
            guard = cypher.other_disease_query(r.other_disease)
            gtext, gparams = cypher.parameterize(guard)
            if not case.session.execute_read(lambda tx: list(tx.run(gtext, gparams))):
                return Answer(question=question, status="not_covered", answer=self.conf.not_covered_answer,
                              cypher=guard, facts=facts, message=f"no loaded guideline covers {r.other_disease}")
        if r.workup and r.intent == "next_step" and len(r.guidelines) == 1:
            # "what work-up before we pick a regimen?": the boxes after the guideline's first box
            work = workup_boxes(self.reader().kb, r.guidelines[0])
            if work:
                return self._answered(case.session, work, {"question": question, "cypher": cypher.boxes_query(work),
                                                           "facts": facts, "query_source": "rules (the work-up step)"})
        if r.intent == "advisable" and r.treatment is None:
            return Answer(question=question, status="needs_more_info", facts=facts, missing_facts=["treatment"],
                          message="no treatment of a loaded guideline is named",
                          answer="Not answered: which treatment do you ask about? "
                                 "Please name it as the guideline does.")
        return None

    def _query_to_run(self, case: _Case, query: str) -> Answer | tuple[str, str]:
        """The model's query and "model", or the rules' query and why the model's was not used; or the answer
        when neither can be run."""
        r = case.r
        source = "model"
        named = re.search(r"\{code:\s*'([^']*)'", query)
        unscoped = len(r.guidelines) == 1 and query_kind(query) in ("next_step", "advisable") \
            and (named is None or named.group(1) != r.guidelines[0])  # never answer from another guideline
        stale = query_shape(query) not in self.shapes  # written by a model trained on an older query language
        expected = {"next_step": "next_step", "advisable": "advisable", "constraints": "constraints"}[r.intent]
        if query_kind(query) != expected or unscoped or stale:
            # The model wrote another question type than the reader found: use the dataset's query of that type.
            from_rules = rules_query(self.reader().kb, r, case.tags)
            if from_rules is None:
                why = "no treatment of a loaded guideline is named" if r.intent in ("advisable", "constraints") \
                    else "the question could not be turned into a query"
                return Answer(question=case.question, status="needs_more_info", facts=case.facts, cypher=query,
                              answer=f"Not answered: {why}. Please name the treatment or the patient's situation.",
                              message=why, missing_facts=["treatment"] if "treatment" in why else [])
            why_rules = f"wrote a {query_kind(query) or 'unknown'} query" if query_kind(query) != expected \
                else "wrote a query shape the current dataset does not use" if stale \
                else "did not restrict it to the guideline named"
            query, source = from_rules, f"rules (the model {why_rules})"
        return query, source

    def _who_gets(self, case: _Case, uids: list[str]) -> Answer:
        """The answer to a "who gets X?" question: the decisions into the boxes of X that the question allows."""
        kb, r, base = self.reader().kb, case.r, case.base
        # every decision into a box naming the treatment (the query's CONTAINS), as far as the
        # question's facts and the treatments it sets aside allow
        targets = treatment_targets(kb, r, (case.tags.treatment or "").lower())
        allowed = allowed_deciders(kb, r, targets)
        # no decision leads straight to the treatment (it follows another treatment): the conditions before
        # that one, as found on the way up
        uids = [u for u in uids if u in allowed] if uids else sorted(allowed)
        if not uids:
            return Answer(status="not_covered", answer=self.conf.not_covered_answer,
                          message="no decision of the loaded guidelines leads to that treatment for such patients",
                          **base)
        if not r.guidelines and len({code_of(u) for u in uids}) > 1:
            # "… surgery for the primary thyroid tumour?": of the guidelines whose boxes have the treatment, the
            # one the question's words name
            naming = [c for c in sorted({code_of(u) for u in uids})
                      if names_guideline(kb, r.text, c, self.conf.diseases)]
            if len(naming) == 1:
                uids = [u for u in uids if code_of(u) == naming[0]]
        foreign = [] if r.guidelines else foreign_words(kb, r.text, {code_of(u) for u in uids}, self.conf.diseases)
        if foreign:
            # "who gets salvage radiotherapy to the prostate bed?" with no disease named: the words only another
            # loaded guideline writes say the question is about that one, not the boxes found here
            return Answer(status="needs_more_info", missing_facts=["disease"],
                          message="the question's words " + ", ".join(foreign) + " belong to another guideline",
                          answer="Not answered: which disease is this about? Please name it.", **base)
        # the condition boxes the ways to those decisions passed before them answer too
        # and the boxes of X those decisions lead to, so the answer says what it is about
        about = sorted({t for u in uids for t in downstream(kb, u) if t in targets})
        return self._answered(case.session, uids, base, on_the_way=conditions_on_the_way(kb, uids, r.facts),
                              subject=about)

    def _placed(self, case: _Case, rows: list[dict[str, Any]], uids: list[str], kind: str | None
                ) -> Answer | list[str]:
        """The boxes that answer, with the patient placed by the treatments given; or the answer saying why there
        are none."""
        placed: Placement | None = None
        if kind != "not_covered":
            placed, case.from_history = place_patient(self.reader().kb, case.r, case.facts, uids, bool(rows))
        if placed is None:
            return self._not_covered_or_incomplete(case.question, case.query, case.tags, case.loaded)
        if placed.kind == "none":
            return Answer(status="not_covered", answer=self.conf.not_covered_answer, message=placed.why, **case.base)
        if placed.kind == "more":
            return self._more(placed.missing, case.base)
        return placed.uids

    def _not_answerable(self, case: _Case, uids: list[str], codes: list[str]) -> Answer | None:
        """The answer saying why the boxes found do not answer: the patient is outside what the flowchart
        draws, the question states facts of a later step, the boxes still branch, or words were not read."""
        kb, r, facts, base = self.reader().kb, case.r, case.facts, case.base
        outside = outside_flowchart(kb, self.conf, codes, r.facts, r.question, facts)
        if outside:
            return Answer(status="not_covered", answer=self.conf.not_covered_answer, message=outside, **base)
        furthest = best(holding(kb, codes, facts))
        if not r.workup and uids and all(u in workup_boxes(kb, code_of(u)) for u in uids):
            uids, furthest = past_workup(kb, uids, furthest)
        gap = [] if case.from_history else coverage_gap(kb, codes, facts, furthest)
        if gap:
            names = [self.conf.labels.get(a, a) for a in gap]
            return Answer(status="needs_more_info", missing_facts=names, missing=missing_fields(gap, self.conf.labels),
                          message="the answer would not use every "
                          "fact the question states", answer="The question states facts of a later step; please give: "
                          + ", ".join(names) + ".", **base)
        deciding = [u for u in uids if constrained(kb, u)]
        if deciding:
            missing = {a for u in deciding for a in attrs_of(box_items(kb, code_of(u), u)) if a not in facts}
            names = [self.conf.labels.get(a, a) for a in sorted(missing)] or ["a fact that decides between branches"]
            return Answer(status="needs_more_info", missing_facts=names,
                          missing=missing_fields(sorted(missing), self.conf.labels),
                          answer="The guideline branches here; please give: " + ", ".join(names) + ".", **base)
        if r.unread:
            return Answer(status="needs_more_info", missing_facts=list(r.unread),
                          message="words that decide branches of the guideline were not understood: "
                          + ", ".join(r.unread),
                          answer="Not answered: the question says something that decides the pathway and that "
                          "could not be read (" + ", ".join(r.unread) + "); please restate it.", **base)
        return None

    def _recommended(self, case: _Case, uids: list[str], kind: str | None) -> Answer:
        """The boxes as the answer; for "is X right?", whether X is among them (or is to stop, to observe)."""
        r, tags = case.r, case.tags
        answer = self._answered(case.session, uids, case.base)
        if r.withhold:  # "OK to stop therapy?": right only where the guideline's next step is to observe
            watch = load_clinical().get("observation_words", [])
            answer.advisable = all(any(re.search(w, e.text.lower()) for w in watch) for e in answer.evidence)
            answer.answer = ("Yes. Recommended: " if answer.advisable else "No. Recommended instead: ") + answer.answer
        elif kind == "advisable" and tags.treatment:
            advisable = any(tags.treatment in e.text.lower() for e in answer.evidence) or \
                _option_named(self.reader().kb, r, answer.evidence)
            if advisable and re.search(r"\b(?:full|standard|usual)[- ](?:dose|intensity)\b", r.ask) and \
                    all(re.search(r"dose modification|dose-modified|reduced|attenuated|modified", e.text.lower())
                        for e in answer.evidence):
                advisable = False  # "full-dose multiagent chemo" where the guideline modifies the dose
            if advisable and said_alone(r.text, tags.treatment):
                # "X on its own" where the boxes give X only with another drug is not what they say
                advisable = any(tags.treatment in e.text.lower() and
                                not given_with_another(e.text.lower(), tags.treatment) for e in answer.evidence)
            answer.advisable = advisable
            answer.answer = ("Yes. Recommended: " if advisable else "No. Recommended instead: ") + answer.answer
        return answer

    def _more(self, missing: Sequence[str], base: dict[str, Any]) -> Answer:
        """Not answered: the facts that would decide between the branches."""
        names = [self.conf.labels.get(a, a) for a in missing]
        return Answer(status="needs_more_info", missing_facts=names, missing=missing_fields(missing, self.conf.labels),
                      answer="Not enough facts to follow the guideline; please give: " + ", ".join(names) + ".", **base)

    def _answered(self, session: neo4j.Session, uids: list[str], base: dict[str, Any],
                  on_the_way: Sequence[str] = (), subject: Sequence[str] = ()) -> Answer:
        """The boxes as the answer, with their guideline, version and page; ``on_the_way`` boxes follow them,
        then the ``subject`` boxes (the treatment a "who gets X?" answer is about)."""
        way = set(on_the_way) - set(uids)
        about = set(subject) - set(uids) - way
        ev = {x["uid"]: x for x in session.execute_read(
            lambda tx: [x.data() for x in tx.run(q.BOX_EVIDENCE, uids=sorted(set(uids) | way | about))])}
        order = {"answer": 0, "on the way": 1, "treatment": 2}
        evidence = sorted((Evidence(guideline=str(x["guideline"]), version=str(x["version"]), page=str(x["page"]),
                                    box=str(x["uid"]), text=str(x["text"]),
                                    role="on the way" if x["uid"] in way else "treatment" if x["uid"] in about
                                    else "answer")
                           for x in ev.values()),
                          key=lambda e: (order[e.role], e.box))
        return Answer(status="answered", answer=" | ".join(e.text for e in evidence), evidence=evidence, **base)

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
                              missing_facts=names, missing=missing_fields(best[1], self.conf.labels))
        return Answer(question=question, status="not_covered", answer=self.conf.not_covered_answer, cypher=query,
                      facts=facts)


def _option_named(kb: Knowledge, r: Reading, evidence: Sequence[Evidence]) -> bool:
    """An option of a recommended box whose every word the treatment asked about says, where the words were
    linked to a longer treatment they do not name in full ("TKI plus full multiagent chemo" asks about "TKI +
    chemotherapy", not about "continue TKI + multiagent chemotherapy")."""
    if r.treatment is None or squash(r.treatment.text) in squash(r.question):
        return False  # the question names that treatment as the box writes it: it asks about that box, not a part
    asked = r.ask.lower()
    for x in r.excluded:  # "… rather than TKI + steroids alone": what is set aside is not asked about
        asked = asked.replace(x.lower(), " ")
    said = content_words(kb.expand(asked)) & r.treatment.words
    for e in evidence:
        for o in split_options(e.text):
            # its dose and schedule, and what follows it ("… every 3 weeks × 4 doses, then maintenance with one
            # of them"), are how it is given, not another treatment
            lead = without_schedule(re.split(r",?\s+then\s+", o.lower())[0])
            for words in (content_words(kb.expand(o.lower())), content_words(kb.expand(lead))):
                if words and words <= said:
                    return True
    return False

