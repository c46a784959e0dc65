"""edges.csv → constraints.csv: the paper's head, head_constraints, tail, tail_constraints."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dkg.constraints.comparisons import EQ, Comparison
from dkg.constraints.extract import extract, is_condition, prepare
from dkg.constraints.models import AnyOf, Constraint, Item, items_to_json
from dkg.constraints.parse import Parse
from dkg.constraints.qualifiers import contrast_words
from dkg.constraints.registry import Registry, RegistryOpener, Where, constraints_for
from dkg.constraints.vocabulary import Vocabulary
from dkg.errors import ConstraintError
from dkg.storage import atomic_files

REQUIRED = ("head", "tail", "head_plain", "tail_plain", "head_id", "tail_id", "kind")
EXTRA = ("head_constraints", "tail_constraints", "head_kind", "tail_kind")


@dataclass(frozen=True)
class BoxText:
    """What the extractor needs of one box."""

    box_id: str
    text: str
    footnotes: tuple[tuple[str, str], ...]


def read_edges(path: Path) -> list[dict[str, str]]:
    """Read an edge CSV, with errors that name the file and the row.

    Raises:
        ConstraintError: missing file, empty file, non-UTF-8 bytes, missing columns.
    """
    if not path.exists():
        raise ConstraintError(f"{path}: no such file")
    raw = path.read_bytes()
    if not raw.strip():
        raise ConstraintError(f"{path}: the file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ConstraintError(f"{path}: line {line} is not UTF-8 (byte {e.start})") from e
    rows = list(csv.DictReader(text.splitlines()))
    header = next(csv.reader(text.splitlines()[:1]), [])
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ConstraintError(f"{path}: missing column(s) {', '.join(missing)}")
    for i, r in enumerate(rows, start=2):
        if not r.get("head_plain") or not r.get("tail_plain"):
            raise ConstraintError(f"{path}: row {i} has an empty head or tail")
    return rows


def box_texts(rows: Sequence[dict[str, str]], graph_json: Path | None) -> dict[str, BoxText]:
    """Each box's printed text and footnotes (from graph.json beside the CSV, when present)."""
    notes: dict[str, tuple[tuple[str, str], ...]] = {}
    if graph_json is not None and graph_json.exists():
        data = json.loads(graph_json.read_text(encoding="utf-8"))
        for page in data.get("pages", []):
            for b in page.get("boxes", []):
                notes[b["id"]] = tuple((f["anchor"], f["text"]) for f in b.get("footnotes", []) if f.get("text"))
    out: dict[str, BoxText] = {}
    for r in rows:
        for side in ("head", "tail"):
            bid = r[f"{side}_id"]
            out.setdefault(bid, BoxText(bid, r[f"{side}_plain"], notes.get(bid, ())))
    return out


def paper_form(items: Sequence[Item]) -> str:
    """The paper's comma-separated form: ``ph_status=positive, age>=15, age<=39``."""
    def one(c: Constraint) -> str:
        v = "|".join(c.value) if isinstance(c.value, list) else c.value
        return f"{c.attr}{c.op}{v}"

    parts = []
    for i in items:
        if isinstance(i, AnyOf):
            parts.append("(" + " OR ".join(" AND ".join(one(c) for c in alt) for alt in i.alternatives) + ")")
        else:
            parts.append(one(i))
    return ", ".join(parts) if parts else "NULL"


