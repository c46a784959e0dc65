"""Greedy decoding of a trained text-to-Cypher model with numpy alone (no torch on the answer path).

The model trained by :mod:`dkg.qa.model` is a small BART encoder-decoder (3 + 3 layers, d_model 128).
Importing torch and transformers and building the model takes ~15 s on two cores, longer than any
question; the forward pass itself is a few matrix products. This module reads the same
``model.safetensors`` and runs the same computation — BART's post-norm layers, learned positions
with offset 2, scaled tied embeddings, ``final_logits_bias`` — with greedy search and the forced
end token at the length limit, exactly as ``generate(num_beams=1, do_sample=False)`` does.

The answers are compared with the torch model's on every generated test item by ``make bench``
(``bench/qa_runtime.py``) and on a sample by the tests; float32 sums in another order can in
principle flip a near-tie of two tokens, which the bench would show.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

Array = Any  # numpy arrays; the shapes are in the comments

_ERF: Any = np.frompyfunc(math.erf, 1, 1)
_NEG = np.float32(np.finfo(np.float32).min)


Erf = Callable[[Array], Array]


def _erf_scalar(x: Array) -> Array:
    return _ERF(x).astype(np.float32)


def _erf_for(batch: int) -> Erf:
    """The error function: ``math.erf`` per element for one question (importing scipy costs 0.35 s of
    a cold ``dkg ask``), scipy's vectorised one for a batch (the same float32 values)."""
    if batch <= 1:
        return _erf_scalar
    from scipy.special import erf

    return lambda x: erf(x).astype(np.float32)


def _gelu(x: Array, erf: Erf) -> Array:
    """GELU with the exact error function (transformers' ``gelu``)."""
    return (x * 0.5 * (1.0 + erf(x / np.float32(math.sqrt(2.0))))).astype(np.float32)


def _layer_norm(x: Array, w: Array, b: Array, eps: float = 1e-5) -> Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + eps) * w + b).astype(np.float32)


def _softmax(x: Array) -> Array:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class _Linear:
    def __init__(self, w: Array, b: Array) -> None:
        self.wt = np.ascontiguousarray(w.T)  # (in, out): one matrix product over all rows
        self.b = b
        self.out = w.shape[0]

    def __call__(self, x: Array) -> Array:
        return (x.reshape(-1, x.shape[-1]) @ self.wt + self.b).reshape(*x.shape[:-1], self.out)


class _Attention:
    def __init__(self, p: dict[str, Array], prefix: str, heads: int) -> None:
        self.q, self.k, self.v, self.o = (_Linear(p[f"{prefix}.{n}_proj.weight"], p[f"{prefix}.{n}_proj.bias"])
                                          for n in ("q", "k", "v", "out"))
        self.heads = heads
        self.dim = self.q.out // heads
        self.scaling = np.float32(self.dim ** -0.5)

    def split(self, x: Array) -> Array:  # (b, t, d) -> (b, h, t, d/h)
        b, t, _ = x.shape
        return x.reshape(b, t, self.heads, self.dim).transpose(0, 2, 1, 3)

    def attend(self, x: Array, keys: Array, values: Array, mask: Array | None) -> Array:
        q = self.split(self.q(x) * self.scaling)
        scores = q @ keys.transpose(0, 1, 3, 2)  # (b, h, tq, tk)
        if mask is not None:
            scores = scores + mask
        ctx = _softmax(scores) @ values  # (b, h, tq, d/h)
        b, _, t, _ = ctx.shape
        return self.o(ctx.transpose(0, 2, 1, 3).reshape(b, t, -1))


class _Block:
    """One BART layer (self-attention, cross-attention in the decoder, feed-forward; post-norm)."""

    def __init__(self, p: dict[str, Array], prefix: str, heads: int, cross: bool) -> None:
        self.self_attn = _Attention(p, f"{prefix}.self_attn", heads)
        self.self_norm = (p[f"{prefix}.self_attn_layer_norm.weight"], p[f"{prefix}.self_attn_layer_norm.bias"])
        self.cross = _Attention(p, f"{prefix}.encoder_attn", heads) if cross else None
        self.cross_norm = ((p[f"{prefix}.encoder_attn_layer_norm.weight"], p[f"{prefix}.encoder_attn_layer_norm.bias"])
                           if cross else None)
        self.fc1 = _Linear(p[f"{prefix}.fc1.weight"], p[f"{prefix}.fc1.bias"])
        self.fc2 = _Linear(p[f"{prefix}.fc2.weight"], p[f"{prefix}.fc2.bias"])
        self.final_norm = (p[f"{prefix}.final_layer_norm.weight"], p[f"{prefix}.final_layer_norm.bias"])

    def feed_forward(self, h: Array, erf: Erf) -> Array:
        return _layer_norm(h + self.fc2(_gelu(self.fc1(h), erf)), *self.final_norm)


