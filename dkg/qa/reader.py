"""The question reader: what a clinician's question asks, and which words gave which patient fact.

Clinicians do not write the flowchart's labels. They write "61M", "FISH negative for BCR::ABL1",
"day 29 marrow <5 % blasts", "flow MRD 0.004 %", "3.2 cm renal mass, no adenopathy", "KPS 70,
corrected Ca 11.4, Hb 9.8", "path 40 % viable tumour", "s/p radical nx". The reader turns those into
the facts of the guideline's vocabulary and records, for every fact, the words it came from and
the rule that read them (shown to the clinician in ``dkg ask --json``):

* phrase rules: ``conf/qa.yaml`` (the dataset's own phrasings), ``conf/constraints.yaml`` (the
  extractor's keywords) and ``conf/clinical.yaml`` (clinical shorthand), longest match first,
  each span of the question read once;
* numbers: ages and sex in shorthand, ECOG or Karnofsky, months from diagnosis to relapse (also
  from dates), percentages (MRD, blasts, necrosis or viable tumour), tumour size, lab values;
* the guideline's own definitions (:mod:`dkg.qa.clinical`): MRD cut-off, % necrosis for a good
  response, T category by size, stage groups, high risk of relapse, risk groups by counted factors.

It also finds what is asked (next step, "is X right", "who gets X", or something a flowchart never
says, such as a dose), the treatment named, the treatments already given (the patient's place in
the pathway), and statements it could not read: words that decide branches of a loaded
guideline but that no rule used. A question with such words is not answered with confidence.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from dkg import rx as re
from dkg.constraints.vocabulary import load_vocabulary
from dkg.graph.paths import DecisionPath
from dkg.qa.clinical import Definitions, load_clinical
from dkg.qa.dataset import apply_implications, current_config
from dkg.qa.facts import _AGE, _DISEASE_HEAD, _ECOG, _lexicon, _phrase_regex, normalise
from dkg.qa.knowledge import Knowledge, Option, _stem, content_words
from dkg.qa.names import registry_short_names
from dkg.qa.quantities import (
    _AGE_EXTRA,
    _DURATION,
    _age_from_birth,
    _counted_lesions,
    _date_near,
    _dates,
    _months,
    _named_otherwise,
)
from dkg.qa.staging import _lab_value, _relapse_risk, _stage, _tnm

# Heads of disease names (the tagger's, and rarer tumours): a named disease no guideline draws is not covered.
_OTHER_HEAD = re.compile(rf"{_DISEASE_HEAD.pattern}|\b(?:chordoma|carcinoid|blastoma|thymoma)\b|"
                         r"\b[a-z]{3,}(?:sarcoma|carcinoma|blastoma|lymphoma)\b")

# Tumours that are neither a carcinoma, a sarcoma nor a leukaemia: benign or other tumours of an organ a guideline
# is about ("angiomyolipoma" of the kidney, "enchondroma" of bone) or other malignancies ("myeloma").
_OTHER_TUMOUR = re.compile(r"\b[a-z]*(?:lipoma|adenoma|oncocytoma|chondroma|osteoma|fibroma|angioma|hamartoma|"
                           r"myeloma|glioma|melanoma|mesothelioma|teratoma|neuroma|meningioma|plasmacytoma)s?\b")

Intent = Literal["next_step", "advisable", "constraints", "dose", "outcome", "outside", "later_line"]


@dataclass(frozen=True)
class FactSource:
    """One fact and the words of the question it was read from."""

    attr: str
    value: Any
    text: str
    rule: str


@dataclass
class Reading:
    """Everything the reader found in one question."""

    question: str
    text: str
    intent: Intent = "next_step"
    facts: dict[str, Any] = field(default_factory=dict)
    sources: list[FactSource] = field(default_factory=list)
    guidelines: list[str] = field(default_factory=list)
    other_disease: str | None = None
    treatment: Option | None = None
    """The treatment the question asks about (``advisable``, ``constraints``)."""
    treatments: list[Option] = field(default_factory=list)
    """Every option tied for best link (a phrase may name several boxes)."""
    done: list[Option] = field(default_factory=list)
    """Treatments the question says were given already."""
    excluded: list[str] = field(default_factory=list)
    """Treatments the question sets aside ("rather than curettage")."""
    unread: list[str] = field(default_factory=list)
    page: str | None = None
    done_text: list[str] = field(default_factory=list)
    later: dict[str, Any] = field(default_factory=dict)
    """Values a later finding restates (final pathology): they decide the steps after the treatment given."""
    not_given: list[Option] = field(default_factory=list)
    """Treatments the question says were not given yet ("before any chemo", "chemo-naive")."""
    ask: str = ""
    boxes_asked: list[str] | None = None
    """The treatment boxes a "who gets X?" question names (found once, by the answerer)."""
    """The asking sentence with the facts and the history taken out (what the treatment is looked for in)."""
    withhold: bool = False
    """A yes/no question about stopping or holding treatment ("OK to stop therapy?"): answered as the next step,
    advisable only when that step is observation."""
    done_cover: dict[str, float] = field(default_factory=dict)
    """How much of each given box's treatment the question names (1.0: all of it)."""
    workup: bool = False
    """The question asks for the diagnostic work-up, before any treatment ("what staging studies?")."""

    def given(self, at_least: float = 0.4) -> set[str]:
        """Boxes the question clearly says were given (enough to move past them)."""
        return {u for u, c in self.done_cover.items() if c >= at_least}

    def facts_json(self) -> list[dict[str, Any]]:
        """The facts with their source words, for the answer's JSON."""
        return [{"attr": s.attr, "value": s.value, "text": s.text, "rule": s.rule} for s in self.sources
                if self.facts.get(s.attr) == s.value]


