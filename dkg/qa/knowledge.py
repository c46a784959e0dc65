"""What the reader knows of the loaded guidelines: their states and decision paths, the definitions their footnotes
give, the treatment options of their boxes and how a question's words name one (split out of
:mod:`dkg.qa.reader`)."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dkg import rx as re
from dkg.constraints.models import Constraint
from dkg.graph.model import VersionState
from dkg.graph.paths import DecisionPath, decision_paths
from dkg.qa.clinical import Definitions, definitions_of, load_clinical
from dkg.qa.config import names_of, note_loaded_guidelines
from dkg.qa.facts import _lexicon, normalise
from dkg.qa.termdefs import TermRule, footnotes_of, rules_for


@dataclass(frozen=True)
class Option:
    """One option of a treatment box ("TKI + chemotherapy" of "Clinical trial or TKI + chemotherapy")."""

    code: str
    uid: str
    text: str
    box: str
    words: frozenset[str]


# How much of a treatment, and how often: words of a box that size the recommendation but do not name it
_DOSE_WORD = re.compile(r"\d+(?:[.,]\d+)?|mg|mcg|µg|g|kg|m2|m²|ml|gy|cgy|auc|iu|units?|fractions?|fraction|cycl|"
                        r"cycles?|doses?|every|daily|weekly|twice|once|week|weeks|day|days|month|months|year|years|"
                        r"hours?|until|up|x|×")


_STOP = {"or", "and", "the", "a", "an", "of", "with", "for", "to", "in", "if", "by", "then", "on", "at", "as", "is",
         "be", "not", "no", "when", "all", "any", "may", "selected", "patients", "patient", "preferred", "consider",
         "followed", "continue", "per", "it", "its", "this", "that", "he", "she", "we", "do", "does", "what", "who",
         "which", "should", "guideline", "recommend", "recommends", "recommended", "option", "options", "based",
         "pts", "pt", "his", "her", "him", "them", "they", "you", "can", "get", "gets", "go", "just", "now",
         "tx", "treatment", "therapy", "management", "plan", "next", "step", "x", "w/", "vs", "after", "before",
         "first", "line", "up", "front", "chart", "algorithm", "pathway", "flowchart", "give", "offer", "use",
         "start"}


def _stem(w: str) -> str:
    w = w.lower().strip("-/.,")
    for suf in ("ies", "es", "s"):
        if len(w) > 4 and w.endswith(suf) and not w.endswith("ss") and not w.endswith("sis"):
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


def content_words(text: str) -> set[str]:
    """Lower-cased content words of a treatment phrase (stems, no stop words)."""
    text = re.sub(r"-(?:type|like|style|based|directed)\b", "", text.lower())  # "osteosarcoma-type chemo"
    return {_stem(w) for w in re.findall(r"[a-z0-9][a-z0-9+\-]*", text) if (_stem(w) not in _STOP
            and len(w) > 1) or w in {"+", "±"}} - {"+", "±"}


_SCHEDULE = (r"\b(?:every|each|q)\s*\d*(?:\s*[-–]\s*\d+)?\s*(?:weeks?|wks?|days?|months?)\b|"
             r"(?<![a-z])[×x]\s*\d+\s*(?:cycles?|doses?|courses?)?|\b\d+(?:[.,]\d+)?\s*(?:mg(?:/m2|/kg)?|gy|cycles?|doses?|"
             r"fractions?|weeks?|months?|years?|days?)\b|\b(?:daily|twice|once|weekly|for|in|of)\b")


def without_schedule(text: str) -> str:
    """A treatment's words without its dose and schedule ("drug A + drug B every 3 weeks × 4 doses" →
    "drug A + drug B"): how it is given, not what it is."""
    return re.sub(_SCHEDULE, " ", text.lower())


def split_options(text: str) -> list[str]:
    """The options of a treatment box's text ("A or B; C" → A, B, C; "(See …)" and parentheses dropped)."""
    t = re.sub(r"\(\s*see [^)]*\)", " ", text, flags=re.IGNORECASE)
    t = re.sub(r"\((?:preferred)\)", " ", t, flags=re.IGNORECASE)
    parts = re.split(r";|,\s*(?:then|followed by)\s|\s+or\s+|\band/or\b", t)
    out = []
    for p in parts:
        p = re.sub(r"\s+", " ", p).strip(" ,.")
        if len(p) >= 3:
            out.append(p)
    return out


