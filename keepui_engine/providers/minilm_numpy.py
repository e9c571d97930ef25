"""Pure-numpy forward pass of a sentence-transformers BERT model such as all-MiniLM-L6-v2."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

# erfc(a) ~ t * P(t) * exp(-a*a) for a >= 0, t = 1 / (1 + 0.3275911 a): Abramowitz and Stegun
# 7.1.26, |erf error| <= 1.5e-7, about float32's own resolution (torch computes GELU in float32).
_AS_P = 0.3275911
_AS_POLY = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)  # highest first
_BATCH = 16  # texts per forward pass (sorted by length, padded within the batch)
_CHUNK = 8192  # GELU elements per chunk (32 KB temporaries: no mmap, in cache)
_SQRT1_2 = 1.0 / math.sqrt(2.0)
_ERFC_CLIP = 9.0  # erfc(9) < 1e-36


def _erfc_abs(z: np.ndarray) -> np.ndarray:
    """Return erfc(|z|) of a float32 array (absolute error <= 1.5e-7) with plain ufuncs (a
    masked `where=` ufunc is unvectorized, 10x slower here)."""
    a = np.abs(z)
    np.minimum(a, np.float32(_ERFC_CLIP), out=a)  # no denormals below (slow on x86)
    t = a * np.float32(_AS_P)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    p = t * np.float32(_AS_POLY[0])
    for c in _AS_POLY[1:]:  # Horner
        p += np.float32(c)
        p *= t
    a *= a
    np.negative(a, out=a)
    np.exp(a, out=a)
    p *= a
    return p


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf-based) GELU x * Phi(x) of a float32 array, in float32.

    x * Phi(x) = max(x, 0) - |x| * erfc(|x| / sqrt 2) / 2, which needs no sign branch (absolute
    error 3.3e-7 against float64; torch's float32 GELU: 3.7e-7). In chunks whose temporaries
    stay under malloc's mmap threshold: fresh mmapped pages for each temporary (their page
    faults) had cost more than the arithmetic. Was float64 with a masked ufunc: 3x slower.
    """
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    for s in range(0, flat.size, _CHUNK):
        v = flat[s : s + _CHUNK]
        a = np.abs(v)
        np.minimum(a, np.float32(_ERFC_CLIP / _SQRT1_2), out=a)  # where erfc(|x|/sqrt 2) ~ 0
        e = _erfc_abs(a * np.float32(_SQRT1_2))
        e *= a
        e *= np.float32(0.5)
        o = out[s : s + _CHUNK]
        np.maximum(v, np.float32(0.0), out=o)
        o -= e
    return out.reshape(x.shape)


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    x = x - x.mean(-1, keepdims=True)
    x *= 1.0 / np.sqrt(np.mean(x * x, -1, keepdims=True) + np.float32(eps))
    x *= g
    x += b
    return x


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise ValueError(f"{path.name} not found in {path.parent}: not a supported model directory")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc


