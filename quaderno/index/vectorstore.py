"""Vector stores: where dense vectors live and are searched.

:class:`FaissVectorStore` (embedded, the default) keeps an exact ``flat`` or approximate
``hnsw`` FAISS index with inner-product or L2 metric. :class:`QdrantVectorStore` talks to
Qdrant through qdrant-client: ``path=`` runs Qdrant's local mode (tests, laptops) and
``url=`` the same code against a server or a sharded cluster.

Every store maps rows 0..n-1 (the KB positions) to vectors; ``search`` returns scores
where higher is better (L2 distances are negated) and positions, ``-1`` for no hit.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from quaderno.errors import ConfigError, DependencyError, QuadernoError

log = logging.getLogger(__name__)

Metric = Literal["ip", "l2"]
LOCAL = "local:"


@runtime_checkable
class VectorStore(Protocol):
    """Stores vectors at consecutive positions and finds the nearest ones."""

    dim: int
    metric: Metric

    def add(self, vectors: np.ndarray) -> None: ...

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def __len__(self) -> int: ...

    def save(self, folder: Path) -> dict[str, Any]: ...


def _check_metric(metric: str) -> None:
    if metric not in ("ip", "l2"):
        raise ConfigError(f"metric must be 'ip' or 'l2', got {metric!r}")


class FaissVectorStore:
    """A FAISS index: ``kind="flat"`` (exact) or ``"hnsw"`` (graph, approximate)."""

    def __init__(self, dim: int, *, kind: str = "flat", metric: Metric = "ip",
                 hnsw_m: int = 32, ef_construction: int = 40, ef_search: int = 64,
                 index: Any = None) -> None:
        import faiss

        if dim < 1:
            raise ConfigError(f"dim must be positive, got {dim}")
        if kind not in ("flat", "hnsw"):
            raise ConfigError(f"FAISS index kind must be 'flat' or 'hnsw', got {kind!r}")
        _check_metric(metric)
        for name, value in (("hnsw_m", hnsw_m), ("ef_construction", ef_construction),
                            ("ef_search", ef_search)):
            if value < 1:
                raise ConfigError(f"{name} must be positive, got {value}")
        self.dim, self.kind, self.metric = dim, kind, metric
        self.hnsw_m, self.ef_construction, self.ef_search = hnsw_m, ef_construction, ef_search
        fmetric = faiss.METRIC_INNER_PRODUCT if metric == "ip" else faiss.METRIC_L2
        if index is not None:
            self.index = index
        elif kind == "flat":
            self.index = faiss.IndexFlat(dim, fmetric)
        else:
            self.index = faiss.IndexHNSWFlat(dim, hnsw_m, fmetric)
            self.index.hnsw.efConstruction = ef_construction
        if kind == "hnsw":
            self.index.hnsw.efSearch = ef_search

    def add(self, vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ConfigError(f"expected vectors of shape (n, {self.dim}), got {vectors.shape}")
        self.index.add(vectors)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise ConfigError(f"expected queries of shape (n, {self.dim}), got {queries.shape}")
        scores, ids = self.index.search(queries, k)
        if self.metric == "l2":
            scores = -scores
        return scores, ids

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def save(self, folder: Path) -> dict[str, Any]:
        import faiss

        faiss.write_index(self.index, str(folder / "faiss.index"))
        return {"backend": "faiss", "kind": self.kind, "metric": self.metric, "dim": self.dim,
                "hnsw_m": self.hnsw_m, "ef_construction": self.ef_construction,
                "ef_search": self.ef_search}

    @classmethod
    def load(cls, folder: Path, params: dict[str, Any]) -> FaissVectorStore:
        import faiss

        index = faiss.read_index(str(folder / "faiss.index"))
        return cls(params["dim"], kind=params["kind"], metric=params["metric"],
                   hnsw_m=params["hnsw_m"], ef_construction=params["ef_construction"],
                   ef_search=params["ef_search"], index=index)


class QdrantVectorStore:
    """Vectors in a Qdrant collection; point id = KB position.

    ``path`` selects Qdrant's embedded local mode (a folder, no server); ``url`` a Qdrant
    server or cluster (the API key is read from ``api_key_env``). For a sharded cluster,
    pass ``shard_number`` and ``replication_factor`` at creation.
    """

    def __init__(self, dim: int, *, collection: str, metric: Metric = "ip",
                 path: str | Path | None = None, url: str | None = None,
                 api_key_env: str = "QDRANT_API_KEY", shard_number: int | None = None,
                 replication_factor: int | None = None, create: bool = True) -> None:
        try:
            from qdrant_client import QdrantClient, models
        except ImportError as exc:
            raise DependencyError("the Qdrant store needs: pip install 'quaderno[qdrant]'") from exc
        import os

        _check_metric(metric)
        if (path is None) == (url is None):
            raise ConfigError("QdrantVectorStore needs exactly one of path= (local mode) or url=")
        self.dim, self.metric, self.collection = dim, metric, collection
        self.path, self.url = (str(path) if path is not None else None), url
        self._models = models
        self.client = (QdrantClient(path=self.path) if self.path is not None
                       else QdrantClient(url=url, api_key=os.environ.get(api_key_env)))
        distance = models.Distance.DOT if metric == "ip" else models.Distance.EUCLID
        exists = self.client.collection_exists(collection)
        if create:
            if exists:
                self.client.delete_collection(collection)
            self.client.create_collection(
                collection, vectors_config=models.VectorParams(size=dim, distance=distance),
                shard_number=shard_number, replication_factor=replication_factor)
        elif not exists:
            raise QuadernoError(f"Qdrant collection {collection!r} does not exist")
        self._count = self.client.count(collection, exact=True).count

    def add(self, vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ConfigError(f"expected vectors of shape (n, {self.dim}), got {vectors.shape}")
        ids = list(range(self._count, self._count + len(vectors)))
        self.client.upload_collection(self.collection, vectors=vectors, ids=ids, wait=True)
        self._count += len(vectors)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.asarray(queries, dtype=np.float32)
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        ids = np.full((len(queries), k), -1, dtype=np.int64)
        requests = [self._models.QueryRequest(query=q.tolist(), limit=k) for q in queries]
        for row, result in enumerate(self.client.query_batch_points(self.collection, requests)):
            for col, point in enumerate(result.points):
                ids[row, col] = int(point.id)
                scores[row, col] = -point.score if self.metric == "l2" else point.score
        return scores, ids

    def __len__(self) -> int:
        return self._count

    def save(self, folder: Path) -> dict[str, Any]:
        # A local-mode collection inside the index folder is recorded relative to it, since
        # the folder is renamed when the build is committed; the client lets go of it here.
        path = self.path
        if path is not None and Path(path).resolve().is_relative_to(Path(folder).resolve()):
            path = LOCAL + str(Path(path).resolve().relative_to(Path(folder).resolve()))
            self.client.close()
        return {"backend": "qdrant", "collection": self.collection, "metric": self.metric,
                "dim": self.dim, "path": path, "url": self.url}

    @classmethod
    def load(cls, folder: Path, params: dict[str, Any]) -> QdrantVectorStore:
        path = params["path"]
        if path is not None and path.startswith(LOCAL):
            path = Path(folder) / path[len(LOCAL):]
        return cls(params["dim"], collection=params["collection"], metric=params["metric"],
                   path=path, url=params["url"], create=False)


STORES = {"faiss": FaissVectorStore, "qdrant": QdrantVectorStore}


def load_store(folder: Path, params: dict[str, Any]) -> VectorStore:
    backend = params.get("backend")
    if backend not in STORES:
        raise QuadernoError(f"unknown vector store backend {backend!r} in {folder}")
    return STORES[backend].load(folder, params)