class Reader:
    """Reads questions against the loaded guidelines (build once, read many)."""

    def __init__(self, knowledge: Knowledge) -> None:
        self.kb = knowledge
        self.conf = current_config()
        self.clinical = load_clinical()
        rules: list[tuple[re.Pattern[str], str, str, str]] = []
        for attr, forms in self.clinical["phrases"].items():
            for value, pats in forms.items():
                for p in pats:
                    plural = "s?" if p[-1:].isalpha() and len(p) >= 6 else ""  # "osteosarcomas"
                    rules.append((re.compile(rf"(?<![\w+]){p}{plural}(?![\w+])"), attr, str(value), "clinical phrase"))
        for pat, attr, value in _lexicon():
            rules.append((pat, attr, value, "qa phrase"))
        for k in load_vocabulary().keywords:
            rules.append((re.compile(k.pattern.pattern.replace("(?<![\\w+])", "(?<![\\w+])"), re.IGNORECASE),
                          k.attr, k.value, "constraint keyword" + (f"|neg:{k.negated}" if k.negated else "")))
        self.rules = rules
        self._keyword_attrs = {k.attr for k in load_vocabulary().keywords}
        self._units_of: dict[str, dict[str, str]] = {}
        # the histologies the loaded guidelines draw, as the clinical phrases write them
        self.histology = [str(p) for forms in self.clinical["phrases"].get("histology", {}).values() for p in forms]
        # the loaded guidelines' treatments of three words or more, longest first (set aside before facts are read)
        self._treatment_phrases = sorted(dict.fromkeys(p for p, _ in self.kb.phrases if len(p.split()) >= 3),
                                         key=lambda p: -len(p))
        self._every: str | None = None
        self._ways_of: dict[str, list[tuple[DecisionPath, bool, list[str], dict[str, int]]]] = {}

    # ---- text ----------------------------------------------------------------------------------
    def _fix_typos(self, text: str) -> str:
        vocab = self.kb.vocabulary

        def fix(m: re.Match[str]) -> str:
            w = m.group(0)
            lw = w.lower()
            if len(lw) < 6 or lw in vocab or lw in _REAL_WORDS:
                return w
            for v in vocab:
                if abs(len(v) - len(lw)) <= 1 and len(v) >= 7 and _edit1(lw, v) and \
                        not (v.startswith(lw) or lw.startswith(v)):  # "completed" is no typo of "complete"
                    return v
            return w

        return re.sub(r"[A-Za-z]{6,}", fix, text)

    def read(self, question: str) -> Reading:
        # a line break ends a sentence (a problem list: "#1 … \n#2 … \nAnything further recommended?")
        lines = [" ".join(line.split()) for line in question.splitlines() if line.strip()]
        q = " ".join(line if i == len(lines) - 1 or re.search(r"[.?!;:,]$", line) else line + "."
                     for i, line in enumerate(lines))
        fixed = self._fix_typos(q)
        text = normalise(fixed)
        text = re.sub(r"\b(\d+) and a half\b", r"\1.5", text)
        # clinical shorthand for with and without ("concordant w/ the pathway", "w/o mets")
        text = re.sub(r"(?<![\w/])w/o(?![\w/])", "without", text)
        text = re.sub(r"(?<![\w/])w/(?=\s|[a-z])", "with ", text)
        # "the blinatumomab-then-transplant track": a sequence written as one word
        text = re.sub(r"(?<=[a-z])-(then|followed-by|before|after)-(?=[a-z])",
                      lambda m: " " + str(m.group(1)).replace("-", " ") + " ", text)
        # "a year and 8 months", "2 yrs 3 mo": one duration in months
        text = re.sub(r"\b(a|an|\d+)\s*(?:years?|yrs?|y)\s*(?:and\s*|,\s*)?(\d+)\s*(?:months?|mos?|mths?)\b",
                      lambda m: f"{12 * (1 if m.group(1) in ('a', 'an') else int(m.group(1))) + int(m.group(2))}"
                                " months",
                      text)
        r = Reading(question=q, text=text)
        taken = [False] * len(text)
        cands: list[tuple[int, FactSource]] = []

        def free(a: int, b: int) -> bool:
            return not any(taken[a:b])

        def take(a: int, b: int) -> None:
            for i in range(a, b):
                taken[i] = True

        def add(pos: int, attr: str, value: Any, words: str, rule: str) -> None:
            cands.append((pos, FactSource(attr, value, words.strip(), rule)))

        ask = _ask_sentence(text)
        # a treatment named as the guideline writes it ("primary treatment of stage II–III disease") states
        # no patient fact: its words are set aside before the facts are read
        tspans: list[tuple[int, int]] = []
        for p in self._treatment_phrases:
            if p not in text:  # a whole-word match is a substring first: most of thousands of phrases stop here
                continue
            for m in re.finditer(r"(?<![\w])" + re.escape(p) + r"(?![\w])", text):
                if free(m.start(), m.end()):
                    take(m.start(), m.end())
                    tspans.append((m.start(), m.end()))
        self._diseases(r, text, free, take)
        # "he turns 60 next month": not 60 yet
        coming = re.search(r"\bturn(?:s|ing)\s+(\d{1,3})\s+(?:next|in\s+(?:a|\d+)|this\s+coming|soon|later\s+this)\b",
                           text)
        if coming and free(coming.start(1), coming.end(1)) and 1 <= int(coming.group(1)) <= 120:
            add(coming.start(), "age", int(coming.group(1)) - 1, coming.group(0), "a birthday still to come")
            take(coming.start(), coming.end())
        # ages, performance status
        for pats, attr, lo, hi in ((_AGE_EXTRA + _AGE, "age", 0, 120), (_ECOG, "performance_status", 0, 5)):
            for p in pats:
                for m in re.finditer(p, text):
                    if any(s.attr == attr for _, s in cands) or not free(m.start(1), m.end(1)):
                        continue
                    n = int(m.group(1))
                    if lo <= n <= hi and not re.match(r"\s*(?:cm|mm|kg|%|mg|g/|weeks?|wks?|months?|mos?|days?)",
                                                      text[m.end(1):]):
                        add(m.start(), attr, n, m.group(0), "number")
                        take(m.start(), m.end())
        if not any(s.attr == "age" for _, s in cands):
            # "a 14-month-old", "9 months old": an age in months is under a year or a few
            infant = re.search(r"\b(\d{1,3})[- ]?(?:months?|mos?|mths?)[- ]old\b", text)
            if infant and free(infant.start(), infant.end()):
                add(infant.start(), "age", int(infant.group(1)) // 12, infant.group(0), "age in months")
                take(infant.start(), infant.end())
        if not any(s.attr == "age" for _, s in cands):
            born = _age_from_birth(text)
            if born is not None:
                add(text.find(born[1]), "age", born[0], born[1], "age from the date of birth and the latest date given")
        kps_pat = r"\b(?:kps|karnofsky)(?: performance status| ps| score)?\s*(?:of\s*)?(\d{2,3})\s*%?"
        for m in re.finditer(kps_pat, text):
            if free(m.start(), m.end()):
                kps = int(m.group(1))
                ecog = next((e for k, e in self.clinical["kps_to_ecog"] if kps >= k), 4)
                if not any(s.attr == "performance_status" for _, s in cands):
                    add(m.start(), "performance_status", ecog, m.group(0), f"Karnofsky {kps} → ECOG {ecog}")
                add(m.start(), "_kps", kps, m.group(0), "number")
                take(m.start(), m.end())
        if not any(s.attr == "performance_status" for _, s in cands):
            # the ECOG grade said the way the scale defines it: "up and about more than half the day, self-caring"
            for grade, pat in self.clinical.get("ecog_words", []):
                worded = re.search(pat, text)
                if worded and free(worded.start(), worded.end()):
                    add(worded.start(), "performance_status", int(grade), worded.group(0),
                        f"ECOG {grade} as the scale words it")
                    take(worded.start(), worded.end())
                    break
        self._percentages(r, text, add, take, free)
        self._relapse_time(text, add, take, free, any(s.attr == "relapse" for _, s in cands))
        for pat in self.clinical.get("no_fact_phrases", []):  # said, understood, and deciding nothing
            for m in re.finditer(pat, text):
                if free(m.start(), m.end()):
                    take(m.start(), m.end())
        # phrases, longest first
        hits: list[tuple[int, int, str, str, str]] = []
        for pat, attr, value, rule in self.rules:
            for m in pat.finditer(text):
                hits.append((m.start(), m.end(), attr, value, rule))
        hits.sort(key=lambda h: (-(h[1] - h[0]), h[0]))
        for a, b, attr, value, rule in hits:
            if not free(a, b):
                continue
            if "|neg:" in rule:
                before = text[max(0, a - 24):a]
                if re.search(r"\b(?:no|not|without|free of|absence of|never|none|zero|nil)\b[^,;.]*$", before):
                    value = rule.split("|neg:")[1]
                rule = rule.split("|")[0]
            elif _NEGATED.search(text[max(0, a - 40):a]) and not _NEGATION_WORD.match(text[a:b]):
                take(a, b)  # "no high-grade features": understood, and it states no value
                if value == "yes" and re.search(r"\b(?:no|not|none|without|(?:neg|negative) for|free of)\s+$",
                                                text[max(0, a - 30):a]):
                    add(a, attr, "no", text[max(0, a - 12):b], rule + " (negated)")  # "none resectable"
                continue
            if attr == "histology" and (re.match(r"-(?:type|like|style|based|directed)\b|\s*(?:regimen|protocol)\b|"
                                                 r"\s+(?:type|like|style)\s+(?:chemo\w*|regimen|therapy|treatment)",
                                                 text[b:b + 24]) or
                                        re.search(r"\b(?:as for|as in|as with|like|unlike|(?:like|as|than) "
                                                  r"(?:we|you|one|they|i)(?: \w+){1,3}?(?: (?:for|in|with|on))?)"
                                                  r"\s+$", text[max(0, a - 40):a])):
                # "osteosarcoma-type chemo", "chemo as for osteosarcoma", "ipi/nivo like we would for clear cell":
                # a treatment's name or a comparison, not the tumour
                if re.search(r"\b(?:unlike|(?:like|as|than) (?:we|you|one|they|i) \w+)", text[max(0, a - 40):a]):
                    take(a, b)  # a comparison is understood, and says nothing of this patient
                continue
            if text[a:b] == "cr" and re.match(r"\s*[:=]?\s*\d", text[b:b + 6]):
                take(a, b)  # "Cr 0.9": creatinine, not a complete remission
                continue
            take(a, b)
            add(a, attr, value, text[a:b], rule)
        self._substages(text, cands, add, take, free)
        self._registry_facts(text, cands, add, take, free)
        self._markers(r, text, cands, add, take, free)
        self._by_unit(r, text, cands, add, take, free)
        self._past_history(text, cands, add, take)
        self._subtypes(text, add)
        self._skeleton(r, text, add, free, take)
        self._grade(text, add, free, take)
        self._resolve(r, cands)
        self._foreign_phrases(r)
        resolved = dict(r.facts)
        self._definitions(r, text, final=False)  # T category and stage place the history too
        self._done(r, text, ask, resolved)
        self._not_given(r, text)
        treated = [o for o in r.done if not re.search(r"biops|work-?up|staging|imaging|h&p|diagnos", o.box.lower())]
        if r.facts.get("metastatic") == "yes" and "relapse" not in r.facts and treated and \
                not re.search(r"\b(?:at (?:presentation|diagnosis|dx)|de novo|synchronous|newly)\b", text):
            # metastases found after the first treatment are a recurrence
            r.facts["relapse"] = "yes"
            r.sources.append(FactSource("relapse", "yes", "metastases after " + r.done[0].text, "recurrence"))
        self._definitions(r, text)
        if not r.other_disease:
            self._undrawn_subtype(r, text)
        stated = dict(r.facts)
        r.facts = apply_implications(r.facts, r.guidelines, self.conf)
        for attr in r.facts.keys() - stated.keys():
            because = ", ".join(f"{a} = {v}" for a, v in stated.items())[:80]
            r.sources.append(FactSource(attr, r.facts[attr], because, "implied (conf/qa.yaml implies)"))
        if r.facts.get("relapse") == "yes" and "time_to_relapse" not in r.facts:
            # a relapse implied, not named ("on imatinib; marrow now 30 % blasts"): "dx'd 14 months ago" dates it
            late: list[FactSource] = []
            self._relapse_time(text, lambda _pos, attr, value, words, rule: late.append(
                FactSource(attr, value, words.strip(), rule)), take, free, True)
            for src in late:
                if src.attr == "time_to_relapse":
                    r.facts[src.attr] = src.value
                    r.sources.append(src)
        named = {i for a, b in tspans for i in range(a, b)}
        masked = "".join(" " if taken[i] and i not in named else c for i, c in enumerate(text))
        self._intent(r, _ask_sentence(masked), masked)
        self._unread(r, text, taken)
        page = re.search(r"\b([A-Z][A-Z0-9]{1,7}-\d{1,3})\b", q)
        r.page = page.group(1) if page else None
        return r

    # ---- pieces ---------------------------------------------------------------------------------
    def _foreign_phrases(self, r: Reading) -> None:
        """A clinical phrase that names a tumour kind of another guideline ("papillary" is a non-clear-cell kidney
        tumour) says nothing about a question linked to a guideline whose branches give that attribute other
        values: the fact is dropped (it would send the patient nowhere in the guideline asked about). Only the
        facts that say what the tumour is (``fixed_facts``); a branch that never names a value may still hold it."""
        if not r.guidelines:
            return
        fixed = {str(a) for a in self.clinical.get("fixed_facts", [])}  # what kind of tumour it is
        for src in [s for s in r.sources if s.rule in ("clinical phrase", "qa phrase") and s.attr in fixed]:
            if src.attr not in r.facts or str(r.facts[src.attr]) != str(src.value):
                continue  # (another reading of the attribute was kept)
            seen = {v for c in r.guidelines for p in self.kb.paths.get(c, []) for a, vs in p.scope.cats
                    if a == src.attr for v in vs}
            if seen and str(src.value) not in seen:
                del r.facts[src.attr]
                r.sources.remove(src)

    def _substages(self, text: str, cands: list[tuple[int, FactSource]], add: Any, take: Any, free: Any) -> None:
        """A sub-stage ("stage IIB", "stage 3a") is its stage group where the guidelines branch on groups only
        (the stage values drawn are I–IV): the letter refines the group and never moves the patient out of it."""
        if any(s.attr == "stage" for _, s in cands):
            return
        from dkg.constraints.comparisons import ordinal_value

        groups = {ordinal_value(str(v)): str(v) for v in load_vocabulary().attributes.get("stage", {}).get(
            "values", ["I", "II", "III", "IV"])}
        for m in re.finditer(r"\bstage\s+(iv|i{1,3}|[1-4])([a-d][1-3]?)(?![\w+-])", text):
            sub = ordinal_value(m.group(1).upper() + m.group(2).upper())
            group = groups.get(ordinal_value(m.group(1).upper()))
            if group is None or sub in groups or not free(m.start(), m.end()):
                continue
            add(m.start(), "stage", group, m.group(0), "sub-stage of a stage group")
            take(m.start(), m.end())
            return

    def _by_unit(self, r: Reading, text: str, cands: list[tuple[int, FactSource]], add: Any, take: Any,
                 free: Any) -> None:
        """A measurement the question does not name ("melanoma of the calf, 0.5 mm") is the guideline's only
        attribute measured in that kind of unit (as its boxes write it), when the question gives one such
        measurement and the linked guideline decides on one such attribute (two lengths, or two attributes in %,
        say nothing)."""
        from dkg.constraints.registry import canonical_unit

        if len(r.guidelines) != 1 or r.guidelines[0] not in self.kb.states:
            return
        read = {s.attr for _, s in cands}
        code = r.guidelines[0]
        if code not in self._units_of:  # the boxes do not change while this reader lives
            self._units_of[code] = self._units(code)
        numeric = sorted(self._units_of[code].items())
        found = [m for m in re.finditer(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(mm|cm|%|ng/ml|u/l|mu/l|g/dl|mg/dl)(?![\w/])",
                                        text) if free(m.start(), m.end())]
        for attr, unit in numeric:
            if attr in read:
                continue
            # the unit the guideline writes, not another of the same dimension: "a 3 cm node" is no Breslow
            # thickness in mm
            fits = [(m, float(m.group(1))) for m in found
                    if (canonical_unit(m.group(2)) or m.group(2)).lower() == unit.lower()
                    and not _named_otherwise(text, m.start(), attr)]
            rivals = [a for a, u in numeric if a != attr and a not in read and u.lower() == unit.lower()]
            if len(fits) != 1 or rivals:
                continue
            m, v = fits[0]
            value: Any = int(v) if float(v).is_integer() else round(v, 3)
            add(m.start(), attr, value, m.group(0), f"the only attribute in {unit}")
            take(m.start(), m.end())

    def _markers(self, r: Reading, text: str, cands: list[tuple[int, FactSource]], add: Any, take: Any,
                 free: Any) -> None:
        """Positive/negative findings named by their marker as clinicians write them ("BRAF V600E mutated", "BRAF
        wt", "SF3B1 wild-type", "positive for RET fusion", "SLN+"): the marker is the first word of a linked
        guideline's positive/negative attribute written as a term (letters and digits, two or more). Attributes
        that share the marker and the values are one finding under two names (both are set)."""
        from dkg.constraints.vocabulary import load_registry

        read = {s.attr for _, s in cands}
        used = set().union(*(self.kb.attrs.get(c, set()) for c in (r.guidelines or list(self.kb.states))))
        by_marker: dict[str, list[str]] = {}
        for a in load_registry().approved().values():
            if a.name in read or a.name not in used or not a.values or set(a.values) != {"positive", "negative"}:
                continue
            for alias in a.aliases:
                first = re.match(r"\s*([A-Z][A-Z0-9]{1,7})\b", alias)
                if first:
                    by_marker.setdefault(first.group(1).lower(), []).append(a.name)
                    break
        pos = r"positive|pos|mutated|mutant|mutation detected|detected|present|\+"
        neg = r"negative|neg|wild[\s-]?type|wt|not detected|absent|non[\s-]?mutated|unmutated|-(?![\w])"
        long_forms = {str(k).lower(): [str(x) for x in v]
                      for k, v in self.clinical.get("finding_abbreviations", {}).items()}
        for marker, names in sorted(by_marker.items()):
            spelled = "|".join([re.escape(marker), *long_forms.get(marker, [])])
            m = re.search(rf"(?<![\w-])(?:{spelled})(?:b)?(?:[\s-]*v\d+[a-z]?)?"
                          r"(?:[\s-]+(?:mutation|fusion|gene|status|test(?:ing)?|result|is|was))*[\s:-]*"
                          rf"(?:({pos})|({neg}))(?![\w])", text) or \
                re.search(rf"\b(?:(positive)|(negative)) for (?:an? )?(?:{spelled})(?![\w])", text)
            # the polarity must be unread; the marker may lie in a treatment named ("sentinel node biopsy negative")
            if not m or not free(m.start(1 if m.group(1) else 2), m.end(1 if m.group(1) else 2)):
                continue
            value = "positive" if m.group(1) else "negative"
            for name in dict.fromkeys(names):
                add(m.start(), name, value, m.group(0), "marker finding")
            take(m.start(), m.end())

    def _units(self, code: str) -> dict[str, str]:
        """The numeric attributes a guideline's boxes bound, with the unit they write (one unit each)."""
        from dkg.constraints.registry import canonical_unit

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

        for b in self.kb.states[code].boxes.values():
            if b.constraints not in ("", "[]"):
                walk(json.loads(b.constraints))
        return {a: next(iter(u)) for a, u in units.items() if len(u) == 1}

    def _registry_facts(self, text: str, cands: list[tuple[int, FactSource]], add: Any, take: Any,
                        free: Any) -> None:
        """Facts on attributes the registry approved from a guideline ("Deauville score of 2", "CrCl 25
        mL/min", "stage IIB", "CD30-positive", "non-bulky"): found by the attribute's names, valued by
        what follows them. Attributes the rules above already read are left to them."""
        from dkg.constraints.comparisons import ordinal_value
        from dkg.constraints.registry import canonical_unit, convert
        from dkg.constraints.vocabulary import load_registry

        read = {s.attr for _, s in cands}
        number = r"(\d+(?:\.\d+)?)"
        registry = load_registry()
        short = registry_short_names(registry)
        for a in registry.approved().values():
            if a.name in read or a.type == "text":
                continue
            counted = _counted_lesions(text, {x.lower() for x in [a.name.replace("_", " "), *a.aliases]})
            if a.type == "number" and counted is not None:  # "5 bone lesions", "innumerable liver mets"
                add(counted[1], a.name, counted[0], text[counted[1]:counted[2]], "registry attribute")
                take(counted[1], counted[2])
                read.add(a.name)
                continue
            names = sorted({n.lower() for n in [a.name.replace("_", " "), *a.aliases, *short.get(a.name, [])]
                            if len(n) > 1}, key=len, reverse=True)
            qualifier = bool(a.values) and set(a.values) <= {"yes", "no"}
            for name in names:
                stem = re.sub(r"\s*status$", "", name) if a.name.endswith("_status") else name
                pat = _phrase_regex(stem)
                if qualifier and re.fullmatch(r"[a-z]{7,}", stem) and not stem.endswith("ly") and \
                        a.name not in self._keyword_attrs:  # (the keyword rules read those in their own forms)
                    # a one-word finding in any of its forms: "ulcerated" / "ulceration", "progression" / "progressed"
                    pat = rf"(?<![\w+-]){re.escape(stem[:-3])}[a-z]*(?![\w+])"
                for m in re.finditer(pat, text):
                    if a.name in read or not free(m.start(), m.end()):
                        continue
                    after = text[m.end():m.end() + 40]
                    before = text[max(0, m.start() - 8):m.start()]
                    lead = 0  # a negation before the name belongs to the fact's words
                    if a.type == "number":
                        v = re.match(r"(?:\s*(?:score|level|value|of|is|was|were|at|=|:|now|currently|measured))*"
                                     rf"\s*(<=|>=|<|>|below|under|above|over)?\s*{number}\s*([a-z%/µμ0-9.]+)?", after)
                        if not v:
                            continue
                        n = float(v.group(2))
                        unit = canonical_unit(v.group(3)) if v.group(3) and not v.group(3)[0].isdigit() else None
                        if unit and a.unit and unit != a.unit:
                            conv = convert(n, unit, a.unit)
                            if conv is None:
                                continue  # "PSA 13.5 ng/mL" is no PSA doubling time in months
                            n = conv
                        if v.group(1) in ("<", "below", "under"):
                            n -= 1 if n.is_integer() else 0.1
                        elif v.group(1) in (">", "above", "over"):
                            n += 1 if n.is_integer() else 0.1
                        value: Any = int(n) if float(n).is_integer() else round(n, 3)
                        end = m.end() + v.end()
                    elif a.type == "ordinal" or (a.type == "category" and a.values and
                                                 not set(a.values) <= {"yes", "no", "positive", "negative"} and
                                                 not set(a.values) <= {"present", "absent"}):
                        v = re.match(r"\s*(?:of\s+|:\s*|is\s+|class\s+|stage\s+)?((?:iv|v?i{1,3}|ix|x)[a-d]?|"
                                     r"\d{1,2}[a-d]?|[a-e]\d{0,2})(?![\w])", after)
                        said = ordinal_value(v.group(1).upper()) if v else ""
                        same = [x for x in a.values if ordinal_value(x) == said]
                        if v and not same:  # a sub-value of a value drawn: "Child-Pugh A6" is class A, "IIB" is II
                            group = re.sub(r"(?<=[A-E])\d{1,2}$|(?<=[0-9IVX])[A-D]$", "", said)
                            same = [x for x in a.values if ordinal_value(x) == group] if group != said else []
                        if not v or not same:
                            words = [x for x in a.values if re.fullmatch(r"[a-z][a-z_]{2,}", str(x))]
                            near = text[max(0, m.start() - 24):m.start()] + " " + after[:24]
                            said_words = [x for x in words if re.search(rf"\b{re.escape(str(x).replace('_', ' '))}\b",
                                                                        near)]
                            if len(said_words) != 1:
                                continue  # "within Milan criteria", "Milan: beyond": one of the guideline's words
                            value, end = said_words[0], m.end()
                        else:
                            value, end = same[0], m.end() + v.end()
                    elif a.values and (set(a.values) <= {"positive", "negative"} or
                                       set(a.values) <= {"present", "absent"}):
                        v = re.match(r"(?:[\s-]*(?:v\d+[a-z]?|mutation|fusion|gene|status|test(?:ing)?|is|was|are|"
                                     r"were))*[\s:-]*(positive|negative|pos|neg|mutated|mutant|wild[\s-]?type|wt|"
                                     r"detected|not detected|present|absent|\+|-(?![\w]))", after)
                        no = re.search(r"(?:\bno\s+|\bwithout\s+|\bnegative for\s+)$", before)
                        if not v and not (no and "absent" in a.values):
                            continue
                        yes = v is not None and v.group(1) in ("positive", "pos", "+", "mutated", "mutant", "detected",
                                                         "present")
                        value = ("present" if yes else "absent") if "absent" in a.values or "present" in a.values \
                            else ("positive" if yes else "negative")
                        end = m.end() + (v.end() if v else 0)
                        lead = len(no.group(0)) if no and not v else 0
                    else:  # a qualifier: "bulky" / "non-bulky" / "not transplant eligible"
                        neg = re.search(r"(?:\bnon[\s-]?|\bnot\s+|\bno\s+|\bwithout\s+|\ba)$", before)
                        value = "no" if neg else "yes"
                        if value not in a.values:
                            continue
                        end, lead = m.end(), len(neg.group(0)) if neg else 0
                    start = m.start() - lead
                    add(start, a.name, value, text[start:end], "registry attribute")
                    take(start, end)
                    read.add(a.name)

    def _diseases(self, r: Reading, text: str, free: Any, take: Any) -> None:
        for code, names in self.conf.diseases.items():
            # an upper-case short name ("ALL") is matched as written, never as the word "all"
            if code in self.kb.states and any(re.search(rf"(?<![\w+]){re.escape(n)}(?![\w+])", r.question)
                                              if n.isupper() and len(n) <= 4 else re.search(_phrase_regex(n), text)
                                              for n in names):
                r.guidelines.append(code)
        organ_state = (r"(?:\s*/\s*[a-z]+)*\s+(?:problems?|failure|function|insufficiency|impairment|dysfunction|"
                       r"disease|issues|transplant|stones?|cysts?|reserve)")
        for code, words in self.conf.disease_words.items():
            # "no cardiac/pulmonary/hepatic/renal problems" is an organ's health, not the kidney cancer guideline
            if code in self.kb.states and code not in r.guidelines and any(
                    any(not re.match(organ_state, text[m.end():]) for m in re.finditer(_phrase_regex(w), text))
                    for w in words):
                r.guidelines.append(code)
        histo = {v: [rf"(?<![\w+]){p}(?![\w+])" for p in pats]
                 for v, pats in self.clinical["phrases"].get("histology", {}).items()} if not r.guidelines else {}
        for st in self.clinical.get("subtypes", []) if not r.guidelines else []:
            if "histology" in st["facts"]:  # "parosteal", "MAP x 10 weeks": a subtype or regimen names the tumour
                histo.setdefault(str(st["facts"]["histology"]), []).append(st["pattern"])
        for value, pats in histo.items():
            said = [m.group(0) for p in pats for m in [re.search(p, text)] if m]
            if said:
                owners = [code for code, attrs_ in self.kb.paths.items()
                          if any(value in dict(p.scope.cats).get("histology", ()) for p in attrs_)]
                for code in owners:
                    # a histology word that another loaded guideline's boxes also use ("papillary" tumours of the
                    # bladder and of the kidney) names neither disease
                    shared = any(re.search(rf"(?<![\w-]){re.escape(w.lower())}(?![\w-])", self.kb.box_text(c))
                                 for c in self.kb.states if c != code for w in said)
                    if code not in r.guidelines and not shared:
                        r.guidelines.append(code)
        known = {n.lower() for names in self.conf.diseases.values() for n in names}
        family = (r"\b(?:mother|father|mum|mom|dad|sister|brother|aunt|uncle|grand\w+|cousin|daughter|son|family|"
                  r"fhx|fh)\b")

        def kin(start: int) -> bool:  # "mother had breast cancer": the family's history, not the patient's
            return bool(re.search(family + r"(?:\s+\S+){0,4}\s*$", text[max(0, start - 40):start]))

        def past(h: re.Match[str]) -> bool:
            # with a loaded guideline's disease named, another one in the history ("Hx: melanoma in situ excised
            # 2015") or in brackets describing the tumour ("(… high-grade spindle-cell sarcoma)") is no other disease
            if not r.guidelines:
                return False
            before, after = text[max(0, h.start() - 60):h.start()], text[h.end():h.end() + 50]
            return bool(re.search(r"\b(?:hx|h/o|history of|pmh|past (?:medical )?history|previous(?:ly)?|prior|"
                                  r"remote|treated for|survivor)\b[^.;?]*$", before) or
                        re.match(r"[^.;?]{0,40}?\b(?:in situ|excised|resected|treated|in remission|cured|"
                                 r"(?:19|20)\d\d|years? ago)\b", after) or
                        _in_brackets(text, h.start(), after))

        for other in sorted(self.conf.other_diseases, key=len, reverse=True):
            hit = next((h for h in re.finditer(_phrase_regex(other), text) if not kin(h.start()) and not past(h)),
                       None)
            if hit:
                r.other_disease = other.lower()
                take(hit.start(), hit.end())
                return
        for short, name in self.clinical.get("other_disease_abbreviations", {}).items():
            if re.search(rf"(?<![\w-]){re.escape(short)}(?![\w-])", text):
                r.other_disease = str(name)
                return
        # "colon ca", "rectal adenoca": an organ no loaded guideline is about, with a cancer word
        organ = re.search(r"\b(colon|colorectal|rectal|rectum|breast|lung|prostate|prostatic|pancreatic|pancreas|"
                          r"ovarian|"
                          r"gastric|stomach|bladder|urothelial|cervical|cervix|esophageal|oesophageal|thyroid|"
                          r"endometrial|uterine|hepatocellular|liver|tongue|laryngeal|testicular|skin)\s+"
                          r"(?:ca|cancer|carcinoma|adenocarcinoma|adenoca|malignancy)\b", text)
        if organ and not kin(organ.start()) and \
                not any(organ.group(1) in n.lower() for names in self.conf.diseases.values() for n in names):
            r.other_disease = organ.group(0)
            return
        # an eponymous tumour ("Wilms tumor", "Brenner tumour") that no loaded guideline names
        own_words = {w.lower() for names in [*self.conf.diseases.values(), *self.conf.disease_words.values()]
                     for n in names for w in re.findall(r"\w+", n)}
        for m in re.finditer(r"(?<![.?!]\s)(?<!^)\b([A-Z][a-z]+)(?:'s)?\s+(?:tumou?r|sarcoma|carcinoma|lymphoma)\b",
                             r.question):
            if m.group(1).lower() not in own_words and m.group(1).lower() not in ("the", "a", "this", "primary"):
                r.other_disease = m.group(0).lower()
                return
        own_names = {n.lower() for names in [*self.conf.diseases.values(), *self.conf.disease_words.values()]
                     for n in names}
        # another kind of tumour of the same organ ("renal angiomyolipoma", "enchondroma of the femur", "myeloma")
        for m in _OTHER_TUMOUR.finditer(text):
            if not kin(m.start()) and not past(m) and m.group(0) not in own_names and \
                    not any(m.group(0) in n.lower() for names in self.conf.diseases.values() for n in names):
                r.other_disease = m.group(0)
                return
        for m in _OTHER_HEAD.finditer(text):
            words = re.findall(r"[a-z]+", text[max(0, m.start() - 40):m.start()])[-2:]
            if words and words[-1] in {"the", "this", "that", "his", "her", "its", "their", "your", "my", "a", "an",
                                       "of", "with", "has", "had"}:
                continue  # "the cancer has spread": the disease already named
            if kin(m.start()) or past(m) or (words and all(w in _DESCRIPTORS for w in words)):
                continue  # a family member's, or only described ("high grade sarcoma" of the bone tumour asked about)
            phrase = " ".join([*words, m.group(0)])
            if any(re.search(rf"(?<![\w+]){p}(?![\w+])", " ".join(words)) for p in self.histology):
                continue  # "collecting duct carcinoma": a histology a loaded guideline draws
            if re.match(r"\s*(?:surgeons?|oncologists?|teams?|services?|clinics?|cent(?:er|re)s?|units?|"
                        r"specialists?|mdt|boards?|programs?|programmes?|nurses?|wards?|conferences?)\b",
                        text[m.end():]):
                continue  # "sarcoma surgeon": a specialty, not a disease
            own = [w for names in self.conf.diseases.values() for w in names]
            if any(n.lower() in text[max(0, m.start() - 40):m.end() + 5] for n in own) or \
                    any(re.search(rf"{re.escape(p)}[\s-]*{re.escape(m.group(0))}", text[max(0, m.start() - 30):m.end()])
                        for p in ("renal cell", "kidney", "renal", "bone", "ewing", "ewing's", "clear cell",
                                  "lymphoblastic", "papillary", "chromophobe")):
                continue
            if m.group(0) in ("tumor", "tumour", "neoplasm") or phrase in known or m.group(0) in own_names:
                continue
            r.other_disease = phrase
            return

    def _relapse_time(self, text: str, add: Any, take: Any, free: Any, inferred: bool = False) -> None:
        pats = [rf"\b(?:relapsed?|relapsing|recurred|recurrence|came back)\s+(?:at\s+|after\s+|about\s+|~)?{_DURATION}"
                r"(?:\s*(?:after|from|post|since)\s*(?:the\s*)?(?:initial\s*|original\s*|first\s*)?"
                r"(?:diagnosis|dx|cr1?|remission|presentation))?",
                rf"{_DURATION}\s*(?:after|from|post|since)\s*(?:the\s*)?(?:initial\s*|original\s*|first\s*)?"
                r"(?:diagnosis|dx)",
                rf"\b(?:dx'?d|dx|diagnosed|first diagnosed)\s+(?:about\s+|~|some\s+)?{_DURATION}\s+ago"]
        for p in pats:
            m = re.search(p, text)
            if m and free(m.start(), m.end()) and (inferred or re.search(r"relaps|recur|came back", text)):
                months = _months(float(m.group(1)), m.group(2))
                add(m.start(), "time_to_relapse", round(months), m.group(0), "duration")
                add(m.start(), "relapse", "yes", m.group(0), "duration")
                take(m.start(), m.end())
                return
        dates = _dates(text)
        if len(dates) >= 2:
            dx = _date_near(text, dates, r"\b(?:dx|diagnos\w*|presented)\b")
            rel = _date_near(text, dates, r"\b(?:relaps\w*|recurr\w*|came back|blasts|marrow)\b")
            if dx and rel and rel > dx:
                months = (rel.year - dx.year) * 12 + rel.month - dx.month
                add(0, "time_to_relapse", months, f"{dx:%b %Y} → {rel:%b %Y}", "dates")

    def _percentages(self, r: Reading, text: str, add: Any, take: Any, free: Any) -> None:
        # MRD: a value (or a series) near "MRD"
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
                add(m.start(), "mrd", "negative", window, "MRD not detected")
                lead = re.search(r"\b(?:persistent|persisting|residual)\s+$", before)
                take(m.start() - (len(lead.group(0)) if lead else 0), m.start() + len(window))
                break
            cut = next((d.mrd_negative_below for c, d in self.kb.defs.items() if d.mrd_negative_below is not None
                        and (not r.guidelines or c in r.guidelines)), None)
            if len(vals) >= 2 and vals[-1] > vals[0] and up:
                add(m.start(), "mrd", "rising", window, "MRD values rising")
            elif cut is not None:
                v = vals[-1]
                shown = re.escape(str(v).rstrip("0").rstrip("."))
                below = re.search(rf"(?:<|below|less than|under|lower than)\s*{shown}", window + " " + before) or \
                    re.search(r"(?:<|below|less than|under|lower than)\s*" + _FRACTION.pattern, window)
                negative = v < cut or (below is not None and v <= cut)  # "below 0.01 %" is below the cut-off
                add(m.start(), "mrd", "negative" if negative else "positive", window,
                    f"MRD {'<' if below else ''}{v:g}% {'<' if negative else '≥'} {cut:g}% (the guideline's cut-off)")
            else:
                continue
            lead = re.search(r"\b(?:persistent|persisting|residual|rising)\s+$", before)  # "persistent MRD 0.5 %"
            # the words read end with the last value and how it was measured ("MRD 0.5% by flow"), not with the
            # window ("MRD 0.5% after induction, so shouldn't she get blinatumomab?" asks after it)
            ends = [x.end() for x in re.finditer(r"\d+(?:\.\d+)?\s*%|" + _FRACTION.pattern, window)]
            end = len(window)
            if ends and not up:
                tail = re.match(r"(?:\s*(?:by|on|per|via|with)\s+[\w-]+(?:\s+cytometry)?)?", window[ends[-1]:])
                end = ends[-1] + (tail.end() if tail else 0)
            take(m.start() - (len(lead.group(0)) if lead else 0), m.start() + end)
            break
        # blasts: < 5 % after induction is a morphologic CR; in a relapse they describe the relapse
        relapse_above = next((d.relapse_blasts_above for d in self.kb.defs.values()
                              if d.relapse_blasts_above is not None), None)
        for m in re.finditer(r"(<|less than|under|>)?\s*(\d+(?:\.\d+)?)\s*%\s*(?:marrow\s*)?(?:cd\d+\+?\s*)?"
                             r"(?:lympho|leukemic\s*)?blasts|"
                             r"(?:lympho)?blasts?\s*(?:of\s*)?(<|>)?\s*(\d+(?:\.\d+)?)\s*%", text):
            if not free(m.start(), m.end()):
                continue
            comp = m.group(1) or m.group(3) or ""
            v = float(m.group(2) or m.group(4))
            take(m.start(), m.end())
            if re.search(r"\b(?:now |is |comes |came |presents |presenting )?back with\s*$",
                         text[max(0, m.start() - 24):m.start()]) or \
                    re.match(r"\s*(?:are|have|has)?\s*(?:back|returned|come back|reappeared)\b", text[m.end():]):
                add(m.start(), "relapse", "yes", m.group(0), "blasts back after treatment: a relapse")
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
                add(m.start(), "relapse", "yes", m.group(0),
                    f"{v:g}% blasts after CR > {relapse_above:g}% (the guideline's definition of relapse)")
                continue
            cr = v < 5 or (comp in ("<", "less than", "under") and v <= 5)
            add(m.start(), "response", "CR" if cr else "less_than_CR", m.group(0),
                f"{m.group(0).strip()} blasts: {'<' if cr else '≥'} 5% ({'CR' if cr else 'not CR'})")
        # necrosis / viable tumour against the guideline's cut-off for a good response
        cut = next((d.necrosis_good_from for d in self.kb.defs.values() if d.necrosis_good_from is not None), None)
        for m in re.finditer(r"(\d+(?:\.\d+)?)\s*%\s*(?:tumou?r\s*)?(necrosis|necrotic|viable|residual viable)|"
                             r"\b(necrosis|necrotic|viable tumou?r|viable)\)?"
                             r"(?:\s+(?:of|only|was|is|at|just|about|~|=|:|rate|fraction|score|comprises|makes up|"
                             r"approx\.?|"
                             r"approximately|roughly|around|\(?ca\.?\)?))*"
                             r"\s*\)?\s*(\d+(?:\.\d+)?)\s*%", text):
            v = float(m.group(1) or m.group(4))
            kind = m.group(2) or m.group(3)
            necrosis = v if kind.startswith("necro") else 100 - v
            if cut is not None and free(m.start(), m.end()):
                good = necrosis >= cut
                add(m.start(), "histologic_response", "good" if good else "poor", m.group(0),
                    f"{necrosis:g}% necrosis {'≥' if good else '<'} {cut:g}% (the guideline's cut-off)")
                take(m.start(), m.end())

    def _undrawn_subtype(self, r: Reading, text: str) -> None:
        """A subtype the flowchart does not draw: a cell lineage (T-cell) where every way open to the patient names
        another (B-ALL), or a "<kind> cell tumour" no loaded guideline mentions (giant cell tumour of bone)."""
        codes = r.guidelines or list(self.kb.states)
        lineage = re.search(r"\b([tb])(?:[- ]cell\b|[- ]lineage\b|-(?=all\b|lbl\b))", text)
        if lineage:
            letters: list[set[str]] = []
            # a scope fact the question states (a relapse) leaves only the ways drawn for it
            scoped = [(str(a), str(v)) for a, v in self.clinical.get("scope_facts", {}).items()
                      if str(r.facts.get(str(a))) == str(v)]
            for c in codes:
                st = self.kb.states[c]
                ways = [tuple(p.boxes) for p in self.kb.paths.get(c, []) if p.scope.consistent(r.facts)
                        and all(v in dict(p.scope.cats).get(a, ()) for a, v in scoped)]
                for way in ways:
                    if any(len(o) > len(way) and o[:len(way)] == way for o in ways):
                        continue  # it goes on (a pointer to the relapse page): judged where it ends
                    words = " ".join(st.boxes[b].textPlain.lower() for b in way if b in st.boxes)
                    letters.append(set(re.findall(r"\b([tb])(?:[- ]cell\b|[- ]lineage\b|-all\b)", words)))
            if letters and all(ls and lineage.group(1) not in ls for ls in letters):
                r.other_disease = f"{lineage.group(1)}-cell {' '.join(self.conf.diseases.get(codes[0], [''])[:1])}"
                return
        for m in re.finditer(r"\b([a-z]+)[- ]cell (?:tumou?r|carcinoma|sarcoma|neoplasm|lesion)s?\b", text):
            if any(re.search(p, text[max(0, m.start() - 25):m.end()]) for p in self.histology):
                continue  # "small round blue cell tumour": a histology a loaded guideline draws
            if r.guidelines and _in_brackets(text, m.start(), text[m.end():]):
                continue  # "dedifferentiated chondrosarcoma (… high-grade spindle-cell sarcoma)": describing it
            every = self._every_text()
            if f"{m.group(1)} cell" not in every and f"{m.group(1)}-cell" not in every:
                r.other_disease = m.group(0)
                return

    def _every_text(self) -> str:
        """Every box of the loaded guidelines and every disease name, lower case (joined once per reader)."""
        if self._every is None:
            self._every = " ".join([*(b.text.lower() for st in self.kb.states.values() for b in st.boxes.values()),
                                    *(n.lower() for names in [*self.conf.diseases.values(),
                                                              *self.conf.disease_words.values()] for n in names)])
        return self._every

    def _past_history(self, text: str, cands: list[tuple[int, FactSource]], add: Any, take: Any) -> None:
        """A past history that lists only conditions no guideline counts as substantial ("PMH hypothyroidism on
        levothyroxine", "PMH only GERD") says the patient has no substantial comorbidity."""
        if any(s.attr == "comorbidities" for _, s in cands):
            return
        m = re.search(r"\b(?:pmh|past (?:medical )?history|medical history)\b[:\s]*(?:(?:is|of|only|includes?|"
                      r"notable for|significant for|remarkable for)\s+)*([^.;?]+)", text)
        if not m or not re.search(r"[a-z]{3,}", m.group(1)):
            return
        heavy = self.clinical["phrases"].get("comorbidities", {}).get("substantial", [])
        if any(re.search(p, m.group(1)) for p in heavy) or re.search(r"comorbid|multiple|several|many", m.group(1)):
            return
        add(m.start(), "comorbidities", "none", m.group(0), "past history names no substantial comorbidity")
        take(m.start(), m.end())

    def _subtypes(self, text: str, add: Any) -> None:
        named = any(re.search(rf"(?<![\w+]){p}(?![\w+])", text) for p in self.histology)
        for st in self.clinical.get("subtypes", []):
            m = re.search(st["pattern"], text)
            if m and not (st.get("only_unnamed") and named):  # a regimen says the tumour only when nothing else does
                for a, v in st["facts"].items():
                    add(m.start(), a, str(v), m.group(0), "subtype")
        for code, d in self.kb.defs.items():
            for w in d.low_grade_subtypes:
                m = re.search(rf"\b{re.escape(w)}\b", text)
                if m:
                    add(m.start(), "grade", "low", m.group(0), f"{code}: low-grade subtype (footnote)")

    def _skeleton(self, r: Reading, text: str, add: Any, free: Any, take: Any) -> None:
        if not any("location" in self.kb.attrs.get(c, set()) for c in r.guidelines):
            return
        others = r"\b(?:friend|neighbou?r|colleague|relative|cousin|brother|sister|mother|father|another patient)\b"
        for part, bones in self.clinical.get("skeleton", {}).items():
            found = False
            for bone in bones:
                for m in re.finditer(rf"\b{bone}\b", text):
                    if re.search(others + r"[^.;?]*$", text[max(0, m.start() - 60):m.start()]):
                        continue  # "like his friend with a tumour in the arm": someone else's
                    if free(m.start(), m.end()):
                        if not found:
                            add(m.start(), "location", part, m.group(0), f"{m.group(0)} is {part}")
                            found = True
                        take(m.start(), m.end())  # every bone named is read ("sacrum … spine surgeons")

    def _grade(self, text: str, add: Any, free: Any, take: Any) -> None:
        m = re.search(r"\b(?:grade|g)\s*([1-4]|iv|iii|ii|i)\b", text)
        if m and free(m.start(), m.end()):
            n = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}.get(m.group(1), m.group(1))
            add(m.start(), "_grade_number", int(n), m.group(0), "number")
            if any("grade" in a for a in self.kb.attrs.values()) and not re.search(r"\bp?t[1-4][a-c]?\b", text):
                value = self.clinical["grade_numbers"].get(n)
                if value:
                    add(m.start(), "grade", value, m.group(0), f"grade {n} is {value}-grade")
            take(m.start(), m.end())

    def _resolve(self, r: Reading, cands: list[tuple[int, FactSource]]) -> None:
        """One value per attribute: a later statement wins (history first, then the present), except that
        a named comorbidity outweighs a general "healthy"."""
        by: dict[str, list[tuple[int, FactSource]]] = {}
        for pos, s in cands:
            by.setdefault(s.attr, []).append((pos, s))
        for attr, items in by.items():
            items.sort(key=lambda ps: ps[0])
            chosen = items[-1][1]
            if attr == "comorbidities" and any(s.value == "substantial" and s.rule == "clinical phrase"
                                               for _, s in items):
                chosen = next(s for _, s in items if s.value == "substantial" and s.rule == "clinical phrase")
            if attr == "relapse" and any(s.value == "yes" for _, s in items):
                chosen = next(s for _, s in items if s.value == "yes")
            if attr == "metastatic" and any(s.value == "yes" for _, s in items) and all(
                    re.search(r"\b(?:clear|clean|negative|neg|unremarkable|normal)\b", s.text)
                    for _, s in items if s.value == "no"):
                # "15 bone mets …, liver and lungs clear": a site found clear does not undo metastases elsewhere
                chosen = next(s for _, s in items if s.value == "yes")
            # a value found again on the final specimen ("a high-grade component on final pathology") is a
            # later finding: the earlier value placed the patient, the later one decides the step after
            found = [(p, s) for p, s in items if s.value != items[0][1].value and _LATER_FINDING.search(
                r.text[max(0, p - 60):p + 60])]
            if found and len(items) > 1 and items[0][1].value != found[-1][1].value:
                chosen = next(s for _, s in items if s.value != found[-1][1].value)
                r.later[attr] = found[-1][1].value
            r.facts[attr] = chosen.value
            r.sources.extend(s for _, s in items)
        # A relapse after a remission: the remission is history, the relapse is the state. The relapse is
        # placed by what says it happened ("relapsed", "now 35% blasts"), not by a time it is counted from
        # ("dx 14 mo ago"); a first remission ("CR1") is before any relapse, wherever it is written.
        if r.facts.get("relapse") == "yes" and r.facts.get("response") == "CR":
            later = [(p, s) for p, s in cands if s.attr == "response" and s.value == "CR"]
            rel = [p for p, s in cands if s.attr == "relapse" and s.rule != "duration"] or \
                [p for p, s in cands if s.attr == "relapse"]
            first = all(re.fullmatch(r"cr ?1|first (?:cr|complete remission|remission)", s.text.lower())
                        for _, s in later)
            if later and rel and (first or max(p for p, _ in later) < max(rel)):
                del r.facts["response"]
                # the depth of that remission ("MRD-neg CR1") is history too, when written before the relapse
                mrd = [p for p, s in cands if s.attr == "mrd"]
                if "mrd" in r.facts and mrd and max(mrd) < max(rel):
                    del r.facts["mrd"]

    def _definitions(self, r: Reading, text: str, final: bool = True) -> None:
        """Facts that the guideline's own definitions make of sizes, T/N/M, grades and counted risk factors."""
        codes = r.guidelines or list(self.kb.states)
        factors: dict[tuple[Any, ...], bool | None] = {}  # what the text says of each kind of risk factor
        for code in codes:
            d = self.kb.defs.get(code)
            attrs = self.kb.attrs.get(code, set())
            if d is None:
                continue
            tnm = _tnm(text, d, r.facts.get("metastatic"))
            if tnm.get("T") and "t_category" in attrs and "t_category" not in r.facts:
                r.facts["t_category"] = tnm["T"]
                r.sources.append(FactSource("t_category", tnm["T"], tnm.get("T_text", ""), f"{code}: T category"))
            if d.stages and "stage" in attrs and "stage" not in r.facts:
                stage = _stage(tnm, d)
                if stage:
                    r.facts["stage"] = stage
                    r.sources.append(FactSource("stage", stage, tnm.get("text", ""), f"{code}: stage group"))
            advanced = r.facts.get("metastatic") == "yes" or r.facts.get("relapse") == "yes"
            if d.risk_count and advanced and "risk_group" in attrs and "risk_group" not in r.facts:
                group, why = self._count_risk(r, text, d, factors)
                if group:
                    r.facts["risk_group"] = group
                    r.sources.append(FactSource("risk_group", group, why, f"{code}: risk factors counted"))
            operated = any(re.search(r"nephrectomy|resection|excision", o.text) for o in r.done)
            if operated and tnm.get("T") and not tnm.get("pT"):  # a size measured on the specimen is a pT
                tnm["pT"] = tnm["T"]
            if d.high_risk and "risk_group" in attrs and "risk_group" not in r.facts and tnm.get("pT") and not advanced:
                grade = r.facts.get("_grade_number")
                risk = _relapse_risk(tnm, grade if isinstance(grade, int) else None, d)
                if risk:
                    r.facts["risk_group"] = risk
                    r.sources.append(FactSource("risk_group", risk, tnm.get("text", ""), f"{code}: risk of relapse"))
            if d.risk_count and "risk_group" in attrs and "risk_group" not in r.facts:
                group, why = self._count_risk(r, text, d, factors)
                if group:
                    r.facts["risk_group"] = group
                    r.sources.append(FactSource("risk_group", group, why, f"{code}: risk factors counted"))
            if "metastatic" in attrs and "metastatic" not in r.facts and tnm.get("M"):
                r.facts["metastatic"] = "yes" if tnm["M"] == "M1" else "no"
                r.sources.append(FactSource("metastatic", r.facts["metastatic"], tnm.get("text", ""),
                                            f"{code}: M category"))
        if final:
            for k in [k for k in r.facts if k.startswith("_")]:
                del r.facts[k]

    def _count_risk(self, r: Reading, text: str, d: Definitions,
                    memo: dict[tuple[Any, ...], bool | None]) -> tuple[str | None, str]:
        """The risk group of ``d``'s counted factors. ``memo`` keeps what the text says of a kind of factor (a lab,
        the performance status under a cut-off, the time from diagnosis) for every guideline read in one pass:
        that does not depend on whose factor it is."""
        rc = d.risk_count
        assert rc is not None
        present: list[str] = []
        unknown = 0
        labs = self.clinical.get("labs", {})
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
                memo[kind] = self._factor_state(r, text, kind, rc.kps_below)
            state = memo[kind] if kind is not None else None
            if state is None:
                unknown += 1
            elif state:
                present.append(f)
        group = rc.group(len(present), unknown)
        why = f"{len(present)} risk factor(s) present ({', '.join(present) or 'none'}), {unknown} unknown"
        return group, why

    def _factor_state(self, r: Reading, text: str, kind: tuple[Any, ...], kps_below: float | None) -> bool | None:
        """Whether the question says a kind of counted risk factor is present (True), absent (False) or nothing
        (None): the performance status under ``kps_below``, a diagnosis within a year, or a lab out of range."""
        if kind[0] == "kps":
            state: bool | None = None
            kps = next((s.value for s in r.sources if s.attr == "_kps"), None)
            if kps is not None and kps_below is not None:
                state = kps < kps_below
            ecog = r.facts.get("performance_status")
            if kps is None and kps_below is not None and isinstance(ecog, int | float):
                # ECOG 0 is KPS 90-100 and ECOG 2 or worse KPS 60 or less; ECOG 1 (KPS 70-80) stays unknown
                if ecog == 0 and kps_below <= 90:
                    state = False
                elif ecog >= 2 and kps_below > 60:
                    state = True
            return state
        if kind[0] == "year":
            return _within_year(text, self.clinical.get("de_novo", []))
        key = str(kind[1])
        spec = self.clinical.get("labs", {})[key]
        if any(re.search(rf"\b{w}\b", text) for w in spec.get("words", [])):
            return True
        for name in spec["names"]:
            m = re.search(rf"\b{re.escape(name)}\s*(?:of\s*|is\s*|was\s*|=\s*|:\s*)?"
                          r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(k\b)?(?!\d|\.\d)", text)
            if m:
                v = _lab_value(float(m.group(1).replace(",", "")), key, bool(m.group(2)))
                return bool(v < spec["below"] if "below" in spec else v > spec["above"])
        names = [re.escape(n) for n in spec["names"]] + list(spec.get("panels", []))
        normal = any(re.search(p, text) for p in self.clinical.get("normal_labs", []))
        if normal or any(
                re.search(rf"\b{n}\b[^.;]{{0,25}}\b(?:normal|wnl|unremarkable|within normal)", text)
                # a list of labs said normal together ("Hb, Ca, neutrophils and plts all within normal")
                or re.search(rf"\b{n}\b(?:\s*(?:,|and|&|/)\s*[a-z][a-z. ]{{0,18}}?){{1,6}}\s+"
                             r"(?:(?:are|were|all|both)\s+)*(?:normal|wnl|unremarkable|within normal)", text)
                or re.search(rf"\bnormal\b[^.;]{{0,30}}\b{n}\b", text) for n in names):
            return False
        return None

    def _box_phrases(self, text: str, codes: list[str]) -> list[tuple[str, Option]]:
        """Whole box phrases (two words or more) that ``text`` names, longest first."""
        return sorted(((p, o) for p, o in self.kb.phrases if p in text and (not codes or o.code in codes)
                       and len(p.split()) >= 2 and re.search(r"(?<![\w])" + re.escape(p) + r"(?![\w])", text)),
                      key=lambda po: -len(po[0]))

    def _intent(self, r: Reading, ask: str, masked: str) -> None:
        codes = r.guidelines or list(self.kb.states)
        masked_sentences = [x for x in SENTENCE_END.split(masked) if x.strip()]
        sentence_before = masked_sentences[-2] if len(masked_sentences) >= 2 else ""  # before the one that asks
        sentences = [x for x in SENTENCE_END.split(r.text) if x.strip()]
        # "She asks about active surveillance. Does the guideline offer AS to her?": the asking sentence names no
        # treatment, the one before says which one is wanted
        wanted = bool(sentence_before) and re.search(_WANTED, sentence_before) is not None \
            and not _VERDICT.search(ask) and not re.search(r"\b(?:that|this|it)\b", ask) \
            and not self.kb.link(self.kb.aliased(ask), codes) and bool(self.kb.link(self.kb.aliased(sentence_before),
                                                                                   codes))
        if wanted:
            ask = f"{sentence_before}; {ask}"
        asked = " ".join(sentences[-2:]) if wanted or re.search(r"\b(?:that|this|it)\b", ask) \
            else (sentences or [""])[-1]
        exact = self._box_phrases(asked, codes)
        dose = self.clinical.get("dose_questions", [])
        asks = [p for p in SENTENCE_END.split(r.text) if "?" in p] or [ask]
        sents = [x for x in SENTENCE_END.split(r.text) if x.strip()]
        if len(sents) >= 2 and "?" in sents[-1] and len(sents[-1].split()) <= 8:
            asks = [*asks, sents[-2]]  # "audiogram shows grade 3 hearing loss. Drop the cisplatin?"
        if any(re.search(p, a) for p in self.clinical.get("outcome_questions", []) for a in asks):
            r.intent = "outcome"  # survival, prognosis, rates: no box of a decision flowchart says them
            return
        if any(re.search(p, a) for p in self.clinical.get("outside_questions", []) for a in asks):
            r.intent = "outside"  # interactions, monitoring, supportive care: no decision box says them
            return
        if any(re.search(r"\b(?:second|2nd|third|3rd|subsequent|later)[- ]line\b|"
                         r"\b(?:progress(?:ing|ed|ion)|pd)\s+(?:on|after|despite|through)\b", a) for a in asks) and \
                not any(re.search(r"second[- ]line|subsequent|progressi|refractory|salvage", b.text.lower())
                        for c in codes if c in self.kb.states for b in self.kb.states[c].boxes.values()):
            r.intent = "later_line"  # a line of therapy after progression that the flowchart does not draw
            return
        if (any(re.search(p, a) for p in dose for a in asks) or
                any(re.search(p, ask) for p in self.clinical.get("dose_values", []))) and \
                not re.search(r"\b(?:next step|what next|options?)\b", ask):
            r.intent = "dose"
            return
        for frag in r.done_text:  # the treatments already given are history, not what is asked about
            if re.search(r"\b(?:same|continue|continuing|resume|repeat|more|another|further)\s+(?:\w+\s+)?"
                         + re.escape(frag), ask):
                continue  # "continue the same MAP?" asks about going on with it
            ask = ask.replace(frag, " ")
        exact = [(p, o) for p, o in exact if not any(p in frag for frag in r.done_text)]
        for m in re.finditer(r"\b(?:rather than|instead of|not the|other than|not with|not combined with|"
                             r"not in combination with)\s+([^,;?.()]+)", ask):
            r.excluded.append(m.group(1))
        for m in re.finditer(r"\b(?:upfront|up-front|up front|first|immediate|straight to)\s+[\w/+-]+"
                             r"(?:\s+[\w/+-]+)?\s+(?:before|prior to|ahead of)\s+(?:any\s+|the\s+)?([^,;?.()]+)", ask):
            r.excluded.append(m.group(1))  # "is upfront surgery before chemo what the pathway does?": surgery
        r.ask = ask
        r.workup = bool(re.search(r"\b(?:work-?up|diagnostic (?:tests?|evaluation|studies|steps?|work)|"
                                  r"staging (?:studies|scans|tests?|imaging)|initial (?:evaluation|tests?|studies)|"
                                  r"what (?:tests|studies|imaging|labs|investigations)|investigations?)\b", ask)) \
            and not r.done
        if r.intent == "next_step" and not r.done and len(r.guidelines) == 1 and not r.workup:
            # a patient with only a suspicion ("night pain, sunburst periosteal reaction: next step?"): nothing the
            # guideline's decisions use is known yet, so its work-up comes first
            known = set(r.facts) - {str(a) for a in self.clinical.get("baseline_facts", [])} - {"location", "grade"}
            treating = re.search(r"induction|consolidation|treat|therapy|regimen|chemo|surg|resect|transplant|"
                                 r"option|manage|systemic", ask)
            diagnosed = re.search(r"\b(?:dx|diagnos\w*|confirmed|bx|biops\w*|histolog\w*|patholog\w*|fish|"
                                  r"karyotype|pcr|flow|new(?:ly)?)\b", r.text)
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
        # what the question sets aside ("instead of going on to wide excision") names no treatment it asks about
        kept = ask
        for x in r.excluded:
            kept = kept.replace(x, " ")
        exact = [(p, o) for p, o in exact if not any(p in x for x in r.excluded)]
        aliased = self.kb.aliased(kept)
        links = self.kb.link(aliased, codes)
        said_words = content_words(self.kb.expand(aliased))
        if links and len(said_words) >= 2 and not said_words <= links[0][1].words:
            # "whole-lung RT": an option with every word said ("whole-lung radiation therapy if lung metastases")
            # is meant, not the shorter one that lacks the rarest ("radiation therapy")
            every = [o for o in self.kb.options if (not codes or o.code in codes) and said_words <= o.words]
            if every:
                links = [(links[0][0] + 0.01, o) for o in every] + links
        if exact and any(p in ask for p, _ in exact):
            links = [(1.0, o) for p, o in exact if p in ask] + links
        flat = " ".join(ask.split())  # the facts read are blanked out: the frame words stay in order
        who = re.search(r"(?:^|[,:;.\-–]\s*)(?:for\s+|in\s+|under\s+)?(?:exactly\s+|precisely\s+|specifically\s+)?"
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
                        r"indications?)\b",
                        flat) or \
            re.search(r"\b(?:is|are|be)\s+(?:it\s+|that\s+|this\s+|they\s+)?(?:meant\s+|intended\s+|designed\s+)?"
                      r"for\s+whom\b|\b(?:meant|intended|designed) for whom\b", flat) or \
            re.search(r"\b(?:pts|patients|people|who|ones?)\b[^?]{0,40}\b(?:are|is|would be)\s+(?:the\s+)?"
                      r"(?:candidates?|eligible|suitable|appropriate)\s+(?:for|to)\b|"
                      r"\b(?:qualif(?:y|ies)|eligible) for\b"
                      r"(?![^?]*\b(?:this|the|our|my)\s+(?:pt|patient|man|woman)\b)|"
                      r"\b(?:is|are) (?:it|they|this|that|these|[\w/+-]+(?: [\w/+-]+){0,3}) (?:listed|reserved|"
                      r"indicated|recommended|restricted|used|offered)\s+(?:for|in)\s*\??\s*$|"
                      r"\b(?:reserved|restricted) (?:for|to)\b|"
                      r"^\W*(?:what are (?:the )?)?(?:criteria|indications?|eligibility|requirements?|prerequisites?) "
                      r"(?:for|to (?:get|receive|start|give))\b|"
                      r"[-–:,]\s*(?:eligibility|criteria|indications?)(?: criteria)?"
                      r"(?: (?:per|according to|in) (?:the )?(?:guidelines?|pathway|algorithm|chart|flowchart))?\s*\?|"
                      r"\b(?:for|in) which (?:[\w/+-]+ ){0,3}(?:pts|patients|people|groups?|subgroups?|populations?|"
                      r"situations?|settings?|cases)\b|"
                      r"\bwhat (?:makes|would make|puts|sends|moves|takes) (?:a |the )?(?:pt|patient|someone|them|"
                      r"people|"
                      r"pts|patients)\b|"
                      r"^\s*which\s+(?:[\w/+-]+\s+){0,2}(?:[a-z]{4,}s\s+)?(?:go|get|are sent|receive|need|require|"
                      r"should get)\b",
                      flat)
        if not links:  # "inotuzumab - who is it for?": one rare word of a longer option names it
            links = self.kb.link_loose(self.kb.aliased(kept), codes)
        if who and who.end() < len(flat):
            # "what finding would make you consider post-op chemo?": the treatment asked about follows the asking
            # words; what comes before them is the patient's history ("treated with wide excision")
            target = flat[who.end():]
            # "… i.e. no peds-inspired option and no dose modification?": options the group does not get
            for m in re.finditer(r"\b(?:no|without)\s+((?:(?!\band\b|\bor\b)[^,;?.()])+)", target):
                r.excluded.append(re.sub(r"^(?:(?:mention|option|possibility|need|question|talk) (?:of|to|for) )+",
                                         "", m.group(1).strip()))
            for x in r.excluded:
                target = target.replace(x, " ")
            # "… suggest considering postoperative chemo after an upfront wide excision?": the clause after
            # "after" is the patient's history, not the treatment asked about
            bare_target = re.sub(r"\s(?:after|following|post)\s[^?]*", " ", target)
            aimed = self.kb.link(self.kb.aliased(bare_target), codes) if bare_target != target else []
            if aimed:
                target = bare_target
            else:
                aimed = self.kb.link(self.kb.aliased(target), codes)
            if aimed:
                links, r.ask = aimed, target
                exact = [(p, o) for p, o in exact if p in target]
        if who and not links:
            # "The stage I page lists 'radical nephrectomy in selected patients' … Which patients is that for?": the
            # sentence before names the treatment (what it quotes, if it quotes)
            before = sentence_before
            quoted = re.findall(r"['‘\"“]([^'’\"”]{4,})['’\"”]", before)
            prev = self.kb.link(self.kb.aliased(" ".join(quoted)), codes) if quoted else []
            prev = prev or self.kb.link(self.kb.aliased(before), codes)
            if prev:
                links, r.ask = prev, (" ".join(quoted) or before) + " " + ask
                exact = self._box_phrases(r.ask, codes)
        yesno = re.search(r"(?:^|[,:;\-–]\s+|\b(?:and|so|but)\s+)(?:is|are|should|would|can|could|does|do|will|may|"
                          r"(?:is|are|should|would|could|does|do)n't|can't|won't|cannot)\s+|"
                          r"\b(?:ok|okay|reasonable|appropriate|right) to\b|"
                          r"\byes or no\b", ask) or \
            (re.search(r"\b(?:can|could|should|shall|may|must|do|does)\s+(?:we|i|you|she|he|they|(?:the |our |this )?"
                       r"(?:patient|pt))\b", ask) and  # "Given his age can we just observe?"
             not re.search(r"\b(?:what|which|how|who|whom|when|where|why)\b", ask)) or \
            re.match(r"\s*(?:continue|start|begin|proceed (?:to|with)|give|add|use|offer|go (?:ahead )?with|resume|"
                     r"re-?treat|re-?induce|repeat|keep (?:going|on)|stick with|switch to)\b[^?]*\?", flat)
        verdict = None if re.search(r"(?:^|[,:;.?!\-–]\s*)(?:what|which|how|who|whom|when|where)\b", ask.strip()) else \
            _VERDICT.search(flat)  # "… robotic partial nephrectomy — guideline-concordant?", "Appropriate?"
        yesno = yesno or verdict
        if yesno and not who and (re.search(r"\b(?:that|this|it)\b", ask) or
                                  (verdict and not content_words(flat[:verdict.start()]))):
            # "Urology plans a partial nephrectomy. Is that what the guideline recommends?"
            before = sentence_before
            # what was not given yet ("before any chemo") is no part of the treatment asked about
            before = re.sub(r"\b(?:before|prior to|without|ahead of)\s+any\s+[a-z][\w/+-]*", " ", before)
            # "would rather use TKI + steroids instead of TKI + hyper-CVAD. Is that …?": the one set aside is not it
            for m in re.finditer(r"\b(?:rather than|instead of|not the|other than)\s+([^,;?.()]+)", before):
                r.excluded.append(m.group(1))
                before = before.replace(m.group(0), " ")
            # "ortho want to resect upfront and give chemo afterwards": the step asked about is the first one
            before = re.sub(r"(?:\band\b|\bthen\b|,)\s+(?:\w+\s+){0,3}?\w+\s+(?:afterwards|after that|thereafter|"
                            r"later|post-?op(?:eratively)?)\b", " ", before)
            both = self.kb.link(self.kb.aliased(before + " " + ask), codes) or \
                self.kb.link_loose(self.kb.aliased(before + " " + ask), codes)
            # "Colleague proposing brexu-cel … Is that the right CAR-T?": the sentence before names it exactly
            links = both if both and (not links or both[0][0] > links[0][0]) else links
        bare = len(content_words(ask)) <= 5 and not re.search(r"\b(?:what|which|how|when|who|whom|where|why)\b", ask) \
            and bool(links) and links[0][0] >= 0.75 and \
            not (links[0][1].words <= _CATEGORY_WORDS or  # "1L systemic?": which one?
                 re.search(r"\b(?:[1-4]l|(?:first|second|third|front)[- ]?line)\b", ask))
        said = flat
        if re.search(r"\b(?:that|this)\b", ask):
            # "Family asks whether chemo can stop now … Is that recommended?": the sentence before says what
            said = " ".join(sentence_before.split()) + " " + flat
        withhold = any(re.search(p, said) for p in self.clinical.get("withhold_phrases", []))
        if who and "age" not in r.facts and links:
            r.intent = "constraints"
        elif yesno and withhold and not who:
            r.intent, r.withhold = "next_step", True
        elif (yesno or bare) and not re.search(r"\bor (?:just|simply|rather)\b", ask) and \
                not (re.search(r"\bor (?:what|anything|something) ?(?:else)?\s*\?|\bwhat else\b|"
                               r"\b(?:need|get|have) anything\b|\banything (?:else|more|further)\b", ask) and
                     (not links or not self.kb.link(self.kb.aliased(ask), codes))):
            r.intent = "advisable"
        else:
            r.intent = "next_step"
        # a longer option named in full in other words ("neoadjuvant chemo before wide excision") is meant, not the
        # box phrase that is part of it ("wide excision")
        longer = bool(exact and links and links[0][0] >= 0.999 and links[0][1].words > exact[0][1].words)
        if r.intent in ("constraints", "advisable") and exact and not longer:
            # the question names a box's whole phrase: that phrase, as the dataset's queries use it
            r.treatments = [o for p, o in exact if len(p) == len(exact[0][0])]
            r.treatment = r.treatments[0]
        elif r.intent in ("constraints", "advisable") and links:
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
                way = self.on_way(r, codes)
                r.treatments.sort(key=lambda o: o.uid not in way)  # of boxes named equally, the one on the way
                # only a box that says all the best one says, and more ("… before wide excision"): a drug
                # named outright (brexu-cel) is never traded for another of its class that the way has
                near = [o for s, o in links if s >= 0.75 * best and o.uid in way
                        and all(t.words <= o.words for t in r.treatments)]
                if near and not any(o.uid in way for o in r.treatments):
                    r.treatments = near[:1]
            r.treatment = r.treatments[0]

    def on_way(self, r: Reading, codes: list[str]) -> set[str]:
        """Boxes on the ways open to a patient with the facts read (their decisions' next steps included)."""
        out: set[str] = set()
        for c in codes:
            st = self.kb.states.get(c)
            for p in self.kb.paths.get(c, []):
                if st is not None and p.scope.consistent(r.facts):
                    out.update(p.boxes)
                    out.update(e.tail for e in st.edges if e.head == p.decision and e.type == "ARROW")
        return out

    def _done(self, r: Reading, text: str, ask: str, resolved: dict[str, Any] | None = None) -> None:
        codes = r.guidelines or list(self.kb.states)
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
        history = re.sub(r"(?<![\w/])((?:[a-z][\w/+-]*\s+){0,3}[a-z][\w/+-]*)\s+(\d+\s*(?:days?|d|wks?|weeks?|mos?|"
                         r"months?|yrs?|years?)\s+ago)\b", r"had \1 \2", history)  # "wide excision 3 months ago"
        history = re.sub(r"\b([a-z][\w/+-]*(?:\s+[a-z][\w/+-]*){0,3})\s+(?:completed|finished|done)"
                         r"(?=\s*(?:\d|ago\b|last\b|on\b|in\b|at\b|with\b|w/|[.;,?]|$))", r"completed \1", history)
        cues = "|".join(re.escape(c) for c in sorted(self.clinical.get("done_cues", []), key=len, reverse=True))
        seen: set[str] = set()
        # a fact stated twice with different values ("end-of-induction MRD 0.5 % … now MRD undetectable") may have
        # had the earlier value on the way travelled
        changed = {s.attr for s in r.sources if s.attr in r.facts and s.value != r.facts[s.attr]}
        way_facts = {a: v for a, v in r.facts.items() if a not in changed}
        # only treatments on a way this patient may have travelled (the facts do not contradict it); the stage
        # the guideline's definitions give is today's ("s/p nephrectomy 2021, now liver mets" was not stage IV
        # then): a history that fits no way of it is placed on the ways of the facts as stated
        loose_facts = {a: v for a, v in way_facts.items() if resolved is None or a in resolved}
        # each guideline's ways are its own (box uids carry the code): they are placed only for the guidelines a
        # history's treatment is found in, not for every loaded one when the question names none
        placed: dict[str, tuple[dict[str, int], dict[str, int]]] = {}
        allowed = set(codes)

        def ways_for(found: set[str]) -> tuple[dict[str, int], dict[str, int]]:
            position: dict[str, int] = {}
            loose: dict[str, int] = {}
            for c in sorted(found & allowed):
                if c not in placed:
                    placed[c] = (self._positions([c], way_facts), self._positions([c], loose_facts))
                position.update(placed[c][0])
                loose.update(placed[c][1])
            return position, loose

        read_words = {w for s in r.sources for w in re.findall(r"[a-z]{3,}", s.text.lower())}
        self._place_history(r, history, codes, cues, seen, ways_for, read_words)
        self._postop(r, text, codes, seen)

    def _positions(self, codes: list[str], way_facts: dict[str, Any]) -> dict[str, int]:
        """How early each box comes on the ways a patient with these facts may have travelled."""
        position: dict[str, int] = {}
        # a way that starts with a scope fact ("relapse") comes after every way of the first treatment, however
        # few boxes its own page draws before it
        after = {(str(a), str(v)) for a, v in self.clinical.get("scope_facts", {}).items()}
        first_line: set[str] = set()
        for later in (False, True):  # ways of the first treatment first; a relapse's own boxes come after them all
            for c in codes:
                for p, is_later, tails, depth in self._ways(c, after):
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

    def _ways(self, code: str, after: set[tuple[str, str]]
              ) -> list[tuple[DecisionPath, bool, list[str], dict[str, int]]]:
        """Each way of a guideline: whether it starts with a scope fact (``after``), the boxes its decision leads
        to and how many steps on each is. Built once per guideline (the boxes and edges do not change)."""
        if code not in self._ways_of:
            st = self.kb.states.get(code)
            ways: list[tuple[DecisionPath, bool, list[str], dict[str, int]]] = []
            for p in self.kb.paths.get(code, []):
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
            self._ways_of[code] = ways
        return self._ways_of[code]

    def _place_history(self, r: Reading, history: str, codes: list[str], cues: str, seen: set[str],
                       ways_for: Callable[[set[str]], tuple[dict[str, int], dict[str, int]]],
                       read_words: set[str]) -> None:
        """The treatments a history names, placed on the patient's ways (``r.done``, ``r.done_text``).

        ``ways_for(codes)`` gives how early each box of those guidelines comes on the ways the patient may have
        travelled: by the facts as stated, then by the facts the guideline's definitions resolved."""
        for part in re.split(r"[.;]\s|,\s(?=[a-z]+ )", history):
            for m in re.finditer(rf"(?:^|\b|\s)(?:{cues})\b\s*(.+)$", part):
                if _PROPOSED.search(part[:m.start() + 1]):
                    continue  # "the fellow suggests blina then allo": proposed, not given
                whole = m.group(1)[:80]
                if _PROPOSED.search(whole[:30]) or re.search(r"\b(?:avoid\w*|declin\w*|refus\w*|(?:not|n't) want)\b",
                                                            whole[:40]):
                    continue  # "after a long discussion she wants to avoid intensive chemo": not given
                parts = re.split(r"\s(?:and|then|followed by)\s|,\s", whole)
                pieces = [whole, *parts, *(x for p in parts for x in re.split(r"\s(?:\+|plus)\s", p))]
                linked = False
                covered: set[str] = set()  # words of boxes the whole history named in full
                for frag in dict.fromkeys(p.strip() for p in pieces if p.strip()):
                    said = content_words(self.kb.expand(self.kb.aliased(frag))) - _PHASE_WORDS - _DIAGNOSTIC_WORDS
                    if covered and said & covered and not (said - covered) & self.kb.idf.keys():
                        continue  # "blinatumomab" of "blinatumomab and then allo": already placed as one box
                    diagnostic = bool(re.search(r"biops|\bbx\b|work-?up|imaging|scan|staging|suspic", frag))
                    found = [x for x in self.kb.link_options(self.kb.aliased(frag), codes)
                             if x[0] > 0.5 and x[2].words & said and
                             (diagnostic or not re.search(r"suspicious|suspected|imaging|work-?up|biops|diagnos",
                                                          x[2].box.lower()))]
                    opts = []
                    ways: dict[str, int] = {}
                    for ways in ways_for({x[2].code for x in found}) if found else ():
                        opts = [x for x in found if x[2].uid in ways]  # on a way the patient may have travelled
                        if opts:
                            break
                    # a phase of care it names ("finished consolidation chemo") places it in that column of the
                    # flowchart, whatever earlier box has the same words
                    fw = {_stem(w) for w in re.findall(r"[a-z]+", frag)} - _GENERIC_COLUMN
                    phased = [x for x in opts if fw & self.kb.column_words(x[2])]
                    opts = phased or opts
                    # a box whose phase of care the history names ("adjuvant chemo": adjuvant chemotherapy) beats
                    # one that shares only its other words ("multiagent chemotherapy")
                    opts = [x for x in opts if not any((y[2].words & said) > (x[2].words & said) and
                                                       ((y[2].words & said) - x[2].words) & _TIMING_WORDS
                                                       for y in opts)]
                    if opts:
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
                if not linked and re.match(r"(?:completed|finished|s/p|status post)\b", m.group(0).strip()):
                    # a completed treatment that cannot be placed: the point of care is unknown — unless its words
                    # were read as a fact ("s/p CABG" is a comorbidity) or name no treatment ("completed all therapy")
                    named = [w for w in re.findall(r"[a-z]{4,}", whole)
                             if w not in read_words and w not in _GENERIC_HISTORY and _stem(w) not in _GENERIC_HISTORY]
                    if named:
                        r.unread.extend(named[:3])

    def _postop(self, r: Reading, text: str, codes: list[str], seen: set[str]) -> None:
        """"Post-op", "after the resection": every surgery box of the guidelines was passed."""
        if re.search(r"\b(?:post[- ]?op|postop(?:erative)?(?:ly)?|"
                     r"after (?:the )?(?:surgery|resection|excision|operation|nephrectomy|amputation)|"
                     r"had (?:a |an )?(?:\w+ )?(?:resection|excision|surgery|nephrectomy|nx|amputation)|"
                     # a pathological T category is staged on the resected specimen ("partial nx: pT1b G3 N0")
                     r"y?pt[0-4][a-c]?\b)", text):
            for o in self.kb.options:
                if (not codes or o.code in codes) and o.uid not in seen and \
                        re.search(r"resection|excision|nephrectomy|surgery|amputation", o.text) and \
                        not re.search(r"before|neoadjuvant|consider", o.text):
                    seen.add(o.uid)
                    r.done.append(o)
                    r.done_cover[o.uid] = max(r.done_cover.get(o.uid, 0.0), 0.6)

    def _not_given(self, r: Reading, text: str) -> None:
        """Treatments stated as not given yet: the patient has not passed their box."""
        codes = r.guidelines or list(self.kb.states)
        frags = [m.group(1) or m.group(2) or m.group(3) or m.group(4) for m in re.finditer(
            r"\b(?:before|prior to|without|ahead of)\s+any\s+([a-z][\w/+-]*(?:\s+[a-z][\w/+-]*)?)|"
            r"\b([a-z][\w-]{2,20})[- ]na[iï]ve\b|"
            r"\bno\s+(?:prior\s+)?([a-z][\w/+-]*(?:\s+[a-z][\w/+-]*)?)\s+yet\b|"
            r"\b(?:not\s+yet|has\s+not|hasn't|have\s+not|haven't)\s+(?:had|received|started|been\s+given)\s+"
            r"(?:any\s+)?([a-z][\w/+-]*(?:\s+[a-z][\w/+-]*)?)", text)]
        for frag in frags:
            said = content_words(self.kb.expand(self.kb.aliased(frag))) - _PHASE_WORDS
            for sc, _, o in self.kb.link_options(self.kb.aliased(frag), codes):
                if sc > 0.5 and o.words & said and o.uid not in {x.uid for x in r.not_given}:
                    r.not_given.append(o)

    def _unread(self, r: Reading, text: str, taken: list[bool]) -> None:
        left = "".join(c if not taken[i] else " " for i, c in enumerate(text))
        # "on last month's echo": when a test was done decides nothing
        left = re.sub(r"\b(?:last|this|next|past|previous|prior) (?:month|week|year)(?:'s|s)?\b|"
                      r"\b(?:the\s+)?(?:last|final|first|second|third)\s+(?:[a-z]+\s+)?(?:block|cycle|course)s?\b", " ",
                      left)
        codes = r.guidelines or []
        deciding = set().union(*(self.kb.deciding_words.get(c, set()) for c in codes)) if codes else set()
        used = {_stem(w) for s in r.sources for w in re.findall(r"[a-z][a-z\-]{3,}", s.text)}
        for code in codes:
            for n in self.conf.diseases.get(code, []) + self.conf.disease_words.get(code, []):
                used |= {_stem(w) for w in re.findall(r"[a-z][a-z\-]{3,}", n.lower())}
        used |= {_stem(w) for f in r.done_text for w in re.findall(r"[a-z][a-z\-]{3,}", f)}
        used |= {_stem(w) for f in r.excluded for w in re.findall(r"[a-z][a-z\-]{3,}", f)}  # set aside: read
        if r.later:  # the words that made a finding a later one were read
            used |= {_stem(w) for m in _LATER_FINDING.finditer(text)
                     for w in re.findall(r"[a-z][a-z\-]{3,}", m.group(0))}
        if any(x.attr == "time_to_relapse" for x in r.sources):  # the timing is read: other durations are history
            used |= {_stem(w) for w in ("month", "months", "year", "years", "week", "weeks")}
        treat = {w for o in (r.treatments + r.done) for w in o.words}
        for w in re.findall(r"[a-z][a-z\-]{3,}", left):
            sw = _stem(w)
            if sw in deciding and sw not in used and sw not in treat and sw not in _NOT_DECIDING and \
                    not (content_words(self.kb.expand(w)) - {sw}) & treat:  # an abbreviation of the treatment's words
                r.unread.append(w)


# A percentage that is not a blast count ("BCR::ABL1 transcripts climbing and marrow now 12% blasts": no MRD
# value).
_PERCENT_NOT_BLASTS = (r"(\d+(?:\.\d+)?)\s*%"
                       r"(?!\s*(?:(?:bone\s+)?marrow\s*)?(?:cd\d+\+?\s*)?(?:lympho|leukemic\s*)?blasts)")

# Words that say a finding comes from the final specimen, after the first treatment.
_LATER_FINDING = re.compile(r"\b(?:final (?:path\w*|histolog\w*|specimen)|(?:resection|excision|surgical) specimen|"
                            r"on the specimen|component|foci|focus of)\b")

# MRD written as a fraction ("1x10^-3", "10-4", "1e-3"), and the words that say a therapy has been given.
_FRACTION = re.compile(r"(?:(\d+(?:\.\d+)?)\s*(?:x|×|\*)\s*)?10\s*(?:\^|\*\*)?\s*[-−–](\d{1,2})\b|"
                       r"\b(\d+(?:\.\d+)?)e-(\d{1,2})\b")
_TREATED = re.compile(r"\b(?:induction|d\s?\d{1,3}|day \d{1,3}|after|post|s/p|cycles?|courses?|chemo\w*|therapy|"
                      r"treated|treatment|restaging|remission|cr\d?(?!\s*[:=]?\s*\d)|consolidation|maintenance|hyper-?cvad|tki)\b")


def _fraction_percent(m: re.Match[str]) -> float:
    """A fraction of cells as a percentage: 1x10^-3 → 0.1 %."""
    mant = float(m.group(1) or m.group(3) or 1)
    exp = int(m.group(2) or m.group(4))
    return float(mant * 10.0 ** (2 - exp))


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

# A phrase negated by the words just before it ("no high-grade features", "without bulky disease").
_NEGATED = re.compile(r"\b(?:no|not|none|nor|without|absence of|free of|lack of|(?:negative|neg) for)\s+"
                      r"(?:(?:(?!and\b|or\b|but\b|with\b|then\b)[\w-]+(?:\s+|\s*/\s*)){0,2}|"
                      r"(?:[\w-]+\s*,\s*){0,2}[\w-]+\s+(?:or|nor)\s+)$")  # "no lung, bone or liver lesions"
_NEGATION_WORD = re.compile(r"(?:no|not|non|without|un|never|none|negative)\b")

# A clause that proposes a treatment ("the fellow suggests blinatumomab then allo"): nothing in it was given.
_PROPOSED = re.compile(r"\b(?:suggest\w*|propos\w*|recommend\w*|plan(?:s|ning)? (?:to|on)|considering|"
                       r"thinking (?:of|about)|wants? to|would like|wondering|asks? (?:about|whether|if)|keen on|"
                       r"pushing for)\b")

def _given_list(m: re.Match[str]) -> str:
    """"done A, B, and C" as "done had A; had B; had C" (items of at most five words; else unchanged)."""
    items = [x.strip() for x in re.split(r",\s*(?:and\s+)?", m.group(2))]
    if any(len(x.split()) > 5 for x in items):
        return m.group(0)
    return m.group(1) + " " + "; ".join("had " + x for x in items if x)


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
                    "months", "year", "years", "first", "second", "third"}

