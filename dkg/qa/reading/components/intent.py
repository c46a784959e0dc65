"""What the question asks, and about which treatment: a next step, whether a treatment is advisable, who gets a
treatment ("constraints"), or something a decision flowchart never says (doses, outcomes, monitoring, a later line
of therapy). It reads the asking sentence with the facts blanked out (their words are not the question's frame),
takes out the history and what is set aside ("rather than curettage"), and links the rest to the treatment boxes;
a back-reference ("Is that right?") reads the sentence before."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dkg import rx as re
from dkg.qa.knowledge import Option, content_words
from dkg.qa.reading.doc import Context, QuestionDoc, Reading, component
from dkg.qa.reading.text import SENTENCE_END, ask_sentence

# A question that asks only for a verdict on what was said before it ("guideline-concordant?", "OK per the chart?").
_VERDICT = re.compile(r"(?:^|[\s,:;—–-])(?:(?:is|would) (?:this|that|it) (?:be )?)?"
                      r"(?:guideline[- ]concordant|concordant|appropriate|reasonable|ok(?:ay)?|acceptable|correct|"
                      r"right|indicated|advisable|recommended|"
                      r"(?:do you |would you )?agree|(?:a )?good idea|sound(?:s)? right|sensible|valid|justified|"
                      r"in (?:line|keeping|accordance) with (?:the )?(?:guidelines?|pathway|algorithm|chart|flowchart)|"
                      r"(?:consistent|compliant|concordant) with (?:the )?(?:guidelines?|pathway|algorithm|chart|"
                      r"flowchart)|"
                      r"supported by (?:the )?(?:guidelines?|pathway|algorithm|chart|flowchart)|"
                      r"supported|endorsed|warranted|defensible)"
                      r"(?: (?:per|according to|by|with) (?:the )?(?:guidelines?|pathway|algorithm|chart|flowchart))?"
                      r"(?: here| for (?:him|her|them|this (?:pt|patient|case)))?\s*\?+\s*$")

# a sentence that says which treatment is wanted or proposed (the question after it may not name it again)
_WANTED = (r"\b(?:asks?|asking|asked|wonder\w*|enquir\w*|inquir\w*) (?:about|for|whether|if)\b|"
           r"\b(?:would|'d) like to\b|\b(?:plans?|planning|intends?|wishes|wish) to\b|"
           r"\b(?:wants?|keen on|interested in|requesting|requests?|prefers?|proposes?|proposing|suggests?|"
           r"suggesting|considering|pushing for)\b")

# Words of a kind of treatment, not of one treatment: "Systemic?" asks which.
_CATEGORY_WORDS = {"systemic", "therapy", "treatment", "local", "control", "management", "first-line", "modality"}

# A question that asks who a treatment is for (its frame words; the facts read are blanked out).
_WHO = re.compile(r"(?:^|[,:;.\-–]\s*)(?:for\s+|in\s+|under\s+)?(?:exactly\s+|precisely\s+|specifically\s+)?"
                  r"(?:who(?!\s+(?:lives|has|had|was|works|plays|presented|presents|is\s+\d))|whom|"
                  r"which (?:[\w/+-]+ ){0,3}(?:pts|patients|people|ones|stages?|subgroups?|groups?|situations?|"
                  r"sub-?types?|types|kinds|variants?|tumou?rs|histolog(?:y|ies)|"
                  r"cases|categor(?:y|ies)|settings?|scenarios?|circumstances|populations?)|"
                  r"in which (?:pts|patients|cases|situations?)|for which|at what (?:point|stage|juncture)|"
                  r"when(?:,[^,?]{3,50},)? (?:does|do|is|should|can|could|would|are|might|may)|"
                  r"what (?:(?:kinds?|sorts?|types?) of (?:pts?|patients?|people|cases?|disease)|"
                  r"(?:[\w/+-]+ )?(?:patients|pts|criteria|conditions|population|situations?|settings?|"
                  r"circumstances?|cases|scenarios?|context|subgroups?|groups?|"
                  r"(?:results?|findings?|features?|factors?|triggers?)"
                  r"(?=(?:\s+[\w/-]+){0,6}\s+(?:push|pushes|make|makes|lead|leads|prompt|prompts|trigger|"
                  r"triggers|send|sends|tip|tips|move|moves|decide|decides|determine|determines|mean|means)\b)))|"
                  r"what (?:has|needs|must|have) to (?:be|have) (?:true|the case|present|met|shown|found|"
                  r"happened|been achieved|been reached|occurred)|what (?:needs|has) to happen|"
                  r"what (?:must|should|would) be (?:true|the case|present|met)|"
                  r"what (?:is|are) the (?:triggers?|criteri(?:on|a)|indications?|thresholds?) (?:for|to)|"
                  r"indications?)\b")

_FOR_WHOM = re.compile(r"\b(?:is|are|be)\s+(?:it\s+|that\s+|this\s+|they\s+)?(?:meant\s+|intended\s+|designed\s+)?"
                       r"for\s+whom\b|\b(?:meant|intended|designed) for whom\b")

_CANDIDATES = re.compile(r"\b(?:pts|patients|people|who|ones?)\b[^?]{0,40}\b(?:are|is|would be)\s+(?:the\s+)?"
                         r"(?:candidates?|eligible|suitable|appropriate)\s+(?:for|to)\b|"
                         r"\b(?:qualif(?:y|ies)|eligible) for\b"
                         r"(?![^?]*\b(?:this|the|our|my)\s+(?:pt|patient|man|woman)\b)|"
                         r"\b(?:is|are) (?:it|they|this|that|these|[\w/+-]+(?: [\w/+-]+){0,3}) (?:listed|reserved|"
                         r"indicated|recommended|restricted|used|offered)\s+(?:for|in)\s*\??\s*$|"
                         r"\b(?:reserved|restricted) (?:for|to)\b|"
                         r"^\W*(?:what are (?:the )?)?(?:criteria|indications?|eligibility|requirements?|"
                         r"prerequisites?) "
                         r"(?:for|to (?:get|receive|start|give))\b|"
                         r"[-–:,]\s*(?:eligibility|criteria|indications?)(?: criteria)?"
                         r"(?: (?:per|according to|in) (?:the |this |that |your )?"
                         r"(?:guidelines?|pathway|algorithm|chart|flowchart))?\s*\?|"
                         r"\b(?:for|in) which (?:[\w/+-]+ ){0,3}(?:pts|patients|people|groups?|subgroups?|populations?|"
                         r"situations?|settings?|cases)\b|"
                         r"\bwhat (?:makes|would make|puts|sends|moves|takes) (?:a |the )?(?:pt|patient|someone|them|"
                         r"people|"
                         r"pts|patients)\b|"
                         r"^\s*which\s+(?:[\w/+-]+\s+){0,2}(?:[a-z]{4,}s\s+)?(?:go|get|are sent|receive|need|require|"
                         r"should get)\b")

# A request for advice in polite form: it asks what the rest of its sentence asks (or the sentence before).
_POLITE = re.compile(r"(?:^|[-–,;:]\s*|\b(?:and|so)\s+)(?:(?:i|we) (?:would be|'d be) grateful if )?"
                     r"(?:could|can|would) (?:you|we|somebody|someone) (?:please |kindly )?"
                     r"(?:advise|help|tell (?:me|us)|let (?:me|us) know|comment|clarify|confirm|explain)"
                     r"(?: (?:me|us|please))?\s*(?=\?|$)")

# A yes/no question.
_YES_NO = re.compile(r"(?:^|[,:;\-–]\s+|\b(?:and|so|but)\s+)(?:is|are|should|would|can|could|does|do|will|may|"
                     r"(?:is|are|should|would|could|does|do)n't|can't|won't|cannot)\s+|"
                     r"\b(?:ok|okay|reasonable|appropriate|right) to\b|"
                     r"\byes or no\b")


Links = list[tuple[float, Option]]
Exact = list[tuple[str, Option]]


@dataclass
class _Frame:
    """The question's asking part as the steps below narrow it down."""

    codes: list[str]
    ask: str
    before: str
    """The sentence before the one that asks (facts blanked)."""
    exact: Exact
    """Whole box phrases the asking part names, longest first."""
    links: Links = field(default_factory=list)
    flat: str = ""
    who: re.Match[str] | None = None


