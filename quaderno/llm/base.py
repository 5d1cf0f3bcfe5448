"""The protocols backends implement: chat (every backend) and scoring (some)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from quaderno.llm.types import ChatRequest, ChatResponse, Message


@runtime_checkable
class ChatLLM(Protocol):
    """A chat model backend.

    ``model_id`` names backend and model (``openai:Qwen/Qwen3-32B``,
    ``llama-cpp:SmolLM2-135M-Instruct.Q4_1``): it is part of cache keys, and never holds a
    URL or a secret. ``supports_schema`` says whether ``ChatRequest.json_schema`` is
    enforced by the backend (constrained decoding) rather than only asked for in words.
    """

    model_id: str
    supports_schema: bool
    supports_grammar: bool

    async def achat(self, request: ChatRequest) -> ChatResponse: ...


@runtime_checkable
class ContinuationScorer(Protocol):
    """A backend that scores a *given* reply (teacher forcing): a response whose ``text`` is
    ``continuation``, whose ``logprobs`` hold the log-probability of each of its tokens as
    the assistant's reply to ``messages``, and whose usage counts the prompt and the reply.
    Needed by metrics such as PAGER's document information gain (how likely is the gold
    answer?)."""

    model_id: str
    supports_scoring: bool

    async def ascore(self, messages: Sequence[Message], continuation: str) -> ChatResponse:
        ...
