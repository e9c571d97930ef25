"""Summarizers: the offline providers, extractive centrality, the OpenAI-compatible client, mlx."""

from __future__ import annotations

import json
import platform
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from keepui_engine.core.errors import ConfigError, ProviderError
from keepui_engine.providers.base import Summarizer
from keepui_engine.providers.fake import FakeEmbedder
from keepui_engine.providers.summary import SummaryConfig, create_summarizer
from keepui_engine.providers.summary.extractive import MAX_SENTENCES
from keepui_engine.providers.summary.llm import MLX_MISSING, MlxSummarizer
from keepui_engine.providers.summary.text import normalize, split_sentences

SCIFACT = Path(__file__).resolve().parents[3] / "shared/data/beir/scifact/corpus.jsonl"
LONG = (
    "Keepui stores notes in one DuckDB file.   Every note is versioned,\nso older texts stay "
    "available. Search combines vectors with full-text ranking and recency. " * 4
)
CENTRAL = [
    "The vector index stores embeddings for fast search.",
    "Search over the vector index returns the nearest embeddings.",
    "The index keeps embeddings so vector search stays fast.",
]
TOPICAL = (
    "Bananas are yellow fruit that monkeys enjoy eating. "
    f"{CENTRAL[0]} Penguins live in cold climates near the south pole. {CENTRAL[1]} "
    f"My uncle plays the trumpet on weekends. {CENTRAL[2]}"
)


FAKE_EMBED = FakeEmbedder(dim=256).embed


def make(provider: str, **kw: Any) -> Summarizer:
    return create_summarizer(SummaryConfig(provider=provider, **kw))


def test_truncate_cuts_at_a_word_boundary_within_the_limit() -> None:
    out = make("truncate", max_chars=60).summarize(LONG)
    flat = normalize(LONG)
    assert len(out) <= 60 and out.endswith("…")
    head = out[:-1]
    assert flat.startswith(head) and flat[len(head)] == " "
    assert make("truncate", max_chars=60).summarize("A short   note.\n") == "A short note."
    assert make("truncate", max_chars=10).summarize("x" * 50) == "x" * 9 + "…"  # one long word


def test_passthrough_normalises_whitespace_up_to_the_limit() -> None:
    assert make("passthrough").summarize("one\n\n two\tthree ") == "one two three"
    assert len(make("passthrough", max_chars=100).summarize(LONG)) <= 100


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "# Title\n\nFirst line\ncontinues here.\n\nSecond paragraph.",
            "First line continues here.",
        ),
        ("## Heading\nBody right under it.\n\nNext.", "Body right under it."),
        ("\n\n  Plain start.  \n\nMore.", "Plain start."),
        ("# Only a heading", "Only a heading"),
    ],
)
def test_first_paragraph_skips_a_leading_heading(text: str, expected: str) -> None:
    assert make("first_paragraph").summarize(text) == expected


def test_first_paragraph_is_cut_to_the_limit() -> None:
    out = make("first_paragraph", max_chars=40).summarize("# T\n\n" + LONG)
    assert len(out) <= 40 and out.endswith("…") and out.startswith("Keepui stores")


@pytest.mark.parametrize("provider", ["truncate", "first_paragraph", "passthrough", "extractive"])
def test_offline_providers_ignore_context(provider: str) -> None:
    summarizer = make(provider)
    assert isinstance(summarizer, Summarizer) and summarizer.uses_context is False
    assert summarizer.summarize(TOPICAL, context=["other"]) == summarizer.summarize(TOPICAL)


def test_sentence_splitter_keeps_abbreviations_and_decimals() -> None:
    text = (
        "# Notes\n\nDr. Smith uses tools, e.g. Python, daily. See Fig. 3 for the 3.5% rise! "
        'Was it real? "Yes," said J. Doe.\n- first item\n- second item\n\nLast\nline here.'
    )
    assert split_sentences(text) == [
        "Dr. Smith uses tools, e.g. Python, daily.",
        "See Fig. 3 for the 3.5% rise!",
        "Was it real?",
        '"Yes," said J. Doe.',
        "first item",
        "second item",
        "Last line here.",
    ]


