"""OpenAI-compatible chat backend over HTTP (vLLM, SGLang, Ollama, llama.cpp server, OpenAI).

Transient failures (429, 5xx, timeouts, connection resets) are retried with exponential
backoff and full jitter, honouring ``Retry-After``; every other failure becomes a typed
:class:`LLMError` whose message says what to do.

**Structured output** (a request with ``json_schema``) is asked for in one of three modes,
starting from ``structured`` (default ``json_schema``):

* ``json_schema``: ``response_format: {"type": "json_schema", "json_schema": {...}}``
  (OpenAI, vLLM, SGLang; the server enforces the schema: ``constrained``);
* ``json_object``: ``{"type": "json_object", "schema": {...}}``, the form the
  llama-cpp-python server accepts (it refuses ``json_schema`` with a 500); servers differ
  in whether they enforce the schema or only JSON, so such replies are not ``constrained``;
* ``none``: no ``response_format``; the schema is only in the prompt and the step adapter
  parses tolerantly and re-asks.

Servers differ, so a backend downgrades json_schema → json_object → none, **once per
instance**, when the server refuses a mode. The rule:

1. Only a request that carried ``response_format`` can be refused. A refusal is a 400, 422
   or 501 (not a context-length error), or a 500 whose message names ``response_format``,
   ``json_schema``, ``json_object``, ``schema`` or ``grammar`` (llama-cpp-python's and
   llama.cpp's refusals do). These are not retried with backoff: the same request is sent
   at once in the next mode.
2. A 500 that names none of those is a server error, retried with backoff as any other.
   Only when every attempt of a structured request answered 500 is the next mode tried
   (a server that refuses without saying why costs one round of retries, once).
3. The downgrade becomes the backend's mode only when the same request then **succeeds**
   in the lower mode. A request refused for another reason (a bad parameter) fails again in
   every mode and raises that error, leaving the mode as it was; a transient 500 neither
   names response_format nor outlasts the retries of a healthy server, so it never
   downgrades.

Concurrent requests refused together each walk down, but the mode only ever moves down and
the first success to move it is the one whose response carries ``downgrade`` (the note the
LM writes to the call log and the trace); it is logged at WARNING once.
:attr:`OpenAIChatLLM.structured_mode` and :attr:`~OpenAIChatLLM.downgraded_because` say
where a backend stands.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import random
import re
import threading
import time
from collections.abc import Sequence
from typing import Any, cast

import httpx

from quaderno.errors import (ConfigError, LLMAuthError, LLMBadRequestError, LLMConnectionError,
                             LLMContextLengthError, LLMModelNotFoundError, LLMRateLimitError,
                             LLMServerError, LLMTimeoutError)
from quaderno.llm.parsing import strip_thinking, thinking_of
from quaderno.llm.types import (ChatRequest, ChatResponse, Message, StructuredMode, TokenLogprob,
                                Usage)

log = logging.getLogger(__name__)

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
_CONTEXT = re.compile(r"context length|context window|maximum context|too many tokens|"
                      r"prompt is too long|exceeds? (the )?(model'?s? )?(max|context)", re.I)
MODES: tuple[StructuredMode, ...] = ("json_schema", "json_object", "none")
REFUSAL_STATUS = {400, 422, 501}
_NAMES_FORMAT = re.compile(r"response_format|json_schema|json_object|schema|grammar", re.I)


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
        if structured not in MODES:
            raise ConfigError(f"structured must be one of {', '.join(MODES)}; got "
                              f"{structured!r}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        self.structured = structured  # the configured starting mode
        self._mode = cast(StructuredMode, structured)
        self.downgraded_because: str | None = None
        self._mode_lock = threading.Lock()
        self.extra_body = dict(extra_body or {})
        self.strip_think = strip_think
        self.model_id = f"openai:{model}"
        self.supports_scoring = scoring == "vllm"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None
        self._sem: asyncio.Semaphore | None = None

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIChatLLM(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def structured_mode(self) -> StructuredMode:
        """The structured-output mode in use now (the configured one, or a downgrade)."""
        return self._mode

    @property
    def supports_schema(self) -> bool:
        return self._mode == "json_schema"

    def _state(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._client is None or self._sem is None:
            limits = httpx.Limits(max_connections=self.max_concurrency,
                                  max_keepalive_connections=self.max_concurrency)
            self._client = httpx.AsyncClient(timeout=self.timeout, limits=limits)
            self._sem = asyncio.Semaphore(self.max_concurrency)
            self._loop = loop
        return self._client, self._sem

    def body(self, request: ChatRequest, mode: StructuredMode | None = None) -> dict[str, Any]:
        """The JSON body sent for ``request`` in structured ``mode`` (default: the current
        one); public for inspection and tests."""
        mode = mode or self._mode
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
        if request.top_k is not None:
            body["top_k"] = request.top_k  # vLLM, SGLang, llama.cpp servers
        if request.repetition_penalty is not None:
            body["repetition_penalty"] = request.repetition_penalty  # vLLM, SGLang
            body["repeat_penalty"] = request.repetition_penalty  # llama.cpp servers' name
        if request.chat_template_kwargs is not None:
            body["chat_template_kwargs"] = dict(request.chat_template_kwargs)
        if request.logprobs:
            # llama-cpp-python's server sends no log-probabilities unless top_logprobs is set
            body["logprobs"] = True
            body["top_logprobs"] = 1
        if request.json_schema is not None and mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema_name, "schema": request.json_schema,
                "strict": strict_compatible(request.json_schema)}}
        elif request.json_schema is not None and mode == "json_object":
            body["response_format"] = {"type": "json_object", "schema": request.json_schema}
        body.update(self.extra_body)
        return body

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    async def achat(self, request: ChatRequest) -> ChatResponse:
        if request.json_schema is None:
            resp, retries = await self._post(self.body(request))
            return self._parse(resp, retries, request, None)
        mode = self._mode
        refusals: list[str] = []
        retries = 0
        while True:
            resp, taken = await self._post(self.body(request, mode), refusable=mode != "none")
            retries += taken
            if resp.status_code == 200:
                break
            refusals.append(f"{mode} ({resp.status_code}: {_server_message(resp)})")
            mode = MODES[max(MODES.index(mode) + 1, MODES.index(self._mode))]
            log.info("%s refused response_format %s; trying %s", self.base_url, refusals[-1],
                     mode)
        note = self._downgrade(mode, refusals) if refusals else None
        return self._parse(resp, retries, request, mode).model_copy(update={"downgrade": note})

    def _downgrade(self, mode: StructuredMode, refusals: list[str]) -> str | None:
        """Make ``mode`` the backend's mode if it is lower than the current one (a request
        just succeeded in it after refusals); the note saying so, or None if another call
        got there first."""
        with self._mode_lock:
            previous = self._mode
            if MODES.index(mode) <= MODES.index(previous):
                return None
            self._mode = mode
            self.downgraded_because = f"{self.base_url} refused " + "; ".join(refusals)
        note = (f"structured output downgraded {previous} -> {mode}: "
                f"{self.downgraded_because}")
        log.warning("%s: %s", self.model_id, note)
        return note

    def _refused(self, resp: httpx.Response) -> bool:
        """Whether an error answer to a request with response_format refuses that format."""
        detail = _server_message(resp)
        if resp.status_code in REFUSAL_STATUS:
            return not _CONTEXT.search(detail)
        return resp.status_code == 500 and bool(_NAMES_FORMAT.search(detail))

    async def _post(self, body: dict[str, Any], *,
                    refusable: bool = False) -> tuple[httpx.Response, int]:
        """POST to /chat/completions with retries; the 200 response and the retries taken.
        With ``refusable`` (the body has a response_format), a refusal of that format is
        returned as it is, without retrying (see the module's rule)."""
        client, sem = self._state()
        url = f"{self.base_url}/chat/completions"
        retries = 0
        only_500 = refusable
        async with sem:
            while True:
                delay: float | None = None
                resp = None
                try:
                    resp = await client.post(url, json=body, headers=self._headers())
                except httpx.TimeoutException as exc:
                    failure: Exception = LLMTimeoutError(
                        f"{self.base_url} did not answer within {self.timeout:.0f}s "
                        f"({retries} retries); raise the timeout (QUADERNO_TIMEOUT=600, or "
                        "timeout = 600 under [llm] in the config file) or check the server "
                        "load")
                    cause: Exception = exc
                except httpx.TransportError as exc:
                    failure = LLMConnectionError(
                        f"cannot reach the LLM server at {self.base_url} "
                        f"({type(exc).__name__}: {exc or 'connection failed'}); is it running?")
                    cause = exc
                else:
                    if resp.status_code == 200 or (refusable and self._refused(resp)):
                        return resp, retries
                    if resp.status_code not in RETRY_STATUS:
                        raise self._error(resp)
                    failure, cause = self._error(resp), failure_cause(resp)
                    delay = retry_after(resp)
                only_500 = only_500 and resp is not None and resp.status_code == 500
                if retries >= self.max_retries:
                    if only_500 and resp is not None:
                        return resp, retries  # 500 to every attempt: try the next mode
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
        named = [k for k in ("top_k", "repetition_penalty", "repeat_penalty",
                             "chat_template_kwargs") if k in detail]
        if status in (400, 422) and named:
            return LLMBadRequestError(
                f"{self.base_url} does not take {', '.join(named)} ({status}: {detail}); these "
                "come from the `paper` generation profile and need a server that accepts "
                "them (vLLM, SGLang, llama.cpp): use --profile deterministic with this one")
        return LLMBadRequestError(f"{self.base_url} rejected the request ({status}: {detail})")

    def _parse(self, resp: httpx.Response, retries: int, request: ChatRequest,
               mode: StructuredMode | None) -> ChatResponse:
        try:
            data = resp.json()
            choice = data["choices"][0]
            message = choice["message"]
            text = message.get("content") or ""
            # reasoning models: DeepSeek's and vLLM's reasoning parsers send it apart
            reasoning = message.get("reasoning_content") or message.get("reasoning") or None
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMServerError(
                f"{self.base_url} sent a body that is not a chat completion: "
                f"{resp.text[:200]!r}") from exc
        if self.strip_think:
            reasoning = reasoning or thinking_of(text) or None
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
            constrained=mode == "json_schema", structured=mode,
            reasoning=str(reasoning) if reasoning else None)


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
