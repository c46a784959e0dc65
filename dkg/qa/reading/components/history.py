"""The treatment history: which boxes the patient has passed. The history is the question without its asking
sentence and without what it proposes; lists and sequences of what was done ("VDC/IE -> resection -> adjuvant
chemo completed") are split, each treatment is linked to the boxes that name it and placed at the earliest step
it fits on a way the patient may have travelled (the facts do not contradict it). "Post-op" passes every surgery
box. A completed treatment that cannot be placed makes the point of care unknown (its words are unread)."""

from __future__ import annotations

from typing import Any

from dkg import rx as re
from dkg.graph.paths import DecisionPath
from dkg.qa.knowledge import Option, _stem, content_words
from dkg.qa.reading.doc import Context, QuestionDoc, Reading, component
from dkg.qa.reading.text import NEW_EVENT, PHASE_WORDS

# A clause that proposes a treatment ("the fellow suggests blinatumomab then allo"): nothing in it was given.
_PROPOSED = re.compile(r"\b(?:suggest\w*|propos\w*|recommend\w*|plan(?:s|ning)? (?:to|on)|considering|"
                       r"thinking (?:of|about)|wants? to|would like|wondering|asks? (?:about|whether|if)|keen on|"
                       r"pushing for)\b")

# The start of a proposed plan in a sentence: what follows was not given.
_PLAN = re.compile(r"\b(?:(?:had|have|'d|i|we|they|team) planned\b|intended to\b|(?:was|were) going to\b|"
                   r"(?:the |our |team |my |treatment |management )?plan(?:\s+is\b|\s*:|\s*=|\s+would be\b|"
                   r"\s+will be\b|\s+for\b|\s+(?:is|was) to\b)|(?:suggest|propos)\w*|(?:we|team|they)(?:'re| are) "
                   r"(?:thinking|planning|considering)\b)")

# Words of diagnosis and staging: "on biopsy/imaging" places no treatment box ("serial imaging").
_DIAGNOSTIC_WORDS = {"imaging", "biopsy", "scan", "scans", "mri", "pet", "xray", "x-ray", "labs", "workup", "work-up",
                     "staging", "restaging", "echo", "marrow", "aspirate", "pathology", "tumor", "tumour", "mass",
                     "lesion"}

# What a history says without naming a treatment ("completed all therapy and stayed in continuous remission").
_GENERIC_HISTORY = {"therapy", "treatment", "treatments", "planned", "scheduled", "stayed", "remained", "continuous",
                    "remission", "complete", "completed", "that", "this", "them", "with", "now", "since", "then",
                    "courses", "course", "cycles", "protocol", "regimen", "everything", "intended", "just", "recently",
                    "already", "been", "biopsy", "last", "final", "block", "blocks", "week", "weeks", "month",
                    "months", "year", "years", "first", "second", "third",
                    # tests, not treatments ("the flow and the FISH are done")
                    "flow", "fish", "cytometry", "cytogenetics", "karyotype", "tests", "scans", "imaging", "staging",
                    "workup", "work-up", "bloods", "labs"}

# Words that say when in the course a treatment is given.
_TIMING_WORDS = {"adjuvant", "neoadjuvant", "postoperative", "preoperative", "maintenance", "consolidation",
                 "salvage", "second-line", "first-line", "post-transplant", "definitive"}

# Column-header words that name no phase of care.
_GENERIC_COLUMN = {"treatment", "therapy", "next", "step", "option", "and", "of", "the", "disease", "initial",
                   "subgroup"}

Way = tuple[DecisionPath, bool, list[str], dict[str, int]]
Link = tuple[float, float, Option]


def _given_list(m: re.Match[str]) -> str:
    """"done A, B, and C" as "done had A; had B; had C" (items of at most five words besides a remark in
    brackets; else unchanged)."""
    items = [x.strip() for x in re.split(r",\s*(?:and\s+)?", m.group(2))]
    if any(len(re.sub(r"\([^()]*\)", " ", x).split()) > 5 for x in items):  # (a remark in brackets: no words)
        return m.group(0)
    return m.group(1) + " " + "; ".join("had " + x for x in items if x)


