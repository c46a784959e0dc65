"""Terms a guideline defines in its own footnotes, as criteria the reader checks against what a question states.

A flowchart branches on its own words ("Transplant candidate", "Surgery-ineligible", "High risk",
"Oligometastatic") and a footnote says what they mean ("Surgery-ineligible: any of creatinine clearance
< 60 mL/min, ECOG PS ≥ 2, …", "Risk groups: high = one high-risk feature (cT3a, grade group 4–5 or PSA > 20
ng/mL); …", "≥ 50% = high, 1–49% = low"). A clinician writes the findings ("CrCl 45", "PSA 24"), not the word.
:func:`split_definitions` finds the definitions in a footnote's text, in the forms guidelines write them:

- ``Term: criteria`` or ``Term – criteria`` (one term per sentence);
- ``Header: value = criteria; value = criteria`` (a table of a grouping's values, "first match from the top"
  when it says so);
- ``criteria = value, criteria = value`` (cut-offs naming their band);
- ``Patients with none of these are X`` / ``Otherwise X`` (the other value, when no criterion holds).

Each definition keeps its criteria as separate phrases and whether any one (``or``, "any of") or all of them
(``and``) make the term. Nothing here knows a disease: the words come from the guideline.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dkg import rx as re
from dkg.constraints.comparisons import ordinal_value
from dkg.constraints.extract import prepare, read_items
from dkg.constraints.models import Constraint
from dkg.constraints.qualifiers import MARKER, RISK_CATEGORY
from dkg.constraints.registry import Registry, RegistryOpener, Where
from dkg.constraints.vocabulary import Vocabulary
from dkg.errors import DkgError
from dkg.graph.model import VersionState


@dataclass(frozen=True)
class Definition:
    """One term a footnote defines."""

    term: str
    """The defined words as written ("Surgery-ineligible", "high", "Lower-risk")."""
    header: str
    """The table's header for a value of a grouping ("Risk groups"), "" for a term defined alone."""
    criteria: tuple[str, ...]
    """The phrases that make the term, each a whole criterion ("creatinine clearance < 60 mL/min")."""
    any_of: bool
    """One criterion is enough (``or``, "any of"); else every one is needed."""
    rank: int
    """Its place in a table (0 for the first value)."""
    first_match: bool
    """The table is read from the top and the first value that fits is the one ("first match from the top")."""
    otherwise: str = ""
    """The term the footnote gives to a patient with none of the criteria ("surgery-eligible")."""
    source: str = ""
    """The footnote's words for this definition."""


_SEP = re.compile(r"\s*(?::|\s[–—-]\s|\s=\s)\s*")
_SENTENCE = re.compile(r"(?<=[A-Za-z0-9%)\]])(?<!\be\.g)(?<!\bi\.e)\.\s+(?=[A-Z])")
_OTHERWISE = re.compile(r"^(?:patients|those|tumou?rs|cases)\s+(?:with|meeting)\s+none\s+of\s+these\s+are\s+(.+)$|"
                        r"^otherwise\s+(.+)$", re.I)
_CMP = re.compile(r"[<>≤≥]|\b\d")


def _top_split(text: str, seps: str) -> list[str]:
    """``text`` cut at the separators outside parentheses."""
    out, depth, cur = [], 0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        depth += ch == "("
        depth -= ch == ")" and depth > 0
        m = re.match(seps, text[i:]) if depth == 0 else None
        if m and m.end() > 0:
            out.append(cur)
            cur = ""
            i += m.end()
            continue
        cur += ch
        i += 1
    out.append(cur)
    return [s.strip(" ,;.") for s in out if s.strip(" ,;.")]