@pytest.mark.parametrize("embed", [FAKE_EMBED, None], ids=["embedding", "tfidf"])
def test_extractive_picks_the_central_sentences_in_order(embed: Any) -> None:
    summarizer = create_summarizer(SummaryConfig(sentences=3), embed)
    assert summarizer.summarize(TOPICAL) == " ".join(CENTRAL)


def test_extractive_returns_short_texts_whole() -> None:
    text = "One sentence here.  Two sentences\nhere."
    assert create_summarizer(SummaryConfig(sentences=3), FAKE_EMBED).summarize(text) == (
        "One sentence here. Two sentences here."
    )


def test_extractive_respects_max_chars() -> None:
    summarizer = create_summarizer(SummaryConfig(sentences=3, max_chars=110), FAKE_EMBED)
    out = summarizer.summarize(TOPICAL)
    assert len(out) <= 110
    picked = split_sentences(out)
    assert picked and all(s in CENTRAL for s in picked)
    tiny = create_summarizer(SummaryConfig(sentences=2, max_chars=20), FAKE_EMBED)
    cut = tiny.summarize(TOPICAL)
    assert len(cut) <= 20 and cut.endswith("…")


def test_a_text_of_fragments_gives_its_fragments_in_order_without_bare_numbers() -> None:
    text = "Shopping list\n- eggs\n- 42\n- flour for bread\n- 2024\n- butter\n- milk and honey"
    out = create_summarizer(SummaryConfig(sentences=3), FAKE_EMBED).summarize(text)
    assert out == "Shopping list; eggs; flour for bread; butter; milk and honey"


def test_extractive_skips_a_repeated_sentence() -> None:
    text = f"{TOPICAL} {CENTRAL[1]}"
    out = create_summarizer(SummaryConfig(sentences=3), FAKE_EMBED).summarize(text)
    assert out.count(CENTRAL[1]) == 1


def test_extractive_caps_the_sentences_it_embeds() -> None:
    sizes: list[int] = []
    embedder = FakeEmbedder()

    def embed(texts: list[str]) -> np.ndarray:
        sizes.append(len(texts))
        return embedder.embed(texts)

    text = " ".join(f"Sentence {i} talks about topic {i % 13}." for i in range(600))
    out = create_summarizer(SummaryConfig(), embed).summarize(text)
    assert sizes == [MAX_SENTENCES, 1]  # the considered sentences, then the text itself
    assert all(s in text for s in split_sentences(out))


def test_extractive_rejects_a_wrong_shaped_embedding() -> None:
    summarizer = create_summarizer(SummaryConfig(), lambda texts: np.ones((1, 8), np.float32))
    with pytest.raises(ProviderError, match="one row per text"):
        summarizer.summarize(TOPICAL)


def _scifact(n: int) -> list[str]:
    if not SCIFACT.exists():
        pytest.skip(f"{SCIFACT} is absent")
    texts: list[str] = []
    with SCIFACT.open() as fh:
        for line in fh:
            text = json.loads(line)["text"]
            # >= 6 sentences, and short enough for MiniLM's 256-token window to see it all.
            if len(split_sentences(text)) >= 6 and len(text) <= 1000:
                texts.append(text)
            if len(texts) == n:
                break
    return texts


@pytest.fixture(scope="module")
def real_embed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from keepui_engine.core.config import Settings
    from keepui_engine.providers import create_embedder

    return create_embedder(Settings(store=tmp_path_factory.mktemp("store"))).embed


def _lead(sentences: list[str], max_chars: int, k: int) -> str:
    out: list[str] = []
    for s in sentences[:k]:
        if len(" ".join([*out, s])) > max_chars:
            break
        out.append(s)
    return " ".join(out)


