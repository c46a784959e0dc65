"""Where in the skeleton a bone named lies (``conf/clinical.yaml`` skeleton), for guidelines that branch on the
location; a bone someone else's tumour is in ("like his friend's arm") is not the patient's."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, QuestionDoc, component

_OTHERS = r"\b(?:friend|neighbou?r|colleague|relative|cousin|brother|sister|mother|father|another patient)\b"


@component("skeleton")
def read_location(doc: QuestionDoc, ctx: Context) -> None:
    text = doc.text
    if not any("location" in ctx.kb.attrs.get(c, set()) for c in doc.reading.guidelines):
        return
    for part, bones in ctx.clinical.get("skeleton", {}).items():
        found = False
        for bone in bones:
            for m in re.finditer(rf"\b{bone}\b", text):
                if re.search(_OTHERS + r"[^.;?]*$", text[max(0, m.start() - 60):m.start()]):
                    continue  # "like his friend with a tumour in the arm": someone else's
                if doc.free(m.start(), m.end()):
                    if not found:
                        doc.add(m.start(), "location", part, m.group(0), f"{m.group(0)} is {part}")
                        found = True
                    doc.take(m.start(), m.end())  # every bone named is read ("sacrum … spine surgeons")