def _box_phrases(ctx: Context, text: str, codes: list[str]) -> Exact:
    """Whole box phrases (two words or more) that ``text`` names, longest first."""
    return sorted(((p, o) for p, o in ctx.kb.phrases if p in text and (not codes or o.code in codes)
                   and len(p.split()) >= 2 and re.search(r"(?<![\w])" + re.escape(p) + r"(?![\w])", text)),
                  key=lambda po: -len(po[0]))


def _frame(doc: QuestionDoc, ctx: Context) -> _Frame:
    r = doc.reading
    masked = doc.masked()
    ask = ask_sentence(masked)
    codes = r.guidelines or list(ctx.kb.states)
    masked_sentences = [x for x in SENTENCE_END.split(masked) if x.strip()]
    sentence_before = masked_sentences[-2] if len(masked_sentences) >= 2 else ""  # before the one that asks
    sentences = [x for x in SENTENCE_END.split(r.text) if x.strip()]
    # "She asks about active surveillance. Does the guideline offer AS to her?": the asking sentence names no
    # treatment, the one before says which one is wanted
    wanted = bool(sentence_before) and re.search(_WANTED, sentence_before) is not None \
        and not _VERDICT.search(ask) and not re.search(r"\b(?:that|this|it)\b", ask) \
        and not ctx.kb.link(ctx.kb.aliased(ask), codes) and bool(ctx.kb.link(ctx.kb.aliased(sentence_before),
                                                                             codes))
    if wanted:
        ask = f"{sentence_before}; {ask}"
    # a polite request ("… what the next phase will be - could you advise?") asks nothing of its own
    polite = _POLITE.sub(" ", ask)
    if polite != ask:
        ask = polite if content_words(polite) else f"{sentence_before} ?"
    asked = " ".join(sentences[-2:]) if wanted or re.search(r"\b(?:that|this|it)\b", ask) \
        else (sentences or [""])[-1]
    return _Frame(codes, ask, sentence_before, _box_phrases(ctx, asked, codes))


