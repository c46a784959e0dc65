"""Questions of the form "who gets X?" (``constraints``): the treatment boxes such a question names, and the
decisions into them that its facts and the treatments it sets aside allow."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.knowledge import Knowledge, content_words, split_options
from dkg.qa.pathway import code_of, deciders
from dkg.qa.reading.doc import Reading
from dkg.qa.reading.text import SENTENCE_END


def constraint_boxes(kb: Knowledge, r: Reading) -> list[str]:
    """The treatment boxes a "who gets X?" question names: the best-named ones that some patient
    consistent with the question's facts reaches."""
    if r.boxes_asked is not None:
        return r.boxes_asked
    r.boxes_asked = _find_constraint_boxes(kb, r)
    return r.boxes_asked


def _find_constraint_boxes(kb: Knowledge, r: Reading) -> list[str]:
    codes = r.guidelines or list(kb.states)
    # the options the reader found named best ("pembro + axitinib" is one option of two boxes): every box
    # that has one, whatever else the box lists
    named = list(dict.fromkeys(o.uid for o in r.treatments if o.code in codes)) \
        if len({o.text for o in r.treatments}) == 1 else []
    for relax in (False, True):
        usable = [u for u in named if deciders(kb, [u], r.facts, relax)]
        if usable:
            return usable
    if named:
        # no patient of the question reaches those boxes: the boxes whose option says all of it and more
        # ("active surveillance" for metastatic disease: "active surveillance for selected asymptomatic patients")
        said = r.treatments[0].words
        wider = list(dict.fromkeys(o.uid for o in kb.options if o.code in codes and said < o.words))
        for relax in (False, True):
            usable = [u for u in wider if u not in named and deciders(kb, [u], r.facts, relax)]
            if usable:
                return usable
    scored = kb.link_boxes(kb.aliased(r.ask or _ask_text(r)), codes, r.excluded)
    if not scored:
        return []
    for loosest in (False, True):  # a box some reading of the facts reaches, before the loosest reading
        for score in dict.fromkeys(s for s, _ in scored):
            if score < 0.5 * scored[0][0]:
                break
            tied = [u for s, u in scored if abs(s - score) < 1e-9]
            for relax in ((False, True) if not loosest else (True,)):
                usable = [u for u in tied if deciders(kb, [u], r.facts, relax, loosest)]
                if usable:
                    return usable
    return []


def _ask_text(r: Reading) -> str:
    parts = [p for p in SENTENCE_END.split(r.text) if "?" in p]
    return parts[-1] if parts else r.text


def treatment_targets(kb: Knowledge, r: Reading, phrase: str) -> list[str]:
    """The boxes that name the treatment asked about (``phrase``, the query's CONTAINS), in the guidelines the
    question names (or all)."""
    # a box is left out when every option of it that names the treatment also names what is set aside
    # ("cabozantinib (not with nivo)": the box listing "nivolumab + cabozantinib; cabozantinib" stays)
    targets = [u for c in (r.guidelines or list(kb.states)) if c in kb.states
               for u, b in kb.states[c].boxes.items() if phrase and phrase in b.textPlain.lower()
               and any(not any(content_words(kb.expand(x)) <= content_words(kb.expand(o))
                               for x in r.excluded if content_words(kb.expand(x)))
                       for o in ([o for o in split_options(b.textPlain) if phrase in o.lower()]
                                 or [b.textPlain]))]
    if r.treatment is not None and len(r.treatment.text) > len(phrase):
        # the question names a longer option than the phrase ("neoadjuvant chemo before wide excision"):
        # the boxes that have it, not every box with "neoadjuvant chemotherapy"
        written = r.treatment.text.lower()
        whole = [u for u in targets if written in kb.states[code_of(u)].boxes[u].textPlain.lower()]
        targets = whole or targets
    return targets


def allowed_deciders(kb: Knowledge, r: Reading, targets: list[str]) -> set[str]:
    """The decisions into ``targets`` that the question's facts allow (relaxed where none does strictly)."""
    asked = dict(r.facts)
    if "histology" in asked and re.search(r"\b(?:sub-?types?|types|kinds|variants|forms)\b", r.text):
        # "which osteosarcoma subtypes get X?": the family named, every subtype of it asked about
        family = str(asked.pop("histology"))
        any_histology = set(deciders(kb, targets, {**asked, "histology": "_"}))
        allowed = {u for u in deciders(kb, targets, asked)
                   if u not in any_histology or family in str(kb.states[code_of(u)].boxes[u].constraints)}
    else:
        allowed = set()
    return allowed or set(deciders(kb, targets, r.facts)) or \
        set(deciders(kb, targets, r.facts, relax=True))
