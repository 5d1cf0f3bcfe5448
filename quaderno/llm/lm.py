"""The LM a method talks to: a backend plus cache, call log and tracing.

Every call goes through :meth:`LM.chat`: it is looked up in the cache (unless
``use_cache=False``), sent to the backend, written to the cache and call log, recorded in
the caller's :class:`Trace`, and logged (model, tokens, latency, retries; never a key).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

from quaderno.errors import ConfigError, LLMError
from quaderno.llm.base import ChatLLM, ContinuationScorer
from quaderno.llm.cache import SQLiteCache
from quaderno.llm.trace import CallRecord, Trace
from quaderno.llm.types import ChatRequest, ChatResponse, TokenLogprob

log = logging.getLogger(__name__)


class LM:
    """A backend with caching, logging and tracing around it."""

    def __init__(self, backend: ChatLLM, *, cache: SQLiteCache | None = None,
                 defaults: dict[str, Any] | None = None) -> None:
        self.backend = backend
        self.cache = cache
        self.defaults = dict(defaults or {})

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
                                                   "retries": 0})
        else:
            t0 = time.perf_counter()
            try:
                response = await fetch()
            except LLMError as exc:
                if trace is not None:
                    trace.record(CallRecord(step=step, model=self.model_id, prompt=prompt,
                                            error=str(exc)))
                log.info("llm call failed (%s, step %s): %s", self.model_id, step, exc)
                raise
            response = response.model_copy(update={"latency_s": time.perf_counter() - t0})
            if self.cache is not None:
                self.cache.put(key, response)
        if self.cache is not None:
            self.cache.log_call(key, response)
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