def _beyond_flowchart(r: Reading, ctx: Context, f: _Frame) -> bool:
    """Outcomes, care outside the decisions, a later line the flowchart does not draw, or a dose (sets the
    intent; True when the question asks one of those)."""
    asks = [p for p in SENTENCE_END.split(r.text) if "?" in p] or [f.ask]
    sents = [x for x in SENTENCE_END.split(r.text) if x.strip()]
    if len(sents) >= 2 and "?" in sents[-1] and len(sents[-1].split()) <= 8:
        asks = [*asks, sents[-2]]  # "audiogram shows grade 3 hearing loss. Drop the cisplatin?"
    if any(re.search(p, a) for p in ctx.clinical.get("outcome_questions", []) for a in asks):
        r.intent = "outcome"  # survival, prognosis, rates: no box of a decision flowchart says them
        return True
    if any(re.search(p, a) for p in ctx.clinical.get("outside_questions", []) for a in asks):
        r.intent = "outside"  # interactions, monitoring, supportive care: no decision box says them
        return True
    if any(re.search(p, r.text) for p in ctx.clinical.get("adverse_events", [])) and \
            any(re.search(ctx.clinical.get("adverse_event_asks", r"(?!)"), a) for a in asks):
        r.intent = "outside"  # toxicity management: hold, restart or treat after an adverse event
        return True
    if any(re.search(r"\b(?:second|2nd|third|3rd|subsequent|later)[- ]line\b|"
                     r"\b(?:progress(?:ing|ed|ion)|pd)\s+(?:on|after|despite|through)\b", a) for a in asks) and \
            not any(re.search(r"second[- ]line|subsequent|progressi|refractory|salvage", b.text.lower())
                    for c in f.codes if c in ctx.kb.states for b in ctx.kb.states[c].boxes.values()):
        r.intent = "later_line"  # a line of therapy after progression that the flowchart does not draw
        return True
    if (any(re.search(p, a) for p in ctx.clinical.get("dose_questions", []) for a in asks) or
            any(re.search(p, f.ask) for p in ctx.clinical.get("dose_values", []))) and \
            not re.search(r"\b(?:next step|what next|options?)\b", f.ask):
        r.intent = "dose"
        return True
    return False


