"""Other people's history: a sentence or clause about a relative's illness ("Older brother had Hodgkin at 19, in
remission", "Father had MI at 55", "FHx: mother breast ca") states no fact of the patient. Its words are marked
read, so no later component takes a fact from them. A relative the writer calls "my son", "our daughter" may be
the patient (a parent writing for a child): only a relative said to have had, died of or been diagnosed with
something, and not introduced as the writer's own ("my", "our"), is someone else."""

from __future__ import annotations

from dkg import rx as re
from dkg.qa.reading.doc import Context, QuestionDoc, component

_KIN = (r"(?:mother|father|mum|mom|dad|sister|brother|sibling|sibs?|aunt|uncle|grand(?:mother|father|ma|pa|parent)s?|"
        r"cousin|niece|nephew|daughter|son|parent|twin)")
_OTHERS = re.compile(
    r"(?:(?<![\w'])(?:fhx|fh|family history)\b[^.;?]*|"
    rf"(?<!\bmy )(?<!\bour )\b(?:(?:older|younger|elder|maternal|paternal|half-?)\s+)?{_KIN}s?\b"
    r"(?:\s+\w+){0,2}?\s+(?:had|has had|died|passed away|was diagnosed|were diagnosed|developed|with a history of)\b"
    r"[^.;?]*)")


@component("others_history")
def set_aside_others_history(doc: QuestionDoc, ctx: Context) -> None:
    for m in _OTHERS.finditer(doc.text):
        doc.take(m.start(), m.end())
