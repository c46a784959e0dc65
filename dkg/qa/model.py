"""The text-to-Cypher transformer: tokenizer and encoder-decoder trained here, from random weights.

Input: the question plus the facts the rule tagger found in it (``question || age=45 ; ph_status=…``).
Output: the item's Cypher (``target="cypher"``) or, for the paper's baseline without the DKG, the
answer text itself (``target="answer"``). The encoder-decoder is a BART configuration with random
weights (nothing is downloaded); sizes live in ``conf/model.yaml``.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel

from dkg.errors import ConfigError, ModelError
from dkg.graph.model import _camel
from dkg.qa.cypher import facts_in, literal, same_facts
from dkg.qa.facts import Linker, Tagged, tag_all
from dkg.storage import atomic_dir
from dkg.yamlio import load_yaml

CONF = Path(__file__).resolve().parents[2] / "conf" / "model.yaml"
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
PAD, BOS, EOS, UNK = 0, 1, 2, 3
Target = Literal["cypher", "answer"]


class ModelSize(BaseModel):
    """One model size and its training settings."""

    name: str
    vocab_size: int
    d_model: int
    layers: int
    heads: int
    ffn: int
    epochs: int
    batch_size: int
    lr: float
    patience: int
    max_train_items: int | None = None
    max_source_tokens: int = 160
    max_target_tokens: int = 200
    seed: int = 13


def load_size(name: str, path: Path = CONF, **overrides: Any) -> ModelSize:
    """A size from ``conf/model.yaml`` (``small`` or ``paper``), with overrides.

    Raises:
        ConfigError: unknown size or unreadable file.
    """
    try:
        d = load_yaml(path.read_text(encoding="utf-8"))
        spec = d["sizes"][name]
    except (OSError, KeyError, TypeError, yaml.YAMLError) as e:
        raise ConfigError(f"model size {name!r} not found in {path}: {e}") from e
    merged = {**spec, "max_source_tokens": d.get("max_source_tokens", 160),
              "max_target_tokens": d.get("max_target_tokens", 200), "seed": d.get("seed", 13),
              **{k: v for k, v in overrides.items() if v is not None}}
    return ModelSize(name=name, **merged)


def source_text(question: str, linker: Linker | None = None, tags: Tagged | None = None) -> str:
    """What the encoder reads: which values the tagger and linker found (slots), the guideline it
    names, and the question with the linked treatment and other disease masked.

    The model writes the query's shape around the slots (``$facts``, ``$treatment``, ``$page``,
    ``$disease``); their values come from the question through the tagger, as parameters.
    """
    q = " ".join(question.split())[:1000]
    t = tags or tag_all(q, linker)
    slots = [n for n, v in (("facts", t.facts), ("page", t.page), ("treatment", t.treatment),
                            ("disease", t.other_disease)) if v]
    masked = q
    if t.treatment:
        masked = _mask(masked, t.treatment, "<T>")
    if t.other_disease:
        masked = _mask(masked, t.other_disease, "<D>")
    parts = ["slots: " + (" ".join(slots) or "none"), "guideline: " + ("/".join(t.guidelines) or "none"), masked]
    return " | ".join(parts)


def _mask(text: str, phrase: str, token: str) -> str:
    pat = re.escape(phrase).replace(r"\ ", r"[\s-]+").replace(r"\-", r"[\s-]*")
    out, n = re.subn(pat, token, text, flags=re.IGNORECASE)
    return out if n else f"{text} {token}"


_FACTS = re.compile(r"WITH\s*\{[^{}]*\}\s*AS facts")


def delexicalize(query: str, tags: Tagged) -> str:
    """The dataset query with the tagged values replaced by parameters (the model's target)."""
    out = query
    if same_facts(facts_in(query), tags.facts):
        out = _FACTS.sub("WITH $facts AS facts", out, count=1)
    if tags.treatment:
        out = out.replace(f"CONTAINS {literal(tags.treatment)}", "CONTAINS $treatment")
    if tags.other_disease:
        out = out.replace(f"CONTAINS {literal(tags.other_disease)}", "CONTAINS $disease")
    if tags.page:
        out = out.replace(f"page: {literal(tags.page)}", "page: $page")
    return out


def slot_params(query: str, tags: Tagged) -> dict[str, Any] | str:
    """Parameters for the slots a generated query uses, or why they cannot be filled."""
    params: dict[str, Any] = {}
    for name in re.findall(r"\$(\w+)", query):
        if name == "facts":
            params["facts"] = {_camel(a): v for a, v in tags.facts.items()}
        elif name == "treatment" and tags.treatment:
            params["treatment"] = tags.treatment
        elif name == "disease" and tags.other_disease:
            params["disease"] = tags.other_disease
        elif name == "page" and tags.page:
            params["page"] = tags.page
        else:
            return f"the question gives no value for ${name}"
    return params


def train_tokenizer(texts: Sequence[str], vocab_size: int, split: bool = True) -> Any:
    """A BPE tokenizer trained on ``texts``.

    Without ``split``, merges may cross spaces: the fixed parts of a query become a few tokens, so
    the decoder writes ~12 tokens per query instead of ~130.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="never", split=split)
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="never", split=split)
    alphabet = sorted(set("".join(chr(c) for c in range(32, 127))) | {"\u2581", "≥", "≤", "±", "–", "°", "é"})
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, min_frequency=2,
                                  initial_alphabet=alphabet, max_token_length=64, show_progress=False)
    tok.train_from_iterator(texts, trainer)
    return tok


def build_model(size: ModelSize, vocab: int) -> Any:
    """A randomly initialised BART encoder-decoder of the given size."""
    from transformers import BartConfig, BartForConditionalGeneration

    config = BartConfig(vocab_size=vocab, d_model=size.d_model, encoder_layers=size.layers,
                        decoder_layers=size.layers, encoder_attention_heads=size.heads,
                        decoder_attention_heads=size.heads, encoder_ffn_dim=size.ffn, decoder_ffn_dim=size.ffn,
                        max_position_embeddings=max(size.max_source_tokens, size.max_target_tokens) + 8,
                        pad_token_id=PAD, bos_token_id=BOS, eos_token_id=EOS, decoder_start_token_id=BOS,
                        forced_eos_token_id=EOS, dropout=0.1, attention_dropout=0.0, scale_embedding=True)
    return BartForConditionalGeneration(config)


def parameter_count(model: Any) -> int:
    return int(sum(p.numel() for p in model.parameters()))


@dataclass(frozen=True)
class Example:
    source: str
    target: str


class EpochLog(BaseModel):
    epoch: int
    train_loss: float
    val_loss: float
    seconds: float


class TrainResult(BaseModel):
    """What a training run produced."""

    folder: str
    target: str
    size: str
    parameters: int
    epochs_run: int
    best_epoch: int
    history: list[EpochLog]
    seconds_per_epoch: float
    stopped_early: bool
    dataset_version: str


def _shift(rows: list[list[int]], off: int) -> list[list[int]]:
    return [[t if t < len(SPECIALS) else t + off for t in r] for r in rows]


def _encode(tok: Any, texts: Sequence[str], limit: int) -> list[list[int]]:
    return [[*e.ids[: limit - 1], EOS] for e in tok.encode_batch(list(texts))]


def _batches(src: list[list[int]], tgt: list[list[int]], size: int, rng: random.Random,
             shuffle: bool) -> list[list[int]]:
    order = sorted(range(len(src)), key=lambda i: (len(tgt[i]), len(src[i])))
    chunks = [order[i:i + size] for i in range(0, len(order), size)]
    if shuffle:
        rng.shuffle(chunks)
    return chunks


def _tensor(rows: list[list[int]], pad: int) -> Any:
    import torch

    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows], dtype=torch.long)


def _loss(model: Any, src: list[list[int]], tgt: list[list[int]], idx: list[int]) -> Any:
    ids = _tensor([src[i] for i in idx], PAD)
    labels = _tensor([tgt[i] for i in idx], -100)
    return model(input_ids=ids, attention_mask=(ids != PAD).long(), labels=labels).loss


def _optimizer(model: Any, size: ModelSize, train_items: int) -> tuple[Any, Any]:
    """AdamW; its rate warms up linearly over the first 5% of the steps and decays linearly over all of them (to
    no less than 5% of it)."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=size.lr, weight_decay=0.01)
    steps = size.epochs * math.ceil(train_items / size.batch_size)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.05, 1 - s / max(1, steps)))
    return opt, sched