def _take_history(r: Reading, f: _Frame) -> None:
    """The treatments already given are history, not what is asked about; what is set aside is noted."""
    ask = f.ask
    for frag in r.done_text:
        if re.search(r"\b(?:same|continue|continuing|resume|repeat|more|another|further)\s+(?:\w+\s+)?"
                     + re.escape(frag), ask):
            continue  # "continue the same MAP?" asks about going on with it
        ask = ask.replace(frag, " ")
    f.exact = [(p, o) for p, o in f.exact if not any(p in frag for frag in r.done_text)]
    for m in re.finditer(r"\b(?:rather than|instead of|not the|other than|not with|not combined with|"
                         r"not in combination with)\s+([^,;?.()]+)", ask):
        r.excluded.append(m.group(1))
    for m in re.finditer(r"\b(?:upfront|up-front|up front|first|immediate|straight to)\s+[\w/+-]+"
                         r"(?:\s+[\w/+-]+)?\s+(?:before|prior to|ahead of)\s+(?:any\s+|the\s+)?([^,;?.()]+)", ask):
        r.excluded.append(m.group(1))  # "is upfront surgery before chemo what the pathway does?": surgery
    f.ask = r.ask = ask


def _workup(r: Reading, ctx: Context, ask: str) -> None:
    """Whether the question asks for the diagnostic work-up, or describes only a suspicion."""
    r.workup = bool(re.search(r"\b(?:work-?up|diagnostic (?:tests?|evaluation|studies|steps?|work)|"
                              r"staging (?:studies|scans|tests?|imaging)|initial (?:evaluation|tests?|studies)|"
                              r"what (?:tests|studies|imaging|labs|investigations)|investigations?)\b", ask)) \
        and not r.done
    if r.intent == "next_step" and not r.done and len(r.guidelines) == 1 and not r.workup:
        # a patient with only a suspicion ("night pain, sunburst periosteal reaction: next step?"): nothing the
        # guideline's decisions use is known yet, so its work-up comes first
        known = set(r.facts) - {str(a) for a in ctx.clinical.get("baseline_facts", [])} - {"location", "grade"}
        treating = re.search(r"induction|consolidation|treat|therapy|regimen|chemo|surg|resect|transplant|"
                             r"option|manage|systemic|\b(?:start|begin|initiate)\b", ask)
        # (what is said not done yet diagnoses nothing: "no staging, bloods or biopsy yet")
        diagnosed = any(not re.search(r"\b(?:no|not|without|awaiting|pending|before)\b[^.;:?]*$", r.text[:m.start()])
                        for m in re.finditer(r"\b(?:dx|diagnos\w*|confirmed|bx|biops\w*|histolog\w*|patholog\w*|"
                                             r"fish|karyotype|pcr|flow|new(?:ly)?)\b", r.text))
        # "a 4.5 cm lesion on ultrasound, nothing else done yet: the first step?": a mass seen is no diagnosis
        first = re.search(r"\b(?:first|initial) (?:step|thing)\b", ask) and \
            re.search(r"\bnothing (?:else |more )?(?:has been |was )?(?:done|performed|arranged)\b|"
                      r"\b(?:incidental(?:ly)?|picked up|found on|seen on)\b", r.text)
        # a measurement or a score the reader did not turn into a fact ("marrow blasts 14%", "IPSS-R high (5.5)")
        # is a diagnosis made, not a suspicion: no work-up answer for it
        measured = re.search(r"\d\s*%|\bscores?\b|\b\d+(?:\.\d+)?\s*(?:mm|cm|g/dl|ng/ml|mu/l|u/l|x\s*uln)\b",
                             r.text)
        r.workup = ((not known and not measured) or bool(first)) and not r.other_disease and not treating \
            and not diagnosed


def _named(ctx: Context, text: str, codes: list[str]) -> Links:
    """The options ``text`` names, best first; an option with more of the words said beats a shorter one."""
    aliased = ctx.kb.aliased(text)
    links = ctx.kb.link(aliased, codes)
    said_words = content_words(ctx.kb.expand(aliased))
    if links and len(said_words) >= 2 and not said_words <= links[0][1].words:
        # "whole-lung RT": an option with every word said ("whole-lung radiation therapy if lung metastases")
        # is meant, not the shorter one that lacks the rarest ("radiation therapy")
        every = [o for o in ctx.kb.options if (not codes or o.code in codes) and said_words <= o.words]
        if not every:
            # the question says more than the option ("whole-lung radiotherapy — who gets it per the bone
            # guideline?"): the options that have every word of the best one and the most of the others said
            top = links[0][1].words
            wider = [(len(said_words & o.words), o) for o in ctx.kb.options
                     if (not codes or o.code in codes) and top < o.words and (said_words & o.words) - top]
            most = max((n for n, _ in wider), default=0)
            every = [o for n, o in wider if n == most]
        if every:
            links = [(links[0][0] + 0.01, o) for o in every] + links
    return links