# English words one letter away from a word of the guidelines, never typos of it ("renal vein patent" is not
# "patient").
_REAL_WORDS = {"patent", "patents", "parent", "parents", "ration", "ablate", "resent", "relapsed", "remission"}

# Words that describe a tumour without naming another disease.
_DESCRIPTORS = {"high", "low", "grade", "intermediate", "residual", "primary", "recurrent", "metastatic", "localized",
                "localised", "viable", "malignant", "aggressive", "large", "small", "new", "an", "area", "focus", "of",
                "dedifferentiated", "component", "foci", "within"}

# Words that say when in the course a treatment is given.
_TIMING_WORDS = {"adjuvant", "neoadjuvant", "postoperative", "preoperative", "maintenance", "consolidation",
                 "salvage", "second-line", "first-line", "post-transplant", "definitive"}

# Words of a kind of treatment, not of one treatment: "Systemic?" asks which.
_CATEGORY_WORDS = {"systemic", "therapy", "treatment", "local", "control", "management", "first-line", "modality"}

# Column-header words that name no phase of care.
_GENERIC_COLUMN = {"treatment", "therapy", "next", "step", "option", "and", "of", "the", "disease", "initial",
                   "subgroup"}

# Words of a phase of care, not of a treatment: "after induction" places no box by itself.
_PHASE_WORDS = {"induction", "consolidation", "salvage", "initial", "regimen", "therapy", "treatment",
                "continue", "clinical", "trial", "consider", "primary"}

