"""Constraint extraction speed: sentences per second with a cold CoreNLP parse and from the cache."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bench.common import Row

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference" / "guidelines"


def run() -> list[Row]:
    """Parse every reference box text once cold (empty cache), then again from the cache."""
    from dkg.constraints.extract import extract, prepare
    from dkg.constraints.parse import ParseCache, parse_texts
    from dkg.constraints.vocabulary import load_vocabulary
    from dkg.settings import load_settings

    vocab = load_vocabulary()
    settings = load_settings()
    texts = sorted({n["text"] for f in REFERENCE.glob("*/*/truth.json") for n in json.loads(f.read_text())["nodes"]})
    prepared = [prepare(vocab, t) for t in texts]
    with tempfile.TemporaryDirectory() as tmp:
        cache = ParseCache(Path(tmp) / "c.sqlite")
        t0 = time.perf_counter()
        parses = parse_texts(settings, prepared, cache)
        for t, p in zip(texts, parses, strict=True):
            extract(vocab, t, p)
        cold = len(texts) / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        parses = parse_texts(settings, prepared, cache)
        for t, p in zip(texts, parses, strict=True):
            extract(vocab, t, p)
        warm = len(texts) / (time.perf_counter() - t0)
        cache.close()
    return [Row("constraints sentences/s, cached parse", warm, "cold CoreNLP parse sentences/s", cold, "s/s")]
