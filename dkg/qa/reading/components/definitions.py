"""Facts the guideline's own definitions make of what was read (:mod:`dkg.qa.clinical`): T category by size,
stage group from T/N/M, M category, high risk of relapse from pT and grade, and risk groups by counted factors
(Karnofsky under a cut-off, diagnosis within a year, labs out of range). Run once before the treatment history is
placed (T category and stage place it too) and once at the end, which drops the working facts (``_kps``)."""

from __future__ import annotations

from datetime import date
from typing import Any

from dkg import rx as re
from dkg.qa.clinical import Definitions
from dkg.qa.quantities import _DURATION, _dates, _months
from dkg.qa.reading.doc import Context, FactSource, QuestionDoc, Reading, component
from dkg.qa.reading.text import denied, said_before_event
from dkg.qa.staging import _lab_value, _relapse_risk, _stage, _tnm

Memo = dict[tuple[Any, ...], bool | None]


def _within_year(text: str, de_novo: list[str]) -> bool | None:
    if any(re.search(p, text) for p in de_novo):
        m = re.search(rf"presented\s+(?:about\s+)?{_DURATION}\s+ago", text)
        if m:
            return _months(float(m.group(1)), m.group(2)) < 12
        return True
    m = re.search(rf"{_DURATION}\s+ago", text)
    if m:
        return _months(float(m.group(1)), m.group(2)) < 12
    if re.search(r"\b(?:dx|dx'?d|diagnos\w*)\b[^.;?]{0,25}?\b(?:this|last|past) (?:week|month|fortnight)\b", text):
        return True  # "dx this month", "diagnosed only last week"
    years = sorted({int(y) for y in re.findall(r"\b((?:19|20)\d{2})\b", text)})
    if len(years) == 1 and date.today().year - years[0] >= 2:
        return False  # "nephrectomy 2020 … now recurrence": more than a year ago
    if len(years) >= 2:
        dates = sorted(d for _, d in _dates(text))
        months = (dates[-1].year - dates[0].year) * 12 + dates[-1].month - dates[0].month
        return months < 12
    return None


def _kps_state(r: Reading, kps_below: float | None) -> bool | None:
    """Whether the performance status is under the Karnofsky cut-off (ECOG 1, KPS 70-80, stays unknown)."""
    state: bool | None = None
    kps = next((s.value for s in r.sources if s.attr == "_kps"), None)
    if kps is not None and kps_below is not None:
        state = kps < kps_below
    ecog = r.facts.get("performance_status")
    if kps is None and kps_below is not None and isinstance(ecog, int | float):
        # ECOG 0 is KPS 90-100 and ECOG 2 or worse KPS 60 or less
        if ecog == 0 and kps_below <= 90:
            state = False
        elif ecog >= 2 and kps_below > 60:
            state = True
    return state


