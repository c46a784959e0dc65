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

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import neo4j
from neo4j.exceptions import Neo4jError, ServiceUnavailable
from pydantic import BaseModel, Field

from dkg import rx as re
from dkg.constraints.models import attrs_of
from dkg.constraints.vocabulary import load_vocabulary
from dkg.errors import ServiceUnavailableError
from dkg.graph import queries as q
from dkg.graph.loader import current_state, current_states
from dkg.graph.model import VersionState
from dkg.graph.paths import decision_paths
from dkg.inputs import question_problem
from dkg.qa import cypher
from dkg.qa.clinical import load_clinical
from dkg.qa.config import QAConfig, current_config, load_config, treatment_phrase
from dkg.qa.facts import Linker, Tagged, linker_for, looks_english, squash
from dkg.qa.knowledge import Knowledge, content_words, split_options
from dkg.qa.model import Seq2Seq, slot_params
from dkg.qa.pathway import (
    Placement,
    best,
    box_items,
    code_of,
    conditions_on_the_way,
    constrained,
    coverage_gap,
    deciders,
    holding,
    implied_by_done,
    implied_by_facts,
    is_pointer,
    place,
)
from dkg.qa.reader import Reader
from dkg.qa.reading.doc import FactSource, Reading
from dkg.qa.reading.text import SENTENCE_END
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


def _shape(query: str) -> str:
    """A query with its values, slots and guideline filter blanked: what the dataset's templates fix."""
    q = re.sub(r"\{\s*code:[^{}]*\}", "{code}", query)
    q = re.sub(r"WITH\s*\{[^{}]*\}\s*AS facts", "WITH $facts AS facts", q)
    q = re.sub(r"'(?:[^'\\]|\\.)*'|\$\w+|(?<![\w$.])-?\d+(?:\.\d+)?(?![\w.])", "V", q)
    return " ".join(q.replace("(p:Path)", "(p:Path {code})").split())


def known_shapes() -> set[str]:
    """The shapes of the queries the current dataset teaches (a model trained on older ones is not trusted)."""
    order = list(load_vocabulary().attributes)
    qs = [cypher.next_step_query({"age": 1}, c, order) for c in (None, "X")]
    qs += [cypher.advisable_query({"age": 1}, c, "t", order) for c in (None, "X")]
    qs += [cypher.constraints_query("X", p, "t") for p in (None, "P")] + [cypher.other_disease_query("d")]
    return {_shape(x) for x in qs}


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


