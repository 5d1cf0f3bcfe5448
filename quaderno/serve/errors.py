"""One place where quaderno's error tree becomes HTTP statuses.

Every error the API answers with has the body :class:`ErrorBody`
(``{"error": {"type", "status", "message", "hint"}}``, the shape OpenAI clients read too):
the message names the bad value, the hint says what to change. Nothing else leaves the
server: an unexpected exception is logged here and answered with a generic 500.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from quaderno.errors import (AlreadyExistsError, ConfigError, DependencyError,
                             EmbedderMismatchError, IndexFormatError, InputFormatError,
                             LLMError, LLMTimeoutError, NotFoundError, ParseError,
                             QuadernoError, SQLExecutionError, SQLRefusedError,
                             StaleIndexError, StepError)

log = logging.getLogger(__name__)


class UnauthorizedError(QuadernoError):
    """The request carries no bearer token, or not the server's."""


class ForbiddenError(QuadernoError):
    """A state-changing request without the header a cross-site form cannot send."""


class TooManyRequestsError(QuadernoError):
    """More questions in flight than the server allows (for one client or in all)."""

    def __init__(self, message: str, *, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BodyTooLargeError(QuadernoError):
    """A request body or upload is over the server's limit."""


# most specific first: the first class an error is an instance of decides
STATUSES: tuple[tuple[type[BaseException], int, str], ...] = (
    (UnauthorizedError, 401, "send the header 'Authorization: Bearer <token>' with the "
                             "server's token"),
    (ForbiddenError, 403, "send the header 'X-Quaderno: 1' (or the bearer token) with "
                          "requests that change state"),
    (TooManyRequestsError, 429, "wait for an answer in flight to finish, then retry"),
    (BodyTooLargeError, 413, "send a smaller body, or start the server with a larger limit"),
    (LLMTimeoutError, 504, "the LLM did not answer in time; retry, or raise its timeout"),
    (SQLRefusedError, 502, "the model wrote SQL that was refused; retry or use another "
                           "method"),
    (SQLExecutionError, 502, "the model's SQL failed; retry or use another method"),
    (LLMError, 502, "the LLM (or a step it drives) failed; check `quaderno llm info` and the "
                    "call log (/v1/llm/log)"),
    (DependencyError, 501, "install what the message names, or choose another option"),
    (NotFoundError, 404, "check the name against the listing (/v1/kbs, /v1/methods, ...)"),
    (AlreadyExistsError, 409, "choose another name, or ask to replace it"),
    (StaleIndexError, 409, "rebuild the index (POST /v1/kbs/{kb}/index)"),
    (IndexFormatError, 409, "rebuild the index (POST /v1/kbs/{kb}/index)"),
    (EmbedderMismatchError, 409, "rebuild the index with the embedder you query with"),
    (ConfigError, 422, "change the named value"),
    (InputFormatError, 422, "fix the named file, line or field"),
    (ParseError, 422, "change the named value"),
)


class ErrorInfo(BaseModel):
    """What went wrong, for a person: ``type`` is the error's class name."""

    type: str
    status: int
    message: str
    hint: str = ""


class ErrorBody(BaseModel):
    error: ErrorInfo


# what a client reads of an LLM failure: its text may hold the upstream's URL or its body
LLM_MESSAGES: tuple[tuple[type[BaseException], str], ...] = (
    (LLMTimeoutError, "the LLM did not answer in time"),
    (StepError, "a step could not use the LLM's reply"),
    (LLMError, "the LLM call failed"),
)


def error_info(exc: BaseException) -> ErrorInfo:
    """The status, message and hint of ``exc`` (500 for an error quaderno did not expect).
    An LLM failure's own text and an unmapped error's are logged, never sent."""
    name = type(exc).__name__
    if isinstance(exc, ValidationError):  # a model a method built from its input
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
                             for e in exc.errors()[:5])
        return ErrorInfo(type="ValidationError", status=422,
                         message=f"invalid {exc.title}: {problems}",
                         hint="change the named values")
    for cls, status, hint in STATUSES:
        if isinstance(exc, cls):
            message = str(exc)
            if isinstance(exc, LLMError):
                log.warning("%s: %s", name, exc)
                message = next(m for c, m in LLM_MESSAGES if isinstance(exc, c))
                message = f"{message} ({name}); the server log has the details"
            return ErrorInfo(type=name, status=status, message=message, hint=hint)
    if isinstance(exc, QuadernoError):
        log.error("unmapped %s: %s", name, exc)
        return ErrorInfo(type=name, status=500,
                         message="the server failed; its log has the details")
    return ErrorInfo(type="InternalError", status=500,
                     message="the server failed unexpectedly; its log has the details")


def error_response(info: ErrorInfo, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(ErrorBody(error=info).model_dump(), status_code=info.status,
                        headers=headers)


async def _quaderno_error(request: Request, exc: Exception) -> JSONResponse:
    info = error_info(exc)
    if info.status >= 500:
        log.warning("%s %s -> %d", request.method, request.url.path, info.status)
    headers = {}
    if isinstance(exc, TooManyRequestsError):
        headers["Retry-After"] = str(exc.retry_after)
    if isinstance(exc, UnauthorizedError):
        headers["WWW-Authenticate"] = "Bearer"
    return error_response(info, headers)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                         for e in exc.errors())
    return error_response(ErrorInfo(type="RequestValidationError", status=422,
                                     message=f"invalid request: {problems}",
                                     hint="change the named fields (see /openapi.json)"))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    hints = {400: "send a JSON body (Content-Type: application/json)",
             404: "see /openapi.json for the routes", 405: "see /openapi.json for the methods",
             413: "send a smaller body, or start the server with a larger limit"}
    return error_response(ErrorInfo(type="HTTPError", status=exc.status_code,
                                    message=str(exc.detail), hint=hints.get(exc.status_code, "")),
                          dict(exc.headers or {}))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(error_info(exc))


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(QuadernoError, _quaderno_error)
    app.add_exception_handler(ValidationError, _quaderno_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)


ERROR_RESPONSES: dict[int | str, dict] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in ((400, "the body cannot be read (not UTF-8 text)"),
                                (401, "no or wrong bearer token (when the server has one)"),
                                (403, "a state-changing request without X-Quaderno"),
                                (404, "not found"), (409, "already exists or stale"),
                                (413, "the body is over the limit"),
                                (422, "invalid input"), (429, "too many questions in flight"),
                                (502, "the LLM or a step failed"), (501, "missing dependency"),
                                (504, "the LLM timed out"))}
