"""The question reader as a pipeline: the order is data, the components are independent, each does one job.

The components are run here one at a time on a shared document (no services): what each reads, that what one
read is not read again by the next, and the structure rules of the package (no component imports another, no
module of ``dkg/qa`` over 500 lines, no function over 60).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from dkg.qa.knowledge import Knowledge
from dkg.qa.reader import PIPELINE_FILE, Reader, load_pipeline
from dkg.qa.reading.components import load_all
from dkg.qa.reading.doc import COMPONENTS, Context, QuestionDoc, Reading
from dkg.qa.reading.text import ask_sentence, fix_typos, join_lines, normal_text
from tests.unit.test_question_reader import truth_state

ROOT = Path(__file__).resolve().parents[2]
COMPONENT_DIR = ROOT / "dkg" / "qa" / "reading" / "components"


@lru_cache(maxsize=1)
def context() -> Context:
    return Context(Knowledge([truth_state("ALL", "2.2022"), truth_state("KID", "2.2023")]))


def run(question: str, *names: str, guidelines: tuple[str, ...] = ()) -> QuestionDoc:
    """Run only the named components, in that order, on a question."""
    load_all()
    q = join_lines(question)
    text = normal_text(fix_typos(q, context().kb.vocabulary))
    doc = QuestionDoc(Reading(question=q, text=text, guidelines=list(guidelines)), ask=ask_sentence(text))
    for name in names:
        COMPONENTS[name](doc, context())
    return doc


def cands(doc: QuestionDoc) -> dict[str, object]:
    return {s.attr: s.value for _, s in doc.cands}


def test_the_pipeline_lists_every_component_once_in_the_order_of_its_file() -> None:
    names = [n for n, _ in load_pipeline()]
    assert len(names) == len(set(names))
    assert set(names) == set(COMPONENTS), "a component that never runs, or a name nothing registers"
    assert names.index("resolve") < names.index("history") < names.index("intent") < names.index("unread")


def test_an_unknown_component_in_the_pipeline_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "reader.yaml"
    bad.write_text(yaml.safe_dump({"pipeline": ["ages", "agez"]}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"reader\.yaml: unknown reader component\(s\) agez"):
        load_pipeline(bad)


def test_the_order_is_data_a_reader_without_a_component_does_not_read_its_facts(tmp_path: Path) -> None:
    names = [n for n, _ in load_pipeline() if n != "percentages"]
    short = tmp_path / "reader.yaml"
    short.write_text(yaml.safe_dump({"pipeline": names}), encoding="utf-8")
    kb = context().kb
    question = "45yo with Ph-negative ALL after induction, MRD 0.5%. Next step?"
    assert Reader(kb).read(question).facts.get("mrd") == "positive"
    assert "mrd" not in Reader(kb, short).read(question).facts


def test_ages_reads_shorthand_a_birthday_to_come_and_karnofsky_as_ecog() -> None:
    assert cands(run("61M, KPS 70, new diagnosis", "ages")) == {"age": 61, "performance_status": 2, "_kps": 70}
    assert cands(run("He turns 60 next month.", "ages"))["age"] == 59
    assert cands(run("a 14-month-old with a renal mass", "ages"))["age"] == 1


def test_percentages_measure_against_the_guidelines_own_cut_offs() -> None:
    doc = run("after induction: marrow <5% blasts; MRD 0.004% by flow", "percentages", guidelines=("ALL",))
    assert cands(doc) == {"mrd": "negative", "response": "CR"}  # the ALL footnote's cut-off is 0.01 %
    # the MRD value's words end with its own value: a blast count later in the clause is read as a response
    doc = run("after induction: MRD 0.004% by flow, marrow <5% blasts", "percentages", guidelines=("ALL",))
    assert cands(doc) == {"mrd": "negative", "response": "CR"}
    assert cands(run("MRD 0.02% -> 0.3% -> 1.1% on serial PCR after consolidation", "percentages",
                     guidelines=("ALL",)))["mrd"] == "rising"
    assert "mrd" not in cands(run("new dx, marrow 82% blasts", "percentages"))  # at diagnosis: no response


def test_what_one_component_read_the_next_does_not_read_again() -> None:
    doc = run("ECOG 1", "ages")
    assert not doc.free(0, len(doc.text))
    doc = run("ECOG 1", "ages", "phrases")
    assert [s.attr for _, s in doc.cands] == ["performance_status"]


def test_resolve_keeps_the_later_statement_and_a_relapse_after_a_remission() -> None:
    doc = run("CR1 after induction, now relapsed with 30% blasts", "percentages", "phrases", "resolve",
              guidelines=("ALL",))
    assert doc.reading.facts.get("relapse") == "yes" and "response" not in doc.reading.facts


def test_the_intent_component_reads_who_gets_and_yes_no_questions() -> None:
    kb = context().kb
    assert Reader(kb).read("Which patients get a TKI with hyper-CVAD?").intent == "constraints"
    assert Reader(kb).read("Ph+ ALL, 50 years old. Is TKI + hyper-CVAD appropriate?").intent == "advisable"
    assert Reader(kb).read("What is the dose of dasatinib?").intent == "dose"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


@pytest.mark.parametrize("module", sorted(p.name for p in COMPONENT_DIR.glob("*.py") if p.name != "__init__.py"))
def test_no_component_imports_another(module: str) -> None:
    assert not {m for m in _imports(COMPONENT_DIR / module) if m.startswith("dkg.qa.reading.components")}


def test_no_module_of_the_question_answerer_is_over_500_lines_and_no_function_over_60() -> None:
    long_modules, long_functions = [], []
    for f in sorted((ROOT / "dkg" / "qa").rglob("*.py")):
        text = f.read_text(encoding="utf-8")
        if len(text.splitlines()) > 500:
            long_modules.append(f"{f.relative_to(ROOT)}: {len(text.splitlines())}")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                n = node.end_lineno - node.lineno + 1
                if n > 60:
                    long_functions.append(f"{f.relative_to(ROOT)}:{node.name}: {n}")
    assert not long_modules and not long_functions, (long_modules, long_functions)


def test_the_pipeline_file_is_the_one_the_reader_reads_by_default() -> None:
    assert PIPELINE_FILE == ROOT / "conf" / "reader.yaml"
    assert yaml.safe_load(PIPELINE_FILE.read_text(encoding="utf-8"))["pipeline"][0] == "treatment_names"