# Intents a decision flowchart never answers, and why.
_OUTSIDE = {"dose": "the flowchart gives no doses, schedules or durations",
            "outcome": "the flowchart gives no survival, prognosis or outcome figures",
            "outside": "the flowchart gives no drug interactions, monitoring intervals or supportive care",
            "later_line": "the flowchart draws no line of therapy after progression on the one it recommends"}


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
            tags.append(self._tags(r) if r is not None else Tagged())
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

    def _tags(self, r: Reading) -> Tagged:
        """What the model is shown: the slots its query may use, filled from the reading."""
        kb = self.reader().kb
        t = Tagged(facts=dict(r.facts), guidelines=list(r.guidelines), other_disease=r.other_disease, page=r.page)
        if r.intent == "constraints":
            t.facts = {}
            boxes = self._constraint_boxes(r)
            if r.treatment is not None and (r.treatment.text in r.text or boxes == [r.treatment.uid] or (
                    len(boxes) > 1 and all(r.treatment.text in kb.states[code_of(b)].boxes[b].textPlain.lower()
                                           for b in boxes))):
                # named as the guideline writes it, the option of the one box meant, or one option that several
                # boxes list
                t.treatment = r.treatment.text
            elif boxes:
                box = kb.states[code_of(boxes[0])].boxes[boxes[0]]
                t.treatment = treatment_phrase(box.textPlain).lower()
        elif r.intent == "advisable" and r.treatment is not None:
            t.treatment = r.treatment.text
        stated = set(r.facts)
        implied = implied_by_done(kb, r.guidelines or list(kb.states), r.facts, [o.uid for o in r.done])
        for i in implied:
            t.facts[i.attr] = i.value
            if r.intent != "constraints":
                r.facts[i.attr] = i.value
                r.sources.append(FactSource(i.attr, i.value, i.because, "implied: that treatment was given"))
        if r.intent != "constraints" and r.guidelines:
            for i in implied_by_facts(kb, r.guidelines, r.facts, stated):
                t.facts[i.attr] = i.value
                r.facts[i.attr] = i.value
                r.sources.append(FactSource(i.attr, i.value, i.because, "implied: every way that uses it has it"))
        return t

    def _constraint_boxes(self, r: Reading) -> list[str]:
        """The treatment boxes a "who gets X?" question names: the best-named ones that some patient
        consistent with the question's facts reaches."""
        if r.boxes_asked is not None:
            return r.boxes_asked
        r.boxes_asked = self._find_constraint_boxes(r)
        return r.boxes_asked

    def _find_constraint_boxes(self, r: Reading) -> list[str]:
        kb = self.reader().kb
        codes = r.guidelines or list(kb.states)
        # the options the reader found named best ("pembro + axitinib" is one option of two boxes): every box
        # that has one, whatever else the box lists
        named = list(dict.fromkeys(o.uid for o in r.treatments if o.code in codes)) \
            if len({o.text for o in r.treatments}) == 1 else []
        for relax in (False, True):
            usable = [u for u in named if deciders(kb, [u], r.facts, relax)]
            if usable:
                return usable
        scored = kb.link_boxes(kb.aliased(r.ask or _ask_text(r)), codes, r.excluded)
        if not scored:
            return []
        for loosest in (False, True):  # a box some reading of the facts reaches, before the loosest reading
            for score in dict.fromkeys(s for s, _ in scored):
                if score < 0.5 * scored[0][0]:
                    break
                tied = [u for s, u in scored if abs(s - score) < 1e-9]
                for relax in ((False, True) if not loosest else (True,)):
                    usable = [u for u in tied if deciders(kb, [u], r.facts, relax, loosest)]
                    if usable:
                        return usable
        return []

    def _answer(self, session: neo4j.Session, question: str, query: str, tags: Tagged, r: Reading,
                loaded: set[str]) -> Answer:
        facts = dict(tags.facts) if r.intent != "constraints" else dict(r.facts)
        kb = self.reader().kb
        if r.other_disease:
            # A disease no loaded guideline is named for is never answered from another guideline.
            guard = cypher.other_disease_query(r.other_disease)
            gtext, gparams = cypher.parameterize(guard)
            if not session.execute_read(lambda tx: list(tx.run(gtext, gparams))):
                return Answer(question=question, status="not_covered", answer=self.conf.not_covered_answer,
                              cypher=guard, facts=facts, message=f"no loaded guideline covers {r.other_disease}")
        if r.workup and r.intent == "next_step" and len(r.guidelines) == 1:
            # "what work-up before we pick a regimen?": the boxes after the guideline's first box
            work = _workup_boxes(kb, r.guidelines[0])
            if work:
                return self._answered(session, work, {"question": question, "cypher": cypher.boxes_query(work),
                                                      "facts": facts, "query_source": "rules (the work-up step)"})
        if r.intent == "advisable" and r.treatment is None:
            return Answer(question=question, status="needs_more_info", facts=facts, missing_facts=["treatment"],
                          message="no treatment of a loaded guideline is named",
                          answer="Not answered: which treatment do you ask about? "
                                 "Please name it as the guideline does.")
        source = "model"
        named = re.search(r"\{code:\s*'([^']*)'", query)
        unscoped = len(r.guidelines) == 1 and query_kind(query) in ("next_step", "advisable") \
            and (named is None or named.group(1) != r.guidelines[0])  # never answer from another guideline
        stale = _shape(query) not in self.shapes  # written by a model trained on an older query language
        expected = {"next_step": "next_step", "advisable": "advisable", "constraints": "constraints"}[r.intent]
        if query_kind(query) != expected or unscoped or stale:
            # The model wrote another question type than the reader found: use the dataset's query of that type.
            rules_query = self._rules_query(r, tags)
            if rules_query is None:
                why = "no treatment of a loaded guideline is named" if r.intent in ("advisable", "constraints") \
                    else "the question could not be turned into a query"
                return Answer(question=question, status="needs_more_info", facts=facts, cypher=query,
                              answer=f"Not answered: {why}. Please name the treatment or the patient's situation.",
                              message=why, missing_facts=["treatment"] if "treatment" in why else [])
            why_rules = f"wrote a {query_kind(query) or 'unknown'} query" if query_kind(query) != expected \
                else "wrote a query shape the current dataset does not use" if stale \
                else "did not restrict it to the guideline named"
            query, source = rules_query, f"rules (the model {why_rules})"
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
        literal_problem = check_literals(query, question, tags, loaded, self.settings)
        if literal_problem:
            return _reject(question, literal_problem, query, facts)
        try:
            rows = [r_.data() for r_ in session.execute_read(
                neo4j.unit_of_work(timeout=10.0)(lambda tx: list(tx.run(text, params))))]
        except Neo4jError as e:
            return _reject(question, f"the generated query failed on Neo4j ({e.code})", query, facts)
        kind = query_kind(query)
        uids = [str(x["uid"]) for x in rows]
        base = {"question": question, "cypher": query, "facts": facts, "query_source": source}
        if kind == "constraints":
            # every decision into a box naming the treatment (the query's CONTAINS), as far as the
            # question's facts and the treatments it sets aside allow
            phrase = (tags.treatment or "").lower()
            # a box is left out when every option of it that names the treatment also names what is set aside
            # ("cabozantinib (not with nivo)": the box listing "nivolumab + cabozantinib; cabozantinib" stays)
            targets = [u for c in (r.guidelines or list(kb.states)) if c in kb.states
                       for u, b in kb.states[c].boxes.items() if phrase and phrase in b.textPlain.lower()
                       and any(not any(content_words(kb.expand(x)) <= content_words(kb.expand(o))
                                       for x in r.excluded if content_words(kb.expand(x)))
                               for o in ([o for o in split_options(b.textPlain) if phrase in o.lower()]
                                         or [b.textPlain]))]
            if r.treatment is not None and len(r.treatment.text) > len(phrase):
                # the question names a longer option than the phrase ("neoadjuvant chemo before wide excision"):
                # the boxes that have it, not every box with "neoadjuvant chemotherapy"
                written = r.treatment.text.lower()
                whole = [u for u in targets if written in kb.states[code_of(u)].boxes[u].textPlain.lower()]
                targets = whole or targets
            asked = dict(r.facts)
            if "histology" in asked and re.search(r"\b(?:sub-?types?|types|kinds|variants|forms)\b", r.text):
                # "which osteosarcoma subtypes get X?": the family named, every subtype of it asked about
                family = str(asked.pop("histology"))
                any_histology = set(deciders(kb, targets, {**asked, "histology": "_"}))
                allowed = {u for u in deciders(kb, targets, asked)
                           if u not in any_histology or family in str(kb.states[code_of(u)].boxes[u].constraints)}
            else:
                allowed = set()
            allowed = allowed or set(deciders(kb, targets, r.facts)) or \
                set(deciders(kb, targets, r.facts, relax=True))
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
                naming = [c for c in sorted({code_of(u) for u in uids}) if _names(kb, r.text, c, self.conf.diseases)]
                if len(naming) == 1:
                    uids = [u for u in uids if code_of(u) == naming[0]]
            foreign = [] if r.guidelines else _foreign_words(kb, r.text, {code_of(u) for u in uids},
                                                             self.conf.diseases)
            if foreign:
                # "who gets salvage radiotherapy to the prostate bed?" with no disease named: the words only another
                # loaded guideline writes say the question is about that one, not the boxes found here
                return Answer(status="needs_more_info", missing_facts=["disease"],
                              message="the question's words " + ", ".join(foreign) + " belong to another guideline",
                              answer="Not answered: which disease is this about? Please name it.", **base)
            # the condition boxes the ways to those decisions passed before them answer too
            # and the boxes of X those decisions lead to, so the answer says what it is about
            about = sorted({t for u in uids for t in _downstream(kb, u) if t in targets})
            return self._answered(session, uids, base, on_the_way=conditions_on_the_way(kb, uids, r.facts),
                                  subject=about)
        outside = self._outside(r, sorted({code_of(u) for u in uids} | set(r.guidelines)), facts)
        if outside:
            return Answer(status="not_covered", answer=self.conf.not_covered_answer, message=outside, **base)
        from_history = False  # the answer follows the treatments given, whatever the facts leave open
        if not rows and kind != "not_covered":
            # no way holds with every fact its decisions ask for, but the history places the patient: what follows
            # the treatments given ("blinatumomab then allo-HCT": post-transplant surveillance) needs no more
            after_given = _after_given(kb, r, facts)
            if after_given is not None:
                rows, uids, from_history = [{"uid": u} for u in after_given.uids], list(after_given.uids), True
                base["query_source"] = f"{source}; placed after the treatments given"
        if not rows or kind == "not_covered":
            return self._not_covered_or_incomplete(question, query, tags, loaded)
        # a box the question says was given is never the answer, however partly it was named
        placed = place(kb, uids, facts, r.given() | ({o.uid for o in r.done} & set(uids)), later=r.later)
        if placed.kind == "none":
            return Answer(status="not_covered", answer=self.conf.not_covered_answer, message=placed.why, **base)
        if placed.kind == "more":
            # the facts leave the way open, but the history places the patient: what follows the treatments given
            after_given = _after_given(kb, r, facts)
            if after_given is not None:
                placed, from_history = after_given, True
                base["query_source"] = f"{source}; placed after the treatments given"
        if placed.kind == "more":
            return self._more(placed.missing, base)
        uids = placed.uids
        # never a step before one the question says was given ("… definitive RT, and she finished her adjuvant
        # chemo": the answer comes after the chemo, not at the RT)
        given = r.given() | {o.uid for o in r.done}
        later_steps = set().union(*(_downstream(kb, u) for u in uids))
        ahead = sorted(given & later_steps)
        if ahead:
            again = place(kb, ahead, facts, given, later=r.later)
            if again.kind == "none":
                return Answer(status="not_covered", answer=self.conf.not_covered_answer, message=again.why, **base)
            if again.kind == "more":
                return self._more(again.missing, base)
            uids = again.uids
        if r.not_given:
            # a treatment the question says was not given yet, on the way to the answer, comes first
            # (a box that only sends the reader to another page is done there: "no systemic therapy yet" is not
            # answered by "Systemic therapy by histology and risk (See KID-4)")
            missed = {o.uid for o in r.not_given if not is_pointer(kb, o.uid)}
            ways = [p for p in best(holding(kb, sorted({code_of(u) for u in uids}), facts)) if missed & set(p.boxes)]
            first = sorted({next(b for b in p.boxes if b in missed) for p in ways})
            if first:
                uids = first
        codes = sorted({code_of(u) for u in uids})
        # (a fact worked out by the guideline's own definitions, a T category from a size, presumes it)
        presumed = {s.attr for s in r.sources if codes and s.rule.startswith(f"{codes[0]}:")}
        if codes and not r.guidelines and kind != "constraints":
            foreign = foreign_facts(kb, codes, {a: v for a, v in facts.items() if a not in presumed})
            if foreign:
                # no disease named, and the question states what only another guideline decides on ("PD-L1 CPS 5"
                # is no kidney fact): the answer found would be another disease's
                names = [self.conf.labels.get(a, a) for a in foreign]
                return Answer(status="needs_more_info", missing_facts=["disease"],
                              message="the question states " + ", ".join(names) + ", which only another guideline "
                              "decides on, and names no disease",
                              answer="Not answered: which disease is this about? Please name it.", **base)
        if len(codes) == 1 and not r.guidelines and len(kb.states) > 1 and kind != "constraints" and \
                not distinguishing(kb, codes[0], {a: v for a, v in facts.items() if a not in presumed}):
            # no disease named and nothing said that only this guideline asks about: another disease's patient
            # would read the same ("a 3.8 cm lesion, AFP 35" is not a kidney question)
            return Answer(status="needs_more_info", missing_facts=["disease"],
                          message=f"the question names no disease and states nothing only {codes[0]} decides on",
                          answer="Not answered: which disease is this about? Please name it.", **base)
        if len(codes) > 1 and not r.guidelines and kind != "constraints":
            # the facts hold in two guidelines and the question names no disease: which patient is it?
            return Answer(status="needs_more_info", missing_facts=["disease"],
                          message="the facts fit " + " and ".join(codes) + " and the question names no disease",
                          answer="Not answered: the facts fit more than one guideline (" + ", ".join(codes) +
                                 "); please name the disease.", **base)
        outside = self._outside(r, codes, facts)
        if outside:
            return Answer(status="not_covered", answer=self.conf.not_covered_answer, message=outside, **base)
        gap = [] if from_history else coverage_gap(kb, codes, facts, best(holding(kb, codes, facts)))
        if gap:
            names = [self.conf.labels.get(a, a) for a in gap]
            return Answer(status="needs_more_info", missing_facts=names, message="the answer would not use every "
                          "fact the question states", answer="The question states facts of a later step; please give: "
                          + ", ".join(names) + ".", **base)
        deciding = [u for u in uids if constrained(kb, u)]
        if deciding:
            missing = {a for u in deciding for a in attrs_of(box_items(kb, code_of(u), u)) if a not in facts}
            names = [self.conf.labels.get(a, a) for a in sorted(missing)] or ["a fact that decides between branches"]
            return Answer(status="needs_more_info", missing_facts=names,
                          answer="The guideline branches here; please give: " + ", ".join(names) + ".", **base)
        if r.unread:
            return Answer(status="needs_more_info", missing_facts=list(r.unread),
                          message="words that decide branches of the guideline were not understood: "
                          + ", ".join(r.unread),
                          answer="Not answered: the question says something that decides the pathway and that "
                          "could not be read (" + ", ".join(r.unread) + "); please restate it.", **base)
        answer = self._answered(session, uids, base)
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
            answer.advisable = advisable
            answer.answer = ("Yes. Recommended: " if advisable else "No. Recommended instead: ") + answer.answer
        return answer

    def _more(self, missing: Sequence[str], base: dict[str, Any]) -> Answer:
        """Not answered: the facts that would decide between the branches."""
        names = [self.conf.labels.get(a, a) for a in missing]
        return Answer(status="needs_more_info", missing_facts=names,
                      answer="Not enough facts to follow the guideline; please give: " + ", ".join(names) + ".", **base)

    def _outside(self, r: Reading, codes: list[str], facts: dict[str, Any]) -> str:
        """Why the patient is outside what the flowchart draws, or ""."""
        kb = self.reader().kb
        scope = load_clinical().get("scope_facts", {})
        for code in codes:
            youngest = kb.defs[code].population_from_age if code in kb.defs else None
            age = r.facts.get("age")
            if youngest is not None and isinstance(age, int | float) and age < youngest:
                return f"the {code} guideline's patient groups start at age {youngest:g}; the patient is {age:g}"
            for attr, value in scope.items():
                if str(r.facts.get(attr)) == str(value) and attr not in kb.attrs.get(code, set()):
                    return f"the {code} flowchart has no branch for {self.conf.labels.get(attr, attr)} = {value}"
            # a subtype the question names against the one the boxes draw ("T-ALL" where the path says "B-ALL")
            for name in self.conf.diseases.get(code, []):
                if not (name.isupper() and len(name) <= 4):
                    continue
                asked = set(re.findall(rf"\b([A-Z])[- ]?{re.escape(name)}\b", r.question))
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

    def _rules_query(self, r: Reading, tags: Tagged) -> str | None:
        order = list(load_vocabulary().attributes)
        code = r.guidelines[0] if len(r.guidelines) == 1 else None
        if r.intent == "next_step":
            return cypher.next_step_query(tags.facts, code, order)
        if r.intent == "advisable" and tags.treatment:
            return cypher.advisable_query(tags.facts, code, tags.treatment, order)
        if r.intent == "constraints" and tags.treatment:
            boxes = self._constraint_boxes(r)
            return cypher.constraints_query(code_of(boxes[0]), None, tags.treatment) if boxes else None
        return None

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


