"""Scoring ``dkg ask`` on clinician questions written outside this code (``dkg eval qa FILE``).

The file format is the one of ``shared/data/qa-dev/questions.jsonl`` (and of the held-out sets
that judge the work): one JSON object per line with ``id``, ``guideline``, ``type``
(``next_treatment``, ``is_treatment_advisable``, ``constraints_for_treatment``, ``unanswerable``),
``question``, ``expected_answer`` (box texts joined with `` | ``) and, for advisability,
``expected_bool``.

The rule: an answer counts when its status is ``answered`` and its text contains every expected
box text; for ``is_treatment_advisable`` the ``advisable`` flag must also equal ``expected_bool``;
an unanswerable question counts only when the status is ``not_covered``. A *wrong answer* is an
``answered`` status that does not count: the worst output for a clinician.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError, field_validator

from dkg.errors import DkgError
from dkg.qa.answer import Answer

TYPES = ("next_treatment", "is_treatment_advisable", "constraints_for_treatment", "unanswerable")


class ClinicianQuestion(BaseModel):
    """One question of an evaluation file."""

    id: str
    guideline: str = ""
    """Empty (or null in the file) for a question about no loaded guideline."""
    version: str = ""
    type: str
    question: str

    @field_validator("guideline", "version", mode="before")
    @classmethod
    def _none_is_empty(cls, v: object) -> object:
        return "" if v is None else v
    expected_answer: str | None = None
    expected_bool: bool | None = None


class Outcome(BaseModel):
    """How one question was answered."""

    id: str
    guideline: str
    type: str
    question: str
    status: str
    correct: bool
    wrong: bool
    """Answered, but not correctly."""
    answer: str
    expected: str | None
    advisable: bool | None = None
    expected_bool: bool | None = None
    message: str = ""


class Rate(BaseModel):
    correct: int
    n: int
    accuracy: float


class Report(BaseModel):
    """Accuracy by type and guideline, wrong answers, refusals, and every miss."""

    n: int
    accuracy: float
    correct: int
    wrong: int
    wrong_rate: float
    by_type: dict[str, Rate]
    by_guideline: dict[str, Rate]
    refusal_precision: float
    refusal_recall: float
    statuses: dict[str, int]
    misses: list[Outcome]


def load_questions(path: Path) -> list[ClinicianQuestion]:
    """Read a questions file.

    Raises:
        DkgError: unreadable file, or a line that is not a question (named by its line number).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise DkgError(f"cannot read questions file {path}: {e}") from e
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            q = ClinicianQuestion(**json.loads(line))
        except (json.JSONDecodeError, TypeError, ValidationError) as e:
            raise DkgError(f"{path}, line {i}: not a question record ({str(e).splitlines()[0]})") from e
        if q.type not in TYPES:
            raise DkgError(f"{path}, line {i}: unknown type {q.type!r} (one of {', '.join(TYPES)})")
        out.append(q)
    return out


def is_correct(q: ClinicianQuestion, a: Answer) -> bool:
    """The scoring rule of the held-out sets."""
    if q.type == "unanswerable":
        return a.status == "not_covered"
    if a.status != "answered" or not q.expected_answer:
        return False
    text = a.answer.lower()
    if not all(part.strip().lower() in text for part in q.expected_answer.split(" | ")):
        return False
    return q.type != "is_treatment_advisable" or a.advisable == q.expected_bool


def _rate(outcomes: Sequence[Outcome]) -> Rate:
    c = sum(o.correct for o in outcomes)
    return Rate(correct=c, n=len(outcomes), accuracy=round(c / len(outcomes), 4) if outcomes else 0.0)


def score(questions: Sequence[ClinicianQuestion], ask_many: Callable[[list[str]], list[Answer]]) -> Report:
    """Ask every question and score the answers."""
    answers = ask_many([q.question for q in questions])
    outcomes = []
    for q, a in zip(questions, answers, strict=True):
        ok = is_correct(q, a)
        outcomes.append(Outcome(id=q.id, guideline=q.guideline, type=q.type, question=q.question, status=a.status,
                                correct=ok, wrong=a.status == "answered" and not ok, answer=a.answer,
                                expected=q.expected_answer, advisable=a.advisable, expected_bool=q.expected_bool,
                                message=a.message or ", ".join(a.missing_facts)))
    refused = [o for o in outcomes if o.status == "not_covered"]
    unanswerable = [o for o in outcomes if o.type == "unanswerable"]
    statuses: dict[str, int] = {}
    for o in outcomes:
        statuses[o.status] = statuses.get(o.status, 0) + 1
    n = len(outcomes)
    wrong = sum(o.wrong for o in outcomes)
    return Report(
        n=n, correct=sum(o.correct for o in outcomes), accuracy=_rate(outcomes).accuracy, wrong=wrong,
        wrong_rate=round(wrong / n, 4) if n else 0.0,
        by_type={t: _rate([o for o in outcomes if o.type == t]) for t in TYPES if any(o.type == t for o in outcomes)},
        by_guideline={g or "(none)": _rate([o for o in outcomes if o.guideline == g])
                      for g in sorted({o.guideline for o in outcomes})},
        refusal_precision=round(sum(o.type == "unanswerable" for o in refused) / len(refused), 4) if refused else 1.0,
        refusal_recall=round(sum(o.status == "not_covered" for o in unanswerable) / len(unanswerable), 4)
        if unanswerable else 1.0,
        statuses=dict(sorted(statuses.items())), misses=[o for o in outcomes if not o.correct])
