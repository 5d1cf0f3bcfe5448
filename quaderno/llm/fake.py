"""A fake chat model for tests and examples: queued replies, a function, or echo.

    llm = FakeLLM()
    llm.enqueue("first reply", '{"judge": true}')
    llm = FakeLLM(respond=lambda request: "...")   # reply computed from the request
    llm = FakeLLM(echo=True)                       # reply = last user message
    llm = FakeLLM(echo=True, scorer=lambda messages, reply: [-0.5] * len(reply.split()))

Every request is kept in ``llm.requests`` for assertions.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence

from quaderno.errors import ConfigError, LLMError
from quaderno.llm.types import ChatRequest, ChatResponse, Message, TokenLogprob, Usage


class FakeLLM:
    """A deterministic in-memory backend."""

    def __init__(self, replies: list[str] | None = None, *,
                 respond: Callable[[ChatRequest], str] | None = None, echo: bool = False,
                 model: str = "fake", supports_schema: bool = False,
                 supports_grammar: bool = False, latency_s: float = 0.0,
                 scorer: Callable[[Sequence[Message], str], list[float]] | None = None) -> None:
        if sum(x is not None and x is not False for x in (replies, respond, echo or None)) > 1:
            raise ConfigError("FakeLLM takes one of replies, respond or echo")
        self.model_id = f"fake:{model}"
        self.supports_schema = supports_schema
        self.supports_grammar = supports_grammar
        self.latency_s = latency_s
        self._queue: deque[str | Exception] = deque(replies or [])
        self._respond = respond
        self._echo = echo
        self.requests: list[ChatRequest] = []
        # scoring (teacher forcing): the function gives one log-probability per token
        self._scorer = scorer
        self.supports_scoring = scorer is not None
        self.scored: list[tuple[tuple[Message, ...], str]] = []

    def enqueue(self, *replies: str | Exception) -> FakeLLM:
        """Queue replies (or exceptions to raise), used in order."""
        self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        return len(self._queue)

    async def achat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if self._respond is not None:
            text = self._respond(request)
        elif self._echo:
            text = next(m.content for m in reversed(request.messages) if m.role == "user")
        elif self._queue:
            item = self._queue.popleft()
            if isinstance(item, Exception):
                raise item
            text = item
        else:
            raise LLMError("FakeLLM has no reply queued for this request "
                           f"(last message: {request.messages[-1].content[:80]!r})")
        prompt_tokens = sum(len(m.content.split()) for m in request.messages)
        words = text.split()
        return ChatResponse(
            text=text, model=self.model_id,
            usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=len(words)),
            finish_reason="stop", constrained=self.supports_schema and bool(request.json_schema),
            logprobs=[TokenLogprob(token=w, logprob=-0.1) for w in words] if request.logprobs
            else None)

    async def ascore(self, messages: Sequence[Message], continuation: str) -> ChatResponse:
        if self._scorer is None:
            raise ConfigError("this FakeLLM has no scorer (FakeLLM(scorer=...))")
        self.scored.append((tuple(messages), continuation))
        values = self._scorer(messages, continuation)
        words = continuation.split() or [continuation]
        if len(values) != len(words):
            words = [f"t{i}" for i in range(len(values))]
        return ChatResponse(
            text=continuation, model=self.model_id,
            usage=Usage(prompt_tokens=sum(len(m.content.split()) for m in messages),
                        completion_tokens=len(values)),
            logprobs=[TokenLogprob(token=w, logprob=v) for w, v in zip(words, values)])
