"""The best mode's scope decision on the words of a question: is what the passages found are about what the
question asks? (What the question *names* — conditions, drugs, tests — is judged in ``dkg.web.entities``.)

A question about a subject as a whole ("What are the treatments for X?") needs a sentence naming X whole and, when
X is a condition, a page or section about it (``scope``); any other question needs a passage holding its words
(``held``), words the site never uses being the asker's own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from dkg.web.retrieve import _XREF, PassageIndex, Retrieval, run_share, sentences, words
from dkg.web.text import Lang, detect_language, english_tokens, japanese_circumstance

MIN_SHARE = 0.75
"""Share of the subject's words a sentence must hold, together and in order."""
MIN_MENTIONS = 3
MENTION_SHARE = 0.01
"""A subject no heading names is still the site's when this many of its passages (at least ``MIN_MENTIONS``)
name it, outside sentences that point elsewhere: a term the guideline uses throughout ("CNCP")."""



def subject_variants(question: str, focus: list[str], aliases: dict[str, frozenset[tuple[str, ...]]],
                     ) -> list[list[str]]:
    """The subject as asked, and with each alias it uses replaced by the other name."""
    out = [focus]
    joined = " " + " ".join(focus) + " "
    for key, others in aliases.items():
        if key == key.lower():
            if f" {key} " not in joined:
                continue
            for name in others:
                out.append((joined.replace(f" {key} ", " " + " ".join(name) + " ")).split())
        elif re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", question):
            own = set(english_tokens(key))
            for name in others:
                out.append([t for t in focus if t not in own] + list(name))
    return [v for v in out if v]


TOPIC_WORDS = 4
"""A subject of at most this many words after the frame words is a name; a longer one only when written
as a name (capitalised: "Childhood Central Nervous System Embryonal Tumors")."""


def _capitalised(question: str, focus: Sequence[str]) -> bool:
    """The subject is written as a name: every word capitalised, not only abbreviations ("Primary CNS
    Lymphoma", not "LOT")."""
    raw = [w for w in re.findall(r"[A-Za-z][\w+-]*", question) if english_tokens(w) and english_tokens(w)[0] in focus]
    titled = [w for w in raw if w[0].isupper() and not w.isupper()]
    return bool(titled) and all(w[0].isupper() for w in raw)


def topic_question(question: str, question_words: Sequence[str], focus: Sequence[str],
                   frame: frozenset[str]) -> bool:
    """A question about a subject as a whole ("What are the treatments for X?", "How to diagnose X?",
    "What is X?"): frame words, then the subject's name and nothing after it."""
    question_words = list(dict.fromkeys(question_words))
    if not focus:
        return False
    n, k = len(question_words), len(focus)
    starts = [i for i in range(n - k + 1) if question_words[i:i + k] == list(focus)]
    if not starts:
        return False
    # "What are the symptoms of X?" and "Is X inherited?" name X as a subject; "When may LOT be appropriate?"
    # asks about a use of it
    if detect_language(question) == "ja":
        # one sentence whose other words ask for a side of the subject (治療, 症状, 原因 …), not a story
        # ("母が大腿骨頸部骨折をしました。寝たきりになることも…")
        one = len([s for s in re.split(r"[。？！?!]", question) if s.strip()]) <= 1
        return one and k <= TOPIC_WORDS and any(w in _JA_TOPIC_FRAMES for w in question_words)
    return _capitalised(question, focus) or (k <= TOPIC_WORDS and n > k)


_JA_TOPIC_FRAMES = frozenset({"治療", "治療法", "症状", "診断", "原因", "予後", "検査", "種類", "特徴", "何", "方法",
                              "経過", "見通し"})


MIN_COVER = 0.4
"""Share of the subject's weight (IDF) one passage must hold for a question that is not a topic question."""
SHORT_SUBJECT = 3
"""A subject of at most this many words must be held whole by one passage."""
NO_REFERENCE_COVER = 0.15
"""Below this share in every passage (or with no sentence holding a word of a topic question's subject),
the passages found are no references for the question at all ("There are no references.")."""


def unrelated(r: Retrieval, index: PassageIndex, lang: Lang) -> bool:
    """The passages found share hardly anything of the question's subject (a word such as "hospital"); words the
    site never uses are the asker's own and weigh nothing here (``held`` and the named things decide on them)."""
    known = [t for t in r.focus if index.df.get(t, 0) > 0] or r.focus
    return max((cover(known, have, index) for have in r.word_sets), default=0.0) < NO_REFERENCE_COVER


