"""OpenAI-compatible chat backend over HTTP (vLLM, SGLang, Ollama, llama.cpp server, OpenAI).

Structured output is asked for with ``response_format: json_schema`` where the server
supports it (``structured="json_schema"``, the default) and otherwise only in the prompt
(``structured="none"``; the step adapter then parses and repairs). Transient failures
(429, 5xx, timeouts, connection resets) are retried with exponential backoff and full
jitter, honouring ``Retry-After``; every other failure becomes a typed :class:`LLMError`
whose message says what to do.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import random
import re
import time
from collections.abc import Sequence
from typing import Any

import httpx

from quaderno.errors import (ConfigError, LLMAuthError, LLMBadRequestError, LLMConnectionError,
                             LLMContextLengthError, LLMModelNotFoundError, LLMRateLimitError,
                             LLMServerError, LLMTimeoutError)
from quaderno.llm.parsing import strip_thinking
from quaderno.llm.types import ChatRequest, ChatResponse, Message, TokenLogprob, Usage

log = logging.getLogger(__name__)

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
_CONTEXT = re.compile(r"context length|context window|maximum context|too many tokens|"
                      r"prompt is too long|exceeds? (the )?(model'?s? )?(max|context)", re.I)


class OpenAIChatLLM:
    """Chat completions against ``{base_url}/chat/completions``."""

    supports_grammar = False

    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1", *,
                 api_key_env: str = "OPENAI_API_KEY", max_concurrency: int = 8,
                 timeout: float = 120.0, max_retries: int = 5, backoff_base: float = 0.5,
                 backoff_max: float = 30.0, retry_after_max: float = 60.0,
                 structured: str = "json_schema", extra_body: dict[str, Any] | None = None,
                 strip_think: bool = True, scoring: str = "none") -> None:
        if not model:
            raise ConfigError("OpenAIChatLLM needs a model name (--model)")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://, got {base_url!r}")
        if max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if timeout <= 0:
            raise ConfigError(f"timeout must be positive, got {timeout}")
        if max_retries < 0:
            raise ConfigError(f"max_retries must be non-negative, got {max_retries}")
        if scoring not in ("none", "vllm"):
            raise ConfigError(f"scoring must be 'none' or 'vllm', got {scoring!r}")
        if structured not in ("json_schema", "none"):
            raise ConfigError(f"structured must be 'json_schema' or 'none', got {structured!r}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        self.structured = structured
        self.extra_body = dict(extra_body or {})
        self.strip_think = strip_think
        self.model_id = f"openai:{model}"
        self.supports_schema = structured == "json_schema"
        self.supports_scoring = scoring == "vllm"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None
        self._sem: asyncio.Semaphore | None = None

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIChatLLM(model={self.model!r}, base_url={self.base_url!r})"

    def _state(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._client is None or self._sem is None:
            limits = httpx.Limits(max_connections=self.max_concurrency,
                                  max_keepalive_connections=self.max_concurrency)
            self._client = httpx.AsyncClient(timeout=self.timeout, limits=limits)
            self._sem = asyncio.Semaphore(self.max_concurrency)
            self._loop = loop
        return self._client, self._sem

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (public for inspection and tests)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if request.seed is not None:
            body["seed"] = request.seed
        if request.logprobs:
            body["logprobs"] = True
        if request.json_schema is not None and self.supports_schema:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema_name, "schema": request.json_schema,
                "strict": strict_compatible(request.json_schema)}}
        body.update(self.extra_body)
        return body

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    async def achat(self, request: ChatRequest) -> ChatResponse:
        resp, retries = await self._post(self.body(request))
        return self._parse(resp, retries, request)

    async def _post(self, body: dict[str, Any]) -> tuple[httpx.Response, int]:
        """POST to /chat/completions with retries; the 200 response and the retries taken."""
        client, sem = self._state()
        url = f"{self.base_url}/chat/completions"
        retries = 0
        async with sem:
            while True:
                delay: float | None = None
                try:
                    resp = await client.post(url, json=body, headers=self._headers())
                except httpx.TimeoutException as exc:
                    failure: Exception = LLMTimeoutError(
                        f"{self.base_url} did not answer within {self.timeout:.0f}s "
                        f"({retries} retries); raise --timeout or check the server load")
                    cause: Exception = exc
                except httpx.TransportError as exc:
                    failure = LLMConnectionError(
                        f"cannot reach the LLM server at {self.base_url} "
                        f"({type(exc).__name__}: {exc or 'connection failed'}); is it running?")
                    cause = exc
                else:
                    if resp.status_code == 200:
                        return resp, retries
                    if resp.status_code not in RETRY_STATUS:
                        raise self._error(resp)
                    failure, cause = self._error(resp), failure_cause(resp)
                    delay = retry_after(resp)
                if retries >= self.max_retries:
                    raise failure from cause
                retries += 1
                backoff = random.uniform(0, min(self.backoff_max,
                                                self.backoff_base * 2 ** (retries - 1)))
                # Retry-After is honoured as asked, up to a ceiling of retry_after_max.
                wait = min(delay, self.retry_after_max) if delay is not None else backoff
                log.info("retry %d/%d in %.2fs after: %s", retries, self.max_retries, wait,
                         failure)
                await asyncio.sleep(wait)

    # -- scoring a given reply (vLLM's prompt_logprobs) --------------------------------------
    async def ascore(self, messages: Sequence[Message], continuation: str) -> ChatResponse:
        """Log-probabilities of ``continuation`` as the assistant's reply, from vLLM's
        ``prompt_logprobs`` extension: the reply is sent as the final assistant message,
        continued rather than answered, and the log-probabilities of its prompt tokens are
        read back. Only servers with that extension (vLLM) can do it: ``scoring="vllm"``."""
        if not self.supports_scoring:
            raise ConfigError(f"{self.model_id}: scoring a reply needs a vLLM server; set "
                              "scoring = \"vllm\" in the [llm] config if yours is one")
        if not continuation:
            raise ConfigError("cannot score an empty reply")
        body = {"model": self.model, "max_tokens": 1, "temperature": 0.0,
                "messages": [m.model_dump() for m in messages]
                + [{"role": "assistant", "content": continuation}],
                "prompt_logprobs": 0, "add_generation_prompt": False,
                "continue_final_message": True, **self.extra_body}
        resp, retries = await self._post(body)
        try:
            positions = resp.json()["prompt_logprobs"]
            tokens = [next(iter(p.values())) for p in positions if p]
            pairs = [(str(t.get("decoded_token") or ""), float(t["logprob"])) for t in tokens]
        except (ValueError, KeyError, TypeError, AttributeError, StopIteration) as exc:
            raise LLMServerError(f"{self.base_url} sent no usable prompt_logprobs (is it vLLM?): "
                                 f"{resp.text[:200]!r}") from exc
        # the reply is the last prompt tokens: take tokens from the end until they spell it
        taken: list[tuple[str, float]] = []
        target = continuation.strip()
        for token, logprob in reversed(pairs):
            taken.insert(0, (token, logprob))
            if "".join(t for t, _ in taken).strip().endswith(target):
                break
        else:
            raise LLMServerError(f"{self.base_url}: the scored prompt does not end with the reply "
                                 f"{continuation[:60]!r}")
        return ChatResponse(text=continuation, model=self.model_id, retries=retries,
                            logprobs=[TokenLogprob(token=t, logprob=lp) for t, lp in taken],
                            usage=Usage(prompt_tokens=len(positions) - len(taken),
                                        completion_tokens=len(taken)))

    def _error(self, resp: httpx.Response) -> Exception:
        status = resp.status_code
        detail = _server_message(resp)
        if status in (401, 403):
            state = "is set" if os.environ.get(self.api_key_env) else "is NOT set"
            return LLMAuthError(f"{self.base_url} refused the credentials ({status}: {detail}); "
                                f"the API key is read from ${self.api_key_env}, which {state}")
        if status == 404:
            return LLMModelNotFoundError(
                f"{self.base_url} does not serve model {self.model!r} or the path "
                f"/chat/completions ({detail}); check --model and that --base-url ends in /v1")
        if status in (400, 413, 422) and _CONTEXT.search(detail):
            return LLMContextLengthError(f"the prompt does not fit model {self.model!r}: {detail}")
        if status == 429:
            return LLMRateLimitError(f"{self.base_url} is rate-limiting (429: {detail})")
        if status >= 500 or status in RETRY_STATUS:
            return LLMServerError(f"{self.base_url} failed ({status}: {detail})")
        return LLMBadRequestError(f"{self.base_url} rejected the request ({status}: {detail})")

    def _parse(self, resp: httpx.Response, retries: int, request: ChatRequest) -> ChatResponse:
        try:
            data = resp.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMServerError(
                f"{self.base_url} sent a body that is not a chat completion: "
                f"{resp.text[:200]!r}") from exc
        if self.strip_think:
            text = strip_thinking(text, unclosed=False)
        usage = data.get("usage") or {}
        logprobs = None
        content = (choice.get("logprobs") or {}).get("content") if isinstance(
            choice.get("logprobs"), dict) else None
        if content:
            logprobs = [TokenLogprob(token=t["token"], logprob=t["logprob"]) for t in content]
        return ChatResponse(
            text=text, model=data.get("model") or self.model,
            usage=Usage(prompt_tokens=usage.get("prompt_tokens") or 0,
                        completion_tokens=usage.get("completion_tokens") or 0),
            finish_reason=choice.get("finish_reason"), logprobs=logprobs, retries=retries,
            constrained=request.json_schema is not None and self.supports_schema)


def strict_compatible(schema: Any) -> bool:
    """OpenAI's strict mode needs every object closed (additionalProperties false) with all
    its properties required; ask for strict only then (vLLM and others enforce either way)."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            props = schema.get("properties", {})
            if schema.get("additionalProperties") is not False or \
                    set(schema.get("required", [])) != set(props):
                return False
        return all(strict_compatible(v) for v in schema.values())
    if isinstance(schema, list):
        return all(strict_compatible(v) for v in schema)
    return True


def failure_cause(resp: httpx.Response) -> Exception:
    return httpx.HTTPStatusError(f"HTTP {resp.status_code}", request=resp.request, response=resp)


def retry_after(resp: httpx.Response) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date)."""
    value = resp.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _server_message(resp: httpx.Response) -> str:
    try:
        data = resp.json()
        err = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(err, dict):
            return str(err.get("message") or err)[:300]
        return str(err)[:300]
    except ValueError:
        return resp.text[:300] or resp.reason_phrase
