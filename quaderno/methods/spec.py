"""Method specs: what a method is called, how it is built, and the options it takes.

A :class:`MethodSpec` declares a method once: its name, a factory, a pydantic options
model (``extra="forbid"``; every option typed, defaulted and described), whether it needs
retrieval, the paper it implements and a one-line summary. :class:`MethodRegistry` turns a
name and raw options into a built method, with errors that name the bad key and the
allowed ones. The CLI (``--opt key=value``, ``quaderno methods``), ``ask`` and ``eval``
all go through it; no code outside the registry looks at a method's name.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from quaderno.errors import ConfigError
from quaderno.index.retrievers import Retriever
from quaderno.llm.lm import LM
from quaderno.registry import NamedRegistry


class MethodOptions(BaseModel):
    """Options of a method with none. Subclass it: each option typed, defaulted, described."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RetrievalOptions(MethodOptions):
    k: int = Field(5, ge=1, description="documents per retrieval")


Factory = Callable[[LM, Retriever | None, Any], Any]


@dataclass(frozen=True)
class MethodSpec:
    """A registered method. ``defaults`` override the options model's defaults for this name
    (e.g. ``pager-section`` is PAGER with ``fill_mode="section"``)."""

    name: str
    factory: Factory
    options: type[MethodOptions]
    needs_retrieval: bool
    paper: str
    summary: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # names of evaluation measures every run of this method adds (see quaderno.eval.measures)
    measures: tuple[str, ...] = ()
    # LLM roles besides the main one (e.g. "reasoner"): the factory gets each as a keyword
    # argument, the main LM where none is given
    roles: tuple[str, ...] = ()
    # the model decides whether to retrieve at all (Search-o1 searches only when its
    # reasoning writes a query): the contract does not require a retrieval
    model_decides_retrieval: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.defaults) - set(self.options.model_fields)
        if unknown:
            raise ConfigError(f"method {self.name!r}: defaults for unknown options "
                              f"{sorted(unknown)}")
        if self.needs_retrieval and "k" not in self.options.model_fields:
            raise ConfigError(f"method {self.name!r} retrieves, so its options need k")

    def validate(self, options: Mapping[str, Any] | MethodOptions | None = None) -> MethodOptions:
        """The options model for ``options`` over this spec's defaults; ConfigError names the
        bad key and the allowed ones."""
        if isinstance(options, self.options):
            return options
        raw = options.model_dump() if isinstance(options, BaseModel) else dict(options or {})
        allowed = ", ".join(self.options.model_fields) or "(none)"
        unknown = sorted(set(raw) - set(self.options.model_fields))
        if unknown:
            raise ConfigError(f"method {self.name!r} has no option {unknown[0]!r}"
                              + (f" (nor {', '.join(map(repr, unknown[1:]))})"
                                 if unknown[1:] else "") + f"; its options: {allowed}")
        try:
            return self.options(**{**self.defaults, **raw})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'options'}={e.get('input')!r}: {e['msg']}"
                for e in exc.errors())
            raise ConfigError(f"method {self.name!r}: invalid option {problems} "
                              f"(its options: {allowed})") from None

    def option_rows(self) -> list[dict[str, Any]]:
        """One row per option: name, type, effective default, description."""
        rows = []
        for name, info in self.options.model_fields.items():
            default = self.defaults.get(name, info.get_default(call_default_factory=True))
            rows.append({"name": name, "type": _type_name(info.annotation),
                         "default": default, "required": info.is_required(),
                         "description": info.description or ""})
        return rows

    def options_schema(self) -> dict[str, Any]:
        """JSON Schema of the options, with this spec's defaults."""
        schema = self.options.model_json_schema()
        for name, value in self.defaults.items():
            schema.setdefault("properties", {}).setdefault(name, {})["default"] = value
        schema["title"] = f"{self.name} options"
        return schema

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "paper": self.paper, "summary": self.summary,
                "needs_retrieval": self.needs_retrieval, "options": self.options_schema()}


class MethodRegistry(NamedRegistry[MethodSpec]):
    """Specs by name (read-only once built; build a new registry to add methods)."""

    kind = "method"
    hint = " (see `quaderno methods`)"

    def spec(self, name: str) -> MethodSpec:
        return self.lookup(name)

    def with_specs(self, *specs: MethodSpec) -> MethodRegistry:
        """A new registry with ``specs`` added (for plug-ins and tests)."""
        return MethodRegistry(self.extended(*specs))

    def make(self, name: str, lm: LM, retriever: Retriever | None,
             options: Mapping[str, Any] | MethodOptions | None = None,
             roles: Mapping[str, LM] | None = None) -> Any:
        """Build method ``name``; ``roles`` gives LMs for its extra roles (e.g. a reasoner)."""
        spec = self.spec(name)
        if spec.needs_retrieval and retriever is None:
            raise ConfigError(f"method {name!r} needs a knowledge base (--kb)")
        unknown = sorted(set(roles or {}) - set(spec.roles))
        if unknown:
            raise ConfigError(f"method {name!r} has no {unknown[0]!r} LLM role"
                              + (f" (its roles: {', '.join(spec.roles)})" if spec.roles
                                 else " (it uses one LLM)"))
        extra = {role: (roles or {}).get(role, lm) for role in spec.roles}
        return spec.factory(lm, retriever if spec.needs_retrieval else None,
                            spec.validate(options), **extra)


def parse_opts(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``--opt key=value`` pairs as a dict; a value is read as JSON when it is JSON (numbers,
    true/false, lists), else as text. A pair without ``=`` is a ConfigError."""
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ConfigError(f"--opt takes key=value, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) or str(annotation)
    return text.replace("typing.", "")