def criteria_of(body: str) -> tuple[tuple[str, ...], bool]:
    """The criteria of a definition's body and whether any one of them is enough."""
    b = re.sub(r"^\s*(?:any\s+of|either|one\s+of)\s*:?\s*", "", body, flags=re.I)
    any_of = b != body
    b = re.sub(r"\s*\((?:e\.g\.|i\.e\.|see)[^)]*\)", "", b)
    alternatives = _top_split(b, r";\s+")
    if len(alternatives) > 1:  # "A, B or C; D; or E": each alternative whole
        last = alternatives[-1]
        parts = [re.sub(r"^(?:or|and)\s+", "", a) for a in alternatives]
        return tuple(p for p in parts if len(p) > 1), any_of or last.lower().startswith("or ")
    # the last connective of the list decides ("A, B or C" any; "A, B and C" all)
    joins = re.findall(r",?\s+(or|and)\s+(?![^()]*\))", b)
    if joins and not any_of:
        tail = re.split(r"\s+or\s+", b)[-1]
        # "A, B or C, D, E": the "or" joins some, the commas after it the rest: not one-is-enough
        any_of = joins[-1].lower() == "or" and "and" not in [j.lower() for j in joins[:-1]] and \
            "," not in re.sub(r"\([^)]*\)", "", tail)
    parts = _top_split(b, r",\s+(?:or|and)\s+|,\s+|;\s+|\s+or\s+|\s+and\s+" if any_of
                       else r",\s+and\s+|,\s+|;\s+|\s+and\s+")
    return tuple(p for p in parts if len(p) > 1), any_of


def share_index(criteria: tuple[str, ...]) -> tuple[str, ...]:
    """A risk index named once for a list of its categories names each: ("IPSS-R very low", "low", "intermediate
    with a score ≤ 3.5") → ("IPSS-R very low", "IPSS-R low", "IPSS-R intermediate with IPSS-R score ≤ 3.5")."""
    first = re.match(rf"^{MARKER}\s+{RISK_CATEGORY}(?![\w-])", criteria[0]) if criteria else None
    if first is None:
        return criteria
    name = first.group(1)
    named = [criteria[0], *(f"{name} {c}" if re.match(rf"^{RISK_CATEGORY}(?![\w-])", c, re.I) else c
                            for c in criteria[1:])]
    return tuple(re.sub(r"\b(?:a|the|its)\s+score\b", f"{name} score", c) if c.startswith(name) else c
                 for c in named)


def _table(head: str, rest: str, source: str) -> list[Definition]:
    """``Header: value = criteria; value = criteria`` (or ``criteria = value, …``) as one definition per value."""
    first = bool(re.search(r"first\s+match|from\s+the\s+top|in\s+this\s+order", head, re.I))
    header = re.sub(r"\s*\([^)]*\)", "", head).strip()
    entries = _top_split(rest, r";\s+|,\s+(?=[^,;=]*\s=\s)")
    out: list[Definition] = []
    for k, e in enumerate(entries):
        crit: tuple[str, ...]
        left, _, right = e.partition(" = ")
        if not right:
            continue
        if _CMP.search(left) and not _CMP.search(right) and len(right.split()) <= 3:
            left, right = right, left  # "≥ 50% = high": the criterion names the band
            crit, any_of = (right,), False
        else:
            crit, any_of = criteria_of(right)
        out.append(Definition(left.strip(), header, share_index(crit), any_of, k, first, source=e))
    return out


def split_definitions(note: str) -> list[Definition]:
    """The definitions one footnote states (none when it defines nothing)."""
    out: list[Definition] = []
    header, rank = "", 0  # "NMIBC risk groups: Low – …. Intermediate – …": a table written one value a sentence
    for sentence in _SENTENCE.split(note.strip()):
        s = sentence.strip().rstrip(".")
        head = re.match(r"^([^:]{3,60}):\s+(?=\S+(?:\s\S+)?\s[–—]\s)", s)
        if head:
            header, rank, s = head.group(1).strip(), 0, s[head.end():]
        entry = re.match(r"^(\S+(?:\s\S+)?)\s[–—]\s+(.+)$", s) if header else None
        if entry:
            crit, any_of = criteria_of(entry.group(2))
            out.append(Definition(entry.group(1), header, share_index(crit), any_of, rank, False, source=s))
            rank += 1
            continue
        header = ""
        m = _OTHERWISE.match(s)
        if m and out:
            last = out[-1]
            out[-1] = Definition(last.term, last.header, last.criteria, last.any_of, last.rank, last.first_match,
                                 (m.group(1) or m.group(2)).strip(), last.source)
            continue
        sep = _SEP.search(s)
        if sep is None or sep.start() == 0:
            continue
        term, body = s[:sep.start()].strip(), s[sep.end():].strip()
        if len(re.sub(r"\([^)]*\)", "", term).split()) > 6 or not body:
            continue
        if len(re.findall(r"\s=\s", body)) >= 2 or (" = " in body and ";" in body):
            out += _table(term, body, s)
            continue
        crit, any_of = criteria_of(body)
        out.append(Definition(term, "", share_index(crit), any_of, 0, False, source=s))
    return out


