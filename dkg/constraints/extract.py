"""Box text → patient constraints, following the DKG paper's constraint extractor (§6.2.2).

1. Pre-process: footnote markers are already gone (the parser keeps the plain text); dashes
   between numbers become "to"; "65 or older" becomes "≥ 65" (words → symbols) so that the
   comparison is not mistaken for a disjunction; "poor/intermediate" becomes "poor or intermediate".
   Parenthetical remarks are set aside: they explain ("(≤4 cm)", "(pelvis or spine)") and only
   an age range in them ("(≥ 75 y)", "(15–39 years)") counts.
2. Constituency-parse with Stanford CoreNLP; the tree's coordinations (CC "or"/"and", commas)
   become OR/AND groups; a coordination of modifiers shares the head noun that follows
   ("persistent or rising MRD" → "persistent MRD" or "rising MRD"); "without", "no" and "not"
   negate the constituent they open (so "without comorbidities of diabetes and liver" negates both).
3. Each group's words go to a keyword extractor whose phrases live in ``conf/constraints.yaml``,
   and to a numeric extractor (comparison words and symbols, ranges, units).
4. Alternatives of one attribute merge into ``in`` ("stage II or stage III"); what all
   alternatives share is factored out; alternatives that state nothing are dropped.
5. Footnotes that define an age group ("adults are patients aged 40 years or older") add
   that age bound when the box states none with the same operator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from dkg import rx as re
from dkg.constraints.comparisons import IN, Comparison, find_comparisons, left_attribute
from dkg.constraints.models import AnyOf, Constraint, Item, attrs_of
from dkg.constraints.parse import Node, Parse, Token
from dkg.constraints.qualifiers import (
    COMPOUND_STATE,
    at_site,
    find_lesion_counts,
    find_qualifiers,
    in_compound_state,
    lesion_size,
)
from dkg.constraints.vocabulary import Vocabulary


class OpenVocabulary(Protocol):
    """Turns a comparison no vocabulary rule read into constraints (proposing new attributes)."""

    def known_attribute(self, comparison: Comparison) -> str | None:
        """The registry attribute the comparison names, if any (without proposing anything)."""

    def items(self, comparison: Comparison) -> list[Item]:
        """The comparison's constraints in the registry's terms."""

NUMBER = r"(\d+(?:\.\d+)?)"


def normalise(text: str) -> str:
    """Symbols for words, one spelling per symbol, no markers; keeps character meaning."""
    t = text.replace("=>", "≥").replace(">=", "≥").replace("=<", "≤").replace("<=", "≤")
    t = re.sub(r"(?<=\d)\s*[–—-]\s*(?=\d)", " to ", t)  # 15–39 → 15 to 39
    romans = ["I", "II", "III", "IV"]

    def stages(m: re.Match[str]) -> str:  # "stage II–III" → "stage II or stage III"
        a, b = romans.index(m.group(2).upper()), romans.index(m.group(3).upper())
        return " or ".join(f"{m.group(1)} {r}" for r in romans[a:b + 1]) if a < b else m.group(0)

    t = re.sub(r"\b(stages?)\s+(IV|I{1,3})\s*(?:[–—-]|to|through)\s*(IV|I{1,3})\b", stages, t, flags=re.IGNORECASE)
    # "stage III or IV" → "stage III or stage IV", so each alternative names its attribute
    t = re.sub(r"\b(stages?)\s+(IV|I{1,3})\s+(or|and)\s+(IV|I{1,3})\b",
               lambda m: f"{m.group(1)} {m.group(2)} {m.group(3)} {m.group(1)} {m.group(4)}", t, flags=re.IGNORECASE)
    t = re.sub(r"\band/or\b", "or", t, flags=re.IGNORECASE)
    t = re.sub(r"(?<![\d\s][A-Za-z])(?<=[A-Za-z]{3})/(?=[A-Za-z]{3})", " or ", t)  # poor/intermediate, not mL/min
    unit = r"(\s*(?:years?|yrs?|y|months?|mo|%)(?:\s+of\s+age|\s+old)?)?"
    t = re.sub(NUMBER + unit + r"\s+(?:or|and)\s+(?:older|over|above|more|greater)\b",
               lambda m: f"≥ {m.group(1)}{m.group(2) or ''}", t, flags=re.IGNORECASE)
    t = re.sub(NUMBER + unit + r"\s+(?:or|and)\s+(?:younger|less|under|below|fewer)\b",
               lambda m: f"≤ {m.group(1)}{m.group(2) or ''}", t, flags=re.IGNORECASE)
    t = re.sub(r"(?<=\d)\s*\+\s*(?=years?|y\b|yrs?)", " ", t)  # "65+ years" handled as ≥ below
    return re.sub(r"\s+", " ", t).strip()


# a value of a named staging or scoring system, alone in a bracket: "(BCLC B)", "(BCLC 0–A)", "(FIGO IIIC)"
_SYSTEM_VALUE = re.compile(r"[A-Z][A-Z0-9]{2,7}(?:-[A-Z])?\s+(?:\d{1,2}|[A-E]|IV|I{1,3}|V)(?:[A-C]\d?)?"
                           r"(?:\s*[–-]\s*(?:\d{1,2}|[A-E]|IV|I{1,3}|V)(?:[A-C]\d?)?)?")


def split_parentheticals(text: str, vocab: Vocabulary | None = None) -> tuple[str, list[str]]:
    """Remove "( … )" remarks from a text; return the rest and the removed remarks.

    With a vocabulary, a remark that states an age ("(≥ 75 y)", "(15–39 years)") stays in
    the text, without its parentheses, so that it joins the right AND/OR group.
    """
    remarks: list[str] = []
    # a bracket glued to a word is part of a name, not a remark: "del(5q)", "t(9;22)", "inv(16)"
    text = re.sub(r"(?<=[A-Za-z0-9])\(([^()\s]{1,12})\)", "\u27ee\\1\u27ef", text)

    def grab(m: re.Match[str]) -> str:
        if vocab is not None and numeric_constraints(vocab, m.group(1), only={"age"}):
            return " " + m.group(1) + " "
        if _SYSTEM_VALUE.fullmatch(m.group(1).strip()):
            return "; " + m.group(1).strip() + "; "  # "(BCLC 0–A)": the stage restated in a named system
        remarks.append(m.group(1))
        return " "

    rest = text
    for _ in range(3):  # nested parentheses, innermost first
        rest = re.sub(r"\(([^()]*)\)", grab, rest)
    glued = str.maketrans("\u27ee\u27ef", "()")
    return re.sub(r"\s+", " ", rest).strip(" ,;").translate(glued), [r.translate(glued) for r in remarks]


# --- numbers --------------------------------------------------------------------------


def _cue(vocab: Vocabulary, attr: str) -> re.Pattern[str]:
    cues = vocab.numeric["attributes"][attr].get("cues", [])
    return re.compile(r"(?<![\w])(?:" + "|".join(cues) + r")(?![\w])", re.IGNORECASE)


def _ps_unit(vocab: Vocabulary, text: str) -> tuple[str, re.Match[str]] | None:
    units = vocab.numeric["attributes"]["performance_status"]["units"]
    best = None
    for unit, pats in units.items():
        m = re.search(r"(?<![\w])(?:" + "|".join(pats) + r")(?![\w])", text, re.IGNORECASE)
        if m and (best is None or m.start() < best[1].start()):
            best = (unit, m)
    return best


def numeric_constraints(vocab: Vocabulary, text: str, only: set[str] | None = None) -> list[Constraint]:
    """Bounds stated with numbers: ranges, comparison words or symbols, "≥ 65", "0 to 2"."""
    out: list[Constraint] = []
    lower = text.lower()
    before = "|".join(re.escape(k) for k, _ in vocab.before)
    ops = dict(vocab.before)
    ps = _ps_unit(vocab, text)
    age_cue = _cue(vocab, "age")
    months = re.compile(r"(?<![\w])months?(?![\w])", re.IGNORECASE)
    used: list[tuple[int, int]] = []

    def attr_for(start: int, end: int) -> tuple[str, str] | None:
        after = text[end:end + 40]
        near = text[max(0, start - 40):end + 25]
        if ps and ps[1].end() <= start and start - ps[1].end() < 12:
            return "performance_status", ps[0]
        if re.match(r"\s*%", after):
            return None  # a share of something (necrosis, blasts), not an attribute we know
        if re.match(r"\s*(?:cm|mm|mg|ml|g/dl|x)\b", after, re.IGNORECASE):
            return None
        # a duration named by other words is that quantity, not age or time to relapse: "Life expectancy
        # ≥ 10 years", "PSA doubling time ≤ 9 months" (the open vocabulary reads it under its own name)
        left = left_attribute(text, start)
        named = left is not None and not age_cue.search(left[0]) and not re.search(
            r"relaps|recurren|remission|diagnosis|cr1", left[0], re.IGNORECASE)
        if months.match(after.strip()) or re.match(r"\s*months?\b", after, re.IGNORECASE):
            return None if named else ("time_to_relapse", "months")
        if age_cue.search(near) and not (named and re.match(r"\s*(?:years?|yrs?|y)\b", after, re.IGNORECASE)):
            return "age", "years"
        return None

    def add(attr_unit: tuple[str, str] | None, op: str, value: str) -> None:
        if attr_unit is None:
            return
        attr, unit = attr_unit
        if only is not None and attr not in only:
            return
        num = float(value)
        val: int | float = int(num) if num.is_integer() else num
        out.append(Constraint(attr=attr, op=op, value=val, unit=unit))

    # ranges: "15 to 39 years", "between 18 and 64", "ECOG PS 0 to 2"
    for m in re.finditer(r"(?:between\s+)?" + NUMBER + r"\s+(?:to|through|and)\s+" + NUMBER, text, re.IGNORECASE):
        au = attr_for(m.start(), m.end())
        if au is None:
            continue
        lo, hi = m.group(1), m.group(2)
        if au[0] == "performance_status" and float(lo) == 0:
            add(au, "<=", hi)  # "ECOG 0–2" bounds from above only
        elif au == ("performance_status", "ECOG") and float(hi) >= 4:
            add(au, ">=", lo)  # "ECOG 3–4" from below only: 4 is the top of the scale of the living
        else:
            add(au, ">=", lo)
            add(au, "<=", hi)
        used.append((m.start(), m.end()))
    # comparison before the number: "less than 65", "≥ 65", "under 26"
    for m in re.finditer(r"(?<![\w])(" + before + r")\s*" + NUMBER, lower):
        if any(a <= m.start() < b for a, b in used):
            continue
        add(attr_for(m.start(), m.end()), ops[m.group(1)], m.group(2))
        used.append((m.start(), m.end()))
    # "65+"
    for m in re.finditer(NUMBER + r"\s*\+", text):
        if any(a <= m.start() < b for a, b in used):
            continue
        add(attr_for(m.start(), m.end()), ">=", m.group(1))
        used.append((m.start(), m.end()))
    return out


# --- keywords ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    """Words of one group: their text, and where each character came from in the parse."""

    text: str
    negated: tuple[bool, ...]  # per character


def keyword_constraints(vocab: Vocabulary, piece: _Piece) -> list[Constraint]:
    """Phrases of the vocabulary found in the text, longest first, negation applied."""
    found: list[tuple[int, int, Constraint]] = []
    taken = [False] * len(piece.text)
    matches = []
    for rule in vocab.keywords:
        for m in rule.pattern.finditer(piece.text):
            matches.append((m.start(), m.end(), rule))
    # the longest phrase wins where phrases overlap ("less than CR" over "CR")
    for start, end, rule in sorted(matches, key=lambda x: (-(x[1] - x[0]), x[0])):
        if any(taken[start:end]):
            continue
        for i in range(start, end):
            taken[i] = True
        if in_compound_state(piece.text, start, end) or at_site(piece.text, start, end):
            continue  # "radioiodine-refractory", "brain metastases": a state of its own, not "refractory" disease
        negated = piece.negated[start] if start < len(piece.negated) else False
        if negated and rule.negated is None:
            continue  # "not relapsed" states no positive fact we can encode
        value = rule.negated if negated and rule.negated is not None else rule.value
        found.append((start, end, Constraint(attr=rule.attr, op="=", value=value)))
    return [c for _, _, c in sorted(found, key=lambda x: x[0])]


# --- AND/OR groups over the parsed tokens ------------------------------------------------

NOUN_POS = ("NN", "NNS", "NNP", "NNPS")


@dataclass
class _Group:
    """A run of tokens between separators; alternatives of an OR share a head noun."""

    tokens: list[int]


def _separators(parse: Parse) -> list[tuple[int, str]]:
    """Token positions that separate conditions: commas/semicolons (AND), CC "and"/"or".

    A CC between two numbers ("between 18 and 64") is part of a range, not a separator.
    """
    toks = parse.tokens
    out: list[tuple[int, str]] = []
    for i, t in enumerate(toks):
        w = t.word.lower()
        if w in (",", ";"):
            out.append((i, ","))
        elif t.pos == "CC" or w in ("or", "and"):
            if 0 < i < len(toks) - 1 and toks[i - 1].pos == "CD" and toks[i + 1].pos == "CD":
                continue
            kind = "or" if w in ("or", "nor") else "and" if w in ("and", "plus", "&") else None
            if kind is None:
                continue
            if out and out[-1] == (i - 1, ","):
                out[-1] = (i - 1, ",or" if kind == "or" else ",")
                out.append((i, "skip"))
            else:
                out.append((i, kind))
    return out


def _groups(parse: Parse) -> tuple[list[list[_Group]], bool]:
    """AND-list of OR-lists of token runs; True when the whole list is a serial "A, B, or C"."""
    seps = _separators(parse)
    runs: list[list[int]] = [[]]
    ops: list[str] = []
    sep_at = dict(seps)
    for i in range(len(parse.tokens)):
        kind = sep_at.get(i)
        if kind is None:
            runs[-1].append(i)
        elif kind != "skip":
            ops.append(kind)
            runs.append([])
    pairs = [(r, o) for r, o in zip(runs, [None, *ops], strict=True) if r]
    if not pairs:
        return [], False
    serial = len(pairs) > 2 and pairs[-1][1] == ",or" and all(o == "," for _, o in pairs[1:-1])
    and_list: list[list[_Group]] = [[_Group(pairs[0][0])]]
    for run, op in pairs[1:]:
        if serial or op in ("or", ",or"):
            and_list[-1].append(_Group(run))
        else:
            and_list.append([_Group(run)])
    if serial:
        and_list = [[g for alt in and_list for g in alt]]
    return and_list, serial


def _share_heads(alts: list[_Group], toks: Sequence[Token]) -> list[_Group]:
    """"Persistent or rising MRD": alternatives without a noun take the last one's trailing nouns."""
    last = alts[-1].tokens
    head: list[int] = []
    for t in reversed(last):
        if toks[t].pos.startswith(NOUN_POS):
            head.insert(0, t)
        else:
            break
    if not head or len(head) == len(last):
        return alts
    out = []
    for g in alts[:-1]:
        words = 1 + sum(1 for a, b in zip(g.tokens, g.tokens[1:], strict=False) if toks[b].begin > toks[a].end)
        modifier_only = words == 1 or not any(toks[t].pos.startswith("NN") for t in g.tokens)
        out.append(_Group(g.tokens + head) if modifier_only else g)
    return [*out, alts[-1]]