def _after_given(kb: Knowledge, r: Reading, facts: dict[str, Any]) -> Placement | None:
    """For a next-step question with a history: what follows the treatments given, when the graph says it."""
    if not r.given() or r.intent != "next_step":
        return None
    placed = place(kb, sorted(r.given()), facts, r.given(), later=r.later)
    return placed if placed.kind == "answer" else None


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
            words = content_words(kb.expand(o.lower()))
            if words and words <= said:
                return True
    return False


_GLUE = {"than", "then", "with", "from", "into", "only", "also", "more", "less", "rather", "which", "when", "what",
         "whom", "patients", "patient", "managed", "given", "treated", "instead", "other", "after", "before"}


def _said_words(kb: Knowledge, text: str) -> set[str]:
    """The question's content words that may name a disease (no glue, no generic head such as "tumour")."""
    from dkg.qa.names import GENERIC_HEADS

    generic = set().union(*(content_words(h) for h in GENERIC_HEADS))
    return {w for w in content_words(kb.expand(text)) if len(w) > 3 and w not in _GLUE and w not in generic}


def _name_words(names: Mapping[str, Sequence[str]], code: str) -> set[str]:
    return {w for n in names.get(code, ()) for w in content_words(n.lower())}


def _names(kb: Knowledge, text: str, code: str, names: Mapping[str, Sequence[str]]) -> bool:
    """Does the question use a word of one of the guideline's names ("thyroid" of "thyroid cancer")?"""
    return bool(_said_words(kb, text) & _name_words(names, code))


