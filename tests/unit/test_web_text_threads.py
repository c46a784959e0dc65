"""MeCab from many threads at once (``dkg serve`` answers Japanese questions concurrently).

A single MeCab tagger shared by threads crashed the service with a segfault in libc under a load of
32 clients: ``parseToNode`` returns nodes of the tagger's one lattice, which a parse in another thread
frees. Each thread now has its own tagger; here 16 threads parse at once, and the process must survive
with every result equal to a single-threaded parse (the suite's kernel-log check sees a crash too).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from dkg.web.text import japanese_nouns

TEXTS = ["胸腺腫の治療には手術が行われます。", "小児のグリオーマの手術の危険性は何ですか？",
         "胸腺腫の病理診断はどのように行われますか？" * 20, "放射線療法と化学療法を併用することがあります。" * 50]


def test_japanese_nouns_from_many_threads_at_once_equal_a_single_thread() -> None:
    expected = [japanese_nouns(t) for t in TEXTS]
    assert expected[0] == ["胸", "腺腫", "治療", "手術"]
    jobs = [TEXTS[i % len(TEXTS)] for i in range(2000)]
    with ThreadPoolExecutor(16) as pool:
        got = list(pool.map(japanese_nouns, jobs))
    assert got == [expected[i % len(TEXTS)] for i in range(2000)]