POSTPOSITIVE_CUES = {"absent"}
"""Cues that follow what they negate ("antibodies absent"): read with their noun, they govern nothing after."""


def _negated_tokens(node: Node, toks: Sequence[Token], cues: set[str]) -> set[int]:
    """Tokens a negation cue governs: the rest of the smallest constituent that holds the cue and
    words after it ("without substantial comorbidities", "no significant comorbid conditions",
    "not a candidate for surgery"), so a negation spreads over a coordination inside it."""
    out: set[int] = set()
    parents: dict[int, list[Node]] = {}

    def walk(n: Node, path: list[Node]) -> None:
        if n.token is not None:
            parents[n.token] = path
            return
        for c in n.children:
            walk(c, [*path, n])

    walk(node, [])
    for i, t in enumerate(toks):
        if t.word.lower() not in cues or t.word.lower() in POSTPOSITIVE_CUES:
            continue
        stop = next((k for k in range(i + 1, len(toks)) if toks[k].word == ";"), len(toks))
        for anc in reversed(parents.get(i, [])):
            after = [k for k in anc.tokens() if i < k < stop]  # "Without del(5q); blasts ≥ 15%": to the ';'

            if after:
                out.update(after)
                break
    return out


def _blocked_tokens(parse: Parse, vocab: Vocabulary) -> set[int]:
    """Tokens after a non-patient context ("treatment of …", "according to …") in their group."""
    out: set[int] = set()
    pats = [re.compile(rf"(?<![\w]){p}(?![\w])", re.IGNORECASE) for p in vocab.non_patient_contexts]
    for pat in pats:
        for m in pat.finditer(parse.text):
            for i, t in enumerate(parse.tokens):
                if t.begin >= m.start():
                    out.add(i)
    return out


