"""Metastases found after the first treatment are a recurrence (unless said to be there at diagnosis)."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, FactSource, QuestionDoc, component


@component("recurrence")
def read_recurrence(doc: QuestionDoc, ctx: Context) -> None:
    r = doc.reading
    treated = [o for o in r.done if not re.search(r"biops|work-?up|staging|imaging|h&p|diagnos", o.box.lower())]
    if r.facts.get("metastatic") == "yes" and "relapse" not in r.facts and treated and \
            not re.search(r"\b(?:at (?:presentation|diagnosis|dx)|de novo|synchronous|newly)\b", doc.text):
        r.facts["relapse"] = "yes"
        r.sources.append(FactSource("relapse", "yes", "metastases after " + r.done[0].text, "recurrence"))
