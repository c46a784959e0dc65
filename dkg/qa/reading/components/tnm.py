"""T, N and M categories as written ("cT2a", "pN1b", "cN0", "M0", "M1c"), for a linked guideline that decides on
``t_category``, ``n_category`` or ``m_category``; a stated absence of distant metastases is M0 and their presence
M1 where nothing more is written. A category more general than the guideline's values ("N1" where it draws N1a and
N1b) is left for the guideline to ask; one more specific than a drawn group ("N1b" where it draws N1) is that
group."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, FactSource, QuestionDoc, component

_WRITTEN = {
    "t_category": re.compile(r"(?<![\w-])(?:yp|p|c)?t([0-4][a-d]?|is)(?![\w-])"),
    "n_category": re.compile(r"(?<![\w-])(?:yp|p|c)?n([0-3][a-c]?)(?![\w-])"),
    "m_category": re.compile(r"(?<![\w-])(?:p|c)?m([01][a-d]?)(?![\w-])"),
}


def _fit(said: str, values: set[str]) -> str | None:
    """The guideline's value for a written category (None: the guideline draws finer ones)."""
    by_lower = {v.lower(): v for v in values}
    if said.lower() in by_lower:
        return by_lower[said.lower()]
    if any(v.lower().startswith(said.lower()) for v in values):
        return None  # "N1" where the guideline draws N1a and N1b: which one is not said
    group = re.sub(r"[a-d]$", "", said)
    return by_lower.get(group.lower(), said)


@component("tnm_categories")
def read_tnm_categories(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    codes = r.guidelines or list(ctx.kb.states)
    attrs = set().union(*(ctx.kb.attrs.get(c, set()) for c in codes)) | set(ctx.kb.criteria_attributes)
    for attr, pattern in _WRITTEN.items():
        if attr not in attrs or attr in r.facts:
            continue
        found = list(pattern.finditer(doc.text))
        said = {attr[0].upper() + m.group(1).lower() for m in found}
        if len(said) != 1:
            continue
        value = _fit(said.pop(), ctx.kb.values_of(codes, attr))
        if value is not None:
            r.facts[attr] = value
            r.sources.append(FactSource(attr, value, found[-1].group(0), "TNM category"))
    if "m_category" in attrs and "m_category" not in r.facts and r.facts.get("metastatic") in ("yes", "no"):
        value = _fit("M0" if r.facts["metastatic"] == "no" else "M1", ctx.kb.values_of(codes, "m_category"))
        if value is not None:
            r.facts["m_category"] = value
            r.sources.append(FactSource("m_category", value, f"metastatic = {r.facts['metastatic']}",
                                        "TNM category"))