def _group_text(parse: Parse, tokens: list[int], negated: set[int]) -> _Piece:
    text = ""
    neg: list[bool] = []
    prev = None
    for t in tokens:
        tok = parse.tokens[t]
        word = parse.text[tok.begin:tok.end] if 0 <= tok.begin < tok.end <= len(parse.text) else tok.word
        if text and (prev is None or tok.begin != prev):
            text += " "
            neg.append(t in negated)
        text += word
        neg.extend([t in negated] * len(word))
        prev = tok.end
    return _Piece(text, tuple(neg))


def _open_comparisons(vocab: Vocabulary, text: str, contrasts: tuple[str, ...] = ()) -> list[Comparison]:
    """Comparisons and polarity qualifiers in ``text`` that no vocabulary phrase already reads."""
    taken = [m.span() for rule in vocab.keywords for m in rule.pattern.finditer(text)
             if not in_compound_state(text, m.start(), m.end()) and not at_site(text, m.start(), m.end())]
    counts = find_lesion_counts(text)
    found = [*(lesion_size(c) for c in find_comparisons(text) if not any(k.start <= c.end <= k.end for k in counts)),
             *counts, *(q for q in find_qualifiers(text, contrasts)
                        if not any(q.start < k.end and k.start < q.end for k in counts))]
    return sorted((c for c in found if not any(a < c.end and c.start < b for a, b in taken)), key=lambda c: c.start)