def _history_text(text: str, ask: str) -> str:
    """The history: the question without its asking sentence and its proposals, lists written as "had X"."""
    history = text.replace(ask, " ") if ask and ask != text else ""
    lead = re.match(r"\s*((?:after|following|s/p|status post|post)\s+[^,?]+),", ask)
    if lead:  # "after wide excision of …, when …?": the opening clause is history too
        history += " ; " + lead.group(1)
    # a sentence that proposes ("Team plan is blinatumomab then sib allo", "Plan: VDC/IE, then local
    # treatment") gives nothing from the proposal on
    history = " ".join(_PLAN.split(sentence, maxsplit=1)[0] for sentence in re.split(r"(?<=[.;])\s", history))
    # "Ewing of the fibula: VDC/IE, wide resection with clear margins, then completed adjuvant cycles": a
    # list of what was done, in order, after a colon
    history = re.sub(r"(:|\b(?:has done|had|underwent|received|completed|finished|s/p))\s*([^:;.?]+?),\s*"
                     r"(?:and\s+)?(then\s[^;.?]+)",
                     lambda m: m.group(1) + " " + "; ".join("had " + x.strip() for x in m.group(2).split(","))
                     + "; " + m.group(3), history)
    # "done VDC/IE, wide excision, and completed adjuvant chemo.": a list of what was done, to the sentence's end
    history = re.sub(r"\b(done|had|underwent|received|completed|finished|s/p|status post)\s+"
                     r"((?:[^,:;.?]{1,40},\s*){1,5}(?:and\s+)?[^,:;.?]{1,40})(?=[.;?]|$)", _given_list, history)
    # "VDC/IE -> chest wall resection -> adjuvant chemo completed 3 weeks ago": a sequence of what was done
    history = re.sub(r"[^.;?:]*(?:->|→|=>)[^.;?]*",
                     lambda m: "; ".join("had " + x.strip() for x in re.split(r"->|→|=>", m.group(0)) if x.strip()),
                     history)
    # "nephrectomy 2019", "wide excision in 2021", "wide excision 08/2026": a treatment with the date it was done
    # (the treatment's own word may be the whole word: "excision", "RT", "transplant"; or end one: "EBRT")
    history = re.sub(r"(?<![\w/-])(?<!dx )(?<!diagnosed )(?<!born )((?:[a-z][\w/+-]*\s+){0,2}"
                     r"(?:[a-z][\w/+-]*)?(?:ectomy|otomy|excision|resection|surgery|chemo\w*|therapy|radiation|rt|"
                     r"transplant|hct|ablation))\s+"
                     r"(?:in\s+|on\s+)?((?:\d{1,2}/){1,2}(?:19|20)\d\d|(?:\d{1,2}\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|"
                     r"sep|oct|nov|dec)[a-z]*\.?\s+(?:19|20)\d\d|(?:19|20)\d\d)\b(?![/-]\d)", r"had \1 \2", history)
    # "had a tumour of the femur removed with a wide excision": what it was removed with was had
    history = re.sub(r"\b(had|underwent)\s+(?:a|an|the|his|her|their)?\s*[^,;.?]{0,60}?\b(?:removed|resected|excised|"
                     r"taken out|operated on)\s+(?:with|by|via|through|using)\s+", r"\1 ", history)
    # "wide excision 3 months ago"; a disease diagnosed months ago is no treatment ("diagnosed with clear cell
    # cancer 4 months ago")
    history = re.sub(r"(?<![\w/])((?:[a-z][\w/+-]*\s+){0,3}[a-z][\w/+-]*)\s+(\d+\s*(?:days?|d|wks?|weeks?|mos?|"
                     r"months?|yrs?|years?)\s+ago)\b",
                     lambda m: m.group(0) if re.search(r"\b(?:diagnos\w*|dx'?d?)\b(?:\s+[\w/+-]+){0,4}\s*$",
                                                       history[:m.start()]) else f"had {m.group(1)} {m.group(2)}",
                     history)
    # "wide excision done", "wide excision (R0) done", "MAP x 6 completed"
    # ("the margins were clear and the wide excision was done": the verb is no part of what was done)
    return re.sub(r"\b((?!(?:is|are|was|were|been)\b)[a-z][\w/+-]*(?:\s+(?!(?:is|are|was|were|been)\b)[a-z][\w/+-]*)"
                  r"{0,3})(?:\s*\([^()]{1,24}\))?\s+(?:(?:is|are|was|were|has been|have been)\s+)?"
                  r"(?:completed|finished|done)"
                  r"(?=\s*(?:\d|ago\b|last\b|on\b|in\b|at\b|with\b|w/|[.;,?]|$))", r"completed \1", history)