def _train_epoch(model: Any, opt: Any, sched: Any, s_tr: list[list[int]], t_tr: list[list[int]], size: ModelSize,
                 rng: random.Random, progress: Callable[[int, int], None] | None) -> float:
    """One pass over the training batches in a shuffled order; the loss summed over the items."""
    import torch

    model.train()
    total = 0.0
    batches = _batches(s_tr, t_tr, size.batch_size, rng, shuffle=True)
    for n, idx in enumerate(batches, 1):
        loss = _loss(model, s_tr, t_tr, idx)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        total += loss.item() * len(idx)
        if progress:
            progress(n, len(batches))
    return total


def _val_loss(model: Any, s_va: list[list[int]], t_va: list[list[int]], rng: random.Random) -> float:
    """The mean validation loss per item."""
    import torch

    model.eval()
    with torch.no_grad():
        vb = _batches(s_va, t_va, 64, rng, shuffle=False)
        val = sum(float(_loss(model, s_va, t_va, idx)) * len(idx) for idx in vb) / max(1, len(s_va))
    return val


def _save_model(out: Path, model: Any, src_tok: Any, tgt_tok: Any, size: ModelSize, result: TrainResult,
                off: int) -> None:
    with atomic_dir(out) as tmp:  # a model folder is complete (weights, tokenizers, metadata) or absent
        model.save_pretrained(str(tmp))
        src_tok.save(str(tmp / "source_tokenizer.json"))
        tgt_tok.save(str(tmp / "target_tokenizer.json"))
        (tmp / "dkg_model.json").write_text(json.dumps({"size": size.model_dump(), "train": result.model_dump(),
                                                        "target_offset": off}, indent=1), encoding="utf-8")