def _with_guideline_abbreviations(states: Sequence[VersionState], abbrev: list[tuple[str, str]]
                                   ) -> list[tuple[str, str]]:
    """``abbrev`` (short → long) with the names the guidelines' own boxes give, longest short form first."""
    # kinds a footnote lists for a treatment ("Radiation therapy (photon or proton) …") name it too
    kinds: dict[str, str] = {}
    for s in states:
        for b in s.boxes.values():
            for m in re.finditer(r"([A-Z][a-z]+(?: [a-z]+){0,2}) "
                                 r"\(([a-z-]+(?: [a-z-]+)?(?:,? or [a-z-]+(?: [a-z-]+)?)+)\)", b.text):
                for alt in re.split(r",? or ", m.group(2)):
                    kinds.setdefault(alt.strip(), m.group(1).lower())
    # abbreviations a guideline defines ("SLNB = sentinel lymph node biopsy", "transarterial chemoembolization
    # (TACE)"): its boxes that use them are linked by the words written out
    known = {a for a, _ in abbrev}
    from dkg.qa.names import GENERIC_HEADS

    for s in states:
        lower_words = {w for b in s.boxes.values() for w in re.findall(r"(?<![\w-])[a-z]{2,8}(?![\w-])", b.text)}
        for b in s.boxes.values():
            pairs = [(m.group(1), m.group(2)) for m in re.finditer(
                r"(?<![\w-])([A-Z][A-Za-z0-9]{1,7})\s*=\s*([a-z][a-z -]{5,60}?)(?=\s*[,;.)]|\s*$|,? performed\b)",
                b.text)]
            pairs += [(m.group(2), m.group(1)) for m in re.finditer(
                r"(?<![\w-])([a-z][a-z-]{3,}(?: [a-z-]{2,}){1,5}) \(([A-Z][A-Z0-9]{1,7})\)", b.text)]
            for short, long in pairs:
                initials = "".join(w[0] for w in long.split() if w not in ("of", "and", "the", "with"))
                # not a disease's name ("ALL": the question names the guideline, not a box), nor a word the
                # guideline also writes in lower case ("all patients")
                if short.lower() not in known and initials[:1] == short[:1].lower() and \
                        short.lower() not in lower_words and not set(long.lower().split()) & GENERIC_HEADS:
                    kinds.setdefault(short.lower(), long.lower())
                    known.add(short.lower())
    return sorted([*abbrev, *kinds.items()], key=lambda kv: -len(kv[0]))


def _box_phrases(opts: Sequence[Option]) -> list[tuple[str, Option]]:
    """Each option's whole box text (no "(See …)") and its first clause, as phrases that name the option."""
    phrases: list[tuple[str, Option]] = []
    for opt in opts:
        whole = normalise(re.sub(r"\(\s*see [^)]*\)", "", opt.box, flags=re.IGNORECASE)).strip(" ,.;")
        for p in {whole, re.split(r";|\s\((?!preferred)", whole)[0].strip(" ,.")}:
            if len(p) >= 8:
                phrases.append((p, Option(opt.code, opt.uid, p, opt.box, opt.words)))
    return phrases


def _idf(opts: Sequence[Option]) -> dict[str, float]:
    """Inverse document frequency of each content word over the options."""
    df: dict[str, int] = {}
    for opt in opts:
        for w in opt.words:
            df[w] = df.get(w, 0) + 1
    return {w: math.log(1 + len(opts) / n) for w, n in df.items()}


