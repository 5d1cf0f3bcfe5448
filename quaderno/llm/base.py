"""The LLM protocol every backend implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from quaderno.llm.types import ChatRequest, ChatResponse


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