def _open_items(opener: OpenVocabulary, comparisons: list[Comparison], known: list[Item],
                vocab: Vocabulary | None = None) -> list[Item]:
    """Constraints for comparisons whose attribute the vocabulary rules did not already constrain. A performance
    status carries the scale its words name ("ECOG PS 0" is 0 on the ECOG scale, as "ECOG PS 0–1" is)."""
    present = attrs_of(known)
    out: list[Item] = []
    for c in comparisons:
        name = opener.known_attribute(c)
        if name is not None and name in present:
            continue
        items = opener.items(c)
        scale = _ps_unit(vocab, c.attr or "") if vocab is not None and name == "performance_status" else None
        if scale is not None:
            items = [i.model_copy(update={"unit": scale[0]}) if isinstance(i, Constraint) and i.unit is None else i
                     for i in items]
        out.extend(items)
    return out


def _evaluate_groups(vocab: Vocabulary, parse: Parse, opener: OpenVocabulary | None = None,
                     contrasts: tuple[str, ...] = ()) -> list[Item]:
    negated = _negated_tokens(parse.tree, parse.tokens, set(vocab.negation_cues))
    blocked = _blocked_tokens(parse, vocab)
    and_list, _ = _groups(parse)
    # open-vocabulary comparisons are found on the whole text (a range or a list of values may
    # cross a coordination: "stage III or IV"), then belong to the group that holds their value
    comparisons = _open_comparisons(vocab, parse.text, contrasts) if opener is not None else []
    items: list[Item] = []
    for alts in and_list:
        alts = _share_heads(alts, parse.tokens)
        results: list[list[Item]] = []
        # "No RET or NTRK fusion", "without A or B": the negation opens the coordination and holds for each
        # alternative, which then all hold (neither A nor B)
        opener_word = parse.tokens[alts[0].tokens[0]].word.lower() if alts[0].tokens else ""
        neither = len(alts) > 1 and opener_word in NEGATION_OPENERS
        if neither:
            negated = negated | {t for g in alts[1:] for t in g.tokens}
        for g in alts:
            toks = [t for t in g.tokens if t not in blocked]
            if not toks:
                results.append([])
                continue
            piece = _group_text(parse, toks, negated)
            known = _dedupe([*keyword_constraints(vocab, piece), *numeric_constraints(vocab, piece.text)])
            if opener is not None:
                lo, hi = parse.tokens[toks[0]].begin, parse.tokens[toks[-1]].end
                negated_group = bool(negated & set(toks))  # "without bulky disease": no bound to read
                mine = [c for c in comparisons if lo <= c.start < hi and (c.kind == "category" or not negated_group)]
                mine = [n for c in mine if (n := _negate(c) if c.kind == "category" and
                                            _at_negated(parse, negated, c.start) else c) is not None]
                known = _dedupe([*known, *_open_items(opener, mine, known, vocab)])
            results.append(known)
        if neither:
            items.extend(i for r in results for i in r)
        else:
            items.extend(simplify_or(results) if len(results) > 1 else results[0])
    return _dedupe(items)