class Knowledge:
    """What the reader knows of the loaded guidelines: paths, definitions, treatment options, words."""

    def __init__(self, states: Sequence[VersionState]) -> None:
        self.states = {s.code: s for s in states}
        note_loaded_guidelines({s.code: names_of(s) for s in states})
        self.paths: dict[str, list[DecisionPath]] = {s.code: decision_paths(s) for s in states}
        self.defs: dict[str, Definitions] = {s.code: definitions_of(s) for s in states}
        self.attrs: dict[str, set[str]] = {c: {a for p in ps for a in p.scope.attrs} for c, ps in self.paths.items()}
        clinical = load_clinical()
        self.abbrev = sorted(((str(k).lower(), str(v).lower()) for k, v in clinical["abbreviations"].items()),
                             key=lambda kv: -len(kv[0]))
        self.classes = {str(k).lower(): [str(x).lower() for x in v] for k, v in clinical["drug_classes"].items()}
        self.abbrev = _with_guideline_abbreviations(states, self.abbrev)
        opts = self._treatment_options(states)
        self.options = opts
        # each content word → the options that have it (in their order): an option none of whose words a text
        # says scores nothing, so the linkers weigh only the options that share a word with it
        self._by_word: dict[str, list[int]] = {}
        self._box_words: dict[str, set[str]] = {}
        self._box_text: dict[str, str] = {}
        for i, opt in enumerate(opts):
            for w in opt.words:
                self._by_word.setdefault(w, []).append(i)
        self.phrases = _box_phrases(opts)
        self.idf = _idf(opts)
        self.aliases = self._defined_terms(states)

    def _treatment_options(self, states: Sequence[VersionState]) -> list[Option]:
        """The options of every box without constraints (a treatment), with their content words."""
        opts: list[Option] = []
        for s in states:
            outs: dict[str, set[str]] = {}
            for e in s.edges:
                outs.setdefault(e.head, set()).add(e.type)
            for uid, b in s.boxes.items():
                if b.constraints not in ("", "[]"):
                    continue
                for o in split_options(b.textPlain):
                    words = content_words(self.expand(without_schedule(o))) or content_words(self.expand(o))
                    if words:
                        opts.append(Option(s.code, uid, o.lower(), b.textPlain, frozenset(words)))
        return opts

    def _defined_terms(self, states: Sequence[VersionState]) -> list[tuple[str, set[str]]]:
        """Terms a box defines, with the content words of the definition."""
        # "Wide excision means resection with negative (R0) margins, by limb-sparing surgery or amputation":
        # a question that says the definition names the term.
        aliases: list[tuple[str, set[str]]] = []
        for s in states:
            for b in s.boxes.values():
                for m in re.finditer(r"(?:^|[(.;]\s*)([A-Z][a-z]+(?: [a-z]+){0,3}) means ([^.;)]+)", b.text):
                    words = content_words(self.expand(m.group(2)))
                    if len(words) >= 2 and all(m.group(1).lower() != a for a, _ in aliases):
                        aliases.append((m.group(1).lower(), words))
        return aliases

    def column_words(self, o: Option) -> set[str]:
        """Words of the column header above an option's box (its phase of care)."""
        box = self.states[o.code].boxes.get(o.uid)
        return {_stem(w) for w in re.findall(r"[a-z]+", box.column.lower())} if box else set()

    def aliased(self, text: str) -> str:
        """``text`` plus every term whose guideline definition it states (two words of it or more)."""
        words = content_words(self.expand(text))
        extra = [term for term, ws in self.aliases if len(ws & words) >= 2]
        return " ".join([text, *extra])

    def box_words(self, code: str) -> set[str]:
        """The content words of a guideline's boxes (computed once per guideline)."""
        if code not in self._box_words:
            self._box_words[code] = {w for b in self.states[code].boxes.values()
                                     for w in content_words(self.expand(b.textPlain))}
        return self._box_words[code]

    def box_text(self, code: str) -> str:
        """A guideline's box texts, lower-cased and joined (computed once per guideline)."""
        if code not in self._box_text:
            self._box_text[code] = "\n".join(b.textPlain.lower() for b in self.states[code].boxes.values())
        return self._box_text[code]

    def expand(self, text: str) -> str:
        """Abbreviations written out, drugs followed by their class ("dasatinib" → "dasatinib tki")."""
        t = " " + text.lower() + " "
        for short, long in self.abbrev:
            if short in t:  # the pattern's literal must occur: a substring test first (10x cheaper than a sub)
                t = re.sub(r"(?<![\w-])" + re.escape(short) + r"(?![\w-])", " " + long + " ", t)
        for cls, drugs in self.classes.items():
            for d in drugs:
                if d in t:
                    t = re.sub(r"(?<![\w-])" + re.escape(d) + r"(?![\w-])", f" {d} {cls} ", t)
        return re.sub(r"\s+", " ", t).strip()

    @cached_property
    def used_attrs(self) -> set[str]:
        """Every attribute some loaded guideline decides on."""
        return set().union(*self.attrs.values()) if self.attrs else set()

    @cached_property
    def _terms(self) -> tuple[list[TermRule], dict[str, Any]]:
        from dkg.constraints.vocabulary import load_registry, load_vocabulary

        vocab, working = load_vocabulary(), copy.deepcopy(load_registry())
        rules: list[TermRule] = []
        for code, s in self.states.items():
            # footnotes, and condition boxes that define their own term ("Non-muscle-invasive: Ta, Tis or T1")
            notes = footnotes_of(s) + [b.textPlain for b in s.boxes.values()
                                       if b.constraints not in ("", "[]") and ":" in b.textPlain]
            rules += rules_for(code, s.version, notes, self.attrs.get(code, set()),
                               lambda a, c=code: self.values_of([c], a), vocab, working)  # type: ignore[misc]
        named = {c.attr for r in rules for items in r.criteria for c in items}
        # an attribute only a definition names is not approved: the values the definition gave it are its values
        return rules, {n: working.attributes[n].model_copy(update={"values": list(dict.fromkeys(
            [*working.attributes[n].values, *working.attributes[n].proposed_values]))})
            for n in sorted(named) if n in working.attributes}

    @property
    def term_rules(self) -> list[TermRule]:
        """The terms the loaded guidelines' footnotes define, with their criteria (:mod:`dkg.qa.termdefs`)."""
        return self._terms[0]

    def criteria_of(self, code: str) -> list[Constraint]:
        """What the definitions of one guideline's terms bound ("tumour > 5 cm", "PSA ≥ 10")."""
        return [c for r in self.term_rules if r.code == code for items in r.criteria for c in items]

    @property
    def criteria_attributes(self) -> dict[str, Any]:
        """The registry attributes those criteria bound, by name (some no box uses: read for the criteria)."""
        return self._terms[1]

    @cached_property
    def _values(self) -> dict[tuple[str, str], set[str]]:
        out: dict[tuple[str, str], set[str]] = {}
        for code, ps in self.paths.items():
            for p in ps:
                for a, vs in p.scope.cats:
                    out.setdefault((code, a), set()).update(str(x) for x in vs)
        return out

    def values_of(self, codes: Iterable[str], attr: str) -> set[str]:
        """The values the ways of ``codes`` give a categorical attribute ("absent", "asymptomatic", …)."""
        return set().union(*(self._values.get((c, attr), set()) for c in codes))

    @cached_property
    def vocabulary(self) -> set[str]:
        """Words of every box text and phrase rule (for correcting typos)."""
        words: set[str] = set()
        for s in self.states.values():
            for b in s.boxes.values():
                words |= set(re.findall(r"[a-z]{6,}", b.text.lower()))
        clinical = load_clinical()
        for forms in clinical["phrases"].values():
            for pats in forms.values():
                for p in pats:
                    words |= set(re.findall(r"(?<![\\?])\b[a-z]{6,}\b", p))
        for p, _, _ in _lexicon():
            words |= set(re.findall(r"[a-z]{6,}", p.pattern))
        words |= {"remission", "otherwise", "nephrectomy", "osteosarcoma", "chondrosarcoma", "diagnosis", "relapsed",
                  "lymphoblasts", "lymphoblastic",
                  "metastases", "recurrence", "resection", "resectable", "unresectable", "comorbidities"}
        return words

    @cached_property
    def deciding_words(self) -> dict[str, set[str]]:
        """Per guideline, words that only condition boxes use (they decide branches)."""
        out: dict[str, set[str]] = {}
        for code, s in self.states.items():
            cond: set[str] = set()
            other: set[str] = set()
            for b in s.boxes.values():
                ws = {_stem(w) for w in re.findall(r"[a-z][a-z\-]{3,}", b.textPlain.lower())}
                (cond if b.constraints not in ("", "[]") else other).update(ws)
            out[code] = cond - other - _STOP - {"years", "year", "aged", "adult", "adults", "patient", "disease",
                                                 "after", "presentation", "elderly", "younger", "older", "surgery",
                                                 "kidney", "limited", "conditions", "significant", "substantial"}
        return out

    def _weigh(self, target: Iterable[str], said: set[str]) -> tuple[float, float]:
        """(weight of the target's words said, weight of those not said): rare words weigh more."""
        hit = miss = 0.0
        sized = any(_DOSE_WORD.fullmatch(w) for w in said)  # the question says how much or how often itself
        for w in target:
            if w in said:
                hit += self.idf.get(w, 1.0)
            elif sized or not _DOSE_WORD.fullmatch(w):  # a drug named alone names "<drug> 10 mg/kg every 2 weeks"
                miss += self.idf.get(w, 1.0)
        return hit, miss

    def _sharing(self, words: set[str]) -> list[Option]:
        """The options that have at least one of ``words``, in the options' order."""
        found: set[int] = set()
        for w in words:
            found.update(self._by_word.get(w, ()))
        return [self.options[i] for i in sorted(found)]

    def link_options(self, text: str, codes: Iterable[str], only: set[str] | None = None
                     ) -> list[tuple[float, float, Option]]:
        """Options ``text`` names, best first: (weight of the option's words found less a quarter of the weight
        of those not found, share of its weight found, option)."""
        words = content_words(self.expand(text))
        allowed = set(codes)
        out = []
        for o in self._sharing(words):  # hit > 0 needs a shared word
            if (allowed and o.code not in allowed) or (only is not None and o.uid not in only):
                continue
            hit, miss = self._weigh(o.words, words)
            if hit > 0:
                out.append((hit - 0.25 * miss, hit / (hit + miss), o))
        out.sort(key=lambda x: (-x[0], x[2].uid))
        return out

    def link_boxes(self, text: str, codes: Iterable[str], excluded: Iterable[str] = ()) -> list[tuple[float, str]]:
        """Treatment boxes of ``codes`` that ``text`` names, best first: (weight of the box's words found, less a
        quarter of the weight of those not found; box uid). Boxes naming an excluded treatment are left out."""
        words = content_words(self.expand(text))
        banned = [content_words(self.expand(x)) for x in excluded]
        allowed = set(codes)
        boxes: dict[str, set[str]] = {}
        shared = {o.uid for o in self._sharing(words)}  # a box none of whose options shares a word scores nothing
        for o in self.options:
            if (not allowed or o.code in allowed) and o.uid in shared:
                boxes.setdefault(o.uid, set()).update(o.words)
        out = []
        for uid, ws in boxes.items():
            if any(b and (b <= ws or len(b & ws) * 2 >= len(b) >= 2) for b in banned):
                continue
            hit, miss = self._weigh(ws, words)
            if hit > 0:
                out.append((hit - 0.25 * miss, uid))
        out.sort(key=lambda su: (-su[0], su[1]))
        return out

    @cached_property
    def _option_heads(self) -> list[tuple[str, Option]]:
        """Each option with the one content word its text opens with (options that open otherwise are left out)."""
        out = []
        for o in self.options:
            words = o.text.split()
            head = content_words(self.expand(words[0])) if words else set()
            if len(head) == 1:
                out.append((next(iter(head)), o))
        return out

    def link_loose(self, text: str, codes: Iterable[str]) -> list[tuple[float, Option]]:
        """Options named by a rare word of a longer name ("inotuzumab" of "inotuzumab ozogamicin"), as long as the
        question names no rarer word of another option ("intralesional surgery" is not "wide excision")."""
        said = content_words(self.expand(text)) & self.idf.keys()
        out = []
        allowed = set(codes)
        loose = self.link(text, codes, min_score=0.45)
        linked = {o.uid for _, o in loose}
        # an option named by the word it opens with ("observation" of "observation with serial imaging")
        for head, o in self._option_heads:
            if head in said and o.uid not in linked and (not allowed or o.code in allowed):
                loose.append((0.5, o))
        for sc, o in loose:
            top = max((self.idf.get(w, 1.0) for w in o.words & said), default=0.0)
            if not any(self.idf[w] > top for w in said - o.words):
                out.append((sc, o))
        return out

    def link(self, text: str, codes: Iterable[str], min_score: float = 0.6) -> list[tuple[float, Option]]:
        """Options of ``codes`` that ``text`` names, best first: (weighted share of its words found, option)."""
        words = content_words(self.expand(text))
        allowed = set(codes)
        scored: list[tuple[float, Option]] = []
        for o in self._sharing(words) if min_score > 0 else self.options:  # a score above 0 needs a shared word
            if allowed and o.code not in allowed:
                continue
            hit, miss = self._weigh(o.words, words)
            if hit + miss and hit / (hit + miss) >= min_score:
                scored.append((hit / (hit + miss) + 0.01 * len(o.words & words), o))
        scored.sort(key=lambda so: (-so[0], so[1].uid))
        return scored
