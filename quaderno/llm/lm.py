"""The LM a method talks to: a backend plus response cache, call log and tracing.

Every call goes through :meth:`LM.chat` (or :meth:`LM.score`): it is looked up in the cache
(unless ``use_cache=False`` or there is no cache), sent to the backend, its response written
to the cache (also when ``use_cache=False``: a fresh reply refreshes the entry), recorded in
the caller's :class:`Trace`, logged with ``logging`` (model, tokens, latency, retries; never
a key), and written to the call log, whether it was answered from the cache, by the backend,
or failed. The call log is independent of the cache: ``LM(backend, log=CallLog(path))``
logs with no cache at all.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal, cast

from quaderno.errors import ConfigError, LLMError
from quaderno.llm.base import ChatLLM, ContinuationScorer
from quaderno.llm.cache import SQLiteCache
from quaderno.llm.calllog import CallLog, CallRow
from quaderno.llm.trace import CallRecord, Trace
from quaderno.llm.types import ChatRequest, ChatResponse, TokenLogprob

log = logging.getLogger(__name__)


class LM:
    """A backend with caching, a call log and tracing around it.

    ``log``: the :class:`CallLog` written for every call; ``None`` logs nothing; the default
    ``"cache"`` logs into the cache's own file when there is a cache (the layout of
    quaderno's first cache file, which held both) and nowhere otherwise.
    """

    def __init__(self, backend: ChatLLM, *, cache: SQLiteCache | None = None,
                 log: CallLog | None | Literal["cache"] = "cache",
                 defaults: dict[str, Any] | None = None) -> None:
        self.backend = backend
        self.cache = cache
        if log == "cache":
            log = cache.call_log() if cache is not None else None
        self.log: CallLog | None = log
        self.defaults = dict(defaults or {})
        # the generation profile (quaderno.llm.profiles) and its per-step token budgets
        self.profile = "deterministic"
        self.step_max_tokens: dict[str, int] = {}

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    @property
    def supports_schema(self) -> bool:
        return self.backend.supports_schema

    @property
    def supports_grammar(self) -> bool:
        return self.backend.supports_grammar

    def request(self, messages: Any, **params: Any) -> ChatRequest:
        """A request with this LM's default parameters (generation settings of a run)."""
        return ChatRequest.of(messages, **{**self.defaults, **params})

    async def chat(self, request: ChatRequest, *, trace: Trace | None = None,
                   step: str | None = None, use_cache: bool = True) -> ChatResponse:
        return await self._call(request.cache_key(self.model_id), request,
                                lambda: self.backend.achat(request), trace=trace, step=step,
                                use_cache=use_cache)

    async def _call(self, key: str, request: ChatRequest,
                    fetch: Callable[[], Awaitable[ChatResponse]], *, trace: Trace | None,
                    step: str | None, use_cache: bool) -> ChatResponse:
        """The cache, timing, call log and trace around one backend call (chat or score)."""
        prompt = [m.model_dump() for m in request.messages]
        response = self.cache.get(key) if (self.cache is not None and use_cache) else None
        if response is not None:
            response = response.model_copy(update={"cached": True, "latency_s": 0.0,
                                                   "retries": 0, "downgrade": None})
        else:
            t0 = time.perf_counter()
            try:
                response = await fetch()
            except LLMError as exc:
                if trace is not None:
                    trace.record(CallRecord(step=step, model=self.model_id, prompt=prompt,
                                            error=str(exc)))
                self._log_row(key, None, trace, step, latency_s=time.perf_counter() - t0,
                              error=str(exc))
                log.info("llm call failed (%s, step %s): %s", self.model_id, step, exc)
                raise
            response = response.model_copy(update={"latency_s": time.perf_counter() - t0})
            if self.cache is not None:
                self.cache.put(key, response.model_copy(update={"downgrade": None}))
        self._log_row(key, response, trace, step)
        if response.downgrade and trace is not None:
            trace.fallback(f"{step or 'llm'}: {response.downgrade}")
        if trace is not None:
            trace.record(CallRecord(step=step, model=response.model, prompt=prompt,
                                    response=response.text, usage=response.usage,
                                    latency_s=response.latency_s, cached=response.cached,
                                    retries=response.retries, constrained=response.constrained))
        log.debug("llm %s step=%s prompt=%d completion=%d latency=%.3fs cached=%s retries=%d",
                  self.model_id, step, response.usage.prompt_tokens,
                  response.usage.completion_tokens, response.latency_s, response.cached,
                  response.retries)
        return response

    def _log_row(self, key: str, response: ChatResponse | None, trace: Trace | None,
                 step: str | None, *, latency_s: float = 0.0, error: str | None = None) -> None:
        """One row of the call log (if there is one) for this call."""
        if self.log is None:
            return
        span_id = label = None
        if trace is not None:
            span_id = trace.current_span_id()
            label = trace.label or None
        row = CallRow(ts=time.time(), step=step, label=label, span_id=span_id,
                      model=self.model_id, key=key, latency_s=latency_s, error=error)
        if response is not None:
            row = row.model_copy(update={
                "prompt_tokens": response.usage.prompt_tokens,
                "completion_tokens": response.usage.completion_tokens,
                "latency_s": response.latency_s, "retries": response.retries,
                "cached": response.cached, "structured": response.structured,
                "note": response.downgrade})
        self.log.append(row)

    async def complete(self, prompt: str | list, *, trace: Trace | None = None,
                       step: str | None = None, use_cache: bool = True, **params: Any) -> str:
        """Shortcut: text in, text out."""
        response = await self.chat(self.request(prompt, **params), trace=trace, step=step,
                                   use_cache=use_cache)
        return response.text

    @property
    def supports_scoring(self) -> bool:
        """Whether the backend can score a given reply (see :class:`ContinuationScorer`)."""
        return (isinstance(self.backend, ContinuationScorer)
                and bool(getattr(self.backend, "supports_scoring", False)))

    async def score(self, messages: str | list, continuation: str, *,
                    trace: Trace | None = None, step: str | None = None,
                    use_cache: bool = True) -> list[TokenLogprob]:
        """Log-probability of each token of ``continuation`` as the reply to ``messages``;
        cached, logged and traced like a chat call."""
        if not self.supports_scoring:
            raise ConfigError(f"{self.model_id} cannot score a given reply (token "
                              "log-probabilities of a fixed answer); use an embedded GGUF model "
                              "(--llm llama-cpp) or a vLLM server (prompt_logprobs)")
        request = ChatRequest.of(messages, max_tokens=1)
        key = hashlib.sha256(f"score|{request.cache_key(self.model_id)}|{continuation}"
                             .encode("utf-8")).hexdigest()
        scorer = cast(ContinuationScorer, self.backend)
        response = await self._call(key, request,
                                    lambda: scorer.ascore(request.messages, continuation),
                                    trace=trace, step=step, use_cache=use_cache)
        return list(response.logprobs or [])

    def chat_sync(self, request: ChatRequest, **kwargs: Any) -> ChatResponse:
        """Synchronous :meth:`chat` for scripts and the CLI (not inside a running loop)."""
        return asyncio.run(self.chat(request, **kwargs))