NEGATION_OPENERS = {"no", "without", "neither", "not"}


_OPPOSITE = {"yes": "no", "no": "yes", "positive": "negative", "negative": "positive", "present": "absent",
             "absent": "present"}


def _at_negated(parse: Parse, negated: set[int], start: int) -> bool:
    """Is the token at character ``start`` governed by a negation ("No TP53 mutation", "without del(5q)")?"""
    return any(i in negated for i, t in enumerate(parse.tokens) if t.begin <= start < max(t.end, t.begin + 1))


# States of a finding whose negation names no one value: "no symptomatic brain metastases" is none or asymptomatic
_NO_OPPOSITE = {"symptomatic", "untreated", "treated", "stable", "progressive", "active"}


def _negate(c: Comparison) -> Comparison | None:
    """A category finding under a negation: its opposite value (None: the negation leaves more than one)."""
    if c.values == ("symptomatic",) and (c.attr or "").endswith(" metastases"):
        # "no symptomatic brain metastases": none there, or none that cause symptoms
        return replace(c, op=IN, values=("absent", "asymptomatic"))
    if any(v in _NO_OPPOSITE for v in c.values):
        return None
    return replace(c, values=tuple(_OPPOSITE.get(v, v) for v in c.values))


def _dedupe(items: Sequence[Item]) -> list[Item]:
    seen: dict[str, Item] = {}
    for i in items:
        seen.setdefault(i.key(), i)
    return list(seen.values())


