"""What a client may ask the server to do: the option policy and the embedder policy.

A method's own option model says what is *valid*; this module says what a *client of the
server* may choose, one policy for every route (ask, the stream, chat completions, MCP,
evaluation runs):

* **No server paths.** An option naming a file or folder of the server (DocSage's
  ``calibration`` and ``store_dir``, any option named ``*_dir``, ``*_path``, ``*_file``)
  is refused with a 422: the server chooses its own files inside its workspace.
* **Capped work.** Numeric options that multiply the work of one question (rounds, LLM
  calls, chunks, samples, concurrency) are capped by :data:`OPTION_CAPS`; a larger value
  is a 422 naming the cap. The table is documented in ``docs/serve.md``.
* **Embedders.** A client may build an index with ``none``, ``minilm`` or
  ``hash[:DIM]`` (DIM ≤ :data:`HASH_DIM_MAX`), or a name the operator allowed at start
  (``--embedder-allow``); anything else (``openai:M@URL`` would send the server's key and
  every chunk to that URL, ``st:/path`` loads a model from disk) is a 422 naming the
  allowed ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from quaderno.errors import ConfigError, NotFoundError
from quaderno.methods.registry import METHODS
from quaderno.methods.spec import MethodSpec

# option -> the largest value a client may send (the method's own minimum still applies)
OPTION_CAPS: dict[str, int | float] = {
    "k": 100, "retrieve_k": 100, "pool_k": 200, "max_chunks": 200, "sample_k": 50,
    "probe_size": 64, "probe_docs": 32, "max_docs": 50,
    "max_iters": 10, "max_rounds": 10, "max_steps": 20, "iterations": 10,
    "max_sections": 20, "max_questions": 10, "call_budget": 100, "sql_repairs": 3,
    "sql_timeout_s": 30.0,
    "samples": 9, "committee_size": 9, "concurrency": 8,
    "max_tokens": 4096, "reader_max_tokens": 4096, "reasoner_max_tokens": 4096,
    "reasoning_max_words": 2000,
}

# options that name a file or folder of the server: never a client's to choose
PATH_OPTIONS = frozenset({"calibration", "store_dir", "path", "model_path"})
PATH_SUFFIXES = ("_dir", "_path", "_file")

HASH_DIM_MAX = 4096
BUILTIN_EMBEDDERS = ("none", "minilm", f"hash[:DIM≤{HASH_DIM_MAX}]")


def is_path_option(name: str) -> bool:
    return name in PATH_OPTIONS or name.endswith(PATH_SUFFIXES)


def method_spec(name: str) -> MethodSpec:
    """The spec of a method a client named; an unknown name is a NotFoundError (404)."""
    if name not in METHODS:
        raise NotFoundError(f"no method {name!r}; choose one of {', '.join(METHODS)} "
                            "(GET /v1/methods)")
    return METHODS.spec(name)


def check_options(method: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as a client may send them for ``method``, or a ConfigError (422) naming
    the option and what to change."""
    for name, value in options.items():
        if is_path_option(name):
            raise ConfigError(f"option {name!r} of {method} names a file or folder of the "
                              "server, which is the server's to choose; leave it out")
        cap = OPTION_CAPS.get(name)
        if cap is None or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if value > cap:
            raise ConfigError(f"option {name!r} of {method} is {value}, over this server's "
                              f"cap of {cap}; send at most {cap} (docs/serve.md lists the "
                              "caps)")
    return dict(options)


def check_embedder(spec: str | None, allowed: Iterable[str] = ()) -> str | None:
    """The embedder ``spec`` a client asked for, if this server allows it (``None`` for
    none), else a ConfigError (422) naming the allowed ones."""
    if spec is None or spec == "none":
        return None
    extra = tuple(allowed)
    if spec == "minilm" or spec in extra:
        return spec
    kind, sep, rest = spec.partition(":")
    if kind == "hash":
        if not sep:
            return spec
        if rest.isdigit() and 1 <= int(rest) <= HASH_DIM_MAX:
            return spec
        raise ConfigError(f"embedder {spec!r}: hash:DIM needs a whole DIM from 1 to "
                          f"{HASH_DIM_MAX}")
    names = ", ".join((*BUILTIN_EMBEDDERS, *extra))
    raise ConfigError(f"embedder {spec!r} is not allowed on this server; choose one of "
                      f"{names} (the operator allows others with --embedder-allow)")
