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