def simplify_or(alts: list[list[Item]]) -> list[Item]:
    """Drop silent alternatives, factor shared constraints, merge one attribute into ``in``."""
    alts = [a for a in alts if a]
    if not alts:
        return []
    if len(alts) == 1:
        return alts[0]
    alts = _share_trailing_modifier(alts)
    keys = [{i.key() for i in a} for a in alts]
    common = set.intersection(*keys)
    shared = [i for i in alts[0] if i.key() in common]
    rest = [[i for i in a if i.key() not in common] for a in alts]
    rest = [r for r in rest if r]
    if len(rest) <= 1:
        return _dedupe(shared + (rest[0] if rest else []))
    uniq: dict[str, list[Item]] = {}
    for r in rest:
        uniq.setdefault("|".join(sorted(i.key() for i in r)), r)
    rest = list(uniq.values())
    if len(rest) == 1:
        return _dedupe(shared + rest[0])
    singles = [r[0] for r in rest if len(r) == 1 and isinstance(r[0], Constraint)]
    if len(singles) == len(rest) and len({(c.attr, c.op) for c in singles}) == 1 and singles[0].op in ("=", "in"):
        values: list[str] = []
        for c in singles:
            for v in (c.value if isinstance(c.value, list) else [c.value]):
                if str(v) not in values:
                    values.append(str(v))
        merged = Constraint(attr=singles[0].attr, op="in", value=sorted(values)) if len(values) > 1 else \
            Constraint(attr=singles[0].attr, op="=", value=values[0])
        return _dedupe([*shared, merged])
    flat: list[tuple[Constraint, ...]] = []
    for r in rest:
        if all(isinstance(i, Constraint) for i in r):
            flat.append(tuple(i for i in r if isinstance(i, Constraint)))
        else:  # nested OR inside an alternative: keep its plain members
            flat.append(tuple(i for i in r if isinstance(i, Constraint)))
    return _dedupe([*shared, AnyOf(alternatives=tuple(flat))])


def _share_trailing_modifier(alts: list[list[Item]]) -> list[list[Item]]:
    """"Stage I or stage II with bulky disease": values of one attribute in bare alternatives, and a
    modifier on another attribute after the last one, which then holds for every alternative."""
    first = alts[0][0] if isinstance(alts[0][0], Constraint) else None
    if first is None or any(len(a) != 1 for a in alts[:-1]) or len(alts[-1]) < 2:
        return alts
    attr = first.attr
    if not all(isinstance(a[0], Constraint) and a[0].attr == attr for a in alts):
        return alts
    extra = alts[-1][1:]
    if any(attr in attrs_of([i]) for i in extra):
        return alts
    return [[a[0], *extra] for a in alts]


DEFINITION = re.compile(
    r"\b(?:defined as|means|mean|are patients|is a patient|refers? to|are those)\b|=", re.IGNORECASE)


# How much of a treatment a box gives: "× 2 cycles", "ABVD × 4", "30 Gy in 5 fractions", "10 mg/m2",
# "for 1 year", "every 3 weeks". A patient's state is not written this way; a quantity that follows "after",
# "following" or "post" ("response after 2 cycles") is where the patient is, and does not count.
TREATMENT_QUANTITY = re.compile(
    r"(?<!after )(?<!following )(?<!post )(?<!post-)(?<!completing )(?<!of )"
    r"(?:(?:×|(?<![A-Za-z])x)\s*(?!10\s*[\^⁹e(])\d+(?![\d.]*\s*(?:uln|lln|\^))"
    r"|\b\d+(?:\.\d+)?\s*(?:[-–]\s*\d+\s*)?(?:cycles?|courses?|fractions?|infusions?|gy|cgy|mci|mbq)\b"
    r"|\b\d+(?:\.\d+)?\s*(?:mg|mcg|µg|μg)(?:\s*/\s*(?:m2|m²|kg))?(?![/\w])"
    r"|\b(?:for|every|over)\s+(?:\d+|one|two|three|four|six|twelve)\s*(?:(?:[-–]|to)\s*\d+\s*)?"
    r"(?:weeks?|months?|years?|days?|cycles?)\b"
    r"|\b(?:target|goal)\b[^;,.]{0,20}\d|\bto\s+(?-i:[A-Z][A-Z0-9]{1,7})\s+(?:of\s+)?\d)",  # "levothyroxine to TSH 0.5"
    re.IGNORECASE)


def gives_treatment(text: str) -> bool:
    """True when the text states how much of a treatment is given (cycles, dose, Gy, duration)."""
    for m in TREATMENT_QUANTITY.finditer(text):
        if not re.search(r"\b(?:after|following|post|completing|completion\s+of|at\s+least)\s*(?:[≥>]\s*)?$",
                         text[max(0, m.start() - 24):m.start()], re.IGNORECASE):
            return True
    return False