def build_rows(rows: Sequence[dict[str, str]], boxes: dict[str, BoxText], vocab: Vocabulary,
               parse_of: Callable[[str], Parse | None], paper: bool = False,
               registry: Registry | None = None) -> list[dict[str, Any]]:
    """Add the constraint columns to every edge row.

    A tail is a *decision* when it states a patient condition and is one of two or more arrows
    leaving the same box (the alternatives a clinician chooses between). With a ``registry``,
    comparisons on attributes the vocabulary does not list are read too, and new attributes are
    proposed to it (first seen here: guideline, version, page, box).
    """
    constraints: dict[str, list[Item]] = {}
    condition: dict[str, bool] = {}
    pages = {r[f"{s}_id"]: r.get(f"{s}_page", "") for r in rows for s in ("head", "tail")}
    code = rows[0].get("guideline", "") if rows else ""
    version = rows[0].get("version", "") if rows else ""
    contrasts = contrast_words([b.text for b in boxes.values()])
    for bid, b in boxes.items():
        p = parse_of(prepare(vocab, b.text))
        opener = RegistryOpener(registry, Where(code, version, str(pages.get(bid, "")), bid, b.text)) \
            if registry is not None else None
        constraints[bid] = extract(vocab, b.text, p, b.footnotes, opener, contrasts)
        condition[bid] = is_condition(vocab, p, prepare(vocab, b.text))
    fan_out = Counter(r["head_id"] for r in rows if r["kind"] == "arrow")
    if registry is not None:
        for r in rows:
            t = r["tail_id"]
            if r["kind"] == "arrow" and fan_out[r["head_id"]] >= 2 and condition[t] and not constraints[t]:
                where = Where(code, version, str(pages.get(t, "")), t, boxes[t].text)
                constraints[t] = named_finding(registry, vocab, boxes[t].text, where)

    def kind(bid: str, alternatives: bool) -> str:
        if not condition[bid]:
            return "action"
        return "decision" if alternatives else "condition"

    out = []
    for r in rows:
        h, t = r["head_id"], r["tail_id"]
        row: dict[str, Any] = dict(r)
        if paper:
            row["head_constraints"] = paper_form(constraints[h])
            row["tail_constraints"] = paper_form(constraints[t])
        else:
            row["head_constraints"] = json.dumps(items_to_json(constraints[h]), ensure_ascii=False)
            row["tail_constraints"] = json.dumps(items_to_json(constraints[t]), ensure_ascii=False)
        row["head_kind"] = kind(h, False)
        row["tail_kind"] = kind(t, r["kind"] == "arrow" and fan_out[h] >= 2)
        out.append(row)
    return out


_FINDING_STOP = {"a", "an", "the", "with", "and", "or", "of", "in", "on", "to", "for", "patients", "patient",
                 "disease", "see"}


def named_finding(registry: Registry, vocab: Vocabulary, text: str, where: Where) -> list[Item]:
    """A decision's branch that no rule read ("Clinically relevant thrombocytopenia (See MDS-3)" beside "Symptomatic
    anemia …"): the patient has what the box names. The finding, in the guideline's own words, becomes a yes/no
    attribute (proposed to the registry like any other), so that the branch is told apart from its siblings."""
    main = re.sub(r"\([^)]*\)", " ", prepare(vocab, text))  # "(See MDS-3)", "(pure or mixed)": remarks
    if len(re.findall(r"[A-Za-z][\w+-]*", main)) > 6:
        main = re.split(r"[,;:]", main, maxsplit=1)[0]  # the finding is the first clause ("…, any stage")
    words = list(re.findall(r"[A-Za-z][\w+-]*", main))
    while words and words[0].lower() in _FINDING_STOP:
        words.pop(0)
    while words and words[-1].lower() in _FINDING_STOP:
        words.pop()
    if not words or len(words) > 6:
        return []
    phrase = " ".join(words)
    found = constraints_for(registry, Comparison(EQ, ("yes",), None, 0, len(phrase), phrase, 0, len(phrase),
                                                 "category"), where)
    return found[1] if found else []


def write_rows(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    """Write the constraint CSV atomically: the edge columns first, then the constraint columns."""
    if not rows:
        raise ConstraintError(f"{path}: nothing to write (no edges)")
    cols = [c for c in rows[0] if c not in EXTRA]
    cols = ["head", "head_constraints", "tail", "tail_constraints", *[c for c in cols if c not in ("head", "tail")],
            "head_kind", "tail_kind"]
    with atomic_files([path]) as (tmp,), open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in cols})
    return path