def _link(r: Reading, ctx: Context, f: _Frame) -> str:
    """The boxes the asking part names (what it sets aside names none); returns the words linked."""
    kept = f.ask
    for x in r.excluded:
        kept = kept.replace(x, " ")
    f.exact = [(p, o) for p, o in f.exact if not any(p in x for x in r.excluded)]
    links = _named(ctx, kept, f.codes)
    if f.exact and any(p in f.ask for p, _ in f.exact):
        links = [(1.0, o) for p, o in f.exact if p in f.ask] + links
    f.links = links
    return kept


def _who_target(r: Reading, ctx: Context, f: _Frame) -> None:
    """"what finding would make you consider post-op chemo?": the treatment asked about follows the asking
    words; what comes before them is the patient's history ("treated with wide excision")."""
    assert f.who is not None
    target = f.flat[f.who.end():]
    # "… i.e. no peds-inspired option and no dose modification?": options the group does not get
    # ("with or without a surgical adjuvant" sets nothing aside)
    for m in re.finditer(r"\b(?:no|(?<!with or )(?<!and/or )without)\s+((?:(?!\band\b|\bor\b)[^,;?.()])+)", target):
        r.excluded.append(re.sub(r"^(?:(?:mention|option|possibility|need|question|talk) (?:of|to|for) )+",
                                 "", m.group(1).strip()))
    for x in r.excluded:
        target = target.replace(x, " ")
    # "… suggest considering postoperative chemo after an upfront wide excision?": the clause after
    # "after" is the patient's history, not the treatment asked about
    bare_target = re.sub(r"\s(?:after|following|post)\s[^?]*", " ", target)
    aimed = _named(ctx, bare_target, f.codes) if bare_target != target else []
    if aimed:
        target = bare_target
    else:
        aimed = _named(ctx, target, f.codes)
    if aimed:
        f.links, r.ask = aimed, target
        f.exact = [(p, o) for p, o in f.exact if p in target]


def _who(r: Reading, ctx: Context, f: _Frame, kept: str) -> None:
    f.flat = " ".join(f.ask.split())  # the facts read are blanked out: the frame words stay in order
    f.who = _WHO.search(f.flat) or _FOR_WHOM.search(f.flat) or _CANDIDATES.search(f.flat)
    if not f.links:  # "inotuzumab - who is it for?": one rare word of a longer option names it
        f.links = ctx.kb.link_loose(ctx.kb.aliased(kept), f.codes)
    if f.who and f.who.end() < len(f.flat):
        _who_target(r, ctx, f)
    if f.who and not f.links:
        # "The stage I page lists 'radical nephrectomy in selected patients' … Which patients is that for?": the
        # sentence before names the treatment (what it quotes, if it quotes)
        quoted = re.findall(r"['‘\"“]([^'’\"”]{4,})['’\"”]", f.before)
        prev = ctx.kb.link(ctx.kb.aliased(" ".join(quoted)), f.codes) if quoted else []
        prev = prev or ctx.kb.link(ctx.kb.aliased(f.before), f.codes)
        if prev:
            f.links, r.ask = prev, (" ".join(quoted) or f.before) + " " + f.ask
            f.exact = _box_phrases(ctx, r.ask, f.codes)


def _that_before(r: Reading, ctx: Context, f: _Frame) -> None:
    """"Urology plans a partial nephrectomy. Is that what the guideline recommends?": the sentence before."""
    before = f.before
    # what was not given yet ("before any chemo") is no part of the treatment asked about
    before = re.sub(r"\b(?:before|prior to|without|ahead of)\s+any\s+[a-z][\w/+-]*", " ", before)
    # "would rather use TKI + steroids instead of TKI + hyper-CVAD. Is that …?": the one set aside is not it
    for m in re.finditer(r"\b(?:rather than|instead of|not the|other than)\s+([^,;?.()]+)", before):
        r.excluded.append(m.group(1))
        before = before.replace(m.group(0), " ")
    # "ortho want to resect upfront and give chemo afterwards": the step asked about is the first one
    before = re.sub(r"(?:\band\b|\bthen\b|,)\s+(?:\w+\s+){0,3}?\w+\s+(?:afterwards|after that|thereafter|"
                    r"later|post-?op(?:eratively)?)\b", " ", before)
    both = ctx.kb.link(ctx.kb.aliased(before + " " + f.ask), f.codes) or \
        ctx.kb.link_loose(ctx.kb.aliased(before + " " + f.ask), f.codes)
    # "Colleague proposing brexu-cel … Is that the right CAR-T?": the sentence before names it exactly
    f.links = both if both and (not f.links or both[0][0] > f.links[0][0]) else f.links


