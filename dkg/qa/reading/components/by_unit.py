"""A measurement the question does not name ("melanoma of the calf, 0.5 mm") is the guideline's only attribute
measured in that kind of unit (as its boxes write it), when the question gives one such measurement and the
linked guideline decides on one such attribute (two lengths, or two attributes in %, say nothing)."""

from __future__ import annotations

import json
from typing import Any

from dkg import rx as re
from dkg.constraints.registry import canonical_unit
from dkg.qa.quantities import _named_otherwise
from dkg.qa.reading.doc import Context, QuestionDoc, component


def _units(ctx: Context, code: str) -> dict[str, str]:
    """The numeric attributes a guideline's boxes (and its terms' definitions) bound, with the unit they write (one
    unit each)."""
    units: dict[str, set[str]] = {}

    def walk(x: Any) -> None:
        if isinstance(x, list):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            if "any_of" in x:
                walk(x["any_of"])
            elif isinstance(x.get("value"), int | float) and x.get("unit"):
                units.setdefault(str(x["attr"]), set()).add(canonical_unit(str(x["unit"])) or str(x["unit"]))

    for b in ctx.kb.states[code].boxes.values():
        if b.constraints not in ("", "[]"):
            walk(json.loads(b.constraints))
    # and what its footnotes define terms by ("high risk = tumour > 5 cm")
    walk([c.to_json() for c in ctx.kb.criteria_of(code)])
    return {a: next(iter(u)) for a, u in units.items() if len(u) == 1}


_TUMOUR = {"tumor", "tumour", "nodule", "mass", "primary", "lesion", "carcinoma", "cancer"}


def _named_here(ctx: Context, code: str, text: str, m: re.Match[str], attrs: list[str]) -> str | None:
    """Of attributes in one unit, the one the measurement's own clause names: by the attribute's words, or a
    tumour's size by the tumour's words (the guideline's names, "tumour", "nodule")."""
    clause = re.split(r"[,;(]|(?<!\d)\.(?!\d)", text[max(0, m.start() - 30):m.start()])[-1] + " " + \
        re.split(r"[,;(]|(?<!\d)\.(?!\d)", text[m.end():m.end() + 30])[0]
    words = {w.rstrip("s") for w in re.findall(r"[a-z]{2,}", clause)}
    names = {w.rstrip("s") for n in ctx.conf.diseases.get(code, []) for w in re.findall(r"[a-z]{2,}", n.lower())}
    hits = []
    for a in attrs:
        own = {w.rstrip("s") for w in a.split("_") if len(w) > 2} - {"size"}
        tumour = bool(re.search(r"tumou?r|primary|size", a)) and bool(words & (_TUMOUR | names))
        if own & words or tumour:
            hits.append(a)
    return hits[0] if len(hits) == 1 else None


@component("by_unit")
def read_by_unit(doc: QuestionDoc, ctx: Context) -> None:
    r, text = doc.reading, doc.text
    if len(r.guidelines) != 1 or r.guidelines[0] not in ctx.kb.states:
        return
    read = doc.read_attrs()
    code = r.guidelines[0]
    # the boxes do not change while this context lives
    numeric = sorted(ctx.memo(f"units:{code}", lambda: _units(ctx, code)).items())
    found = [m for m in re.finditer(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(mm|cm|%|ng/ml|u/l|mu/l|g/dl|mg/dl)(?![\w/])",
                                    text) if doc.free(m.start(), m.end())]
    for attr, unit in numeric:
        if attr in read:
            continue
        # the unit the guideline writes, not another of the same dimension: "a 3 cm node" is no Breslow
        # thickness in mm
        fits = [(m, float(m.group(1))) for m in found
                if (canonical_unit(m.group(2)) or m.group(2)).lower() == unit.lower()
                and not _named_otherwise(text, m.start(), attr)]
        rivals = [a for a, u in numeric if a != attr and a not in read and u.lower() == unit.lower()]
        rule = f"the only attribute in {unit}"
        if len(fits) == 1 and rivals and _named_here(ctx, code, text, fits[0][0], [attr, *rivals]) == attr:
            rivals = []  # "2.3 cm PTC" is the tumour's size, "a 7 mm recurrent node" the node's
            rule = f"the attribute in {unit} its clause names"
        if len(fits) != 1 or rivals:
            continue
        m, v = fits[0]
        value: Any = int(v) if float(v).is_integer() else round(v, 3)
        doc.add(m.start(), attr, value, m.group(0), rule)
        doc.take(m.start(), m.end())