def train(train_ex: Sequence[Example], val_ex: Sequence[Example], size: ModelSize, out: Path, target: Target,
          dataset_version: str, on_epoch: Callable[[EpochLog], None] | None = None,
          progress: Callable[[int, int], None] | None = None) -> TrainResult:
    """Train tokenizer and model; keep the weights of the best validation loss; stop early.

    Args:
        on_epoch: called after each epoch with its losses (the Prefect task logs them).
        progress: called with (batches done, batches in the epoch).
    """
    import torch

    torch.manual_seed(size.seed)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    rng = random.Random(size.seed)
    train_ex = list(train_ex)
    if size.max_train_items and len(train_ex) > size.max_train_items:
        train_ex = rng.sample(train_ex, size.max_train_items)
    # One vocabulary for questions and queries (tied embeddings), merges allowed across spaces.
    src_tok = tgt_tok = train_tokenizer([e.source for e in train_ex] + [e.target for e in train_ex],
                                        size.vocab_size, split=False)
    off = 0
    s_tr, t_tr = _encode(src_tok, [e.source for e in train_ex], size.max_source_tokens), \
        _shift(_encode(tgt_tok, [e.target for e in train_ex], size.max_target_tokens), off)
    s_va, t_va = _encode(src_tok, [e.source for e in val_ex], size.max_source_tokens), \
        _shift(_encode(tgt_tok, [e.target for e in val_ex], size.max_target_tokens), off)
    model = build_model(size, src_tok.get_vocab_size())
    opt, sched = _optimizer(model, size, len(s_tr))
    history: list[EpochLog] = []
    best: tuple[float, int, dict[str, Any]] | None = None
    bad = 0
    stopped = False
    for epoch in range(1, size.epochs + 1):
        t0 = time.perf_counter()
        total = _train_epoch(model, opt, sched, s_tr, t_tr, size, rng, progress)
        val = _val_loss(model, s_va, t_va, rng)
        log = EpochLog(epoch=epoch, train_loss=round(total / max(1, len(s_tr)), 5), val_loss=round(val, 5),
                       seconds=round(time.perf_counter() - t0, 1))
        history.append(log)
        if on_epoch:
            on_epoch(log)
        if best is None or val < best[0] - 1e-4:
            best = (val, epoch, {k: v.detach().clone() for k, v in model.state_dict().items()})
            bad = 0
        else:
            bad += 1
            if bad >= size.patience:
                stopped = True
                break
    assert best is not None
    model.load_state_dict(best[2])
    result = TrainResult(folder=str(out), target=target, size=size.name, parameters=parameter_count(model),
                         epochs_run=len(history), best_epoch=best[1], history=history,
                         seconds_per_epoch=round(sum(h.seconds for h in history) / len(history), 1),
                         stopped_early=stopped, dataset_version=dataset_version)
    _save_model(out, model, src_tok, tgt_tok, size, result, off)
    return result


