"""The chatbot's scope decision (best mode): the conditions and names a question names, and what a site says of
each. A made-up site on "tendon gout" (no sample's text) is enough to show every verdict."""

from __future__ import annotations

import pytest

from dkg.settings import load_settings
from dkg.web.crawl import Page, Section
from dkg.web.entities import (
    english_conditions,
    foreign_names,
    japanese_conditions,
    japanese_topics,
    listed_conditions,
    other_names,
)
from dkg.web.rag import SiteIndex, ask

_FILL = ("Tendon gout is a long-term condition in which crystals collect in the tendons. "
         "People with tendon gout often notice stiffness in the morning. ")


def _page(n: int, title: str, sections: list[tuple[str, str]]) -> Page:
    text = "\n".join(f"{h}\n{t}" for h, t in sections)
    return Page(url=f"http://site.test/p{n:02d}.html", title=title, text=text, language="en", sha256=str(n),
                fetched_at=0.0, medical=True, reason="", sections=[Section(heading=h, text=t) for h, t in sections])


@pytest.fixture(scope="module")
def site() -> SiteIndex:
    pages = [
        _page(1, "What is tendon gout?", [("Overview", _FILL * 2),
              ("Conditions that look alike", "Tendon gout can look like a sprain. Rarely a doctor also thinks of "
                                             "sarcoidosis before the crystals are seen.")]),
        _page(2, "Medicines for tendon gout", [("Crystal-lowering medicines", _FILL + "Most people take "
                                                "glimmerastatin once a day. Glimmerastatin lowers the crystal level "
                                                "within three months and is taken with food.")]),
        _page(3, "Exercise and diet", [("Exercise", _FILL + "Gentle stretching keeps the tendons supple. "
                                        "Swimming and cycling are good exercise for people with tendon gout."),
                                       ("Diet", _FILL + "A balanced diet with plenty of water helps. "
                                                        "Cherries are often asked about; they do no harm.")]),
        _page(4, "Tendon gout and the kidneys", [("Kidney disease", _FILL + "Chronic kidney disease makes "
                                                  "crystals more likely. Your kidney function is checked every "
                                                  "year with a blood test.")]),
    ]
    return SiteIndex(pages, {p.url: p.text for p in pages}, title="Tendon gout guideline")


def test_english_names_come_from_general_knowledge_and_word_shapes() -> None:
    assert [t.text for t in english_conditions("Diet to prevent rheumatoid arthritis?")] == ["rheumatoid arthritis"]
    # built like a disease name, or a word before a disease head noun
    assert [t.text for t in english_conditions("How is fibrocalcinosis treated?")] == ["fibrocalcinosis"]
    assert [t.text for t in english_conditions("Is Brennick disease inherited?")] == ["Brennick disease"]
    # a drug by its name's stem, a test by its shape: names, not conditions
    named = english_conditions("Can I take zorvastatin before a cholangiogram?")
    assert [(t.text, t.kind) for t in named] == [("zorvastatin", "name"), ("cholangiogram", "name")]
    # a name is widened by a word the site seldom uses, never by how much or when
    assert [t.text for t in english_conditions("exercise for knee osteoarthritis", rare=["knee"])] == \
        ["knee osteoarthritis"]
    assert [t.text for t in english_conditions("acute osteoarthritis", rare=["acut"])] == ["osteoarthritis"]
    assert english_conditions("What is the treatment and how long does it take?") == []


def test_japanese_names_come_from_word_shapes() -> None:
    assert [t.text for t in japanese_conditions("大腸がんの予防に良い食事は？")] == ["大腸がん"]
    assert [t.text for t in japanese_conditions("逆流性食道炎の薬")] == ["逆流性食道炎"]
    assert [t.text for t in japanese_conditions("乳がん検診は何歳から")] == ["乳がん"]  # cut after the disease
    assert [(t.text, t.kind) for t in japanese_conditions("全身性エリテマトーデスの治療")] == \
        [("全身性エリテマトーデス", "condition")]
    assert [(t.text, t.kind) for t in japanese_conditions("大腸カメラの前の日")] == [("大腸カメラ", "procedure")]
    # a named pain is a disorder, a headache alone a symptom
    assert [t.text for t in japanese_conditions("娘が片頭痛でよく休みます")] == ["片頭痛"]
    assert [t.text for t in japanese_conditions("三叉神経痛の薬")] == ["三叉神経痛"]
    assert japanese_conditions("朝に頭痛がします") == []
    # how it feels is no name; katakana the site writes is not foreign
    assert foreign_names("食べるとドキドキします。グリオーマですか", "ja", site_text="") == \
        [t for t in foreign_names("グリオーマ", "ja", site_text="") if t.text == "グリオーマ"]
    assert foreign_names("インフルエンザの予防接種", "ja", site_text="…インフルエンザ…") == []
    assert [t.text for t in foreign_names("Is my HPV test relevant?", "en", site_text="")] == ["HPV"]
    assert japanese_topics("病院の駐車場は何時まで使えますか") == ["駐車場"]


