"""The document every reader component shares: the question's text, what is read so far, and the reading.

A component is a callable ``(doc, ctx) -> None`` registered under a name with :func:`component`. It finds facts
in ``doc.text``, records each with the words it came from (``doc.add``) and marks those words as read
(``doc.take``), so that no other component reads them again; what stays unread is reported to the clinician.
``ctx`` holds what does not change between questions: the loaded guidelines (:class:`Knowledge`), the QA
configuration and the clinical vocabulary (``conf/clinical.yaml``), and a memo for what a component builds once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from dkg.qa.clinical import load_clinical
from dkg.qa.config import current_config
from dkg.qa.knowledge import Knowledge, Option

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
    """The asking sentence with the facts and the history taken out (what the treatment is looked for in)."""
    boxes_asked: list[str] | None = None
    """The treatment boxes a "who gets X?" question names (found once, by the answerer)."""
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


class Context:
    """What the components share across questions (build once per set of loaded guidelines)."""

    def __init__(self, knowledge: Knowledge) -> None:
        self.kb = knowledge
        self.today = date.today()
        """The day questions are asked on (an age from a date of birth when the question names no other date)."""
        self.conf = current_config()
        self.clinical = load_clinical()
        # the histologies the loaded guidelines draw, as the clinical phrases write them
        self.histology = [str(p) for forms in self.clinical["phrases"].get("histology", {}).values() for p in forms]
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, build: Callable[[], Any]) -> Any:
        """``build()`` once per context: what a component derives from the guidelines and keeps."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def organs(self) -> dict[str, set[str]]:
        """Each loaded guideline's organ words, from its own names ("thyroid" of "thyroid cancer"), once."""
        from dkg.qa.names import organ_words

        organs: dict[str, set[str]] = self.memo("organs", lambda: {
            c: organ_words(list(self.conf.diseases.get(c, []))) for c in self.kb.states})
        return organs


@dataclass
class QuestionDoc:
    """One question as the components see it: the normalised text, which characters are read, the candidates."""

    reading: Reading
    ask: str = ""
    """The sentence that asks (facts not yet blanked)."""
    taken: list[bool] = field(default_factory=list)
    cands: list[tuple[int, FactSource]] = field(default_factory=list)
    """Facts found so far, with where they start (a later statement of the same attribute wins)."""
    named: list[tuple[int, int]] = field(default_factory=list)
    """Spans of treatments named as the guideline writes them (set aside, yet the intent reads them)."""
    resolved: dict[str, Any] = field(default_factory=dict)
    """The facts as stated, before the guideline's definitions added to them."""

    def __post_init__(self) -> None:
        if not self.taken:
            self.taken = [False] * len(self.reading.text)

    @property
    def text(self) -> str:
        return self.reading.text

    def free(self, a: int, b: int) -> bool:
        """Whether no component has read any of ``text[a:b]``."""
        return not any(self.taken[a:b])

    def take(self, a: int, b: int) -> None:
        """Mark ``text[a:b]`` as read."""
        for i in range(a, b):
            self.taken[i] = True

    def add(self, pos: int, attr: str, value: Any, words: str, rule: str) -> None:
        """A candidate fact read at ``pos`` from ``words`` by ``rule``."""
        self.cands.append((pos, FactSource(attr, value, words.strip(), rule)))

    def read_attrs(self) -> set[str]:
        """The attributes some candidate already gives."""
        return {s.attr for _, s in self.cands}

    def masked(self) -> str:
        """The text with every read character blanked, except the treatments named (the intent reads those)."""
        named = {i for a, b in self.named for i in range(a, b)}
        return "".join(" " if self.taken[i] and i not in named else c for i, c in enumerate(self.text))


Component = Callable[[QuestionDoc, Context], None]

COMPONENTS: dict[str, Component] = {}


def component(name: str) -> Callable[[Component], Component]:
    """Register a reader component under ``name`` (the name ``conf/reader.yaml`` orders it by)."""

    def register(fn: Component) -> Component:
        if name in COMPONENTS and COMPONENTS[name] is not fn:
            raise ValueError(f"two reader components are named {name!r}")
        COMPONENTS[name] = fn
        return fn

    return register
