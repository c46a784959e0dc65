"""``dkg eval criteria``: open-vocabulary comparisons scored on brat-annotated eligibility criteria.

The gold comes from the LCT scheme (Leaf Clinical Trials corpus): every ``Eq-Comparison``
attached as ``Numeric-Filter`` of an ``Age`` or ``Observation`` event, or as ``Stage`` of a
``Condition``, ``Observation`` or ``Procedure`` event, with its operator (the ``Eq-Operator``'s
``Eq-Operator-Value``; EQ when none is annotated) and its ``Value``/``Value2`` spans. The name
is the event's ``Name`` span (``Age`` events: the attribute is age).

A prediction on the same criterion line matches a gold comparison when the operator and the
values agree: numbers numerically, roman = arabic, BETWEEN as an unordered pair, EQ with
several values as a set (our ``IN``), and an EQ over two values written as a range ("grade 1- 4": the
scheme's EQ where no operator word is written) as BETWEEN; a power of ten after "×" in a gold value
("<100x109/L": values 100 and 109) is part of the unit. "End to end" also needs the predicted attribute words to
overlap the gold name span (for ``Age`` the predicted attribute must be age). Matching is
one-to-one per line.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from dkg.constraints.comparisons import BETWEEN, EQ, IN, Comparison, find_comparisons, number_value, ordinal_value
from dkg.errors import ConstraintError

GOLD_TYPES = ("Age", "Observation", "Stage")


@dataclass(frozen=True)
class GoldComparison:
    """One annotated comparison: its line, type, operator, values and name span."""

    doc: str
    line: int
    type: str
    op: str
    values: tuple[str, ...]
    name_spans: tuple[tuple[int, int], ...]
    text: str


@dataclass(frozen=True)
class Predicted:
    """One predicted comparison, located on its line of its document."""

    doc: str
    line: int
    comparison: Comparison
    offset: int  # the line's first character in the document
    line_text: str


@dataclass
class _Brat:
    spans: dict[str, tuple[str, list[tuple[int, int]], str]] = field(default_factory=dict)
    events: dict[str, tuple[str, str, list[tuple[str, str]]]] = field(default_factory=dict)
    attrs: dict[tuple[str, str], str] = field(default_factory=dict)


def read_brat(path: Path) -> _Brat:
    """Parse a brat standoff ``.ann`` file (text-bound, event and attribute lines)."""
    out = _Brat()
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip() or raw[0] not in "TEA":
            continue
        parts = raw.split("\t")
        try:
            if raw[0] == "T":
                typ, spans = parts[1].split(" ", 1)
                segs = [(int(a), int(b)) for a, b in (s.split() for s in spans.split(";"))]
                out.spans[parts[0]] = (typ, segs, parts[2] if len(parts) > 2 else "")
            elif raw[0] == "E":
                args = parts[1].split()
                typ, trig = args[0].split(":", 1)
                roles = [(a.split(":", 1)[0], a.split(":", 1)[1]) for a in args[1:]]
                out.events[parts[0]] = (typ, trig, roles)
            else:
                f = parts[1].split()
                out.attrs[(f[1], f[0])] = f[2] if len(f) > 2 else "true"
        except (IndexError, ValueError) as e:
            raise ConstraintError(f"{path}: line {n} is not brat standoff: {raw[:80]!r}") from e
    return out


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos)


def gold_comparisons(txt_path: Path) -> list[GoldComparison]:
    """The gold comparisons of one ``.txt``/``.ann`` pair, deduplicated per comparison."""
    ann_path = txt_path.with_suffix(".ann")
    text = txt_path.read_text(encoding="utf-8")
    brat = read_brat(ann_path)
    out: dict[str, GoldComparison] = {}
    for typ, _trig, roles in brat.events.values():
        names = tuple(seg for role, arg in roles if re.sub(r"\d+$", "", role) == "Name" and arg in brat.spans
                      for seg in brat.spans[arg][1])
        for role, arg in roles:
            r = re.sub(r"\d+$", "", role)
            if r == "Numeric-Filter" and typ in ("Age", "Observation"):
                gtype = typ
            elif r == "Stage" and typ in ("Condition", "Observation", "Procedure"):
                gtype = "Stage"
            else:
                continue
            if arg not in brat.events or arg in out:
                continue
            _ctyp, ctrig, cargs = brat.events[arg]
            op, values = EQ, []
            for crole, carg in cargs:
                cr = re.sub(r"\d+$", "", crole)
                if cr == "Operator":
                    op = brat.attrs.get((carg, "Eq-Operator-Value"), EQ)
                elif cr in ("Value", "Value2") and carg in brat.spans:
                    values.append(brat.spans[carg][2])
            if ctrig not in brat.spans:
                continue
            start = brat.spans[ctrig][1][0][0]
            out[arg] = GoldComparison(doc=txt_path.stem, line=_line_of(text, start), type=gtype, op=op,
                                      values=tuple(values), name_spans=names, text=brat.spans[ctrig][2])
    return sorted(out.values(), key=lambda g: (g.line, g.text))


def predict(txt_path: Path) -> list[Predicted]:
    """Our comparisons, line by line (a criterion is a line)."""
    text = txt_path.read_text(encoding="utf-8")
    out: list[Predicted] = []
    offset = 0
    for i, line in enumerate(text.split("\n")):
        out += [Predicted(txt_path.stem, i, c, offset, line) for c in find_comparisons(line)]
        offset += len(line) + 1
    return out


def _norm_values(values: Iterable[str]) -> list[str]:
    """Values in one spelling: roman numerals as arabic, numbers as floats ("II" = "2" = "2.0")."""
    out: list[str] = []
    for v in values:
        o = ordinal_value(v.strip().rstrip("%"))
        n = number_value(o)
        out.append(str(n) if n is not None else o)
    return out


def _values_agree(op: str, pred: tuple[str, ...], gold: tuple[str, ...]) -> bool:
    p, g = _norm_values(pred), _norm_values(gold)
    if op in (BETWEEN, IN, EQ) and len(g) > 1:
        return set(p) == set(g)  # unordered; a duplicated gold value ("20-75 years": 20, 75, 75)
    return p == g


_RANGE_JOIN = r"\s*(?:-|–|—|－|~|～|to|through)\s*"


def _written_as_range(g: GoldComparison) -> bool:
    """A gold EQ over two values written as a range ("ASA grade 1- 4", "BMI = 18.5-29.9"): the scheme
    puts EQ where no operator word is written, but the values are the bounds of a range."""
    if g.op != EQ or len(g.values) != 2:
        return False
    a, b = (re.escape(v.strip()) for v in g.values)
    return bool(re.search(rf"{a}{_RANGE_JOIN}{b}|{b}{_RANGE_JOIN}{a}", g.text, re.IGNORECASE))


def _ops_agree(pred: str, g: GoldComparison) -> bool:
    if pred == g.op:
        return True
    if pred == IN and g.op in (EQ, BETWEEN) and len(g.values) > 1:
        return True
    if pred == BETWEEN and _written_as_range(g):
        return True
    return pred == EQ and g.op == IN


def _gold_values(g: GoldComparison) -> tuple[str, ...]:
    """The gold values, a power of ten written after "×" read as part of the unit: "<100x109/L" (10^9
    with its superscript lost) is annotated with the values 100 and 109, but bounds one number, 100 × 10^9."""
    if len(g.values) == 2 and g.op not in (BETWEEN, IN):
        a, b = (v.strip() for v in g.values)
        if re.fullmatch(r"10\^?\d{0,2}", b) and re.search(rf"{re.escape(a)}\s*[x×*]\s*{re.escape(b)}", g.text):
            return (a,)
    return g.values


def matches(p: Predicted, g: GoldComparison, *, end_to_end: bool) -> bool:
    """Whether a prediction states the gold comparison (and, end to end, names its attribute)."""
    c = p.comparison
    if p.doc != g.doc or p.line != g.line or not _ops_agree(c.op, g):
        return False
    if not g.values or not _values_agree(g.op, c.values, _gold_values(g)):
        return False
    if not end_to_end:
        return True
    if g.type == "Age":
        return c.kind == "age"
    if c.attr_start is None or c.attr_end is None:
        return False
    s, e = p.offset + c.attr_start, p.offset + c.attr_end
    return any(s < ge and gs < e for gs, ge in g.name_spans)


@dataclass
class Score:
    """Precision, recall and F1 from counts."""

    tp_pred: int = 0
    n_pred: int = 0
    tp_gold: int = 0
    n_gold: int = 0

    def as_dict(self) -> dict[str, float | int]:
        p = self.tp_pred / self.n_pred if self.n_pred else 0.0
        r = self.tp_gold / self.n_gold if self.n_gold else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4),
                "predicted": self.n_pred, "gold": self.n_gold, "tp": self.tp_gold}


def _kind_type(c: Comparison) -> str:
    return {"age": "Age", "stage": "Stage"}.get(c.kind, "Observation")


def _match_one_to_one(preds: list[Predicted], golds: list[GoldComparison], *, end_to_end: bool
                      ) -> dict[int, int]:
    """Prediction index → gold index, greedily per line in text order."""
    pairs: dict[int, int] = {}
    used: set[int] = set()
    by_line: dict[tuple[str, int], list[int]] = defaultdict(list)
    for j, g in enumerate(golds):
        by_line[(g.doc, g.line)].append(j)
    for i, p in enumerate(preds):
        for j in by_line.get((p.doc, p.line), []):
            if j not in used and matches(p, golds[j], end_to_end=end_to_end):
                pairs[i] = j
                used.add(j)
                break
    return pairs


@dataclass
class CriteriaReport:
    """The whole evaluation: both match levels, per gold type, and the misses."""

    value_op: Score
    end_to_end: Score
    by_type: dict[str, dict[str, Score]]
    lines: int
    documents: int
    misses: list[GoldComparison]
    false_positives: list[Predicted]

    def as_json(self) -> dict[str, object]:
        return {
            "value_op": self.value_op.as_dict(), "end_to_end": self.end_to_end.as_dict(),
            "by_type": {t: {lvl: s.as_dict() for lvl, s in d.items()} for t, d in self.by_type.items()},
            "lines": self.lines, "documents": self.documents,
        }


def criteria_files(root: Path) -> list[Path]:
    """Every ``.txt`` with an ``.ann`` beside it under ``root`` (recursively), sorted.

    Raises:
        ConstraintError: ``root`` is missing or holds no pair.
    """
    if not root.is_dir():
        raise ConstraintError(f"{root}: not a folder of brat .txt/.ann pairs")
    files = sorted(Path(d) / f for d, _dirs, names in os.walk(root, followlinks=True) for f in names
                   if f.endswith(".txt") and (Path(d) / f).with_suffix(".ann").is_file())
    if not files:
        raise ConstraintError(f"{root}: no brat .txt/.ann pair found")
    return files


def evaluate_criteria(root: Path) -> CriteriaReport:
    """Score :func:`find_comparisons` against every annotated pair under ``root``."""
    preds: list[Predicted] = []
    golds: list[GoldComparison] = []
    lines = 0
    files = criteria_files(root)
    for f in files:
        # documents are keyed by their path relative to the root, so equal stems in two batches stay apart
        key = str(f.relative_to(root).with_suffix(""))
        golds += [GoldComparison(**{**g.__dict__, "doc": key}) for g in gold_comparisons(f)]
        preds += [Predicted(key, p.line, p.comparison, p.offset, p.line_text) for p in predict(f)]
        lines += sum(1 for ln in f.read_text(encoding="utf-8").split("\n") if ln.strip())
    value_op = _match_one_to_one(preds, golds, end_to_end=False)
    e2e = _match_one_to_one(preds, golds, end_to_end=True)
    by_type: dict[str, dict[str, Score]] = {t: {"value_op": Score(), "end_to_end": Score()} for t in GOLD_TYPES}
    for level, pairs in (("value_op", value_op), ("end_to_end", e2e)):
        for j, g in enumerate(golds):
            by_type[g.type][level].n_gold += 1
            by_type[g.type][level].tp_gold += j in pairs.values()
        for i, p in enumerate(preds):
            t = golds[pairs[i]].type if i in pairs else _kind_type(p.comparison)
            by_type[t][level].n_pred += 1
            by_type[t][level].tp_pred += i in pairs
    total = {lvl: Score(len(pairs), len(preds), len(pairs), len(golds))
             for lvl, pairs in (("value_op", value_op), ("end_to_end", e2e))}
    matched = set(value_op.values())
    return CriteriaReport(
        value_op=total["value_op"], end_to_end=total["end_to_end"], by_type=by_type, lines=lines,
        documents=len(files), misses=[g for j, g in enumerate(golds) if j not in matched],
        false_positives=[p for i, p in enumerate(preds) if i not in value_op],
    )


def counts_by_op(golds: Iterable[GoldComparison]) -> Counter[str]:
    """How many gold comparisons use each operator (for the table's footer)."""
    return Counter(g.op for g in golds)