def _ways(ctx: Context, code: str) -> list[Way]:
    """Each way of a guideline: whether it starts with a scope fact, the boxes its decision leads to and how many
    steps on each is. Built once per guideline (the boxes and edges do not change)."""
    after = {(str(a), str(v)) for a, v in ctx.clinical.get("scope_facts", {}).items()}
    st = ctx.kb.states.get(code)
    ways: list[Way] = []
    for p in ctx.kb.paths.get(code, []):
        if st is None:
            break
        tails = [e.tail for e in st.edges if e.head == p.decision and e.type == "ARROW"]
        depth = dict.fromkeys(tails, 0)
        # and the treatments that follow them without a decision ("Wide excision" → "Adjuvant chemo"),
        # each a step further on
        for t in tails:
            if t in st.boxes and st.boxes[t].constraints in ("", "[]"):
                for e in st.edges:
                    if e.head == t and e.type == "ARROW" and e.tail not in depth and e.tail in st.boxes \
                            and st.boxes[e.tail].constraints in ("", "[]"):
                        depth[e.tail] = depth[t] + 1
                        tails.append(e.tail)
        ways.append((p, any((a, v) in after for a, vals in p.scope.cats for v in vals), tails, depth))
    return ways


def _ways_of(ctx: Context, code: str) -> list[Way]:
    ways: list[Way] = ctx.memo(f"ways:{code}", lambda: _ways(ctx, code))
    return ways


def _positions(ctx: Context, codes: list[str], way_facts: dict[str, Any]) -> dict[str, int]:
    """How early each box comes on the ways a patient with these facts may have travelled. A way that starts with
    a scope fact ("relapse") comes after every way of the first treatment, however few boxes its own page draws
    before it."""
    position: dict[str, int] = {}
    first_line: set[str] = set()
    for later in (False, True):  # ways of the first treatment first; a relapse's own boxes come after them all
        for c in codes:
            for p, is_later, tails, depth in _ways_of(ctx, c):
                if later != is_later or not p.scope.consistent(way_facts):
                    continue
                for i, b in enumerate([*p.boxes, *tails]):  # steps from the guideline's first box, longest way
                    n = min(i, len(p.boxes)) + depth.get(b, 0) * (i >= len(p.boxes))
                    if later and b in first_line:
                        continue
                    n += 1000 if later else 0
                    position[b] = max(position.get(b, n), n)
                    if not later:
                        first_line.add(b)
    return position


_PRIMARY = {"grade", "t_category", "n_category"}  # the primary tumour's own categories, stated of it as it was


class _Placer:
    """How early each box of some guidelines comes on the ways the patient may have travelled: by the facts as
    stated, then by the facts the guideline's definitions resolved (each guideline placed once, when a history's
    treatment is found in it: box uids carry the code)."""

    def __init__(self, ctx: Context, r: Reading, codes: list[str], resolved: dict[str, Any],
                 keep: set[str] | None = None) -> None:
        self.ctx = ctx
        # a fact stated twice with different values ("end-of-induction MRD 0.5 % … now MRD undetectable") may
        # have had the earlier value on the way travelled
        changed = {s.attr for s in r.sources if s.attr in r.facts and s.value != r.facts[s.attr]}
        self.way_facts = {a: v for a, v in r.facts.items() if a not in changed and (keep is None or a in keep)}
        # the stage the guideline's definitions give is today's ("s/p nephrectomy 2021, now liver mets" was not
        # stage IV then): a history that fits no way of it is placed on the ways of the facts as stated
        self.loose_facts = {a: v for a, v in self.way_facts.items() if a in resolved}
        self.allowed = set(codes)
        self.placed: dict[str, tuple[dict[str, int], dict[str, int]]] = {}

    def __call__(self, found: set[str]) -> tuple[dict[str, int], dict[str, int]]:
        position: dict[str, int] = {}
        loose: dict[str, int] = {}
        for c in sorted(found & self.allowed):
            if c not in self.placed:
                self.placed[c] = (_positions(self.ctx, [c], self.way_facts),
                                  _positions(self.ctx, [c], self.loose_facts))
            position.update(self.placed[c][0])
            loose.update(self.placed[c][1])
        return position, loose


