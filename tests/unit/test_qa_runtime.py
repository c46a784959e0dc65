"""The numpy decoder (dkg.qa.runtime) writes what transformers' greedy ``generate`` writes, on a model
with random weights saved as training saves it; and loading it imports no torch."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from dkg.qa.model import EOS, PAD, SPECIALS, ModelSize, Seq2Seq, TrainResult, build_model, default_runtime

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def random_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BART of the small shape with random weights (and a non-zero logits bias), saved as training does."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers

    torch.manual_seed(7)
    size = ModelSize(name="tiny", d_model=32, layers=2, heads=4, ffn=64, vocab_size=200,
                     max_source_tokens=24, epochs=1, batch_size=8, lr=0.001, patience=1,
                     max_target_tokens=12)
    model = build_model(size, 200)
    with torch.no_grad():  # weights far from the near-constant initialisation, so outputs vary with the input
        for name, param in model.named_parameters():
            if "layer_norm" in name or "layernorm" in name:
                param.normal_(1.0 if name.endswith("weight") else 0.0, 0.2)
            else:
                param.normal_(0.0, 1.0)
        model.final_logits_bias.normal_(0, 0.5)  # exercised, although training leaves it at zero
    folder = tmp_path_factory.mktemp("model") / "cypher"
    model.save_pretrained(str(folder))
    vocab = {t: i for i, t in enumerate(SPECIALS + [chr(c) for c in range(97, 123)] + [f"w{i}" for i in range(170)])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    for name in ("source_tokenizer.json", "target_tokenizer.json"):
        tok.save(str(folder / name))
    result = TrainResult(folder=str(folder), target="cypher", size="tiny", parameters=1, epochs_run=1, best_epoch=1,
                         history=[], seconds_per_epoch=0.0, stopped_early=False, dataset_version="t")
    (folder / "dkg_model.json").write_text(json.dumps({"size": size.model_dump(), "train": result.model_dump(),
                                                       "target_offset": 0}), encoding="utf-8")
    return folder


def _questions(n: int) -> list[str]:
    rng = random.Random(3)
    return [" ".join(rng.choice([f"w{i}" for i in range(170)] + list("abcdefgh")) for _ in range(rng.randint(1, 30)))
            for _ in range(n)]


def test_numpy_and_torch_write_the_same_queries(random_model: Path) -> None:
    questions = _questions(70)
    torch_out = Seq2Seq(random_model, "torch").generate(questions, batch_size=16)
    numpy_out = Seq2Seq(random_model, "numpy").generate(questions, batch_size=16)
    assert numpy_out == torch_out
    one_by_one = [Seq2Seq(random_model, "numpy").generate([q])[0] for q in questions[:8]]
    assert one_by_one == torch_out[:8]  # a batch of one (padding-free, the scalar erf) is the same
    assert len(set(torch_out)) > 5  # random weights write varied outputs: the comparison means something


def test_the_length_limit_ends_with_the_forced_end_token(random_model: Path) -> None:
    import numpy as np

    from dkg.qa.runtime import NumpyBart

    ids = np.array([[5, 6, 7, EOS]], dtype=np.int64)
    rows = NumpyBart(random_model).generate(ids, pad=PAD, start=1, eos=EOS, max_new_tokens=3)
    assert len(rows[0]) <= 4 and rows[0][0] == 1 and rows[0][-1] == EOS


def test_loading_and_generating_imports_no_torch(random_model: Path) -> None:
    code = ("import sys; from pathlib import Path; from dkg.qa.model import Seq2Seq; "
            f"print(Seq2Seq(Path({str(random_model)!r})).generate(['w1 w2 a'])); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'transformers', 'scipy'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                          env={"PATH": "/usr/bin:/bin", "DKG_QA_RUNTIME": "numpy"})
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


def test_the_runtime_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DKG_QA_RUNTIME", "torch")
    assert default_runtime() == "torch"
    monkeypatch.setenv("DKG_QA_RUNTIME", "onnx")
    with pytest.raises(ValidationError, match="qa_runtime"):
        default_runtime()
