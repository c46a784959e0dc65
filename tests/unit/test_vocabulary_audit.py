"""Every disease and treatment word in conf/ and dkg/qa is allowed with its reason, in the files listed.

What only one guideline needs must come from that guideline (its PDF, its graph), not from code or conf/; general
clinical language may stay. The allow-list (tests/fixtures/vocabulary_allow.yaml) says which is which; the words
marked SAMPLE GUIDELINE are the hand-written knowledge still to be learned from the graph. A new word, or a known
word in a new file, fails here until it is listed with its reason.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
ALLOW = ROOT / "tests" / "fixtures" / "vocabulary_allow.yaml"
# drug and disease word shapes: -mab, -nib, -platin, -rubicin, -cel, -oma, -emia, cancer, leukemia, …
WORD = re.compile(r"(?i)\b([a-z][a-z-]*(?:mab|nib|tinib|zumab|ximab|platin|rubicin|mycin|taxel|cytidine|tabine|"
                  r"trexate|phamide|sone|solone|cel|cept|oma|omas|emia|aemia|cancer|carcinoma|sarcoma|leukemia|"
                  r"leukaemia|lymphoma|syndrome)s?)\b")
NOT_WORDS = {"accepts", "except"}


def _found() -> dict[str, set[str]]:
    where: dict[str, set[str]] = defaultdict(set)
    files = sorted([*ROOT.glob("conf/*.yaml"), *ROOT.glob("dkg/qa/**/*.py")])
    assert files
    for f in files:
        for m in WORD.finditer(f.read_text(encoding="utf-8")):
            if m.group(1).lower() not in NOT_WORDS:
                where[m.group(1).lower()].add(str(f.relative_to(ROOT)))
    return where


def test_every_disease_and_treatment_word_is_allowed_with_its_reason_where_it_is() -> None:
    allow = yaml.safe_load(ALLOW.read_text(encoding="utf-8"))
    assert all(str(v.get("reason", "")).strip() for v in allow.values())
    unlisted = {w: sorted(fs) for w, fs in _found().items() if w not in allow}
    assert not unlisted, f"add these to {ALLOW.name} with a reason, or learn them from the guideline: {unlisted}"
    elsewhere = {w: sorted(fs - set(allow[w]["files"])) for w, fs in _found().items() if fs - set(allow[w]["files"])}
    assert not elsewhere, f"known words in new files (list the file with a reason): {elsewhere}"


def test_the_audit_catches_a_new_word() -> None:
    assert WORD.search("give tucatinib") and WORD.search("Waldenström macroglobulinemia")
    assert not WORD.search("stage II, ECOG 1")
