"""The strict checks of a query the model wrote, and its run: the query's kind, its shape against the shapes the
current dataset teaches, its literal values against the question, then Neo4j's plan of it (valid, read-only) and a
read-only run with every literal as a parameter. :mod:`dkg.qa.answer` says which check a refused query failed."""

from __future__ import annotations

from typing import Any

import neo4j
from neo4j.exceptions import Neo4jError

from dkg import rx as re
from dkg.constraints.vocabulary import load_vocabulary
from dkg.graph import queries as q
from dkg.qa import cypher
from dkg.qa.facts import Tagged, squash
from dkg.qa.model import slot_params
from dkg.services.neo4j import open_driver
from dkg.settings import Settings


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


def query_shape(query: str) -> str:
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
    return {query_shape(x) for x in qs}


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


def run_checked(session: neo4j.Session, query: str, question: str, tags: Tagged, loaded: set[str],
                settings: Settings) -> list[dict[str, Any]] | str:
    """The rows of ``query``, run read-only with its slots and literals as parameters; or why it was not run."""
    slots = slot_params(query, tags)
    if isinstance(slots, str):
        return slots
    text, params = cypher.parameterize(query)
    params.update(slots)
    try:
        summary = session.run("EXPLAIN " + text, params).consume()
    except Neo4jError as e:
        return f"the generated query is not valid Cypher ({e.code})"
    if summary.query_type != "r":
        return f"the generated query is not read-only (type {summary.query_type})"
    literal_problem = check_literals(query, question, tags, loaded, settings)
    if literal_problem:
        return literal_problem
    try:
        return [r_.data() for r_ in session.execute_read(
            neo4j.unit_of_work(timeout=10.0)(lambda tx: list(tx.run(text, params))))]
    except Neo4jError as e:
        return f"the generated query failed on Neo4j ({e.code})"