@pytest.mark.model
def test_extractive_with_the_real_model_on_an_abstract(real_embed: Any) -> None:
    text = _scifact(1)[0]
    sentences = split_sentences(text)
    out = create_summarizer(SummaryConfig(sentences=3, max_chars=500), real_embed).summarize(text)
    picked = split_sentences(out)
    assert len(out) <= 500 and 1 <= len(picked) <= 3
    positions = [sentences.index(s) for s in picked]  # each one is a sentence of the text
    assert positions == sorted(positions)
    vectors = real_embed([*sentences, text])
    best = sentences[int(np.argmax(vectors[:-1] @ vectors[-1]))]
    assert best in picked


@pytest.mark.model
def test_extractive_beats_the_lead_on_real_abstracts(real_embed: Any) -> None:
    texts = _scifact(20)
    summarizer = create_summarizer(SummaryConfig(sentences=3, max_chars=500), real_embed)
    hits, ours, lead = 0, [], []
    for text in texts:
        sentences = split_sentences(text)
        out = summarizer.summarize(text)
        vectors = real_embed([*sentences, out, _lead(sentences, 500, 3), text])
        whole = vectors[-1]
        hits += sentences[int(np.argmax(vectors[:-3] @ whole))] in split_sentences(out)
        ours.append(float(vectors[-3] @ whole))
        lead.append(float(vectors[-2] @ whole))
    assert hits >= 0.8 * len(texts)
    assert np.mean(ours) > np.mean(lead)


class _Stub(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[dict[str, Any]]
    reply: tuple[int, bytes]
    slow: bool
    release: threading.Event


class _Handler(BaseHTTPRequestHandler):
    server: _Stub

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.requests.append(
            {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
        )
        if self.server.slow:  # hold the request until teardown; the client has gone by then
            self.server.release.wait(30)
            return
        status, payload = self.server.reply
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


def _completion(content: Any) -> bytes:
    return json.dumps({"choices": [{"message": {"content": content}}]}).encode()


@pytest.fixture
def stub() -> Iterator[_Stub]:
    server = _Stub(("127.0.0.1", 0), _Handler)
    server.requests, server.slow, server.release = [], False, threading.Event()
    server.reply = (200, _completion("A canned summary."))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()
    thread.join(5)


def _llm(server: _Stub | int, **kw: Any) -> Summarizer:
    port = server if isinstance(server, int) else server.server_address[1]
    url = f"http://127.0.0.1:{port}/v1"
    return make("openai-compatible", base_url=url, model="tiny-llm", **kw)


def test_openai_compatible_sends_the_chat_request(
    stub: _Stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEEPUI_TEST_KEY", "sekrit")
    summarizer = _llm(stub, api_key_env="KEEPUI_TEST_KEY", max_chars=300)
    assert summarizer.uses_context is True
    assert summarizer.summarize("The text to summarize.") == "A canned summary."
    (request,) = stub.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sekrit"
    body = request["body"]
    assert body["model"] == "tiny-llm" and body["temperature"] == 0.2
    assert isinstance(body["max_tokens"], int) and body["max_tokens"] > 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    user = body["messages"][1]["content"]
    assert "The text to summarize." in user and "300 characters" in user
    assert "Related notes" not in user


def test_openai_compatible_passes_related_summaries_as_context(stub: _Stub) -> None:
    context = ["Notes on contemplative practice.", "A guide to daily prayer."]
    _llm(stub).summarize("A 13th-century guide for anchoresses.", context=context)
    user = stub.requests[0]["body"]["messages"][1]["content"]
    assert "Related notes the user tagged alike" in user
    assert all(c in user for c in context)
    assert "Authorization" not in stub.requests[0]["headers"]


def test_openai_compatible_cleans_and_cuts_the_reply(stub: _Stub) -> None:
    stub.reply = (200, _completion("<think>hmm</think>\nSummary: " + "word " * 100))
    out = _llm(stub, max_chars=50).summarize("text")
    assert len(out) <= 50 and out.startswith("word word") and out.endswith("…")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ((500, b'{"error": "model crashed"}'), "HTTP 500"),
        ((200, b"<html>not json</html>"), "not JSON"),
        ((200, b'{"object": "list"}'), "not an OpenAI chat completion"),
        ((200, _completion("   ")), "empty answer"),
    ],
    ids=["http-500", "invalid-json", "wrong-shape", "empty"],
)
def test_openai_compatible_errors(stub: _Stub, reply: tuple[int, bytes], message: str) -> None:
    stub.reply = reply
    with pytest.raises(ProviderError, match=message) as info:
        _llm(stub).summarize("text")
    assert (
        "tiny-llm" in info.value.message and f":{stub.server_address[1]}/v1" in info.value.message
    )


def test_openai_compatible_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ProviderError, match="cannot be reached") as info:
        _llm(port).summarize("text")
    assert f"127.0.0.1:{port}/v1" in info.value.message and "base_url" in info.value.message