def _verdicts(site: SiteIndex, question: str) -> list[tuple[str, str]]:
    a = ask(load_settings(rag_mode="best"), site, question, mode="best")
    return [(t["term"], t["verdict"]) for t in a.scope]


def test_every_verdict_and_the_decision_it_makes(site: SiteIndex) -> None:
    settings = load_settings(rag_mode="best")
    # the site's subject, and a condition a section is about
    a = ask(settings, site, "Can swimming help my tendon gout?", mode="best")
    assert a.status == "answered" and ("gout", "subject") in [(t["term"], t["verdict"]) for t in a.scope]
    # a condition named once, in a sentence about something else: refused, and the answer says why
    b = ask(settings, site, "Which exercise is good for sarcoidosis?", mode="best")
    assert b.status == "not_enough_information" and "in passing" in str(b.detail)
    assert [(t["term"], t["verdict"]) for t in b.scope] == [("sarcoidosis", "passing")]
    # a condition the site never names, asked with the site's own words (diet, exercise)
    c = ask(settings, site, "What diet and exercise prevent rheumatoid arthritis?", mode="best")
    assert c.status == "not_enough_information" and [t["verdict"] for t in c.scope] == ["absent"]
    # a drug the site names, asked about what its sentences say
    d = ask(settings, site, "Should glimmerastatin be taken with food?", mode="best")
    assert d.status == "answered" and "food" in d.answer.lower()
    # a drug the site never names
    e = ask(settings, site, "How much zorvastatin should I take?", mode="best")
    assert e.status == "not_enough_information" and "never mentions" in str(e.detail)


def test_two_named_things_no_passage_speaks_of_together_are_refused(site: SiteIndex) -> None:
    a = ask(load_settings(rag_mode="best"), site, "Does glimmerastatin cause chronic kidney disease?", mode="best")
    assert a.status == "not_enough_information" and "together" in str(a.detail), a


def test_the_site_teaches_names_a_word_shape_misses() -> None:
    # listed beside disease names, a word is a disease name too
    site = "似た症状の病気には、変形性関節症、痛風、乾癬性関節炎などがあります。食事は大切です。"
    assert [t.text for t in listed_conditions("痛風の食事は？", site, [])] == ["痛風"]
    assert listed_conditions("食事は？", site, []) == []
    # a lay name the site gives in parentheses after a condition
    text = "Bleeding can come from haemorrhoids (piles) or small tears."
    assert [t.text for t in other_names("How are piles treated?", text, [])] == ["piles"]
    assert other_names("How are tears treated?", text, []) == []


def test_a_models_answer_must_stay_within_its_references() -> None:
    from dkg.web.rag import outside_references

    refs = ["Most people take glimmerastatin once a day with food.", "Swimming is good exercise."]
    assert outside_references("Take glimmerastatin once a day with food [1].", refs, "en") is None
    assert "[3]" in str(outside_references("Take it with food [3].", refs, "en"))
    assert "(2)" in str(outside_references("Take it 2 times a day [1].", refs, "en"))
    assert "sarcoidosis" in str(outside_references("It also treats sarcoidosis [1].", refs, "en"))
    assert outside_references("Patients should rather buy expensive magnetic bracelets.", refs, "en") is not None


def test_japanese_names_of_another_disease_and_words_of_when() -> None:
    from dkg.web.entities import _another_disease, japanese_conditions
    from dkg.web.text import japanese_circumstance

    # too high or too low a measure, and an organ's failure, are conditions
    assert [t.text for t in japanese_conditions("もともと低血圧で立ちくらみがします")] == ["低血圧"]
    assert "心不全" in [t.text for t in japanese_conditions("心不全で利尿薬を飲んでいます")]
    # a name holding the site's subject names another disease after an organ, pregnancy or before a syndrome
    assert _another_disease("肺高血圧症", "高血圧") and _another_disease("妊娠高血圧症候群", "高血圧")
    assert not _another_disease("腎性高血圧", "高血圧") and not _another_disease("閉経後骨粗鬆症", "骨粗鬆症")
    # when, not what
    assert japanese_circumstance("昨日") and japanese_circumstance("毎晩") and not japanese_circumstance("血圧")
