"""The question reader: what a clinician's question asks, and which words gave which patient fact.

Clinicians do not write the flowchart's labels. They write "61M", "FISH negative for BCR::ABL1",
"day 29 marrow <5 % blasts", "flow MRD 0.004 %", "3.2 cm renal mass, no adenopathy", "KPS 70,
corrected Ca 11.4, Hb 9.8", "path 40 % viable tumour", "s/p radical nx". The reader turns those into
the facts of the guideline's vocabulary and records, for every fact, the words it came from and
the rule that read them (shown to the clinician in ``dkg ask --json``).

It is a pipeline (:mod:`dkg.qa.reading`): small components, one job each, over one shared document, in the order
``conf/reader.yaml`` gives. Besides the facts they find what is asked (next step, "is X right", "who gets X", or
something a flowchart never says, such as a dose), the treatment named, the treatments already given (the
patient's place in the pathway), and statements no component could read: words that decide branches of a loaded
guideline but that no rule used. A question with such words is not answered with confidence.
"""

from __future__ import annotations

from pathlib import Path

from dkg.qa.knowledge import Knowledge
from dkg.qa.reading.components import load_all
from dkg.qa.reading.doc import COMPONENTS, Component, Context, QuestionDoc, Reading
from dkg.qa.reading.text import ask_sentence, fix_typos, join_lines, normal_text
from dkg.yamlio import load_yaml

PIPELINE_FILE = Path(__file__).resolve().parents[2] / "conf" / "reader.yaml"


def load_pipeline(path: Path = PIPELINE_FILE) -> list[tuple[str, Component]]:
    """The components in the order ``path`` lists them."""
    load_all()
    names = (load_yaml(path.read_text(encoding="utf-8")) or {}).get("pipeline") or []
    unknown = [n for n in names if n not in COMPONENTS]
    if unknown:
        raise ValueError(f"{path}: unknown reader component(s) {', '.join(map(str, unknown))}; "
                         f"known: {', '.join(sorted(COMPONENTS))}")
    return [(str(n), COMPONENTS[str(n)]) for n in names]


class Reader:
    """Reads questions against the loaded guidelines (build once, read many)."""

    def __init__(self, knowledge: Knowledge, pipeline: Path = PIPELINE_FILE) -> None:
        self.ctx = Context(knowledge)
        self.pipeline = load_pipeline(pipeline)

    @property
    def kb(self) -> Knowledge:
        return self.ctx.kb

    def read(self, question: str) -> Reading:
        q = join_lines(question)
        text = normal_text(fix_typos(q, self.ctx.kb.vocabulary))
        doc = QuestionDoc(Reading(question=q, text=text), ask=ask_sentence(text))
        for _, run in self.pipeline:
            run(doc, self.ctx)
        return doc.reading
