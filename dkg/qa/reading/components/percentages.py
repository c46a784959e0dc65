"""Percentages against the guideline's own cut-offs: MRD values (or a series, or a fraction such as 1x10^-3),
marrow blasts (a response after treatment, a relapse after remission) and necrosis or viable tumour (a good or
poor histologic response)."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, QuestionDoc, component

# A percentage that is not a blast count ("BCR::ABL1 transcripts climbing and marrow now 12% blasts": no MRD
# value).
_PERCENT_NOT_BLASTS = (r"(\d+(?:\.\d+)?)\s*%"
                       r"(?!\s*(?:(?:bone\s+)?marrow\s*)?(?:cd\d+\+?\s*)?(?:lympho|leukemic\s*)?blasts)")

# MRD written as a fraction ("1x10^-3", "10-4", "1e-3"), and the words that say a therapy has been given.
_FRACTION = re.compile(r"(?:(\d+(?:\.\d+)?)\s*(?:x|×|\*)\s*)?10\s*(?:\^|\*\*)?\s*[-−–](\d{1,2})\b|"
                       r"\b(\d+(?:\.\d+)?)e-(\d{1,2})\b")
_TREATED = re.compile(r"\b(?:induction|d\s?\d{1,3}|day \d{1,3}|after|post|s/p|cycles?|courses?|chemo\w*|therapy|"
                      r"treated|treatment|restaging|remission|cr\d?(?!\s*[:=]?\s*\d)|consolidation|maintenance|"
                      r"hyper-?cvad|tki)\b")


def _fraction_percent(m: re.Match[str]) -> float:
    """A fraction of cells as a percentage: 1x10^-3 → 0.1 %."""
    mant = float(m.group(1) or m.group(3) or 1)
    exp = int(m.group(2) or m.group(4))
    return float(mant * 10.0 ** (2 - exp))


def _mrd_value(doc: QuestionDoc, ctx: Context, m: re.Match[str], window: str, before: str,
               vals: list[float], up: bool) -> bool:
    """Add the MRD fact of the values near ``m``: rising, or negative/positive by the guideline's cut-off."""
    r = doc.reading
    cut = next((d.mrd_negative_below for c, d in ctx.kb.defs.items() if d.mrd_negative_below is not None
                and (not r.guidelines or c in r.guidelines)), None)
    if len(vals) >= 2 and vals[-1] > vals[0] and up:
        doc.add(m.start(), "mrd", "rising", window, "MRD values rising")
    elif cut is not None:
        v = vals[-1]
        shown = re.escape(str(v).rstrip("0").rstrip("."))
        below = re.search(rf"(?:<|below|less than|under|lower than)\s*{shown}", window + " " + before) or \
            re.search(r"(?:<|below|less than|under|lower than)\s*" + _FRACTION.pattern, window)
        negative = v < cut or (below is not None and v <= cut)  # "below 0.01 %" is below the cut-off
        doc.add(m.start(), "mrd", "negative" if negative else "positive", window,
                f"MRD {'<' if below else ''}{v:g}% {'<' if negative else '≥'} {cut:g}% (the guideline's cut-off)")
    else:
        return False
    return True


def _mrd(doc: QuestionDoc, ctx: Context) -> None:
    """MRD: a value (or a series) near "MRD", or a molecular or flow result after treatment."""
    text = doc.text
    for m in re.finditer(r"\bmrd\b|\b(?:q?pcr|rt-?pcr|ngs|clonoseq|flow(?: cytometry)?|bcr[:-]*abl1?)\b", text):
        if m.group(0) != "mrd" and not _TREATED.search(text[:m.start()]):
            continue  # a molecular or flow result measures residual disease only after treatment
        window = re.split(r"[;?]|\.\s", text[m.start():m.start() + 70])[0]
        before = re.split(r"[;?]|\.\s", text[max(0, m.start() - 25):m.start()])[-1]
        vals = [float(v) for v in re.findall(_PERCENT_NOT_BLASTS, window)] or \
            [float(v) for v in re.findall(_PERCENT_NOT_BLASTS, before)[-1:]] or \
            [_fraction_percent(x) for x in _FRACTION.finditer(window)]  # "1x10^-3", "10-4", "1e-3"
        if not vals:
            continue
        up = re.search(r"rising|increas|gone up|going up|->|→|climb|doubl", window)
        said_neg = re.search(r"\b(?:not detected|undetectable|negative|neg|none detected|below (?:the )?(?:limit|"
                             r"threshold|level) of detection)\b", window)
        if said_neg and not up:  # "MRD not detected by flow (sensitivity 10^-4)": the value is the assay's
            doc.add(m.start(), "mrd", "negative", window, "MRD not detected")
            lead = re.search(r"\b(?:persistent|persisting|residual)\s+$", before)
            doc.take(m.start() - (len(lead.group(0)) if lead else 0), m.start() + len(window))
            break
        if not _mrd_value(doc, ctx, m, window, before, vals, up is not None):
            continue
        lead = re.search(r"\b(?:persistent|persisting|residual|rising)\s+$", before)  # "persistent MRD 0.5 %"
        # the words read end with the last value and how it was measured ("MRD 0.5% by flow"), not with the
        # window ("MRD 0.5% after induction, so shouldn't she get blinatumomab?" asks after it)
        # (a blast count later in the same clause is the next component's: "MRD 0.004 %, marrow <5 % blasts")
        ends = [x.end() for x in re.finditer(_PERCENT_NOT_BLASTS + "|" + _FRACTION.pattern, window)]
        end = len(window)
        if ends and not up:
            tail = re.match(r"(?:\s*(?:by|on|per|via|with)\s+[\w-]+(?:\s+cytometry)?)?", window[ends[-1]:])
            end = ends[-1] + (tail.end() if tail else 0)
        doc.take(m.start() - (len(lead.group(0)) if lead else 0), m.start() + end)
        break


