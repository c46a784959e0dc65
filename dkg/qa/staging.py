"""TNM, stage groups, relapse risk and lab units read from a question against a guideline's own definitions
(split out of :mod:`dkg.qa.reader`, which calls them)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from dkg import rx as re
from dkg.qa.clinical import Definitions


def _greatest(m: re.Match[str]) -> str:
    """"7.2 x 6.9 x 6.5 cm" → "7.2 cm"."""
    return f"{max(float(n) for n in re.findall(r'[0-9]+(?:[.][0-9]+)?', m.group(0))):g} {m.group(2)}"


def _tnm(text: str, d: Definitions, metastatic: Any = None) -> dict[str, str]:
    """T, N and M categories stated or implied by a question (sizes read against the guideline's table)."""
    pt, size, ws, n, m = _tnm_read(text, metastatic if metastatic in ("yes", "no") else None)
    out: dict[str, str] = {}
    if pt:
        out["T"], out["pT"], out["T_text"] = pt[0], pt[0], pt[1]
    if "T" not in out and size is not None:
        lo, hi, ranged, said = size
        for cat, a, b in d.t_sizes:
            if (a < lo <= b or (ranged and a <= lo < b)) and a < hi <= b:
                out["T"], out["T_text"] = cat, said
                break
    for cat, words in d.t_words:
        if ws & words and (not out.get("T") or out["T"][:2] < cat[:2]):
            out["T"], out["T_text"] = cat, " ".join(sorted(ws & words))
    if n:
        out["N"] = n
    if m:
        out["M"] = m
    out["text"] = " ".join(v for k, v in out.items() if k in ("T", "N", "M"))
    return out


@lru_cache(maxsize=256)
def _tnm_read(text: str, metastatic: str | None
              ) -> tuple[tuple[str, str] | None, tuple[float, float, bool, str] | None, frozenset[str], str | None,
                         str | None]:
    """What a question says of T, N and M before any guideline's table is read: a written T category, the
    primary's size (cm, lowest, highest, a range?, the words), the words of findings not said absent, N, M.
    The same for every guideline (read once per question, not once per loaded guideline)."""
    # "pT2a", "cT3b", "ypT2", "Tis"; "Ta" (non-invasive papillary) only where it cannot be a word: "pTa", "HG Ta"
    pt = re.search(r"\b(?:yp|p|c)?(t(?:[1-4][a-d]?|is))\b|\b(?:yp|p|c)(ta)\b|"
                   r"\b(?:lg|hg|low[- ]grade|high[- ]grade)\s+(ta)\b", text)
    cat = next((g for g in pt.groups() if g), "") if pt else ""
    written = ("T" + cat[1:], pt.group(0)) if pt else None
    size = _primary_size(text) if written is None else None
    # "no perinephric fat or venous extension": a finding said absent names no T category
    affirmed = re.sub(r"\b(?:no|not|without|none|nor|(?:neg|negative) for|free of)\b[^,;.]*", " ", text)
    # "renal vein patent", "IVC uninvolved": a structure said to be free names no T category either
    affirmed = re.sub(r"(?:\b[a-z]+\s+){1,3}(?:is\s+|are\s+|was\s+|were\s+)?(?:patent|uninvolved|spared|intact|"
                      r"not involved|free)\b", " ", affirmed)
    ws = frozenset(w.rstrip("s") for w in re.findall(r"[a-z]{4,}", affirmed))
    n = _n_category(text)
    m_: str | None = None
    if metastatic in ("yes", "no"):
        m_ = "M1" if metastatic == "yes" else "M0"
    # metastases said absent at one site ("no brain mets on MRI") state no M1 (nor M0: other sites are unsaid)
    elsewhere = re.sub(r"\b(?:no|without|negative for)\s+(?:evidence of\s+)?(?:[a-z]+\s+){0,2}?"
                       r"(?:mets?|metastas[ei]s)\b", " ", text)
    if m_ is None and re.search(r"\bm1\b|(?<!no )(?<!no distant )\bmets?\b|(?<!no )metastas[ei]s|metastatic",
                                elsewhere) and \
            not re.search(r"no (?:distant )?(?:mets?|metastas[ei]s)\b(?! (?:other|elsewhere))", text):
        m_ = "M1"
    elif m_ is None and re.search(r"\bm0\b|no (?:distant )?(?:mets?|metastas[ei]s)|"
                                  r"(?:chest )?ct (?:is |was )?(?:clear|clean)|confined to|"
                                  r"limited to the kidney", text):
        m_ = "M0"
    return written, size, ws, n, m_


def _primary_size(text: str) -> tuple[float, float, bool, str] | None:
    """The primary's size in cm (lowest, highest, a range?, the words), from the first size said of the tumour and
    not of a node, a metastasis or another organ."""
    organ = r"renal|kidney|mass|tumou?r|lesion|primary|rcc|carcinoma|cancer|sarcoma"
    # "7.2 x 6.9 x 6.5 cm": a mass's size is its greatest dimension
    sized = re.sub(r"(\d+(?:\.\d+)?)(?:\s*[x×*]\s*\d+(?:\.\d+)?){1,2}\s*(cm|mm)\b", _greatest, text)
    for m in re.finditer(r"(\d+(?:\.\d+)?)\s*(?:-|to|–)?\s*(\d+(?:\.\d+)?)?\s*(cm|mm)\b", sized):
        clause = re.split(r"[,;.]\s|\s(?:and|with|plus|\+)\s", sized[m.start():m.start() + 70])[0]
        lead = sized[max(0, m.start() - 30):m.start()]
        # (whole words: "something" names no metastasis)
        if re.search(r"nodul|\bnod(?:e|es|al)\b|\bmet(?:s|astas\w*|astatic)?\b|\blungs?\b|\bliver\b|"
                     r"\b(?:rll|rul|lll|lul)\b", clause + lead[-12:]):
            continue
        # the tumour named a little further back, in the same sentence ("a kidney tumour about the size of a
        # large orange, 9 cm")
        before = re.split(r"[.;?!]\s", sized[max(0, m.start() - 60):m.start()])[-1]
        if not re.search(organ, clause + " " + lead) and not (
                re.search(r"\bsize of\b", before) and re.search(organ, before)):
            continue
        scale = 0.1 if m.group(3) == "mm" else 1.0  # "28 mm" is 2.8 cm
        lo = float(m.group(1)) * scale
        hi = float(m.group(2)) * scale if m.group(2) else lo
        return (lo, hi, bool(m.group(2)), m.group(0))
    return None


def _n_category(text: str) -> str | None:
    """N1 where the question says nodes are involved, N0 where it says they are not."""
    n: str | None = None
    if re.search(r"\bp?n[12]\b|\bnodal (?:disease|mets?|metastas[ei]s)|lymph node (?:mets?|metastas[ei]s|involvement)|"
                 r"(?<!no )(?<!without )\b(?:lymph)?adenopathy|positive (?:lymph )?nodes|"
                 r"\b[1-9]\d*\s*(?:/|of)\s*\d+\s*(?:lymph |regional )?nodes?\s*(?:were |are )?(?:positive|involved|\+)|"
                 r"\bnodes? (?:were |are )?(?:positive|involved)\b|"
                 r"\b(?:lymph )?node (?:bx|biopsy|fna|core)\b[^.;]{0,20}\b(?:shows?|showed|positive|confirms?|"
                 r"confirmed|\+|is|was)\b(?! (?:negative|benign|reactive))|"
                 r"(?<!no )\b(?:enlarged|bulky|pathologic(?:al)?|suspicious|involved|\d+(?:\.\d+)?\s?(?:cm|mm))"
                 r"(?:\s*\([^()]{0,20}\))?\)?(?:\s+(?:\([^()]{0,20}\)|(?!no\b|and\b|or\b)[a-z][a-z-]*)){0,3}?\s+"
                 # "enlarged (2.2 cm) … nodes", "2.2 cm enlarged regional (para-aortic) node"
                 r"(?:lymph\s+)?nodes?\b", text):
        n = "N1"
    elif re.search(r"\bp?n0\b|no (?:enlarged |suspicious |regional |lymph )*(?:nodes|adenopathy|lymphadenopathy|nodal)|"
                   r"node[- ]negative|\b0\s*/\s*\d+ (?:lymph )?nodes|"
                   r"nodes? (?:were |are |all )*(?:negative|clear|benign)",
                   text):
        n = "N0"
    return n


def _stage(tnm: dict[str, str], d: Definitions) -> str | None:
    cats = {v for k, v in tnm.items() if k in ("T", "N", "M")}
    if not tnm.get("T") and tnm.get("M") != "M1":
        return None
    for stage, group in d.stages:  # highest first
        if any(c in cats or (len(g) == 2 and any(x.startswith(g) for x in cats)) for g in group for c in [g]):
            return stage
    return None


def _relapse_risk(tnm: dict[str, str], grade: int | None, d: Definitions) -> str | None:
    t = tnm.get("pT", "")
    for cat, min_grade in d.high_risk:
        hit = (cat.startswith("T") and t.startswith(cat)) or tnm.get(cat[0]) == cat
        if hit and (min_grade is None or (grade is not None and grade >= min_grade)):
            return "high"
        if hit and min_grade is not None and grade is None:
            return None
    if t and tnm.get("N") == "N0" and (grade is not None or not any(g for _, g in d.high_risk)):
        return "low"
    return None


def _lab_value(v: float, lab: str, thousands: bool) -> float:
    """A lab value in the units of ``conf/clinical.yaml``: platelets and neutrophils in 10^9/L ("520k",
    "520,000/µL" → 520; "ANC 5200" → 5.2), haemoglobin in g/dL ("Hb 139 g/L" → 13.9)."""
    if lab == "thrombocytosis" and not thousands and v >= 10000:
        return v / 1000
    if lab == "neutrophilia" and (thousands or v >= 200):
        return v if thousands else v / 1000
    if lab == "anemia" and v > 30:
        return v / 10
    if lab == "hypercalcemia" and v < 4:  # mmol/L → mg/dL
        return v * 4.008
    return v