def cover(focus: Sequence[str], passage_words: frozenset[str], index: PassageIndex) -> float:
    """Share of the subject's IDF weight whose words the passage holds."""
    total = sum(index.idf(t) for t in focus)
    return sum(index.idf(t) for t in focus if t in passage_words) / total if total else 1.0


def passing_mention(question: str, lang: Lang, focus: Sequence[str], index: PassageIndex) -> str | None:
    """A name the question asks about that the site only mentions in passing, when the question does not name
    the site's own subject: two neighbouring subject words that are each rare on the site and in no heading
    ("heart failure" on an asthma site), or an abbreviation that is ("COPD")."""
    if not index.site_subject:
        return None
    if lang == "ja":
        if any(x in question for x in index.site_subject):
            return None
    elif set(words(question, lang)) & set(index.site_subject):
        return None
    limit = max(MIN_MENTIONS - 1, MENTION_SHARE * len(index.passages))

    def passing(t: str) -> bool:
        return 0 < index.df.get(t, 0) <= limit and t not in index.heading_words

    w = words(question, lang)
    for a, b in pairwise(w):
        if a in focus and b in focus and passing(a) and passing(b) and index.df.get(f"{a}_{b}", 0) > 0:
            return f"{a} {b}"
    if lang == "en":
        for abbr in re.findall(r"(?<![\w-])[A-Z][A-Z0-9]{1,6}s?(?![\w-])", question):
            t = english_tokens(abbr)
            if t and t[0] in focus and passing(t[0]):
                return str(abbr)
    return None


SPECIFIC_SHARE = 0.1
"""A word in at least this share of a site's passages says nothing of what a question is about."""


def _holds_most(holders: Sequence[str], rest: Sequence[str], index: PassageIndex, lang: Lang) -> bool:
    """One sentence holds at least half the weight (IDF) of the question's other words."""
    total = sum(index.idf(t) for t in rest)
    return bool(total) and any(
        sum(index.idf(t) for t in rest if t in set(words(s, lang))) / total >= 0.5 for s in holders)


_DEFINITION_EN = re.compile(r"^\s*(?:what(?:'s| is| are| was)(?: \(are\))? (?:an? |the )?"
                            r"(?:(?!\b(?:of|for|in|to|with|on|after|before|during|if|when)\b)[\w' -]){1,60}\??\s*$|"
                            r"define\b|meaning of\b|"
                            r".*\b(?:stand for|stands for|mean|meaning|called|known as|name for)\b)",
                            re.I)
_DEFINITION_JA = re.compile(r"とは|って何|ってなん|どういう意味|何と呼|なんと呼|どういうこと|どういうもの|意味")


def definitional(question: str, lang: Lang) -> bool:
    """The question asks what something is or is called ("What is a PAAP?", "ドラッグホリデーとは")."""
    return (_DEFINITION_JA if lang == "ja" else _DEFINITION_EN).search(question) is not None


def held(r: Retrieval, index: PassageIndex, question: str, lang: Lang) -> tuple[bool, str]:
    """A question that is not about a subject as a whole is answered by a passage that holds the rarest of its
    words the site uses and one more of them, or ``MIN_COVER`` of their weight; words the site never uses are
    the asker's own (a lay word, a name of their family) and are not asked of the references."""
    known = [t for t in r.focus if index.df.get(t, 0) > 0]
    if not known:
        return False, f"this site uses none of the question's words ({' '.join(r.focus)})"
    unknown = [t for t in r.focus if t not in known and not (lang == "ja" and japanese_circumstance(t))]
    specific = [t for t in known if index.df.get(t, 0) < SPECIFIC_SHARE * len(index.passages)]
    if lang == "ja" and unknown and not specific:
        # a compound of common words can be specific ("胃カメラ" on a site where 胃 and カメラ are everywhere)
        from dkg.web.entities import japanese_compounds

        specific = [c for c in japanese_compounds(question) if len(c) >= 2 and c not in known and
                    0 < sum(c in p.text for p in index.passages) < SPECIFIC_SHARE * len(index.passages)]
    if unknown and not specific:
        return False, (f"the question's subject ({' '.join(unknown)}) is not on this site; the words it shares "
                       f"with it ({' '.join(known)}) are on every other page")
    if lang == "ja" and len([t for t in specific if t in known]) < 2:
        # a question whose topic (は, って) the site never writes is about something else, unless several of its
        # specific words are the site's ("通帳", "契約" … "仕組みは")
        from dkg.web.entities import japanese_topics
        from dkg.web.rag import asker_words

        for topic in japanese_topics(question):
            if len(topic) >= 2 and topic not in index.site_text and topic not in asker_words("ja"):
                return False, f"the question is about {topic}, which this site never mentions"
    # Japanese: a name in katakana beside a word, both rare on the site ("関節リウマチ" on an osteoporosis site);
    # English names of conditions are found by ``dkg.web.entities``
    other = passing_mention(question, lang, r.focus, index) if lang == "ja" else None
    if other and re.search(r"[\u30a0-\u30ff]{2,}", other) and len(r.focus) > len(other.split()):
        limit = max(MIN_MENTIONS - 1, MENTION_SHARE * len(index.passages))
        names = set(words(other, lang)) | {other}
        # the question's other words, not more of the name ("inducible" of "inducible laryngeal obstruction")
        rest = [t for t in r.focus if t not in names and not (0 < index.df.get(t, 0) <= limit and
                                                              t not in index.heading_words)]
        holders = [s for p, _ in r.passages for s in sentences(p.text) if other.split()[0] in words(s, lang)]
        if not _holds_most(holders, rest, index, lang):
            return False, f"the question is about {other}, which this site only mentions in passing"
    rarest = min(known, key=lambda t: index.df.get(t, 0))
    best = 0.0
    for have in r.word_sets:
        share = cover(known, have, index)
        if rarest in have and (len(known) == 1 or sum(t in have for t in known) >= 2):
            share = max(share, MIN_COVER)
        best = max(best, share)
    if best < MIN_COVER:
        return False, f"the references hold {best:.0%} of the question's subject ({' '.join(known)})"
    return True, ""


