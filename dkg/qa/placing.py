"""Placing the patient of a next-step question by the history it tells: the boxes the query found, placed past the
treatments the question says were given and back to one it says was not given yet; or, where the facts do not
decide, what follows the treatments given."""

from __future__ import annotations

from typing import Any

from dkg.qa.knowledge import Knowledge
from dkg.qa.pathway import Placement, best, code_of, downstream, holding, is_pointer, place
from dkg.qa.reading.doc import Reading


def after_given(kb: Knowledge, r: Reading, facts: dict[str, Any]) -> Placement | None:
    """For a next-step question with a history: what follows the treatments given, when the graph says it."""
    if not r.given() or r.intent != "next_step":
        return None
    placed = place(kb, sorted(r.given()), facts, r.given(), later=r.later)
    return placed if placed.kind == "answer" else None


def place_patient(kb: Knowledge, r: Reading, facts: dict[str, Any], uids: list[str], found: bool
                  ) -> tuple[Placement | None, bool]:
    """Where the patient is: the placement of the boxes ``uids`` the query found (``found``), or where it found
    none, of what follows the treatments given; None where neither places the patient. With it, whether the
    treatments given placed the patient (the answer follows them, whatever the facts leave open)."""
    from_history = False
    if not found:
        # no way holds with every fact its decisions ask for, but the history places the patient: what follows
        # the treatments given ("blinatumomab then allo-HCT": post-transplant surveillance) needs no more
        given_next = after_given(kb, r, facts)
        if given_next is None or not given_next.uids:
            return None, False
        uids, from_history = list(given_next.uids), True
    # a box the question says was given is never the answer, however partly it was named
    placed = place(kb, uids, facts, r.given() | ({o.uid for o in r.done} & set(uids)), later=r.later)
    if placed.kind == "more":
        # the facts leave the way open, but the history places the patient: what follows the treatments given
        given_next = after_given(kb, r, facts)
        if given_next is not None:
            placed, from_history = given_next, True
    if placed.kind != "answer":
        return placed, from_history
    return _past_given(kb, r, facts, placed.uids), from_history


def _past_given(kb: Knowledge, r: Reading, facts: dict[str, Any], uids: list[str]) -> Placement:
    """``uids`` moved past the steps the question says were given, or back to a step it says was not given yet."""
    # never a step before one the question says was given ("… definitive RT, and she finished her adjuvant
    # chemo": the answer comes after the chemo, not at the RT)
    given = r.given() | {o.uid for o in r.done}
    # where some of the boxes lie past the steps given and others before them, the ones past them answer
    # (Ph-negative ALL in a young adult, maintenance given, now relapsed: the relapse treatment, not induction)
    # (a box that only sends the reader to another page places the patient nowhere in particular)
    treated = {u for u in given if not is_pointer(kb, u)}
    before = [u for u in uids if treated & downstream(kb, u)]
    past = [u for u in uids if any(u in downstream(kb, g) for g in treated)]
    if before and past:
        uids = past
    later_steps = set().union(*(downstream(kb, u) for u in uids))
    ahead = sorted(given & later_steps)
    if ahead:
        again = place(kb, ahead, facts, given, later=r.later)
        if again.kind != "answer":
            return again
        uids = again.uids
    if r.not_given:
        # a treatment the question says was not given yet, on the way to the answer, comes first
        # (a box that only sends the reader to another page is done there: "no systemic therapy yet" is not
        # answered by "Systemic therapy by histology and risk (See KID-4)")
        missed = {o.uid for o in r.not_given if not is_pointer(kb, o.uid)}
        ways = [p for p in best(holding(kb, sorted({code_of(u) for u in uids}), facts)) if missed & set(p.boxes)]
        first = sorted({next(b for b in p.boxes if b in missed) for p in ways})
        if first:
            uids = first
    return Placement("answer", uids)
