"""The Cypher of the QA dataset, and the safe way to run it.

Dataset items carry their query as text with literal values, as in the DKG paper
(``MATCH … {phStatus: 'negative', age: 45} …``), because that is what the text-to-Cypher model
learns to write. Nothing runs such text as is: :func:`parameterize` lifts every literal into a
parameter first (``{phStatus: $p0, age: $p1}``), so a value can never change the query's shape.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dkg.graph.model import _camel

# One query per question type; {facts}, {code}, {page}, {phrase}, {disease} take literals.
_MATCH_PATHS = (
    "WITH {facts} AS facts MATCH (p:Path{code}) "
    "WHERE all(k IN p.catAttrs WHERE facts[k] IN p[k]) "
    "AND all(k IN p.numAttrs WHERE facts[k] >= p[k + 'Min'] AND facts[k] <= p[k + 'Max']) "
    "WITH collect(p) AS ps "
    "WITH [x IN ps WHERE none(y IN ps WHERE last(y.boxes) <> last(x.boxes) AND last(x.boxes) IN y.boxes)] AS ls "
    "UNWIND [x IN ls WHERE none(y IN ls WHERE size(y.catAttrs + y.numAttrs) > size(x.catAttrs + x.numAttrs) "
    "AND all(a IN x.catAttrs + x.numAttrs WHERE a IN y.catAttrs + y.numAttrs))] AS p "
    "MATCH (p)-[:REACHES]->(:Decision)-[:NEXT_STEP]->(m:Box) "
    "WITH p, collect(DISTINCT m) AS ms "
    "WITH collect({{ms: ms, open: any(m IN ms WHERE EXISTS {{ (m)-[:HAS_DECISION]->() }} "
    "OR (EXISTS {{ (m)-[:LINKS_TO]->() }} AND NOT EXISTS {{ (m)-[:ARROW]->() }}))}}) AS rs "
    "UNWIND [r IN rs WHERE NOT r.open OR all(s IN rs WHERE s.open)] AS r "
    "UNWIND r.ms AS n "
)
NEXT_STEP = _MATCH_PATHS + "RETURN DISTINCT n.uid AS uid, n.textPlain AS text, n.page AS page ORDER BY uid"
ADVISABLE = (_MATCH_PATHS + "RETURN DISTINCT n.uid AS uid, n.textPlain AS text, n.page AS page, "
             "toLower(n.textPlain) CONTAINS {phrase} AS advisable ORDER BY uid")
CONSTRAINTS = (
    "MATCH (b:Box{where})-[:HAS_DECISION]->(:Decision)-[:NEXT_STEP]->(n:Box) "
    "WHERE toLower(n.textPlain) CONTAINS {phrase} "
    "RETURN DISTINCT b.uid AS uid, b.textPlain AS text, b.page AS page ORDER BY uid"
)
OTHER_DISEASE = (
    "MATCH (g:Guideline) WHERE toLower(g.name) CONTAINS {disease} "
    "RETURN g.code AS uid, g.name AS text, '' AS page ORDER BY uid"
)


def literal(value: Any) -> str:
    """A Cypher literal for a string, number or list of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    s = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{s}'"


def facts_map(facts: Mapping[str, Any], order: list[str]) -> str:
    """``{age: 45, phStatus: 'negative'}`` in the vocabulary's attribute order."""
    keys = [a for a in order if facts.get(a) is not None] + sorted(a for a in facts if a not in order)
    return "{" + ", ".join(f"{_camel(a)}: {literal(facts[a])}" for a in keys) + "}"


def next_step_query(facts: Mapping[str, Any], code: str | None, order: list[str]) -> str:
    return NEXT_STEP.format(facts=facts_map(facts, order), code=f" {{code: {literal(code)}}}" if code else "")


def advisable_query(facts: Mapping[str, Any], code: str | None, phrase: str, order: list[str]) -> str:
    return ADVISABLE.format(facts=facts_map(facts, order), code=f" {{code: {literal(code)}}}" if code else "",
                            phrase=literal(phrase.lower()))


def constraints_query(code: str, page: str | None, phrase: str) -> str:
    where = f" {{code: {literal(code)}, page: {literal(page)}}}" if page else f" {{code: {literal(code)}}}"
    return CONSTRAINTS.format(where=where, phrase=literal(phrase.lower()))


def boxes_query(uids: list[str]) -> str:
    """The read-only query that shows the given boxes (the evidence of an answer found by rules)."""
    listed = ", ".join(literal(u) for u in uids)
    return f"MATCH (b:Box) WHERE b.uid IN [{listed}] RETURN b.uid AS uid, b.textPlain AS text"


def other_disease_query(disease: str) -> str:
    return OTHER_DISEASE.format(disease=literal(disease.lower()))


_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|(?<![\w$.])-?\d+(?:\.\d+)?(?![\w.])")


def parameterize(query: str) -> tuple[str, dict[str, Any]]:
    """Replace every string and number literal by a parameter: ``(query, params)``."""
    params: dict[str, Any] = {}

    def sub(m: re.Match[str]) -> str:
        tok = m.group(0)
        name = f"p{len(params)}"
        if tok[0] in "'\"":
            params[name] = re.sub(r"\\(.)", r"\1", tok[1:-1])
        else:
            params[name] = float(tok) if "." in tok else int(tok)
        return f"${name}"

    return _LITERAL.sub(sub, query), params


def literals(query: str) -> list[Any]:
    """The literal values of a query, in order."""
    return list(parameterize(query)[1].values())


_PAIR = re.compile(r"(\w+):\s*('(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?)")


def facts_in(query: str) -> dict[str, Any] | None:
    """The literal facts map of a query (``WITH {…} AS facts``), or None."""
    m = re.search(r"WITH\s*\{([^{}]*)\}\s*AS facts", query)
    if m is None:
        return None
    out: dict[str, Any] = {}
    for k, v in _PAIR.findall(m.group(1)):
        out[k] = v[1:-1] if v.startswith("'") else (float(v) if "." in v else int(v))
    return out


def same_facts(query_facts: Mapping[str, Any] | None, facts: Mapping[str, Any]) -> bool:
    """Do a query's facts (camelCase keys) equal the facts read from a question (vocabulary keys)?"""
    if query_facts is None:
        return False
    return {k: str(v) for k, v in query_facts.items()} == {_camel(a): str(v) for a, v in facts.items()}