def _read_configs(d: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate the model directory; return (config.json, sentence_bert_config.json)."""
    cfg = _read_json(d / "config.json")
    need = ("hidden_size", "num_attention_heads", "num_hidden_layers")
    if not isinstance(cfg, dict) or not all(isinstance(cfg.get(k), int) for k in need):
        raise ValueError(f"config.json in {d}: needs integer {', '.join(need)}")
    got = (cfg.get("model_type"), cfg.get("hidden_act"))
    if got != ("bert", "gelu"):
        raise ValueError(f"config.json in {d}: need model_type bert, hidden_act gelu; got {got}")
    if cfg.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"config.json in {d}: only absolute position embeddings are supported")
    if cfg["hidden_size"] % cfg["num_attention_heads"]:
        raise ValueError(f"config.json in {d}: hidden_size not divisible by num_attention_heads")
    mods = _read_json(d / "modules.json")
    ok = isinstance(mods, list) and all(isinstance(m, dict) for m in mods)
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in mods] if ok else []
    if kinds != ["Transformer", "Pooling", "Normalize"]:
        raise ValueError(f"modules.json in {d}: need Transformer, Pooling, Normalize; got {kinds}")
    pool_path = d / mods[1].get("path", "1_Pooling") / "config.json"
    pool = _read_json(pool_path)
    mode = pool.get("pooling_mode")
    if mode is None:  # legacy pooling_mode_*_tokens flags; none set means mean
        active = [k for k, v in pool.items() if k.startswith("pooling_mode_") and v]
        mode = "mean" if active in ([], ["pooling_mode_mean_tokens"]) else active
    if mode not in ("mean", ["mean"]):
        raise ValueError(f"{pool_path}: only mean pooling is supported, got {mode!r}")
    width = pool.get("word_embedding_dimension", pool.get("embedding_dimension"))
    if width not in (None, cfg["hidden_size"]):
        raise ValueError(f"{pool_path}: embedding dimension {width} != hidden_size in config.json")
    return cfg, _read_json(d / "sentence_bert_config.json")


class MiniLMNumpy:
    """BERT sentence encoder (Transformer -> mean Pooling -> Normalize) running on numpy alone.

    Matches sentence-transformers (cosine >= 0.99999) without importing torch or transformers,
    so short-lived processes can embed a query quickly. Build instances with :meth:`load`.

    Attributes:
        dim: Embedding dimension (the hidden size; 384 for all-MiniLM-L6-v2).
        max_seq_length: Maximum tokens per text including [CLS] and [SEP], from
            sentence_bert_config.json (capped at max_position_embeddings).
    """

    dim: int
    max_seq_length: int

    def __init__(self, tokenizer: Any, weights: dict[str, np.ndarray], config: dict[str, Any]):
        """Wrap a configured tokenizer and prepared weights; use :meth:`load` instead."""
        self._tok, self._w = tokenizer, weights
        self._heads = config["num_attention_heads"]
        self._layers = config["num_hidden_layers"]
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self.dim = config["hidden_size"]
        self.max_seq_length = tokenizer.truncation["max_length"]

    @classmethod
    def load(cls, model_dir: str | os.PathLike) -> MiniLMNumpy:
        """Load a sentence-transformers BERT model directory.

        Args:
            model_dir: Directory holding config.json, model.safetensors, tokenizer.json,
                modules.json, sentence_bert_config.json and the pooling config.json.

        Returns:
            A ready-to-use encoder.

        Raises:
            ValueError: If a file is missing or the model is unsupported (not BERT, hidden_act
                not gelu, pooling not mean, ...); the message names the offending file.
        """
        d = Path(model_dir)
        if not d.is_dir():
            raise ValueError(f"model directory {d} does not exist")
        cfg, st_cfg = _read_configs(d)
        max_pos = int(cfg.get("max_position_embeddings", 512))
        max_len = min(int(st_cfg.get("max_seq_length") or max_pos), max_pos)
        tok_path, weights_path = d / "tokenizer.json", d / "model.safetensors"
        if not tok_path.is_file():
            raise ValueError(f"tokenizer.json not found in {d}: a fast-tokenizer file is required")
        if not weights_path.is_file():
            bin_only = (d / "pytorch_model.bin").is_file()
            hint = " (only pytorch_model.bin, which needs torch; convert it)" if bin_only else ""
            raise ValueError(f"model.safetensors not found in {d}{hint}")

        from safetensors.numpy import load_file
        from tokenizers import Tokenizer, normalizers

        try:
            tok = Tokenizer.from_file(str(tok_path))
        except Exception as exc:
            raise ValueError(f"cannot load tokenizer.json in {d}: {exc}") from exc
        tok.no_padding()
        tok.enable_truncation(max_length=max_len, strategy="longest_first")
        if st_cfg.get("do_lower_case"):
            extra = [tok.normalizer] if tok.normalizer else []
            tok.normalizer = normalizers.Sequence([normalizers.Lowercase(), *extra])
        return cls(tok, _prepare(load_file(str(weights_path)), cfg, weights_path), cfg)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed texts.

        Args:
            texts: Strings to embed; each is truncated to ``max_seq_length`` tokens.

        Returns:
            float32 array of shape ``(len(texts), dim)`` whose rows are the L2-normalised means
            of the final hidden states over each text's tokens.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        encs = self._tok.encode_batch([str(t) for t in texts]) if texts else []
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        for s in range(0, len(order), _BATCH):
            idx = order[s : s + _BATCH]
            lengths = [len(encs[i].ids) for i in idx]
            ids = np.zeros((len(idx), max(lengths)), dtype=np.int64)
            types = np.zeros_like(ids)
            mask = np.zeros(ids.shape, dtype=np.float32)
            for r, (i, m) in enumerate(zip(idx, lengths, strict=True)):
                ids[r, :m], types[r, :m], mask[r, :m] = encs[i].ids, encs[i].type_ids, 1.0
            h = self._forward(ids, types, lengths)
            pooled = (h * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            norm = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.maximum(norm, 1e-12)
        return out

    def _forward(self, ids: np.ndarray, types: np.ndarray, lengths: list[int]) -> np.ndarray:
        w, eps, nh, dim = self._w, self._eps, self._heads, self.dim
        b, n = ids.shape
        x = w["word_embeddings.weight"][ids] + w["position_embeddings.weight"][None, :n]
        x += w["token_type_embeddings.weight"][types]
        x = _layer_norm(x, w["LayerNorm.weight"], w["LayerNorm.bias"], eps).reshape(b * n, dim)
        ctx = np.zeros((b, n, nh, dim // nh), dtype=np.float32)
        for i in range(self._layers):
            a, f, o = (f"{i}.{m}" for m in ("attention.output.", "intermediate.", "output."))
            qkv = (x @ w[f"{i}.qkv.weight"] + w[f"{i}.qkv.bias"]).reshape(b, n, 3, nh, dim // nh)
            for r, m in enumerate(lengths):  # real tokens only: same as a -inf mask on padding
                q, k, v = (qkv[r, :m, j].transpose(1, 0, 2) for j in range(3))
                s = q @ k.transpose(0, 2, 1)  # (heads, m, m); 1/sqrt(head_dim) is folded into Q
                s -= s.max(-1, keepdims=True)
                np.exp(s, out=s)
                s /= s.sum(-1, keepdims=True)
                ctx[r, :m] = (s @ v).transpose(1, 0, 2)
            h = ctx.reshape(b * n, dim) @ w[a + "dense.weight"] + w[a + "dense.bias"] + x
            x = _layer_norm(h, w[a + "LayerNorm.weight"], w[a + "LayerNorm.bias"], eps)
            h = _gelu(x @ w[f + "dense.weight"] + w[f + "dense.bias"])
            h = h @ w[o + "dense.weight"] + w[o + "dense.bias"] + x
            x = _layer_norm(h, w[o + "LayerNorm.weight"], w[o + "LayerNorm.bias"], eps)
        return x.reshape(b, n, dim)


def _prepare(raw: dict[str, np.ndarray], cfg: dict[str, Any], path: Path) -> dict[str, np.ndarray]:
    """Pick the HF BERT tensors, fuse Q/K/V and pre-transpose matrices for ``x @ W``."""
    pre = "bert." if "bert.embeddings.word_embeddings.weight" in raw else ""
    scale = np.float32(1.0 / math.sqrt(cfg["hidden_size"] // cfg["num_attention_heads"]))
    emb = ("word_embeddings.weight", "position_embeddings.weight", "token_type_embeddings.weight")
    try:
        w = {k: raw[f"{pre}embeddings.{k}"] for k in (*emb, "LayerNorm.weight", "LayerNorm.bias")}
        for i, t in ((i, t) for i in range(cfg["num_hidden_layers"]) for t in ("weight", "bias")):
            lay = f"{pre}encoder.layer.{i}."
            q, k, v = (raw[f"{lay}attention.self.{n}.{t}"] for n in ("query", "key", "value"))
            w[f"{i}.qkv.{t}"] = np.concatenate([q * scale, k, v])
            for m in ("attention.output.dense", "intermediate.dense", "output.dense"):
                w[f"{i}.{m}.{t}"] = raw[f"{lay}{m}.{t}"]
            for m in ("attention.output.LayerNorm", "output.LayerNorm"):
                w[f"{i}.{m}.{t}"] = raw[f"{lay}{m}.{t}"]
    except KeyError as exc:
        raise ValueError(f"{path.name} in {path.parent}: missing tensor {exc}") from None
    if w["word_embeddings.weight"].shape[1] != cfg["hidden_size"]:
        raise ValueError(f"{path.name}: word embedding width != hidden_size in config.json")
    for name, tensor in w.items():
        oriented = tensor.T if name.endswith(("qkv.weight", "dense.weight")) else tensor
        w[name] = np.ascontiguousarray(oriented, dtype=np.float32)
    return w