def test_openai_compatible_timeout(stub: _Stub) -> None:
    stub.slow = True
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"within 0\.5 s.*timeout_s"):
        _llm(stub, timeout_s=0.5).summarize("text")
    assert time.monotonic() - started < 5


ON_APPLE_SILICON = sys.platform == "darwin" and platform.machine() == "arm64"


@pytest.mark.parametrize(
    "force_missing",
    [pytest.param(False, marks=pytest.mark.skipif(ON_APPLE_SILICON, reason="mlx works")), True],
    ids=["this-machine", "module-missing"],
)
def test_mlx_without_mlx_lm_says_what_to_choose(
    force_missing: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if force_missing:
        monkeypatch.setitem(sys.modules, "mlx_lm", None)
    with pytest.raises(ProviderError) as info:
        make("mlx", model="mlx-community/Llama-3.2-1B-Instruct-4bit")
    assert info.value.message == MLX_MISSING
    assert "Apple silicon" in MLX_MISSING and "pip install 'keepui[llm]'" in MLX_MISSING
    assert "extractive or openai-compatible in [summarization] provider" in MLX_MISSING


def test_mlx_summarizer_uses_the_shared_prompt() -> None:
    calls: dict[str, Any] = {}
    tokenizer = SimpleNamespace(
        chat_template="x", apply_chat_template=lambda m, **kw: json.dumps(m)
    )

    def generate(model: Any, tok: Any, *, prompt: str, **kw: Any) -> str:
        calls.update(prompt=prompt, **kw)
        return "Summary: a short summary"

    fake = SimpleNamespace(load=lambda name: ("model", tokenizer), generate=generate)
    out = MlxSummarizer("m", 100, fake).summarize("text body", context=["related one"])
    assert out == "a short summary"
    assert "related one" in calls["prompt"] and "text body" in calls["prompt"]


@pytest.mark.parametrize(
    ("config", "match"),
    [
        (SummaryConfig(provider="gpt-magic"), r"\[summarization\] provider = 'gpt-magic'"),
        (SummaryConfig(provider="openai-compatible", model="m"), r"base_url"),
        (SummaryConfig(provider="openai-compatible", base_url="http://h:1/v1"), r"model"),
        (SummaryConfig(provider="openai-compatible", base_url="http://h:1", model="m"), r"/v1"),
        (SummaryConfig(provider="openai-compatible", base_url="h:1/v1", model="m"), r"http"),
        (SummaryConfig(provider="mlx"), r"model"),
        (SummaryConfig(sentences=0), r"sentences"),
        (SummaryConfig(max_chars=0), r"max_chars"),
    ],
)
def test_bad_settings_raise_config_error(config: SummaryConfig, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        create_summarizer(config)