def scope(r: Retrieval, question: str, lang: Lang, index: PassageIndex, frame: frozenset[str],
          names_condition: bool = True) -> tuple[bool, str]:
    """Whether the references are about the question's subject, and why not.

    A question about a subject as a whole (``topic_question``: "What are the treatments for X?"):
    1. a sentence or heading of the references that does not point elsewhere (``_XREF``) holds at
       least ``MIN_SHARE`` of the subject's words, together and in order (as asked, or with an alias
       replaced by the site's other name for it);
    2. and the subject is what a page or section of the site is about: its words in a title or
       heading path (``_heads``), or named in at least ``MENTION_SHARE`` of the passages. A name
       mentioned in passing ("unlike chronic myeloid leukemia, …") is no page's subject.

    Any other question: no name in it is one the site only mentions in passing
    (``passing_mention``), and one passage holds the whole of a subject of up to ``SHORT_SUBJECT``
    words, or ``MIN_COVER`` of a longer one's IDF weight (``cover``).
    """
    from dkg.web.rag import asker_words

    variants = subject_variants(question, r.focus, index.aliases) if lang == "en" else [r.focus]
    asked = [w for w in words(question, lang) if w not in asker_words(lang)]
    if not topic_question(question, asked, r.focus, frame):
        return held(r, index, question, lang)
    best = 0.0
    for p, _ in r.passages:
        for s in [p.heading, *sentences(p.text)]:
            if lang == "en" and _XREF.search(s):
                continue
            w = words(s, lang)
            best = max(best, max(run_share(v, w) for v in variants))
    if best < MIN_SHARE:
        return False, (f"the references do not name the question's subject ({' '.join(r.focus)}) together "
                       f"(best sentence {best:.0%})")
    # a site that names X can say what X is, not how X is treated: a definition of a name that is not a
    # condition is answered from a sentence naming it
    if (names_condition or not definitional(question, lang)) and \
            not any(_heads(v, h, index.site_words) for v in variants for h in index.headings) and \
            index.mentions(variants, lang) < max(MIN_MENTIONS, MENTION_SHARE * len(index.passages)):
        return False, f"no page or section of the site is about {' '.join(r.focus)}; it is only mentioned"
    return True, ""


def _heads(subject: Sequence[str], heading: Sequence[str], site_words: frozenset[str], gap: int = 2) -> bool:
    """The heading names the subject: all its words in order, at most ``gap`` other words between two of
    them ("osteosarcoma and UPS of bone"), except the words the site's own title gives every page
    ("adult" on a site of adult treatment summaries)."""
    want = [t for t in subject if t not in site_words]
    if not want:
        return False
    for start, t in enumerate(heading):
        if t != want[0]:
            continue
        at, ok = start, True
        for w in want[1:]:
            nxt = next((i for i in range(at + 1, min(len(heading), at + 2 + gap)) if heading[i] == w), None)
            if nxt is None:
                ok = False
                break
            at = nxt
        if ok:
            return True
    return False
