"""Metastases at a site, for a linked guideline that decides on a finding named "<site>_metastases": "no brain
mets", "brain MRI clear" and "MRI brain negative" say absent; "2 brain mets … neurologically intact, not on
steroids" says asymptomatic; "a 3.5 cm right frontal metastasis with a seizure" says symptomatic. The values are
the ones the guideline's boxes use (absent or no; present or yes; symptomatic, asymptomatic); a state the
guideline splits on and the question does not give is left unread. Site words and symptom words are general
clinical language (``conf/clinical.yaml``)."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, QuestionDoc, component

_METS = r"(?:mets?|metastas[ie]s|metastatic (?:disease|lesions?|deposits?)|lesions?|deposits?|disease|involvement)"
_CLEAR = r"(?:negative|neg|clear|clean|normal|unremarkable|nad)"
_IMAGING = r"(?:mri|ct|pet(?:[- ]ct)?|imaging|scans?|staging)"


def _site_attrs(doc: QuestionDoc, ctx: Context) -> dict[str, tuple[str, set[str]]]:
    """Each ``<site>_metastases`` attribute of the linked guidelines: its site word and the values its boxes use."""
    codes = doc.reading.guidelines or list(ctx.kb.states)
    out: dict[str, tuple[str, set[str]]] = {}
    for code in codes:
        for attr in ctx.kb.attrs.get(code, set()):
            m = re.fullmatch(r"([a-z]+)_metastas[ie]s", attr)
            if m:
                values = ctx.kb.values_of([code], attr)
                site, old = out.get(attr, (m.group(1), set()))
                out[attr] = (site, old | values)
    return out


def _state(text: str, ctx: Context) -> str | None:
    """Whether the words around a mention of metastases say they cause symptoms."""
    cues = ctx.clinical.get("metastasis_symptoms", {})
    rest = text
    for pat in cues.get("asymptomatic", []):
        if re.search(rf"\b(?:{pat})\b", rest):
            return "asymptomatic"
    for pat in cues.get("symptomatic", []):
        if re.search(rf"(?<![\w-])(?:{pat})\b", rest):
            return "symptomatic"
    return None


def _pick(values: set[str], *wanted: str) -> str | None:
    return next((w for w in wanted if w in values), None)


@component("site_metastases")
def read_site_metastases(doc: QuestionDoc, ctx: Context) -> None:
    text = doc.text
    sites = ctx.clinical.get("metastasis_sites", {})
    for attr, (site, values) in sorted(_site_attrs(doc, ctx).items()):
        words = "|".join(re.escape(str(w)) for w in sites.get(site, [site]))
        negative = [
            rf"\bno (?:evidence of |sign of )?(?:(?:{words})\w* ){_METS}(?: on {_IMAGING})?",
            rf"\b(?:{words}) {_IMAGING}(?: (?:is|was|were|are))? {_CLEAR}\b",
            rf"\b{_IMAGING} (?:of (?:the )?)?(?:{words})(?: (?:is|was|were|are))? {_CLEAR}\b",
            rf"\b(?:{words}) (?:is |was )?(?:clear|clean|negative|free)\b",
        ]
        m = next((x for p in negative for x in [re.search(p, text)] if x and doc.free(x.start(), x.end())), None)
        if m:
            value = _pick(values, "absent", "no")
            if value:
                doc.add(m.start(), attr, value, m.group(0), "metastases at a site")
                doc.take(m.start(), m.end())
            continue
        m = re.search(rf"(?<!no )(?<!without )\b(?:(?:{words})\w*(?: [a-z]+)? |(?:[a-z]+ )?(?:{words})\w* )"
                      rf"(?:mets?|metastas[ie]s|metastatic (?:lesions?|deposits?))\b", text)
        if not m or not doc.free(m.start(), m.end()):
            continue
        # the sentence of the mention (a decimal point ends none)
        after = re.split(r"(?<!\d)\.(?!\d)", text[m.start():])[0]
        before = re.split(r"(?<!\d)\.(?!\d)", text[max(0, m.start() - 80):m.start()])[-1]
        state = _state(before + " " + after, ctx)
        value = _pick(values, state) if state else None
        value = value or _pick(values, "present", "yes")
        if value:
            doc.add(m.start(), attr, value, m.group(0), "metastases at a site")
            doc.take(m.start(), m.end())