_NOT_DECIDING = {"skeleton", "good", "than", "would", "less", "more", "with", "without", "from", "into", "only", "also",
                 "other",
                 "complete",
                 "completed", "pathology", "cause", "sites", "site", "when", "feasible", "disease", "selected",
                 "diagnosis", "presentation", "weeks", "week"}


# The end of a sentence: not the dot of "i.e.", "e.g." or "vs.".
SENTENCE_END = re.compile(r"(?<=[?.!])(?<!\b[a-z]\.)(?<!\bvs\.)(?<!\bapprox\.)\s+")


# a sentence that says which treatment is wanted or proposed (the question after it may not name it again)
_WANTED = (r"\b(?:asks?|asking|asked|wonder\w*|enquir\w*|inquir\w*) (?:about|for|whether|if)\b|"
           r"\b(?:wants?|keen on|interested in|requesting|requests?|prefers?|proposes?|proposing|suggests?|"
           r"suggesting|considering|pushing for)\b")


def _ask_sentence(text: str) -> str:
    """The part of the question that asks (the last sentence with a question mark, else the last one)."""
    parts = [p.strip() for p in SENTENCE_END.split(text) if p.strip()]
    asks = [p for p in parts if "?" in p]
    return asks[-1] if asks else (parts[-1] if parts else text)


