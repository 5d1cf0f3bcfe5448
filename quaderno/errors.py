"""One error hierarchy for quaderno.

Every error a user can cause or meet derives from :class:`QuadernoError`; the CLI
prints its message (no traceback) and exits non-zero. Messages name the bad value,
file, line or field so the user can fix the input.
"""

from __future__ import annotations


class QuadernoError(Exception):
    """Base class of every error quaderno raises on purpose."""


class ConfigError(QuadernoError, ValueError):
    """A parameter or configuration value is invalid (the message names it)."""


class InputFormatError(QuadernoError, ValueError):
    """An input file is malformed: the message names the file, line and field."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.path = path
        self.line = line
        self.field = field


class NotFoundError(QuadernoError, LookupError):
    """A named knowledge base, index or resource does not exist."""


class AlreadyExistsError(QuadernoError):
    """Creating something that already exists without asking to replace it."""


class IndexFormatError(QuadernoError):
    """An index or knowledge-base directory was written by another format version or is damaged."""


class EmbedderMismatchError(QuadernoError):
    """An index is loaded with an embedder other than the one that built it."""


class StaleIndexError(QuadernoError):
    """An index was built over another version of its knowledge base."""


class DependencyError(QuadernoError, ImportError):
    """An optional dependency is missing; the message says what to install."""


class LLMError(QuadernoError):
    """An LLM call failed; subclasses say why in words a user can act on."""


class LLMConnectionError(LLMError):
    """The LLM server could not be reached (refused, reset, DNS)."""


class LLMTimeoutError(LLMError):
    """The LLM server did not answer in time."""


class LLMRateLimitError(LLMError):
    """The server kept answering 429 after every retry."""


class LLMServerError(LLMError):
    """The server kept failing (5xx) after every retry, or sent a body we cannot read."""


class LLMAuthError(LLMError):
    """The server refused the credentials (401/403), or a required API key is missing."""


class LLMModelNotFoundError(LLMError):
    """The server does not serve the requested model."""


class LLMContextLengthError(LLMError):
    """The prompt plus max_tokens does not fit the model's context window."""


class LLMBadRequestError(LLMError):
    """The server rejected the request (400) for another reason; the message quotes it."""


class ParseError(QuadernoError, ValueError):
    """A model reply does not have the expected structure (raised by parsers)."""


class StepError(LLMError):
    """A typed LLM step produced no valid output, even after the repair re-ask."""

    def __init__(self, step: str, message: str, *, raw: str | None = None,
                 attempts: int | None = None) -> None:
        super().__init__(f"step {step!r}: {message}")
        self.step = step
        self.raw = raw
        self.attempts = attempts   # LLM calls made before giving up, when known


class SQLRefusedError(InputFormatError):
    """A model-written SQL query did not pass the read-only gate (DocSage, spec §11).

    ``reason`` is a short code (``parse``, ``multiple-statements``, ``not-a-select``,
    ``write``, ``table-function``, ``forbidden-function``, ``unknown-table``,
    ``unknown-column``, ...); the message names what was refused and what to change, fit to
    show back to the model for one repair."""

    def __init__(self, message: str, *, reason: str, sql: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.sql = sql


class SQLExecutionError(QuadernoError):
    """A query that passed the gate failed while it ran in the sandbox; ``kind`` says how:
    ``database`` (binder, conversion, ...), ``memory``, ``timeout``, ``size`` (a result
    larger than the sandbox returns), ``process`` (the query process could not start),
    ``reply`` (it sent what no query yields, and was stopped) or ``closed``. The message
    can go back to the model for one repair. ``requalified``: the columns the
    gate had moved to another table before the query ran (what ran is not what was written)."""

    def __init__(self, message: str, *, kind: str = "database", sql: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.sql = sql
        self.requalified: list[str] = []
        self.joined: list[str] = []  # tables the gate joined on a foreign key (autojoin.py)
        self.hoisted: list[str] = []  # orders moved out of a subquery (correlated.py)
        self.respelled: list[str] = []  # table names written with other underscores
