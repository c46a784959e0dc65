"""A sub-stage ("stage IIB", "stage 3a") is its stage group where the guidelines branch on groups only (the stage
values drawn are I–IV): the letter refines the group and never moves the patient out of it."""

from __future__ import annotations

from dkg import rx as re
from dkg.constraints.comparisons import ordinal_value
from dkg.constraints.vocabulary import load_vocabulary
from dkg.qa.reading.doc import Context, QuestionDoc, component


@component("substages")
def read_substage(doc: QuestionDoc, ctx: Context) -> None:
    if "stage" in doc.read_attrs():
        return
    groups = {ordinal_value(str(v)): str(v) for v in load_vocabulary().attributes.get("stage", {}).get(
        "values", ["I", "II", "III", "IV"])}
    for m in re.finditer(r"\bstage\s+(iv|i{1,3}|[1-4])([a-d][1-3]?)(?![\w+-])", doc.text):
        sub = ordinal_value(m.group(1).upper() + m.group(2).upper())
        group = groups.get(ordinal_value(m.group(1).upper()))
        if group is None or sub in groups or not doc.free(m.start(), m.end()):
            continue
        doc.add(m.start(), "stage", group, m.group(0), "sub-stage of a stage group")
        doc.take(m.start(), m.end())
        return
