"""Words the question left unread that decide branches of a linked guideline: a question with such words is not
answered with confidence (the clinician sees them)."""

from __future__ import annotations

import json
from functools import partial

from dkg import rx as re
from dkg.constraints.models import items_from_json
from dkg.constraints.vocabulary import load_vocabulary
from dkg.graph.paths import Scope, expand
from dkg.qa.knowledge import _stem, content_words
from dkg.qa.reading.doc import Context, QuestionDoc, Reading, component
from dkg.qa.reading.text import LATER_FINDING

_NOT_DECIDING = {"skeleton", "good", "than", "would", "less", "more", "with", "without", "from", "into", "only", "also",
                 "other", "complete", "completed", "pathology", "cause", "sites", "site", "when", "feasible",
                 "disease", "selected", "diagnosis", "presentation", "weeks", "week", "component"}


def _used(ctx: Context, r: Reading, text: str) -> set[str]:
    """Stems of the words some reading used: facts' words, disease names, history and what was set aside."""
    used = {_stem(w) for s in r.sources for w in re.findall(r"[a-z][a-z\-]{3,}", s.text)}
    for code in r.guidelines:
        for n in ctx.conf.diseases.get(code, []) + ctx.conf.disease_words.get(code, []):
            used |= {_stem(w) for w in re.findall(r"[a-z][a-z\-]{3,}", n.lower())}
    used |= {_stem(w) for f in r.done_text for w in re.findall(r"[a-z][a-z\-]{3,}", f)}
    used |= {_stem(w) for f in r.excluded for w in re.findall(r"[a-z][a-z\-]{3,}", f)}  # set aside: read
    if r.later:  # the words that made a finding a later one were read
        used |= {_stem(w) for m in LATER_FINDING.finditer(text) for w in re.findall(r"[a-z][a-z\-]{3,}", m.group(0))}
    # the words of the condition boxes on a way the facts already hold (a low-grade subtype said with "surface
    # mass", where the box says "low-grade …, surface or intramedullary"): what they decide is read
    for code in r.guidelines:
        st = ctx.kb.states.get(code)
        for p in ctx.kb.paths.get(code, []) if st else []:
            if p.scope.attrs and p.scope.holds(r.facts):
                for uid in p.boxes:
                    box = st.boxes.get(uid) if st else None
                    if box is not None and box.constraints not in ("", "[]"):
                        used |= {_stem(w) for w in re.findall(r"[a-z][a-z\-]{3,}", box.textPlain.lower())}
    used |= _ruled_out(ctx, r)
    if any(x.attr == "time_to_relapse" for x in r.sources):  # the timing is read: other durations are history
        used |= {_stem(w) for w in ("month", "months", "year", "years", "week", "weeks")}
    return used


def _ruled_out(ctx: Context, r: Reading) -> set[str]:
    """Stems only condition boxes of another subtype have ("surface" of a box for the low-grade subtypes, "surface
    or intramedullary", when the question read another histology): for this patient they decide nothing. Only the
    facts that fix the subtype (``conf/clinical.yaml`` fixed_facts) rule a box out; a finding that rules it out now
    leaves its words deciding ("no extrahepatic disease" still asks to be read)."""
    fixed = {a: v for a, v in r.facts.items() if a in ctx.clinical.get("fixed_facts", [])}
    if not fixed:
        return set()
    out: set[str] = set()
    kept: set[str] = set()
    for code in r.guidelines:
        boxes: list[tuple[set[str], list[Scope]]] = ctx.memo(f"condition_boxes:{code}",
                                                             partial(_condition_boxes, ctx, code))
        for words, scopes in boxes:
            (kept if any(sc.consistent(fixed) for sc in scopes) else out).update(words)
    return out - kept


def _condition_boxes(ctx: Context, code: str) -> list[tuple[set[str], list[Scope]]]:
    """Each condition box of a guideline as its word stems and the scopes its constraints allow (built once)."""
    st = ctx.kb.states.get(code)
    vocab = load_vocabulary()
    return [({_stem(w) for w in re.findall(r"[a-z][a-z\-]{3,}", b.textPlain.lower())},
             expand(Scope(), items_from_json(json.loads(b.constraints)), vocab))
            for b in (st.boxes.values() if st else []) if b.constraints not in ("", "[]")]


_ABOUT_THE_GUIDELINE = re.compile(r"\b(?:under|per|according to|by|in)\s+(?:this|the|these|our|your)\s+"
                                  r"(?:guidelines?|pathways?|algorithms?|protocols?|flowcharts?)\b")
# a test or scan said clear is a normal result ("CT chest and bone scan clear"), not a histology's word
_CLEAR_TEST = re.compile(r"\b(?:scans?|ct|mri|pet(?:-ct|/ct)?|imaging|x-?rays?|cxr|films?|staging|marrow|workup|"
                         r"work-up)\b(?:\s+[a-z/&-]+){0,3}?\s+(?:(?:are|is|was|were|all|both)\s+)*"
                         r"(clear|negative|unremarkable)\b")
_ATTAINED = {"achieved", "achieving", "attained", "reached", "obtained", "achieve", "attain", "reach"}


@component("unread")
def find_unread(doc: QuestionDoc, ctx: Context) -> None:
    r, text = doc.reading, doc.text
    left = "".join(c if not doc.taken[i] else " " for i, c in enumerate(text))
    # "on last month's echo": when a test was done decides nothing
    left = re.sub(r"\b(?:last|this|next|past|previous|prior) (?:month|week|year)(?:'s|s)?\b|"
                  r"\b(?:the\s+)?(?:last|final|first|second|third)\s+(?:[a-z]+\s+)?(?:block|cycle|course)s?\b", " ",
                  left)
    left = re.sub(_ABOUT_THE_GUIDELINE, " ", left)  # "an option under this guideline": no comparison
    left = re.sub(_CLEAR_TEST, lambda m: m.group(0)[: m.start(1) - m.start(0)] + " " * len(m.group(1)), left)
    codes = r.guidelines or []
    deciding = set().union(*(ctx.kb.deciding_words.get(c, set()) for c in codes)) if codes else set()
    used = _used(ctx, r, text)
    treat = {w for o in (r.treatments + r.done) for w in o.words}
    for m in re.finditer(r"[a-z][a-z\-]{3,}", left):
        w, sw = m.group(0), _stem(m.group(0))
        nxt = re.match(r"\s*(?:an?\s+|the\s+|her\s+|his\s+)?", text[m.end():])
        at = m.end() + (nxt.end() if nxt else 0)
        if w in _ATTAINED and at < len(text) and doc.taken[at]:
            continue  # "achieved a first complete remission": the verb of a finding that was read
        if sw in deciding and sw not in used and sw not in treat and sw not in _NOT_DECIDING and \
                not (content_words(ctx.kb.expand(w)) - {sw}) & treat:  # an abbreviation of the treatment's words
            r.unread.append(w)


@component("page")
def read_page(doc: QuestionDoc, ctx: Context) -> None:
    """A page code the question names ("ALL-3")."""
    page = re.search(r"\b([A-Z][A-Z0-9]{1,7}-\d{1,3})\b", doc.reading.question)
    doc.reading.page = page.group(1) if page else None