def _options(ctx: Context, frag: str, said: set[str], codes: list[str], placer: _Placer
             ) -> tuple[list[Link], dict[str, int]]:
    """The boxes a history fragment names that lie on a way the patient may have travelled, best first."""
    diagnostic = bool(re.search(r"biops|\bbx\b|work-?up|imaging|scan|staging|suspic", frag))
    found = [x for x in ctx.kb.link_options(ctx.kb.aliased(frag), codes)
             if x[0] > 0.5 and x[2].words & said and
             (diagnostic or not re.search(r"suspicious|suspected|imaging|work-?up|biops|diagnos", x[2].box.lower()))]
    if re.search(r"\b(?:post-?op\w*|post-operative\w*|adjuvant|after (?:the )?(?:surgery|resection|excision))\b", frag):
        # radiation after surgery is no definitive radiation (which stands instead of surgery)
        found = [x for x in found if not re.search(r"\bdefinitive\b", x[2].box.lower())]
    opts: list[Link] = []
    ways: dict[str, int] = {}
    for ways in placer({x[2].code for x in found}) if found else ():
        opts = [x for x in found if x[2].uid in ways]  # on a way the patient may have travelled
        if opts:
            break
    # a phase of care it names ("finished consolidation chemo") places it in that column of the flowchart,
    # whatever earlier box has the same words
    fw = {_stem(w) for w in re.findall(r"[a-z]+", frag)} - _GENERIC_COLUMN
    phased = [x for x in opts if fw & ctx.kb.column_words(x[2])]
    opts = phased or opts
    # a box whose phase of care the history names ("adjuvant chemo": adjuvant chemotherapy) beats one that
    # shares only its other words ("multiagent chemotherapy")
    opts = [x for x in opts if not any((y[2].words & said) > (x[2].words & said) and
                                       ((y[2].words & said) - x[2].words) & _TIMING_WORDS for y in opts)]
    return opts, ways


def _place_pieces(ctx: Context, r: Reading, whole: str, codes: list[str], seen: set[str], placer: _Placer) -> bool:
    """Place each treatment of one history clause; whether any was placed."""
    parts = re.split(r"\s(?:and|then|followed by)\s|,\s", whole)
    pieces = [whole, *parts, *(x for p in parts for x in re.split(r"\s(?:\+|plus)\s", p))]
    linked = False
    covered: set[str] = set()  # words of boxes the whole history named in full
    for frag in dict.fromkeys(p.strip() for p in pieces if p.strip()):
        said = content_words(ctx.kb.expand(ctx.kb.aliased(frag))) - PHASE_WORDS - _DIAGNOSTIC_WORDS
        if covered and said & covered and not (said - covered) & ctx.kb.idf.keys():
            continue  # "blinatumomab" of "blinatumomab and then allo": already placed as one box
        opts, ways = _options(ctx, frag, said, codes, placer)
        if not opts:
            continue
        # a history names the earliest step it fits ("MAP" is the neoadjuvant chemotherapy, not the
        # chemotherapy of a later branch)
        first = min(ways[o.uid] for _, _, o in opts)
        early = [x for x in opts if ways[x[2].uid] == first]
        top = max(sc for sc, _, _ in early)
        linked = True
        r.done_text.append(frag)
        for sc, cover, o in early:
            if sc >= top - 1e-9:
                if cover >= 0.99 and len(o.words) >= 2:
                    covered |= o.words
                r.done_cover[o.uid] = max(r.done_cover.get(o.uid, 0.0), cover)
                if o.uid not in seen:
                    seen.add(o.uid)
                    r.done.append(o)
    return linked


def _place_history(ctx: Context, r: Reading, history: str, codes: list[str], seen: set[str],
                   placer: _Placer) -> None:
    """The treatments a history names, placed on the patient's ways (``r.done``, ``r.done_text``)."""
    cues = "|".join(re.escape(c) for c in sorted(ctx.clinical.get("done_cues", []), key=len, reverse=True))
    read_words = {w for s in r.sources for w in re.findall(r"[a-z]{3,}", s.text.lower())}
    # a clause of its own starts at "but" or "so" ("got CR but MRD stayed at 0.4 % so she had blina then allo")
    for part in re.split(r"[.;]\s|,\s(?=[a-z]+ )|\s(?:but|so)\s", history):
        for m in re.finditer(rf"(?:^|\b|\s)(?:{cues})\b\s*(.+)$", part):
            if _PROPOSED.search(part[:m.start(1)]):
                continue  # "the fellow suggests blina then allo", "surgeon keen on partial nx": proposed, not given
            whole = m.group(1)[:80]
            if _PROPOSED.search(whole[:30]) or re.search(r"\b(?:avoid\w*|declin\w*|refus\w*|(?:not|n't) want)\b",
                                                        whole[:40]):
                continue  # "after a long discussion she wants to avoid intensive chemo": not given
            linked = _place_pieces(ctx, r, whole, codes, seen, placer)
            if not linked and re.match(r"(?:completed|finished|s/p|status post)\b", m.group(0).strip()):
                # a completed treatment that cannot be placed: the point of care is unknown — unless its words
                # were read as a fact ("s/p CABG" is a comorbidity) or name no treatment ("completed all therapy")
                named = [w for w in re.findall(r"[a-z]{4,}", whole)
                         if w not in read_words and w not in _GENERIC_HISTORY and _stem(w) not in _GENERIC_HISTORY
                         and w not in PHASE_WORDS]  # ("finished his induction": a phase, the facts say the rest)
                if named:
                    r.unread.extend(named[:3])


