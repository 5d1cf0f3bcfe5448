"""A read-only registry of named things (methods, evaluation measures): built once from a
sequence, refuses a name registered twice, and names every known entry when asked for an
unknown one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Generic, TypeVar

from quaderno.errors import ConfigError

T = TypeVar("T")


class NamedRegistry(Mapping[str, T], Generic[T]):
    """Entries by their ``name`` attribute. Subclasses set ``kind`` (for messages) and may
    add a ``hint`` to the unknown-name error."""

    kind = "entry"
    hint = ""

    def __init__(self, entries: Sequence[T]) -> None:
        by_name: dict[str, T] = {}
        for entry in entries:
            name = entry.name  # type: ignore[attr-defined]
            if name in by_name:
                raise ConfigError(f"{self.kind} {name!r} is registered twice")
            by_name[name] = entry
        self._entries = MappingProxyType(by_name)

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, name: str) -> T:
        """The entry ``name``; ConfigError listing the known ones when unknown."""
        try:
            return self._entries[name]
        except KeyError:
            raise ConfigError(f"unknown {self.kind} {name!r}; choose one of "
                              f"{', '.join(self._entries)}{self.hint}") from None

    def extended(self, *entries: T) -> list[T]:
        """Every entry, then ``entries`` (to build a larger registry from)."""
        return [*self._entries.values(), *entries]