# --- from a loaded guideline's footnotes to rules the reader checks ---------------------------------------------

_NEGATED = re.compile(r"\b(?:no|not|without|non|absence|absent|never|none)\b", re.I)
_NEGATIVE_VALUES = {"no", "absent", "negative", "none", "wild_type", "wt"}


@dataclass(frozen=True)
class TermRule:
    """A term of a loaded guideline as ``attr = value`` of its boxes, with the criteria its footnote gives."""

    code: str
    attr: str
    value: str
    criteria: tuple[tuple[Constraint, ...], ...]
    """Per criterion, what it bounds (all of them); () where its words were not understood."""
    any_of: bool
    group: str
    """The footnote table the value belongs to ("" for a term defined alone)."""
    rank: int
    first_match: bool
    otherwise: str | None
    """The attribute's value for a patient with none of the criteria (any-of terms only)."""
    words: str


def footnotes_of(state: VersionState) -> list[str]:
    """The footnote texts a version's boxes carry (the words the resolved text adds to the printed one), once each."""
    seen: list[str] = []
    for b in state.boxes.values():
        if b.text == b.textPlain:
            continue
        sm = difflib.SequenceMatcher(None, b.textPlain, b.text, autojunk=False)
        for op, _, _, j1, j2 in sm.get_opcodes():
            if op not in ("insert", "replace"):
                continue
            note = b.text[j1:j2].strip()
            note = re.sub(r"^\(|\)$", "", note).strip()
            if len(note) > 12 and note not in seen:
                seen.append(note)
    return seen


def _items(vocab: Vocabulary, text: str, opener: RegistryOpener) -> list[Constraint]:
    """The constraints the extractor reads in ``text`` (no parse: keywords, numbers and the registry's names)."""
    try:
        found = read_items(vocab, prepare(vocab, text), None, opener, ())
    except (DkgError, ValueError):
        return []
    out: list[Constraint] = []
    for i in found:
        if isinstance(i, Constraint):
            out.append(i)
        elif len(i.alternatives) == 1:
            out += list(i.alternatives[0])
    return out


def _link(vocab: Vocabulary, texts: Sequence[str], opener: RegistryOpener, attrs: set[str],
          values: Callable[[str], set[str]]) -> tuple[str, str] | None:
    """The ``attr = value`` of the guideline's boxes that a term's words mean."""
    for t in texts:
        for c in _items(vocab, t, opener):
            if c.attr not in attrs or c.op not in ("=", "in"):
                continue
            v = c.value if not isinstance(c.value, list) else (c.value[0] if len(c.value) == 1 else None)
            if v is None or (isinstance(v, int | float) and not isinstance(v, bool)):
                continue
            known = values(c.attr)
            if known and str(v) not in known:
                continue
            return c.attr, str(v)
    return None


def _criterion(vocab: Vocabulary, phrase: str, opener: RegistryOpener, attr: str) -> tuple[Constraint, ...]:
    """What a criterion bounds, or () where part of it was not understood: each of its parts ("after radical
    surgery, marker ≥ 0.2 on two tests") must bound something, or the part not read would be taken as met."""
    items: list[Constraint] = []
    for part in _top_split(phrase, r",\s+|\s+and\s+|\s+with\s+"):
        if not re.search(r"[A-Za-z]{3,}|\d", part):
            continue
        found = [c for c in _items(vocab, part, opener) if c.attr != attr]
        if not found:
            return ()
        if _NEGATED.search(part) and not any(str(c.value).lower() in _NEGATIVE_VALUES or c.op == "!=" for c in found):
            return ()  # a negation the reading lost would turn the criterion round
        items += found
    return tuple(items)