class NumpyBart:
    """The encoder-decoder's weights and its greedy search."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        p = load_file(str(folder / "model.safetensors"))
        self.d = int(config["d_model"])
        self.scale = np.float32(math.sqrt(self.d) if config.get("scale_embedding") else 1.0)
        self.embed = p["model.shared.weight"]  # (vocab, d), tied with the output projection
        self.embed_t = np.ascontiguousarray(self.embed.T)
        self.bias = p["final_logits_bias"][0]
        self.pos = {s: p[f"model.{s}.embed_positions.weight"] for s in ("encoder", "decoder")}
        self.norm = {s: (p[f"model.{s}.layernorm_embedding.weight"], p[f"model.{s}.layernorm_embedding.bias"])
                     for s in ("encoder", "decoder")}
        self.encoder = [_Block(p, f"model.encoder.layers.{i}", int(config["encoder_attention_heads"]), False)
                        for i in range(int(config["encoder_layers"]))]
        self.decoder = [_Block(p, f"model.decoder.layers.{i}", int(config["decoder_attention_heads"]), True)
                        for i in range(int(config["decoder_layers"]))]

    def _embed(self, ids: Array, side: str, start: int) -> Array:
        h = self.embed[ids] * self.scale + self.pos[side][start + 2: start + 2 + ids.shape[1]]
        return _layer_norm(h, *self.norm[side])

    def encode(self, ids: Array, pad: int, erf: Erf) -> tuple[Array, Array]:
        """Encoder states (b, t, d) and the additive mask of padded source positions (b, 1, 1, t)."""
        mask = np.where(ids == pad, _NEG, np.float32(0.0))[:, None, None, :].astype(np.float32)
        h = self._embed(ids, "encoder", 0)
        for layer in self.encoder:
            a = layer.self_attn
            h = _layer_norm(h + a.attend(h, a.split(a.k(h)), a.split(a.v(h)), mask), *layer.self_norm)
            h = layer.feed_forward(h, erf)
        return h, mask

    def generate(self, ids: Array, *, pad: int, start: int, eos: int, max_new_tokens: int) -> list[list[int]]:
        """Greedy search: the rows ``generate`` returns (start token first, padded after the end)."""
        b = ids.shape[0]
        erf = _erf_for(b)
        memory, mask = self.encode(ids, pad, erf)
        cross = [(layer.cross.split(layer.cross.k(memory)), layer.cross.split(layer.cross.v(memory)))
                 for layer in self.decoder if layer.cross is not None]
        cache: list[tuple[Array, Array] | None] = [None] * len(self.decoder)
        rows = [[start] for _ in range(b)]
        done = np.zeros(b, dtype=bool)
        token = np.full((b, 1), start, dtype=np.int64)
        for step in range(max_new_tokens):
            h = self._embed(token, "decoder", step)
            for i, layer in enumerate(self.decoder):
                a = layer.self_attn
                k, v = a.split(a.k(h)), a.split(a.v(h))
                past = cache[i]
                if past is not None:
                    k, v = np.concatenate([past[0], k], axis=2), np.concatenate([past[1], v], axis=2)
                cache[i] = (k, v)
                h = _layer_norm(h + a.attend(h, k, v, None), *layer.self_norm)
                assert layer.cross is not None and layer.cross_norm is not None
                h = _layer_norm(h + layer.cross.attend(h, *cross[i], mask), *layer.cross_norm)
                h = layer.feed_forward(h, erf)
            logits = h[:, -1] @ self.embed_t + self.bias  # (b, vocab)
            last = step == max_new_tokens - 1  # the forced end token at the length limit
            nxt = np.full(b, eos, dtype=np.int64) if last else logits.argmax(-1)
            nxt = np.where(done, pad, nxt)
            for r, t in zip(rows, nxt.tolist(), strict=True):
                r.append(int(t))
            done |= nxt == eos
            if done.all():
                break
            token = nxt[:, None]
        return rows
