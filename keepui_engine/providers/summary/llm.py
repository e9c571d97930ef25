"""LLM summarizers: any OpenAI-compatible chat server (stdlib HTTP), and mlx-lm on Apple silicon."""

from __future__ import annotations

import http.client
import json
import os
import re
import threading
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from keepui_engine.core.errors import ProviderError
from keepui_engine.providers.summary.text import cut, normalize

MAX_INPUT_CHARS = 32_000  # about 8k tokens: fits the context of small local models
MAX_CONTEXT_ITEMS = 5
TEMPERATURE = 0.2
MLX_MISSING = (
    "the mlx provider needs Apple silicon with `pip install 'keepui[llm]'`; on this machine "
    "choose extractive or openai-compatible in [summarization] provider"
)

SYSTEM_PROMPT = (
    "You summarize a person's notes and documents for their own searchable memory. Write a "
    "concise, factual summary in plain prose. Reply with the summary only: no preamble, no "
    "headings, no lists, no markdown."
)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_PREFIX = re.compile(r"^\s*(?:summary|here is (?:a|the) summary[^:]*)\s*:\s*", re.IGNORECASE)


def build_messages(text: str, max_chars: int, context: list[str] | None) -> list[dict[str, str]]:
    """The chat messages asking for a summary of `text`, in the light of `context` if given.

    Args:
        text: The item's text (cut to `MAX_INPUT_CHARS`).
        max_chars: The summary length limit stated in the prompt.
        context: Summaries of related items the user tagged alike (at most 5 are used).

    Returns:
        A system and a user message.
    """
    body = text if len(text) <= MAX_INPUT_CHARS else text[:MAX_INPUT_CHARS] + "\n[…]"
    parts: list[str] = []
    related = [normalize(c) for c in (context or []) if c and c.strip()][:MAX_CONTEXT_ITEMS]
    if related:
        parts.append(
            "Related notes the user tagged alike:\n" + "\n".join(f"- {c}" for c in related)
        )
        parts.append(
            "Summarize the text below in the light of these related notes: bring out what in it "
            "is relevant to them, rather than describing it generically."
        )
    else:
        parts.append("Summarize the text below.")
    parts.append(
        f"Use at most {max_chars} characters. Write in the language of the text.\n\n"
        f"Text:\n<<<\n{body}\n>>>"
    )
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def max_tokens_for(max_chars: int) -> int:
    """A generation budget for `max_chars` characters (about 3 characters a token, plus slack)."""
    return max(64, max_chars // 3 + 32)


def clean_reply(reply: str, max_chars: int) -> str:
    """The model's reply without reasoning blocks or a "Summary:" label, normalised and cut."""
    return cut(normalize(_PREFIX.sub("", _THINK.sub("", reply))), max_chars)


class OpenAICompatibleSummarizer:
    """Summaries from any server speaking the OpenAI chat API (Ollama, llama.cpp, vLLM …).

    Args:
        base_url: The API root, e.g. "http://127.0.0.1:11434/v1".
        model: The model name the server knows.
        max_chars: Longest summary.
        api_key_env: Name of the environment variable holding the key, or None.
        timeout_s: Seconds to wait for the whole reply.
    """

    name = "openai-compatible"
    uses_context = True

    def __init__(
        self,
        base_url: str,
        model: str,
        max_chars: int,
        api_key_env: str | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_chars = max_chars
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s

    @property
    def url(self) -> str:
        """The chat-completions endpoint."""
        return f"{self.base_url}/chat/completions"

    def summarize(self, text: str, *, context: list[str] | None = None) -> str:
        """Ask the server for a summary.

        Raises:
            ProviderError: The server is unreachable, slow, answers an error or a malformed or
                empty completion.
        """
        return self.complete(build_messages(text, self.max_chars, context), self.max_chars)

    def complete(self, messages: list[dict[str, str]], max_chars: int) -> str:
        """The model's reply to chat messages, cleaned and cut to `max_chars` (reflection uses
        it with its own prompt).

        Raises:
            ProviderError: As `summarize`, or an empty reply.
        """
        payload = {
            "model": self.model,
            "messages": messages,
            "temperature": TEMPERATURE,
            "max_tokens": max_tokens_for(max_chars),
            "stream": False,
        }
        reply = self._post(json.dumps(payload).encode())
        answer = clean_reply(self._completion_text(reply), max_chars)
        if not answer:
            raise self._error(
                "returned an empty answer. Try another model in [summarization] model, or "
                "raise the server's context size."
            )
        return answer

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _opener(self) -> urllib.request.OpenerDirector:
        """urllib's opener; a server on this machine is reached directly, never via a proxy."""
        host = urlsplit(self.base_url).hostname or ""
        if host == "localhost" or host == "::1" or host.startswith("127."):
            return urllib.request.build_opener(urllib.request.ProxyHandler({}))
        return urllib.request.build_opener()

    def _error(self, what: str) -> ProviderError:
        return ProviderError(
            f"the summarization server {self.base_url} (model {self.model!r}) {what}",
            "Summarization failed",
        )

    def _post(self, body: bytes) -> Any:
        request = urllib.request.Request(self.url, body, self._headers(), method="POST")
        try:
            with self._opener().open(request, timeout=self.timeout_s) as response:
                raw = response.read()
                status = response.status
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc) from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise self._timeout() from exc
            raise self._error(
                f"cannot be reached ({exc.reason}). Start the server (e.g. `ollama serve`), fix "
                "[summarization] base_url in keepui.toml, or set [summarization] provider = "
                '"extractive".'
            ) from exc
        except TimeoutError as exc:
            raise self._timeout() from exc
        except (OSError, http.client.HTTPException) as exc:
            raise self._error(
                f"failed while answering ({exc}). Check the server's log, or set "
                '[summarization] provider = "extractive".'
            ) from exc
        if status != 200:
            raise self._error(f"answered HTTP {status} instead of 200: {_snippet(raw)}.")
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise self._error(
                f"answered something that is not JSON ({_snippet(raw)}). Check that "
                "[summarization] base_url points at the OpenAI-compatible API root (ending in /v1)."
            ) from exc

    def _completion_text(self, reply: Any) -> str:
        """choices[0].message.content of a chat completion ("" for null)."""
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise self._error(
                "replied JSON that is not an OpenAI chat completion (no "
                f"choices[0].message.content: {_snippet(json.dumps(reply).encode())}). Check "
                "that [summarization] base_url in keepui.toml is the server's OpenAI API root."
            ) from exc
        if content is not None and not isinstance(content, str):
            raise self._error(f"replied a message content that is not text ({type(content)}).")
        return content or ""

    def _timeout(self) -> ProviderError:
        return self._error(
            f"did not answer within {self.timeout_s:g} s. Raise [summarization] timeout_s in "
            "keepui.toml, or use a smaller model."
        )

    def _http_error(self, exc: urllib.error.HTTPError) -> ProviderError:
        try:
            detail = _snippet(exc.read())
        except OSError:
            detail = ""
        hint = "Check the server's log and [summarization] model in keepui.toml."
        if exc.code in (401, 403):
            hint = (
                f"Set the environment variable {self.api_key_env} to a valid key."
                if self.api_key_env
                else "Name the environment variable holding the key in [summarization] api_key_env."
            )
        elif exc.code == 404:
            hint = (
                "Check that [summarization] base_url ends in /v1 and that the model is available "
                f"there (for Ollama: `ollama pull {self.model}`)."
            )
        return self._error(f"answered HTTP {exc.code} {exc.reason}: {detail}. {hint}")


def _snippet(raw: bytes, limit: int = 200) -> str:
    """The start of a reply body, for error messages."""
    return cut(normalize(raw.decode("utf-8", "replace")), limit) or "(empty body)"


class MlxSummarizer:
    """Summaries from a local model through mlx-lm (Apple silicon only).

    The model is loaded on the first call (and kept); generation is serialised by a lock.

    Args:
        model: A Hugging Face repo id or a local directory mlx_lm.load accepts.
        max_chars: Longest summary.
        mlx_lm: The imported mlx_lm module.
    """

    name = "mlx"
    uses_context = True

    def __init__(self, model: str, max_chars: int, mlx_lm: Any) -> None:
        self.model = model
        self.max_chars = max_chars
        self._mlx_lm = mlx_lm
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    def summarize(self, text: str, *, context: list[str] | None = None) -> str:
        """Generate a summary with the same prompt as the OpenAI-compatible provider.

        Raises:
            ProviderError: The model cannot be loaded or generation failed.
        """
        return self.complete(build_messages(text, self.max_chars, context), self.max_chars)

    def complete(self, messages: list[dict[str, str]], max_chars: int) -> str:
        """The model's reply to chat messages, cleaned and cut to `max_chars`.

        Raises:
            ProviderError: The model cannot be loaded, generation failed, or an empty reply.
        """
        with self._lock:
            try:
                model, tokenizer = self._load()
                prompt = _chat_prompt(tokenizer, messages)
                reply = self._mlx_lm.generate(
                    model,
                    tokenizer,
                    prompt=prompt,
                    verbose=False,
                    **self._generate_options(max_chars),
                )
            except ProviderError:
                raise
            except Exception as exc:
                raise ProviderError(
                    f"the mlx model {self.model!r} failed: {exc}. Check [summarization] model "
                    "in keepui.toml (a Hugging Face repo id or a local mlx model directory).",
                    "Summarization failed",
                ) from exc
        answer = clean_reply(str(reply), max_chars)
        if not answer:
            raise ProviderError(
                f"the mlx model {self.model!r} returned an empty answer.", "Summarization failed"
            )
        return answer

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            loaded = self._mlx_lm.load(self.model)
            self._loaded = (loaded[0], loaded[1])
        return self._loaded

    def _generate_options(self, max_chars: int) -> dict[str, Any]:
        options: dict[str, Any] = {"max_tokens": max_tokens_for(max_chars)}
        try:  # mlx-lm >= 0.20 takes a sampler; older versions take temp=
            from mlx_lm.sample_utils import make_sampler  # type: ignore[import-not-found]

            options["sampler"] = make_sampler(temp=TEMPERATURE)
        except ImportError:
            options["temp"] = TEMPERATURE
        return options


def _chat_prompt(tokenizer: Any, messages: list[dict[str, str]]) -> str:
    """The messages rendered with the model's chat template (or plainly when it has none)."""
    if getattr(tokenizer, "chat_template", None):
        return str(
            tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        )
    return "\n\n".join(m["content"] for m in messages) + "\n\nSummary:"


def load_mlx_lm() -> Any:
    """Import mlx_lm, or raise the ProviderError that tells the user what to choose instead."""
    try:
        import mlx_lm  # type: ignore[import-not-found]
    except Exception as exc:  # ImportError, or a native-library failure off Apple silicon
        raise ProviderError(MLX_MISSING, "mlx not available") from exc
    return mlx_lm