def is_condition(vocab: Vocabulary, parse: Parse | None, text: str) -> bool:
    """A box that states a patient's state (a decision), not an action, a treatment or a pointer.

    Actions open with a verb ("Consider", "Continue"), name a treatment, a procedure or a
    pathway as their first noun phrase ("Multiagent chemotherapy; …", "Osteosarcoma pathway"),
    or state how much of a treatment is given ("ABVD × 2 cycles", "30 Gy in 5 fractions"):
    such quantities are the recommendation, never a bound on the patient.
    """
    if gives_treatment(text):
        return False
    if re.match(r"(?:[\w-]+\s+){1,2}candidates?\b", text, re.IGNORECASE):
        return True  # "Transplant candidate, …": who the patient is, not the transplant
    if re.match(rf"[\w/]+-{COMPOUND_STATE}\b", text, re.IGNORECASE):
        return True  # "Cisplatin-eligible, …", "BCG-unresponsive": the patient's state towards a treatment
    if parse is None or not parse.tokens:
        words = re.findall(r"[A-Za-z][\w-]*", text.lower())
        return not words or (words[0] not in vocab.action_verbs and not names_action(vocab, words[0]))
    toks = parse.tokens
    first = toks[0].word.lower()
    if first in _STATE_OPENERS:
        return True  # "Prior ARPI and prior docetaxel", "No prior …": the patient's history, whatever it names
    if names_action(vocab, first) and (len(toks) == 1 or not toks[1].pos.startswith("VB")):
        return False  # "CT neck and chest; …", "Ultrasound of the neck", "Lobectomy with …": named first
    verb_first = first in vocab.action_verbs
    if verb_first and (toks[0].pos.startswith("VB") or (len(toks) > 1 and not toks[1].pos.startswith("NN"))):
        return False
    head = before_cc = None
    coordinated = False
    for t in toks:  # the head of the first noun phrase; a coordination inside it ("A- and B-directed therapy",
        # "chest CT and brain MRI") goes on to its last noun, unless a clause follows ("… or resection would cause")
        if t.pos in ("VBD", "VBZ", "VBP", "MD") and coordinated:
            head = before_cc
            break
        if t.pos in ("IN", ",", ":", "TO", "WDT", "VBD", "VBZ", "VBP", "MD") or t.word in (";", "(", "-LRB-"):
            break
        if t.pos == "CC" and not coordinated:
            before_cc, coordinated = head, True
        if t.pos.startswith("NN") or t.pos in ("VBG",):
            head = t.word.lower()
    return head is None or not names_action(vocab, head)


_STATE_OPENERS = {"prior", "previous", "previously", "no", "without", "history", "failure", "failed", "progression",
                  "relapse", "recurrence", "intolerance"}


# What a treatment or a procedure is called, by the word's form: international nonproprietary name stems of
# drugs (-mab antibodies, -nib kinase inhibitors, -platin, -taxel, …) and the suffixes of procedures and tests
# (-ectomy, -otomy, -scopy, -graphy, -therapy). General medical word-formation, not any guideline's names.
_ACTION_FORM = re.compile(
    r"(?:mab|nib|lisib|platin|taxel|rubicin|tecan|parib|ciclib|zomib|mustine|trexed|citabine|lutamide|relix|"
    r"relin|olimus|degib|fenib|tinib|sertib|etinide|ectom(?:y|ies)|otom(?:y|ies)|ostom(?:y|ies)|plast(?:y|ies)|"
    r"scop(?:y|ies)|graph(?:y|ies)|therap(?:y|ies))$")


def names_action(vocab: Vocabulary, word: str) -> bool:
    """Is the word a treatment, a procedure or a test (the vocabulary's action nouns, or by its form)?"""
    w = word.lower().strip("-")
    return w in vocab.action_nouns or w.rstrip("s") in vocab.action_nouns or bool(_ACTION_FORM.search(w))


def footnote_constraints(vocab: Vocabulary, anchor: str, text: str) -> list[Constraint]:
    """Age bounds from a footnote that defines the anchor term ("adults are patients aged ≥ 40")."""
    if not anchor or anchor.lower() not in text.lower() or not DEFINITION.search(text):
        return []
    return numeric_constraints(vocab, normalise(text), only={"age"})


def extract(vocab: Vocabulary, text: str, parse: Parse | None,
            footnotes: Sequence[tuple[str, str]] = (), opener: OpenVocabulary | None = None,
            contrasts: tuple[str, ...] = ()) -> list[Item]:
    """The constraints a box states.

    Args:
        vocab: the compiled vocabulary.
        text: the box's printed text (markers removed).
        parse: CoreNLP's parse of ``prepare(text)`` (None: no parse, keywords on the whole text).
        footnotes: (anchor word, footnote text) pairs of the box's markers.
        opener: reads comparisons on attributes the vocabulary does not list (the registry's
            open-vocabulary path); None keeps to the vocabulary.
        contrasts: words the guideline contrasts across boxes (:func:`contrast_words`), read as qualifiers.
    """
    main = prepare(vocab, text)
    if not is_condition(vocab, parse, main):
        return []
    if opener is not None and footnotes:
        opener = _NotDefinedInFootnotes(opener, [note for _, note in footnotes if DEFINITION.search(note)])
    items = read_items(vocab, main, parse, opener, contrasts)
    if opener is not None:
        items += _defined_counts(vocab, main, footnotes, opener, items)
    present = {(c.attr, c.op) for c in items if isinstance(c, Constraint)}
    for anchor, note in footnotes:
        for c in footnote_constraints(vocab, anchor, note):
            if (c.attr, c.op) not in present and not _age_in_anyof(items):
                items.append(c)
                present.add((c.attr, c.op))
    return _dedupe(items)