def _postop(ctx: Context, r: Reading, text: str, codes: list[str], seen: set[str]) -> None:
    """"Post-op", "after the resection": every surgery box of the guidelines was passed."""
    if re.search(r"\b(?:post[- ]?op|postop(?:erative)?(?:ly)?|"
                 r"after (?:the )?(?:surgery|resection|excision|operation|nephrectomy|amputation)|"
                 r"had (?:a |an )?(?:\w+ )?(?:resection|excision|surgery|nephrectomy|nx|amputation)|"
                 # a pathological T category is staged on the resected specimen ("partial nx: pT1b G3 N0")
                 r"y?pt[0-4][a-c]?\b)", text):
        for o in ctx.kb.options:
            if (not codes or o.code in codes) and o.uid not in seen and \
                    re.search(r"resection|excision|nephrectomy|surgery|amputation", o.text) and \
                    not re.search(r"before|neoadjuvant|consider", o.text):
                seen.add(o.uid)
                r.done.append(o)
                r.done_cover[o.uid] = max(r.done_cover.get(o.uid, 0.0), 0.6)


def _response_to_given(ctx: Context, r: Reading) -> None:
    """A fact stated twice ("MRD 0.7 % … had blinatumomab, became MRD-undetectable"): when no way to a treatment
    given fits the value stated last and one fits the value stated before it, the earlier value placed the patient
    on that way and the later one is the response to the treatment (a later finding: it decides the steps after
    it)."""
    given = [u for u in r.given() if u.split(":", 1)[0] in ctx.kb.states]
    for attr in dict.fromkeys(s.attr for s in r.sources):
        stated = list(dict.fromkeys(str(s.value) for s in r.sources if s.attr == attr))
        now = r.facts.get(attr)
        if now is None or len(stated) < 2 or str(now) != stated[-1] or attr in r.later:
            continue
        for uid in given:
            ways = [p for p, _, tails, _ in _ways_of(ctx, uid.split(":", 1)[0]) if uid in p.boxes or uid in tails]
            if not ways or any(p.scope.consistent(r.facts) for p in ways):
                continue
            earlier = next((v for v in reversed(stated[:-1])
                            if any(p.scope.consistent({**r.facts, attr: v}) for p in ways)), None)
            if earlier is not None:
                value = next(s.value for s in r.sources if s.attr == attr and str(s.value) == earlier)
                r.later[attr], r.facts[attr] = now, value
                break


@component("history")
def place_history(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    codes = r.guidelines or list(ctx.kb.states)
    seen: set[str] = set()
    placer = _Placer(ctx, r, codes, doc.resolved)
    history = _history_text(doc.text, doc.ask)
    event = NEW_EVENT.search(history)
    if event and history[:event.start()].strip():
        # what was given before a new event ("nephrectomy 2019, on surveillance since. Now lung mets") was given on
        # the ways of the tumour as it was then: placed by what does not change, the rest by every fact
        # (and by what the question says before the event: "metastatic, on first-line therapy, now progressing")
        then = set(ctx.clinical.get("fixed_facts", [])) | set(ctx.clinical.get("baseline_facts", [])) | _PRIMARY
        now = NEW_EVENT.search(doc.text)
        if now is not None:
            then |= {x.attr for x in r.sources if 0 <= doc.text.find(x.text) < now.start()}
        _place_history(ctx, r, history[:event.start()], codes, seen, _Placer(ctx, r, codes, doc.resolved, then))
        history = history[event.start():]
    _place_history(ctx, r, history, codes, seen, placer)
    _postop(ctx, r, doc.text, codes, seen)
    _response_to_given(ctx, r)