def _yes_no(r: Reading, ctx: Context, f: _Frame) -> bool:
    """Whether the question asks yes or no (a verdict on what was said counts); reads a back-reference."""
    ask, flat = f.ask, f.flat
    yesno = _YES_NO.search(ask) or \
        (re.search(r"\b(?:can|could|should|shall|may|must|do|does)\s+(?:we|i|you|she|he|they|(?:the |our |this )?"
                   r"(?:patient|pt))\b", ask) and  # "Given his age can we just observe?"
         not re.search(r"\b(?:what|which|how|who|whom|when|where|why)\b", ask)) or \
        re.match(r"\s*(?:continue|start|begin|proceed (?:to|with)|give|add|use|offer|go (?:ahead )?with|resume|"
                 r"re-?treat|re-?induce|repeat|keep (?:going|on)|stick with|switch to)\b[^?]*\?", flat)
    verdict = None if re.search(r"(?:^|[,:;.?!\-–]\s*)(?:what|which|how|who|whom|when|where)\b", ask.strip()) else \
        _VERDICT.search(flat)  # "… robotic partial nephrectomy — guideline-concordant?", "Appropriate?"
    # "Daughter asks about X on its own. Per the guideline?": the wanted treatment, and a verdict asked
    if not yesno and re.search(_WANTED, f.before) and re.fullmatch(
            r"\W*(?:(?:and|so) )?(?:(?:is|would) (?:it|that|this) (?:be )?)?(?:ok(?:ay)? )?(?:per|according to) "
            r"(?:the |this )?(?:guidelines?|pathway|algorithm|(?:flow)?chart)\W*", ask.rsplit(";", 1)[-1]):
        yesno = True
    yesno = yesno or verdict
    if yesno and re.match(r"\W*(?:what|which)\b", ask.strip()) and \
            re.search(r"[,;]\s*(?:does|do|would|will) (?:the |this )?(?:guidelines?|pathway|algorithm|"
                      r"(?:flow)?chart)s? (?:recommend|suggest|say|give|advise|offer|propose)\b", ask):
        yesno = None  # "What follow-on treatment, if any, does the guideline recommend?": it asks what
    if yesno and not f.who and (re.search(r"\b(?:that|this|it)\b", ask) or
                                (verdict and not content_words(flat[:verdict.start()]))):
        _that_before(r, ctx, f)
    return bool(yesno)


def _kind(r: Reading, ctx: Context, f: _Frame, yesno: bool) -> None:
    ask, links = f.ask, f.links
    bare = len(content_words(ask)) <= 5 and not re.search(r"\b(?:what|which|how|when|who|whom|where|why)\b", ask) \
        and bool(links) and links[0][0] >= 0.75 and \
        not (links[0][1].words <= _CATEGORY_WORDS or  # "1L systemic?": which one?
             re.search(r"\b(?:[1-4]l|(?:first|second|third|front)[- ]?line)\b", ask))
    said = f.flat
    if re.search(r"\b(?:that|this)\b", ask):
        # "Family asks whether chemo can stop now … Is that recommended?": the sentence before says what
        said = " ".join(f.before.split()) + " " + f.flat
    withhold = any(re.search(p, said) for p in ctx.clinical.get("withhold_phrases", []))
    if f.who and "age" not in r.facts and links:
        r.intent = "constraints"
    elif yesno and withhold and not f.who:
        r.intent, r.withhold = "next_step", True
    elif (yesno or bare) and not re.search(r"\bor (?:[\w']+ ){0,3}?(?:just|simply|rather)\b", ask) and \
            not (re.search(r"\bor (?:what|anything|something) ?(?:else)?\s*\?|\bwhat else\b|"
                           r"\b(?:need|get|have) anything\b|\banything (?:else|more|further)\b", ask) and
                 (not links or not ctx.kb.link(ctx.kb.aliased(ask), f.codes))):
        r.intent = "advisable"
    else:
        r.intent = "next_step"