def read_items(vocab: Vocabulary, main: str, parse: Parse | None, opener: OpenVocabulary | None,
               contrasts: tuple[str, ...] = ()) -> list[Item]:
    """The constraints a prepared text states, without deciding whether it is a condition."""
    if parse is None or not parse.tokens:
        piece = _Piece(main, tuple([False] * len(main)))
        items: list[Item] = [*keyword_constraints(vocab, piece), *numeric_constraints(vocab, main)]
        if opener is not None:
            items += _open_items(opener, _open_comparisons(vocab, main, contrasts), items, vocab)
        return items
    return _evaluate_groups(vocab, parse, opener, contrasts)


def _defined_counts(vocab: Vocabulary, text: str, footnotes: Sequence[tuple[str, str]], opener: OpenVocabulary,
                    known: list[Item]) -> list[Item]:
    """How many lesions a term of the box means, by the footnote that defines it ("Oligometastatic: 1–3 metastatic
    lesions in total"): the count is the term's meaning, so a patient with more is not on this branch."""
    words = {w.lower() for w in re.findall(r"[A-Za-z][\w-]{3,}", text)}
    out: list[Item] = []
    for _, note in footnotes:
        m = DEFINITION.search(note) or re.search(r":", note)
        if m is None:
            continue
        term, body = note[:m.start()], note[m.end():]
        if DEFINITION.search(body) or len(term.split()) > 5 or \
                not words & {w.lower() for w in re.findall(r"[A-Za-z][\w-]{3,}", term)}:
            continue  # a table of several terms' definitions ("0 = single tumour; A = …"), or another term
        counts = find_lesion_counts(body)
        shared = words & {w.lower() for w in re.findall(r"[A-Za-z][\w-]{3,}", term)}
        opposite = any(re.search(r"\b(?:beyond|outside|exceed\w*|not|no|without|than)\s+(?:\S+\s+){0,2}$",
                                 text[:h.start()], re.I)
                       for w in shared for h in re.finditer(rf"(?<![\w-]){re.escape(w)}", text, re.I))
        if len(counts) != 1 or opposite:
            continue  # alternatives ("a single tumour …, or 2–3 tumours …"), or a box that is the term's opposite
        out += _open_items(opener, counts, [*known, *out], vocab)
    return out


@dataclass
class _NotDefinedInFootnotes:
    """Skips a comparison that a footnote of the box uses to define a term: "Poor response, <90%
    necrosis" with a footnote "good response means at least 90% tumor necrosis" states the response,
    and the necrosis bound is its definition, not a second criterion."""

    inner: OpenVocabulary
    definitions: list[str]

    def _defines(self, c: Comparison) -> bool:
        """The comparison's attribute is what a footnote defines the box's term *by* (it appears after the
        definition word), not the term the footnote defines: "BCLC staging: 0 = single tumour ≤ 2 cm; …" defines
        BCLC, so "BCLC 0–A" in the box stays; "good response means ≥ 90% necrosis" uses necrosis to define
        response, so a box's necrosis bound repeats the definition."""
        if not c.attr:
            return False
        words = [w for w in re.findall(r"[a-z][a-z0-9-]+", c.attr.lower()) if len(w) > 2]

        def has_all(s: str) -> bool:
            return all(re.search(rf"\b{re.escape(w)}\b", s) for w in words)

        for d in self.definitions:
            m = DEFINITION.search(d)
            if m is None:
                continue
            term, body = d[:m.start()].lower(), d[m.end():].lower()
            if has_all(body) and not has_all(term):
                return True
        return False

    def known_attribute(self, comparison: Comparison) -> str | None:
        return self.inner.known_attribute(comparison)

    def items(self, comparison: Comparison) -> list[Item]:
        return [] if self._defines(comparison) else self.inner.items(comparison)


def _age_in_anyof(items: Sequence[Item]) -> bool:
    return any(isinstance(i, AnyOf) and any(c.attr == "age" for alt in i.alternatives for c in alt) for i in items)


def prepare(vocab: Vocabulary, text: str) -> str:
    """The text that is sent to CoreNLP for a box (normalised, explanatory remarks removed)."""
    return split_parentheticals(normalise(text), vocab)[0]
