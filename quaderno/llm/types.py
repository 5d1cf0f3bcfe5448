"""The data of an LLM call: request, response, usage. Backend-neutral, serializable."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from quaderno.errors import ConfigError


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


OPTIONAL_SAMPLING = ("top_k", "repetition_penalty", "chat_template_kwargs")


class ChatRequest(BaseModel):
    """What to ask. ``json_schema`` (JSON Schema) or ``grammar`` (GBNF) constrain the output
    where the backend can; ``logprobs`` asks for token log-probabilities."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[Message, ...]
    max_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int | None = None
    json_schema: dict[str, Any] | None = None
    schema_name: str = "output"
    grammar: str | None = None
    logprobs: bool = False
    # sampling beyond the OpenAI API (the `paper` profile): native on llama.cpp, extra
    # parameters on vLLM / SGLang / llama.cpp servers; None: not sent
    top_k: int | None = None
    repetition_penalty: float | None = None
    # passed to the server's chat template, e.g. {"enable_thinking": false} for Qwen3
    chat_template_kwargs: dict[str, Any] | None = None

    @field_validator("messages")
    @classmethod
    def _non_empty(cls, v: tuple[Message, ...]) -> tuple[Message, ...]:
        if not v:
            raise ValueError("a chat request needs at least one message")
        return v

    @field_validator("max_tokens")
    @classmethod
    def _max_tokens(cls, v: int) -> int:
        if v < 1:
            raise ValueError(f"max_tokens must be positive, got {v}")
        return v

    @field_validator("temperature")
    @classmethod
    def _temperature(cls, v: float) -> float:
        if not 0 <= v <= 2:
            raise ValueError(f"temperature must be in [0, 2], got {v}")
        return v

    @field_validator("top_p")
    @classmethod
    def _top_p(cls, v: float) -> float:
        if not 0 < v <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {v}")
        return v

    @field_validator("top_k")
    @classmethod
    def _top_k(cls, v: int | None) -> int | None:
        if v is not None and v < 1:
            raise ValueError(f"top_k must be at least 1, got {v}")
        return v

    @field_validator("repetition_penalty")
    @classmethod
    def _repetition_penalty(cls, v: float | None) -> float | None:
        if v is not None and not 0 < v <= 2:
            raise ValueError(f"repetition_penalty must be in (0, 2], got {v}")
        return v

    @classmethod
    def of(cls, prompt: str | list[Message] | list[dict[str, str]], **params: Any) -> ChatRequest:
        """Build from a user prompt or a list of messages; parameter errors are ConfigError."""
        if isinstance(prompt, str):
            messages = (Message(role="user", content=prompt),)
        else:
            messages = tuple(m if isinstance(m, Message) else Message(**m) for m in prompt)
        try:
            return cls(messages=messages, **params)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    def cache_key(self, model_id: str) -> str:
        """sha256 of the canonical request and model identity (no secrets, no URLs)."""
        body = self.model_dump(mode="json")
        for key in OPTIONAL_SAMPLING:  # unset: keys stay those of caches written before
            if body.get(key) is None:
                body.pop(key, None)
        canonical = json.dumps({"model": model_id, **body}, sort_keys=True, ensure_ascii=False,
                               separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(prompt_tokens=self.prompt_tokens + other.prompt_tokens,
                     completion_tokens=self.completion_tokens + other.completion_tokens)


class TokenLogprob(BaseModel):
    token: str
    logprob: float


StructuredMode = Literal["json_schema", "json_object", "none"]


class ChatResponse(BaseModel):
    """What came back, with accounting: usage, latency, retries, whether from the cache.

    ``structured``: how a server was asked for structured output (``json_schema``,
    ``json_object`` with the schema, or ``none``: only in the prompt); ``None`` where the
    request asked for no structure or the backend does not say. ``constrained``: the
    backend enforced the schema. ``downgrade``: set on the one call during which the
    backend gave up a structured mode the server refused, saying why.
    """

    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    logprobs: list[TokenLogprob] | None = None
    latency_s: float = 0.0
    retries: int = 0
    cached: bool = False
    constrained: bool = False
    structured: StructuredMode | None = None
    downgrade: str | None = None
    # the model's reasoning where the server sends it apart from the reply (DeepSeek-R1's and
    # vLLM's reasoning_content) or inside <think> blocks stripped from ``text``
    reasoning: str | None = None