def _edit1(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours apart."""
    if a == b:
        return True
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    if abs(len(a) - len(b)) != 1:
        return False
    s, t = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(s) and s[i] == t[i]:
        i += 1
    return s[i:] == t[i + 1:]


def _in_brackets(text: str, start: int, after: str) -> bool:
    """Whether ``text`` at ``start`` is inside a bracket that closes in ``after``."""
    return text[:start].count("(") > text[:start].count(")") and ")" in after



def _within_year(text: str, de_novo: list[str]) -> bool | None:
    if any(re.search(p, text) for p in de_novo):
        m = re.search(rf"presented\s+(?:about\s+)?{_DURATION}\s+ago", text)
        if m:
            return _months(float(m.group(1)), m.group(2)) < 12
        return True
    m = re.search(rf"{_DURATION}\s+ago", text)
    if m:
        return _months(float(m.group(1)), m.group(2)) < 12
    years = sorted({int(y) for y in re.findall(r"\b((?:19|20)\d{2})\b", text)})
    if len(years) == 1 and date.today().year - years[0] >= 2:
        return False  # "nephrectomy 2020 … now recurrence": more than a year ago
    if len(years) >= 2:
        dates = sorted(d for _, d in _dates(text))
        months = (dates[-1].year - dates[0].year) * 12 + dates[-1].month - dates[0].month
        return months < 12
    return None

