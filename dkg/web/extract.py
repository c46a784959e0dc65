"""The best mode's extractive answer: the reference sentences that answer the question, chosen by the words they
share with it and by what it asks (what to do, how long, whether a belief holds)."""

from __future__ import annotations

import re

from dkg.web.retrieve import _XREF, PassageIndex, Retrieval, bigrams, sentences, words
from dkg.web.text import Lang

_ANAPHOR = re.compile(r"^(?:this|these|those|that|such|it|they|in (?:such|these|this|those) cases?|however|therefore|"
                      r"thus|then|in addition|also|for (?:this|these) reasons?)\b", re.I)
"""A sentence that opens like this leans on the one before it."""
_POINTS_BACK = re.compile(r"^(?:[\w'’-]+[\s,]+){0,6}?(?:this|these|such|that|those)\s+(?!is\b|was\b)[a-z]", re.I)
"""A sentence that names what the one before it said ("Providers should discuss this information …")."""


_CONTRAST = {"en": re.compile(r"^(?:however|but|in fact|actually|yet|in reality|this is not|that is not|no\b|not so)",
                             re.I),
             "ja": re.compile(r"^(?:しかし|ただし|でも|実際には|実際は|一方|けれども|とはいえ|ところが|実は)")}
"""A sentence that answers the one before it ("However, …", "しかし、…")."""
_MYTH = {"en": re.compile(r"\b(?:is it true|true that|right\s*\?|isn't it|aren't they|don't they|i heard|i've heard|"
                         r"i read|myth|supposed to|only for|just for)", re.I),
         "ja": re.compile(r"本当|ですよね|ますよね|よね[？?]|と聞|って聞|だけですか|だけなんですか|でしょ[？?]")}
"""A question that states a belief and asks whether it holds."""
_ADVICE_Q = {"en": re.compile(r"\b(?:what should|should i|should we|should my|can i|may i|do i need|do i have to|"
                              r"is it (?:ok|okay|safe|alright|all right)|what do i do|what can i do|how do i|"
                              r"how can i|what if|when should)\b", re.I),
             "ja": re.compile(r"どうしたら|どうすれば|いいですか|よいですか|大丈夫|できますか|必要ですか|べきですか|"
                              r"たほうが|どうやって|どのように|伝え")}
"""A question asking what to do, or whether one may."""
_ADVICE = {"en": re.compile(r"\b(?:should|must|do not|don't|contact|call|see (?:your|a)|ask|avoid|stop|keep|"
                            r"make sure|need to|tell|carry|bring|check with|go to|seek)\b", re.I),
           "ja": re.compile(r"ください|しましょう|必要があります|大切です|べきです|避け|控え|ましょう|相談|できます|"
                            r"てください|ようにします|しないで")}
"""A sentence that says what to do."""
_QUANTITY_Q = {"en": re.compile(r"\b(?:how (?:long|often|many|much|soon|far|old)|what (?:age|dose|level|target|"
                                r"number)|at what age|when (?:can|will|should|do|does)|target|maximum|minimum|"
                                r"how frequently)\b", re.I),
               "ja": re.compile(r"どのくらい|どれくらい|何歳|何回|何日|何週|何か月|何ヶ月|何年|いつ|何時間|どの程度|"
                                r"いくつ|何度|何ミリ|何グラム")}
"""A question asking for an amount, a duration, an age or a time."""
_QUANTITY = re.compile(r"\d")
"""A sentence with a number in it."""
ADVICE_BONUS = 1.3
FIRST_PASSAGE_BONUS = 1.15
"""Sentences of the passage retrieval ranked first weigh this much more: the answer is most often there."""


def extract(r: Retrieval, question: str, lang: Lang, index: PassageIndex, max_sentences: int = 3) -> str | None:
    """The reference sentences that answer the question: each scored by the IDF of the question's words
    and word pairs it holds; the best, and those within 60 % of it (at most ``max_sentences``), in
    the order they appear, each with the sentence before it when it opens by pointing back ("This…",
    "In such cases…") and the one after it when it ends with a colon. A sentence repeated on several
    pages is scored once.

    The question's intent weighs in: a question asking what to do or whether one may ("Should I stop …?",
    "どうしたらいいですか") prefers sentences that say what to do (``ADVICE_BONUS``), one asking how long, how often
    or at what age ("何歳から") sentences with a number; a question stating a belief
    ("… only at the end, right?", "本当ですか") gets the sentence that answers the belief as well, when the
    sentence after a chosen one opens with a contrast ("However, …", "しかし、…"); the passage ranked first
    weighs a little more (``FIRST_PASSAGE_BONUS``)."""
    w = list(dict.fromkeys(words(question, lang)))
    for name in r.other_names:
        w += [t for t in name if t not in w]
    pairs = set(bigrams(words(question, lang)))
    advice = _ADVICE_Q[lang].search(question) is not None
    amount = _QUANTITY_Q[lang].search(question) is not None
    myth = _MYTH[lang].search(question) is not None
    scored = []
    flat: list[str] = []
    seen: set[str] = set()
    last: list[bool] = []  # the sentence ends its passage
    for rank, (p, _) in enumerate(r.passages):
        sents = sentences(p.text)
        for k, s in enumerate(sents):
            flat.append(s)
            last.append(k == len(sents) - 1)
            if s in seen or (lang == "en" and _XREF.search(s)):
                continue
            seen.add(s)
            sw = words(s, lang)
            have = set(sw)
            score = sum(index.idf(t) for t in w if t in have) + \
                sum(index.idf(b) for b in set(bigrams(sw)) & pairs)
            if score > 0:
                if advice and _ADVICE[lang].search(s):
                    score *= ADVICE_BONUS
                if amount and _QUANTITY.search(s):
                    score *= ADVICE_BONUS
                if rank == 0:
                    score *= FIRST_PASSAGE_BONUS
                scored.append((score, len(flat) - 1, k))
    if not scored:
        return None
    top = max(x[0] for x in scored)
    keep = [x for x in sorted(scored, key=lambda x: (-x[0], x[1]))[:max_sentences] if x[0] >= 0.6 * top]
    chosen: set[int] = set()
    for _, i, k in keep:
        chosen.add(i)
        if k > 0 and lang == "en" and _ANAPHOR.match(flat[i]):
            chosen.add(i - 1)
        if i + 1 < len(flat) and not last[i] and (flat[i].rstrip().endswith((":", "：")) or
                                                  (lang == "en" and _POINTS_BACK.match(flat[i + 1])) or
                                                  (myth and _CONTRAST[lang].match(flat[i + 1]))):
            chosen.add(i + 1)
    joiner = "" if lang == "ja" else " "
    return joiner.join(dict.fromkeys(flat[i] for i in sorted(chosen)))