def _lab_state(ctx: Context, text: str, key: str) -> bool | None:
    """Whether a lab is out of range: the words that say it is out of range, its value, or said normal (False)."""
    spec = ctx.clinical.get("labs", {})[key]
    said = [m.start() for w in spec.get("words", []) for m in re.finditer(rf"\b{w}\b", text)]
    if any(not denied(text, a) for a in said):
        return True
    if said:
        return False  # every mention is denied ("no <finding>")
    for name in spec["names"]:
        m = re.search(rf"\b{re.escape(name)}\s*(?:of\s*|is\s*|was\s*|=\s*|:\s*)?"
                      r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(k\b)?(?!\d|\.\d)", text)
        if m:
            v = _lab_value(float(m.group(1).replace(",", "")), key, bool(m.group(2)))
            return bool(v < spec["below"] if "below" in spec else v > spec["above"])
    # a reference word instead of a value: "corrected calcium raised", "high Ca", "platelets (H)", "Hb low"
    high = "above" in spec
    word = r"(?:high|raised|elevated|increased|\(h\))" if high else r"(?:low|reduced|decreased|\(l\))"
    for name in spec["names"]:
        n = re.escape(name)
        if re.search(rf"\b{n}\b\s*(?:(?:is|was|are|were|level|levels|now|also)\s+)*{word}(?![\w-])", text) or \
                re.search(rf"(?<![\w-]){word}\s+(?:corrected\s+|serum\s+)?{n}\b", text):
            return True
    names = [re.escape(n) for n in spec["names"]] + list(spec.get("panels", []))
    normal = any(re.search(p, text) for p in ctx.clinical.get("normal_labs", []))
    if normal or any(
            re.search(rf"\b{n}\b[^.;]{{0,25}}\b(?:normal|wnl|unremarkable|within normal)", text)
            # a list of labs said normal together ("Hb, Ca, neutrophils and plts all within normal")
            or re.search(rf"\b{n}\b(?:\s*(?:,|and|&|/)\s*[a-z][a-z. ]{{0,18}}?){{1,6}}\s+"
                         r"(?:(?:are|were|all|both)\s+)*(?:normal|wnl|unremarkable|within normal)", text)
            or re.search(rf"\bnormal\b[^.;]{{0,30}}\b{n}\b", text) for n in names):
        return False
    return None


def _factor_state(ctx: Context, r: Reading, text: str, kind: tuple[Any, ...],
                  kps_below: float | None) -> bool | None:
    """Whether the question says a kind of counted risk factor is present (True), absent (False) or nothing
    (None): the performance status under ``kps_below``, a diagnosis within a year, or a lab out of range."""
    if kind[0] == "kps":
        return _kps_state(r, kps_below)
    if kind[0] == "year":
        return _within_year(text, ctx.clinical.get("de_novo", []))
    return _lab_state(ctx, text, str(kind[1]))


def _count_risk(ctx: Context, r: Reading, text: str, d: Definitions, memo: Memo) -> tuple[str | None, str]:
    """The risk group of ``d``'s counted factors. ``memo`` keeps what the text says of a kind of factor (a lab,
    the performance status under a cut-off, the time from diagnosis) for every guideline read in one pass: that
    does not depend on whose factor it is."""
    rc = d.risk_count
    assert rc is not None
    present: list[str] = []
    unknown = 0
    labs = ctx.clinical.get("labs", {})
    for f in rc.factors:
        kind: tuple[Any, ...] | None
        if "kps" in f or "karnofsky" in f:
            kind = ("kps", rc.kps_below)
        elif "year" in f or "diagnosis" in f:
            kind = ("year",)
        else:
            lab = next((k for k in labs if k in f), None)
            kind = ("lab", lab) if lab else None
        if kind is not None and kind not in memo:
            memo[kind] = _factor_state(ctx, r, text, kind, rc.kps_below)
        state = memo[kind] if kind is not None else None
        if state is None:
            unknown += 1
        elif state:
            present.append(f)
    group = rc.group(len(present), unknown)
    why = f"{len(present)} risk factor(s) present ({', '.join(present) or 'none'}), {unknown} unknown"
    return group, why


def _set(r: Reading, attr: str, value: Any, words: str, rule: str) -> None:
    r.facts[attr] = value
    r.sources.append(FactSource(attr, value, words, rule))


def _risk(ctx: Context, r: Reading, text: str, code: str, d: Definitions, tnm: dict[str, Any], memo: Memo,
          advanced: bool) -> None:
    """The risk group: counted factors when the disease is advanced, else the risk of relapse after surgery,
    else counted factors."""
    attrs = ctx.kb.attrs.get(code, set())
    # a risk group said only before a new event ("nephrectomy for low-risk disease … now relapsed") was the
    # primary's: the factors counted now decide the advanced disease's group
    then = advanced and "risk_group" in r.facts and said_before_event(r, text, "risk_group")
    if d.risk_count and advanced and "risk_group" in attrs and ("risk_group" not in r.facts or then):
        group, why = _count_risk(ctx, r, text, d, memo)
        if group:
            _set(r, "risk_group", group, why, f"{code}: risk factors counted")
    operated = any(re.search(r"nephrectomy|resection|excision", o.text) for o in r.done)
    if operated and tnm.get("T") and not tnm.get("pT"):  # a size measured on the specimen is a pT
        tnm["pT"] = tnm["T"]
    if d.high_risk and "risk_group" in attrs and "risk_group" not in r.facts and tnm.get("pT") and not advanced:
        grade = r.facts.get("_grade_number")
        risk = _relapse_risk(tnm, grade if isinstance(grade, int) else None, d)
        if risk:
            _set(r, "risk_group", risk, tnm.get("text", ""), f"{code}: risk of relapse")
    if d.risk_count and "risk_group" in attrs and "risk_group" not in r.facts:
        group, why = _count_risk(ctx, r, text, d, memo)
        if group:
            _set(r, "risk_group", group, why, f"{code}: risk factors counted")


def _apply(doc: QuestionDoc, ctx: Context, final: bool) -> None:
    r, text = doc.reading, doc.text
    memo: Memo = {}  # what the text says of each kind of risk factor
    for code in r.guidelines or list(ctx.kb.states):
        d = ctx.kb.defs.get(code)
        attrs = ctx.kb.attrs.get(code, set())
        if d is None:
            continue
        tnm = _tnm(text, d, r.facts.get("metastatic"))
        if tnm.get("T") and "t_category" in attrs and "t_category" not in r.facts:
            _set(r, "t_category", tnm["T"], tnm.get("T_text", ""), f"{code}: T category")
        if d.stages and "stage" in attrs and "stage" not in r.facts:
            stage = _stage(tnm, d)
            if stage:
                _set(r, "stage", stage, tnm.get("text", ""), f"{code}: stage group")
        advanced = r.facts.get("metastatic") == "yes" or r.facts.get("relapse") == "yes"
        _risk(ctx, r, text, code, d, tnm, memo, advanced)
        if "metastatic" in attrs and "metastatic" not in r.facts and tnm.get("M"):
            _set(r, "metastatic", "yes" if tnm["M"] == "M1" else "no", tnm.get("text", ""), f"{code}: M category")
    if final:
        for k in [k for k in r.facts if k.startswith("_")]:
            del r.facts[k]


@component("definitions_before_history")
def define_before_history(doc: QuestionDoc, ctx: Context) -> None:
    _apply(doc, ctx, final=False)


@component("definitions")
def define(doc: QuestionDoc, ctx: Context) -> None:
    _apply(doc, ctx, final=True)