def rules_for(code: str, version: str, notes: Sequence[str], attrs: set[str], values: Callable[[str], set[str]],
              vocab: Vocabulary, registry: Registry) -> list[TermRule]:
    """The rules of one guideline version's footnotes; ``registry`` is a working copy (criteria on attributes no
    box uses are named in it, never written back)."""
    out: list[TermRule] = []
    for n, note in enumerate(notes):
        opener = RegistryOpener(registry, Where(code, version, "", f"footnote {n + 1}", note))
        for d in split_definitions(note):
            heads = [re.sub(r"(?<=[a-z]{3})s$", "", w) for w in re.findall(r"[A-Za-z][\w-]+", d.header)]
            texts = [f"{d.term} {d.header}", f"{d.header} {d.term}", *(f"{d.term} {w}" for w in heads), d.term] \
                if d.header else [d.term]
            if re.search(r"\bfactors?\b", d.term, re.I):
                continue  # "intermediate risk factors: …" are counted, one of them does not make the group
            linked = _link(vocab, texts, opener, attrs, values)
            if linked is None:
                continue
            attr, value = linked
            other = _link(vocab, [d.otherwise], opener, {attr}, values) if d.otherwise else None
            crit = tuple(_criterion(vocab, p, opener, attr) for p in d.criteria)
            if not any(crit):
                continue
            out.append(TermRule(code, attr, value, crit, d.any_of, f"{n}:{d.header}" if d.header else "", d.rank,
                                d.first_match, other[1] if other and other[0] == attr else None, d.source))
    return out


# --- checking them against a question's facts ------------------------------------------------------------------

def _holds(c: Constraint, facts: Mapping[str, Any]) -> bool | None:
    v = facts.get(c.attr)
    if v is None:
        return None
    if isinstance(c.value, int | float) and not isinstance(c.value, bool):
        if not isinstance(v, int | float) or isinstance(v, bool):
            return None
        x, y = float(v), float(c.value)
        return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "=": x == y, "!=": x != y}.get(c.op)
    said = ordinal_value(str(v)) if str(v) else str(v)
    allowed = [ordinal_value(str(x)) for x in (c.value if isinstance(c.value, list) else [c.value])]
    if c.op in ("=", "in"):
        return said in allowed
    if c.op == "!=":
        return said not in allowed
    return None


def _all(states: Sequence[bool | None]) -> bool | None:
    if any(s is False for s in states):
        return False
    return True if states and all(s is True for s in states) else None


def rule_state(rule: TermRule, facts: Mapping[str, Any]) -> bool | None:
    """Whether the facts make the term (True), rule it out (False) or leave it open (None)."""
    crit = [_all([_holds(c, facts) for c in items]) if items else None for items in rule.criteria]
    if rule.any_of:
        if any(s is True for s in crit):
            return True
        return False if crit and all(s is False for s in crit) else None
    return _all(crit)


def derive(rules: Sequence[TermRule], facts: Mapping[str, Any]) -> list[tuple[TermRule, str]]:
    """The terms the facts make, per attribute not stated: (the rule that decided, the value)."""
    out: list[tuple[TermRule, str]] = []
    by_attr: dict[tuple[str, str], list[TermRule]] = {}
    for r in rules:
        by_attr.setdefault((r.code, r.attr), []).append(r)
    for (_, attr), rs in by_attr.items():
        if facts.get(attr) is not None:
            continue
        states = [(r, rule_state(r, facts)) for r in rs]
        ordered = sorted((x for x in states if x[0].first_match), key=lambda x: (x[0].group, x[0].rank))
        picked: tuple[TermRule, str] | None = None
        for r, s in ordered:
            if s is None:
                break  # a value higher up the table is still open
            if s:
                picked = (r, r.value)
                break
        if picked is None:
            trues = {r.value: r for r, s in states if s is True and not r.first_match}
            if len(trues) == 1:
                v, r = next(iter(trues.items()))
                picked = (r, v)
            elif not trues:
                others = {r.otherwise: r for r, s in states if s is False and r.otherwise}
                if len(others) == 1:
                    v, r = next(iter(others.items()))
                    picked = (r, v)
        if picked is not None and not any(s and r.value != picked[1] for r, s in states):
            out.append(picked)  # (never where another definition of the attribute holds with another value)
    return out