def on_way(ctx: Context, r: Reading, codes: list[str]) -> set[str]:
    """Boxes on the ways open to a patient with the facts read (their decisions' next steps included)."""
    out: set[str] = set()
    for c in codes:
        st = ctx.kb.states.get(c)
        for p in ctx.kb.paths.get(c, []):
            if st is not None and p.scope.consistent(r.facts):
                out.update(p.boxes)
                out.update(e.tail for e in st.edges if e.head == p.decision and e.type == "ARROW")
    return out


def _linked_treatments(r: Reading, ctx: Context, f: _Frame) -> None:
    """Of the boxes linked best, the one the question writes out, or the one on this patient's way."""
    links = f.links
    best = links[0][0]
    r.treatments = [o for s, o in links if s >= best - 1e-9]
    # of options named equally well, the longest one the question writes out as the box does ("radical
    # nephrectomy in selected patients", not "radical nephrectomy")
    spoken = " ".join(r.ask.split())
    verbatim = sorted((o for o in r.treatments if len(o.text) > 4 and o.text.lower() in spoken),
                      key=lambda o: -len(o.text))
    if verbatim and any(len(o.text) < len(verbatim[0].text) for o in r.treatments):
        r.treatments = [o for o in verbatim if len(o.text) == len(verbatim[0].text)]
    if r.intent == "advisable" and r.facts:
        # two boxes named nearly as well ("neoadjuvant MAP before resection"): the one on this patient's
        # way is the one meant
        way = on_way(ctx, r, f.codes)
        r.treatments.sort(key=lambda o: o.uid not in way)  # of boxes named equally, the one on the way
        # only a box that says all the best one says, and more ("… before wide excision"): a drug
        # named outright (brexu-cel) is never traded for another of its class that the way has
        near = [o for s, o in links if s >= 0.75 * best and o.uid in way
                and all(t.words <= o.words for t in r.treatments)]
        if near and not any(o.uid in way for o in r.treatments):
            r.treatments = near[:1]
    r.treatment = r.treatments[0]


def _treatments(r: Reading, ctx: Context, f: _Frame) -> None:
    if r.intent not in ("constraints", "advisable"):
        return
    exact, links = f.exact, f.links
    # a longer option named in full in other words ("neoadjuvant chemo before wide excision") is meant, not the
    # box phrase that is part of it ("wide excision")
    longer = bool(exact and links and links[0][0] >= 0.999 and links[0][1].words > exact[0][1].words)
    if exact and not longer:
        # the question names a box's whole phrase: that phrase, as the dataset's queries use it
        r.treatments = [o for p, o in exact if len(p) == len(exact[0][0])]
        r.treatment = r.treatments[0]
    elif links:
        _linked_treatments(r, ctx, f)
    if r.intent == "constraints":
        _without_unsaid_additions(r, ctx)


def _without_unsaid_additions(r: Reading, ctx: Context) -> None:
    """"Which patients get drug X?" asks about the option, with or without what a box may add to it ("X ±
    chemotherapy" in one box, "X ± an antibody" in another): where the question says nothing of the addition, the
    option is its part before "±", and every box that gives that part answers."""
    if r.treatment is None or "±" not in r.treatment.text:
        return
    core, _, extra = r.treatment.text.partition("±")
    core = core.strip()
    said = content_words(ctx.kb.expand(r.text))
    if len(core) < 4 or content_words(ctx.kb.expand(extra)) & said:
        return
    codes = r.guidelines or list(ctx.kb.states)
    words = frozenset(content_words(ctx.kb.expand(core)))
    same = [o for o in ctx.kb.options if o.code in codes and o.text.partition("±")[0].strip() == core]
    if words and len({o.uid for o in same}) > 1:
        r.treatments = [replace(o, text=core, words=words) for o in same]
        r.treatment = r.treatments[0]


@component("intent")
def read_intent(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    f = _frame(doc, ctx)
    if _beyond_flowchart(r, ctx, f):
        return
    _take_history(r, f)
    _workup(r, ctx, f.ask)
    kept = _link(r, ctx, f)
    _who(r, ctx, f, kept)
    yesno = _yes_no(r, ctx, f)
    _kind(r, ctx, f, yesno)
    _treatments(r, ctx, f)