def _foreign_words(kb: Knowledge, text: str, codes: set[str], names: Mapping[str, Sequence[str]]) -> list[str]:
    """Words of ``text`` that name another loaded guideline ("prostate" of "Prostate Cancer") and that neither the
    names nor the boxes of ``codes`` write."""
    mine = set().union(*(kb.box_words(c) | _name_words(names, c) for c in codes if c in kb.states))
    theirs = set().union(*(_name_words(names, c) for c in kb.states if c not in codes))
    return sorted((_said_words(kb, text) & theirs) - mine)


def foreign_facts(kb: Knowledge, codes: Sequence[str], facts: Mapping[str, Any]) -> list[str]:
    """Facts that none of ``codes`` decides on and another loaded guideline does (baseline facts aside): a
    question stating them is about that other guideline's patient."""
    baseline = {str(a) for a in load_clinical().get("baseline_facts", [])}
    return sorted(a for a in facts if a not in baseline and not any(a in kb.attrs.get(c, set()) for c in codes)
                  and any(a in kb.attrs.get(o, set()) for o in kb.states if o not in codes))


def distinguishing(kb: Knowledge, code: str, facts: Mapping[str, Any]) -> list[str]:
    """The facts that tie a question to one guideline: an attribute only it decides on, or a value of a shared
    attribute that only its branches name (histology = ewing_sarcoma)."""
    baseline = {str(a) for a in load_clinical().get("baseline_facts", [])}
    others = [c for c in kb.states if c != code]
    out = []
    for a, v in facts.items():
        if a in baseline or a not in kb.attrs.get(code, set()):
            continue
        if all(a not in kb.attrs.get(c, set()) for c in others):
            out.append(a)
            continue
        mine = {x for p in kb.paths.get(code, []) for b, vs in p.scope.cats if b == a for x in vs}
        theirs = {x for c in others for p in kb.paths.get(c, []) for b, vs in p.scope.cats if b == a for x in vs}
        if str(v) in mine and str(v) not in theirs:
            out.append(a)
    return out


def _downstream(kb: Knowledge, src: str) -> set[str]:
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


def _workup_boxes(kb: Knowledge, code: str) -> list[str]:
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


def _ask_text(r: Reading) -> str:
    parts = [p for p in SENTENCE_END.split(r.text) if "?" in p]
    return parts[-1] if parts else r.text