Runtime = Literal["numpy", "torch"]


def default_runtime() -> Runtime:
    """The ``qa_runtime`` setting (``DKG_QA_RUNTIME``): ``numpy`` (no torch on the answer path) or ``torch``."""
    from dkg.settings import load_settings

    return load_settings().qa_runtime


class Seq2Seq:
    """A trained model, loaded once, that writes Cypher (or answers) for questions.

    ``runtime="numpy"`` (the default) decodes with :class:`dkg.qa.runtime.NumpyBart` and never imports
    torch; ``runtime="torch"`` loads the transformers model (what training uses). Both do the same
    greedy search on the same weights.
    """

    def __init__(self, folder: Path, runtime: Runtime | None = None) -> None:
        meta = folder / "dkg_model.json"
        if not folder.is_dir() or not meta.exists():
            raise ModelError(f"no trained model in {folder} (run `dkg qa train` first)")
        self.runtime: Runtime = runtime or default_runtime()
        self.model: Any = None
        self.numpy: Any = None
        try:
            from tokenizers import Tokenizer

            info = json.loads(meta.read_text(encoding="utf-8"))
            self.size = ModelSize(**info["size"])
            self.train_info = TrainResult(**info["train"])
            self.src_tok = Tokenizer.from_file(str(folder / "source_tokenizer.json"))
            self.tgt_tok = Tokenizer.from_file(str(folder / "target_tokenizer.json"))
            self.off = int(info.get("target_offset", 0))
            if self.runtime == "torch":
                self._load_torch(folder)
            else:
                from dkg.qa.runtime import NumpyBart

                self.numpy = NumpyBart(folder)
        except ModelError:
            raise
        except Exception as e:  # corrupt weights, tokenizer or metadata: one clear error
            raise ModelError(f"the model in {folder} is unreadable ({type(e).__name__}: {str(e)[:200]})") from e
        self.folder = folder

    def _load_torch(self, folder: Path) -> None:
        import torch
        from transformers import BartForConditionalGeneration
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Loading weights" bar
        self.model = BartForConditionalGeneration.from_pretrained(str(folder))
        self.model.eval()
        torch.set_num_threads(max(1, os.cpu_count() or 1))

    @property
    def target(self) -> str:
        return self.train_info.target

    def _rows(self, src: list[list[int]]) -> list[list[int]]:
        if self.numpy is not None:
            import numpy as np

            width = max(len(r) for r in src)
            ids = np.array([r + [PAD] * (width - len(r)) for r in src], dtype=np.int64)
            return self.numpy.generate(ids, pad=PAD, start=BOS, eos=EOS,  # type: ignore[no-any-return]
                                       max_new_tokens=self.size.max_target_tokens)
        import torch

        ids = _tensor(src, PAD)
        with torch.no_grad():
            gen = self.model.generate(input_ids=ids, attention_mask=(ids != PAD).long(), num_beams=1,
                                      do_sample=False, max_new_tokens=self.size.max_target_tokens,
                                      decoder_start_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD)
        return gen.tolist()  # type: ignore[no-any-return]

    def generate(self, questions: Sequence[str], linker: Linker | None = None, batch_size: int = 32,
                 tags: Sequence[Tagged] | None = None) -> list[str]:
        """Greedy decoding, in batches (``tags``: what the tagger found, when already known)."""
        out: list[str] = []
        for i in range(0, len(questions), batch_size):
            chunk = questions[i:i + batch_size]
            tchunk = tags[i:i + batch_size] if tags is not None else [None] * len(chunk)
            src = _encode(self.src_tok, [source_text(q, linker, t) for q, t in zip(chunk, tchunk, strict=True)],
                          self.size.max_source_tokens)
            for row in self._rows(src):
                toks = [t for t in row if t not in (PAD, BOS)]
                if EOS in toks:
                    toks = toks[: toks.index(EOS)]
                target_ids = [t - self.off for t in toks if t >= len(SPECIALS) + self.off]
                out.append(self.tgt_tok.decode(target_ids).strip())
        return out
