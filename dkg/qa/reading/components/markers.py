"""Positive/negative findings named by their marker as clinicians write them ("BRAF V600E mutated", "BRAF wt",
"SF3B1 wild-type", "positive for RET fusion", "SLN+"): the marker is the first word of a linked guideline's
positive/negative attribute written as a term (letters and digits, two or more). Attributes that share the marker
and the values are one finding under two names (both are set)."""

from __future__ import annotations

from dkg import rx as re
from dkg.constraints.vocabulary import load_registry
from dkg.qa.reading.doc import Context, QuestionDoc, component

_POSITIVE = r"positive|pos|mutated|mutant|mutation detected|detected|present|\+"
_NEGATIVE = r"negative|neg|wild[\s-]?type|wt|not detected|absent|non[\s-]?mutated|unmutated|-(?![\w])"


def _by_marker(doc: QuestionDoc, ctx: Context) -> dict[str, list[str]]:
    """Each marker word and the unread positive/negative attributes of the linked guidelines it names."""
    read = doc.read_attrs()
    used = set().union(*(ctx.kb.attrs.get(c, set()) for c in (doc.reading.guidelines or list(ctx.kb.states))))
    by_marker: dict[str, list[str]] = {}
    for a in load_registry().approved().values():
        if a.name in read or a.name not in used or not a.values or set(a.values) != {"positive", "negative"}:
            continue
        for alias in a.aliases:
            first = re.match(r"\s*([A-Z][A-Z0-9]{1,7})\b", alias)
            if first:
                by_marker.setdefault(first.group(1).lower(), []).append(a.name)
                break
    return by_marker


@component("markers")
def read_markers(doc: QuestionDoc, ctx: Context) -> None:
    text = doc.text
    long_forms = {str(k).lower(): [str(x) for x in v]
                  for k, v in ctx.clinical.get("finding_abbreviations", {}).items()}
    for marker, names in sorted(_by_marker(doc, ctx).items()):
        spelled = "|".join([re.escape(marker), *long_forms.get(marker, [])])
        m = re.search(rf"(?<![\w-])(?:{spelled})(?:b)?(?:[\s-]*(?:v\d+[a-z]?|[a-z]\d{{2,4}}[a-z]))?"
                      r"(?:[\s-]+(?:mutation|fusion|gene|status|test(?:ing)?|result|is|was))*[\s:-]*"
                      rf"(?:({_POSITIVE})|({_NEGATIVE}))(?![\w])", text) or \
            re.search(rf"\b(?:(positive)|(negative))(?: for (?:an? )?| )(?:{spelled})(?:b)?(?![\w])", text) or \
            re.search(rf"(?<![\w-])(?:{spelled})[\s-]+([a-z]\d{{2,4}}[a-z])(?![\w-])(?![\s:-]*(?:{_NEGATIVE}))()", text)
        # (the last: a named variant is a mutation found, "BRAF V600E", "KRAS G12C")
        # the polarity must be unread; the marker may lie in a treatment named ("sentinel node biopsy negative")
        if not m or not doc.free(m.start(1 if m.group(1) else 2), m.end(1 if m.group(1) else 2)):
            continue
        value = "positive" if m.group(1) else "negative"
        if value == "positive" and m.group(0).endswith(m.group(1)) and re.fullmatch(r"[a-z]\d{2,4}[a-z]", m.group(1)):
            # a point mutation named by its variant is no fusion, rearrangement or amplification of the gene
            names = [n for n in names if not re.search(r"fusion|rearrang|amplif|transloc|express|delet", n)]
        for name in dict.fromkeys(names):
            doc.add(m.start(), name, value, m.group(0), "marker finding")
        doc.take(m.start(), m.end())
