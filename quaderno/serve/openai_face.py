"""An OpenAI-compatible face: ``/v1/models`` and ``/v1/chat/completions`` (streaming and
not), so chat front ends and the openai SDK use quaderno as a model.

The model name picks the method (``quaderno-pager``, ``quaderno-misknow``, … one per
registered method); the last user message is the question. The reply's content is the
answer followed by its numbered sources (``[1] Title (kb/chunk-id)``); the full answer
(details, evidence, gate, usage) travels in the ``quaderno`` extension field of the
completion (of the last chunk, when streaming). Knowledge bases, options, k and the gate
go in the request's ``quaderno`` field (the SDK's ``extra_body``). Sampling parameters
(temperature, max_tokens, ...) are accepted and ignored: a method sets its own.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.sse import format_sse_event
from pydantic import BaseModel, ConfigDict, Field

from quaderno.errors import ConfigError, NotFoundError
from quaderno.methods.registry import METHODS
from quaderno.serve.errors import ERROR_RESPONSES
from quaderno.serve.events import SSE_DOC, Event, SSEResponse
from quaderno.serve.routes_ask import MODEL_PREFIX, client_of
from quaderno.serve.wire import AskRequest, AskResponse, Mode

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES, tags=["openai"])


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str = Field(..., max_length=32)
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return " ".join(str(p.get("text", "")) for p in self.content
                            if p.get("type") == "text")
        return self.content or ""


class QuadernoOptions(BaseModel):
    """quaderno's own request settings, in the ``quaderno`` field."""

    model_config = ConfigDict(extra="forbid")

    kbs: list[str] | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    k: int | None = Field(None, ge=1, le=100)
    mode: Mode = "auto"
    gate: str | None = None


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # temperature, max_tokens, ...: ignored

    model: str = Field(..., max_length=200)
    messages: list[ChatMessage] = Field(..., min_length=1, max_length=1000)
    stream: bool = False
    quaderno: QuadernoOptions | None = None


class ChoiceMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int = 0
    message: ChoiceMessage
    finish_reason: Literal["stop"] = "stop"


class CompletionUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: CompletionUsage
    quaderno: AskResponse = Field(..., description="the whole answer: details, evidence, "
                                                   "gate, cost")


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "quaderno"
    description: str = ""


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


def ask_request(body: ChatCompletionRequest) -> AskRequest:
    """The question and method of a chat request."""
    if not body.model.startswith(MODEL_PREFIX) or body.model[len(MODEL_PREFIX):] not in METHODS:
        raise NotFoundError(f"no model {body.model!r}; GET /v1/models lists them "
                            f"(quaderno-<method>, e.g. {MODEL_PREFIX}pager)")
    question = next((m.text() for m in reversed(body.messages) if m.role == "user"), "")
    if not question.strip():
        raise ConfigError("messages hold no user message with text: the last user message "
                          "is the question")
    q = body.quaderno or QuadernoOptions()
    return AskRequest(question=question[:8000], method=body.model[len(MODEL_PREFIX):],
                      options=q.options, kbs=q.kbs, k=q.k, mode=q.mode, gate=q.gate)


def content_of(answer: AskResponse) -> str:
    """The answer, then its numbered sources, as the message's text."""
    if not answer.evidence:
        return answer.answer
    sources = "\n".join(f"[{e.n}] {e.title or e.chunk_id} ({e.kb}/{e.chunk_id})"
                        for e in answer.evidence)
    return f"{answer.answer}\n\nSources:\n{sources}"


def _usage(answer: AskResponse) -> CompletionUsage:
    p, c = answer.usage.prompt_tokens, answer.usage.completion_tokens
    return CompletionUsage(prompt_tokens=p, completion_tokens=c, total_tokens=p + c)


@router.get("/models", response_model=ModelList)
async def models() -> ModelList:
    """One model per registered method."""
    return ModelList(data=[ModelCard(id=MODEL_PREFIX + name, description=spec.summary)
                           for name, spec in METHODS.items()])


@router.get("/models/{model_id}", response_model=ModelCard)
async def model(model_id: str) -> ModelCard:
    """One model (the openai SDK's ``models.retrieve``)."""
    name = model_id.removeprefix(MODEL_PREFIX)
    if not model_id.startswith(MODEL_PREFIX) or name not in METHODS:
        raise NotFoundError(f"no model {model_id!r}; GET /v1/models lists them "
                            f"(quaderno-<method>, e.g. {MODEL_PREFIX}pager)")
    return ModelCard(id=model_id, description=METHODS.spec(name).summary)


@router.post("/chat/completions", response_model=ChatCompletion,
             responses={200: {"content": {"application/json": {},
                                          **SSE_DOC["content"]}}})
async def chat_completions(body: ChatCompletionRequest,
                           request: Request) -> ChatCompletion | SSEResponse:
    """Answer the last user message with the method the model names; ``stream: true``
    sends chat.completion.chunk events and ``[DONE]``."""
    asker = request.app.state.asker
    ask = ask_request(body)
    created = int(time.time())
    cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    if not body.stream:
        answer = await asker.answer(ask, client_of(request))
        return ChatCompletion(id=cid, created=created, model=body.model,
                              choices=[Choice(message=ChoiceMessage(content=content_of(answer)))],
                              usage=_usage(answer), quaderno=answer)
    events, release = asker.stream(ask, client_of(request))
    return SSEResponse(_chunks(events, cid, created, body.model), on_close=release)


async def _chunks(events: AsyncIterator[Event], cid: str, created: int,
                  model: str) -> AsyncIterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        data = {"id": cid, "object": "chat.completion.chunk", "created": created,
                "model": model, "choices": [{"index": 0, "delta": delta,
                                             "finish_reason": finish}], **extra}
        return format_sse_event(data_str=_dumps(data))

    yield chunk({"role": "assistant", "content": ""})
    try:
        async for event in events:
            if event.comment is not None:
                yield event.encode()
            elif event.name == "error":
                yield format_sse_event(data_str=_dumps(event.data))
            elif event.name == "answer":
                answer = AskResponse.model_validate(event.data)
                yield chunk({"content": content_of(answer)})
                yield chunk({}, "stop", usage=_usage(answer).model_dump(),
                            quaderno=event.data)
    finally:
        await events.aclose()  # type: ignore[attr-defined]
    yield format_sse_event(data_str="[DONE]")


def _dumps(data: Any) -> str:
    from pydantic_core import to_json

    return to_json(data).decode("utf-8")