def _blasts(doc: QuestionDoc, ctx: Context) -> None:
    """Blasts: < 5 % after induction is a morphologic CR; in a relapse they describe the relapse."""
    text = doc.text
    relapse_above = next((d.relapse_blasts_above for d in ctx.kb.defs.values()
                          if d.relapse_blasts_above is not None), None)
    for m in re.finditer(r"(<|less than|under|>)?\s*(\d+(?:\.\d+)?)\s*%\s*(?:marrow\s*)?(?:cd\d+\+?\s*)?"
                         r"(?:lympho|leukemic\s*)?blasts|"
                         r"(?:lympho)?blasts?\s*(?:of\s*)?(<|>)?\s*(\d+(?:\.\d+)?)\s*%", text):
        if not doc.free(m.start(), m.end()):
            continue
        comp = m.group(1) or m.group(3) or ""
        v = float(m.group(2) or m.group(4))
        doc.take(m.start(), m.end())
        if re.search(r"\b(?:now |is |comes |came |presents |presenting )?back with\s*$",
                     text[max(0, m.start() - 24):m.start()]) or \
                re.match(r"\s*(?:are|have|has)?\s*(?:back|returned|come back|reappeared)\b", text[m.end():]):
            doc.add(m.start(), "relapse", "yes", m.group(0), "blasts back after treatment: a relapse")
            continue
        if re.search(r"relaps|recurr|came back", text):
            continue
        after = re.split(r"[.;?](?!\d)", text[m.end():m.end() + 40])[0]  # "… blasts after induction", same sentence
        if not _TREATED.search(text[:m.start()]) and not _TREATED.search(after):
            continue  # blasts at diagnosis ("new dx, marrow 82% blasts") measure no response
        in_cr = next((c for c in re.finditer(r"\b(?:cr\d?|complete remission|remission)\b", text[:m.start()])
                      if not re.search(r"\b(?:no|not|never|failed to \w+|without)\s+(?:in\s+|a\s+|to\s+)?$",
                                       text[max(0, c.start() - 24):c.start()])), None)
        if in_cr and relapse_above is not None and v > relapse_above:
            doc.add(m.start(), "relapse", "yes", m.group(0),
                    f"{v:g}% blasts after CR > {relapse_above:g}% (the guideline's definition of relapse)")
            continue
        cr = v < 5 or (comp in ("<", "less than", "under") and v <= 5)
        doc.add(m.start(), "response", "CR" if cr else "less_than_CR", m.group(0),
                f"{m.group(0).strip()} blasts: {'<' if cr else '≥'} 5% ({'CR' if cr else 'not CR'})")


def _necrosis(doc: QuestionDoc, ctx: Context) -> None:
    """Necrosis or viable tumour against the guideline's cut-off for a good response."""
    text = doc.text
    cut = next((d.necrosis_good_from for d in ctx.kb.defs.values() if d.necrosis_good_from is not None), None)
    for m in re.finditer(r"(\d+(?:\.\d+)?)\s*%\s*(?:tumou?r\s*)?(necrosis|necrotic|viable|residual viable)|"
                         r"\b(necrosis|necrotic|viable tumou?r|viable)\)?"
                         r"(?:\s+(?:of|only|was|is|at|just|about|~|=|:|rate|fraction|score|comprises|makes up|"
                         r"approx\.?|"
                         r"approximately|roughly|around|\(?ca\.?\)?))*"
                         r"\s*\)?\s*(\d+(?:\.\d+)?)\s*%|"
                         # "only 60% of the tumour was dead on the specimen"
                         r"(\d+(?:\.\d+)?)\s*%\s*of\s+(?:the\s+)?tumou?r\s+(?:was\s+|is\s+|were\s+)?(?:still\s+)?"
                         r"(dead|necrotic|killed|destroyed|alive|living|viable)\b", text):
        v = float(m.group(1) or m.group(4) or m.group(5))
        kind = m.group(2) or m.group(3) or m.group(6)
        necrosis = v if kind.startswith(("necro", "dead", "killed", "destroyed")) else 100 - v
        if cut is not None and doc.free(m.start(), m.end()):
            good = necrosis >= cut
            doc.add(m.start(), "histologic_response", "good" if good else "poor", m.group(0),
                    f"{necrosis:g}% necrosis {'≥' if good else '<'} {cut:g}% (the guideline's cut-off)")
            doc.take(m.start(), m.end())


@component("percentages")
def read_percentages(doc: QuestionDoc, ctx: Context) -> None:
    _mrd(doc, ctx)
    _blasts(doc, ctx)
    _necrosis(doc, ctx)
