"""A trained gate bundle on disk, and loading a gate by name or directory.

A bundle is a :class:`~quaderno.storage.VersionedDir` (a crash while saving leaves the
previous version loadable) whose current version holds:

- ``manifest.json`` — what it is: embedder, label provenance (the LLM), where the SN memory
  came from (per source, which LLM made those labels), SN settings with θ_new, thresholds
  of every gate, fusion configurations, a training summary;
- ``memory.json`` + ``memory.npy`` — the SN memory (every label; ``drop_same`` is a subset),
  vectors saved with ``allow_pickle=False``;
- ``rqm.txt`` — LightGBM's text model; ``fusion-<gate>.safetensors`` — the fusions' weights
  (bundles saved before hold ``fusion-<gate>.pt`` state dicts, still read, with
  ``torch.load(weights_only=True)``); ``grid-<gate>.json``, ``fig4.json`` — the
  threshold searches; ``static-<source>-<dim>.npy`` + ``.json`` — a static embedder's
  table, which a load without an explicit embedder uses (a table rebuilt on another
  machine may differ in its low bits). Nothing is pickled.

``load_gate("never" | "always" | DIR | DIR:GATE)`` returns a :class:`Gate`; a bare DIR is
its default gate (``ccsk``).
"""

from __future__ import annotations

import json
import logging
import pickle  # only its error: .pt files are read with weights_only=True
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field

from safetensors.torch import load_file, save_file

from quaderno.errors import ConfigError, IndexFormatError, NotFoundError
from quaderno.gate.fusion import AttentionFusion
from quaderno.gate.gates import CCSKGate, ConstantGate, KNNRuleGate, ScoreGate
from quaderno.gate.labels import LabelProvenance, LabelRecord
from quaderno.gate.protocol import UNKNOWN_LLM, Gate
from quaderno.gate.rqm import ResponseQuality
from quaderno.gate.rule import Thresholds
from quaderno.gate.sn import SimilarQueries
from quaderno.index.embedders import Embedder, make_embedder
from quaderno.index.static_embedder import (TABLE_PREFIX, StaticEmbedder, parse_spec,
                                            table_files)
from quaderno.storage import VersionedDir, read_manifest, write_json_atomic

log = logging.getLogger(__name__)

KIND = "quaderno-gate"
FORMAT_VERSION = 1
CONSTANT = {"always": True, "never": False}
GATES = ("ccsk", "ccsk-rec", "skr-knn", "flashrag-skr", "sn", "rqm", "linear", "always", "never")


class SNConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    k: int = 5
    novelty: bool = True
    novelty_percentile: float = 5.0
    theta_new: dict[str, float | None] = Field(default_factory=dict)  # per memory mode


class FusionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dim: int
    heads: int = 8
    dropout: float = 0.1
    attention: str = "pooled"
    trust: str = "normalized"
    token_len: int = 32
    thresholds: Thresholds = Field(default_factory=Thresholds)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str = KIND
    format_version: int = FORMAT_VERSION
    embedder: str
    # the table's SHA-256 for a static embedder ("" for a model, and in bundles saved before)
    embedder_fingerprint: str = ""
    labels: LabelProvenance | None = None
    labels_llm: str | None = None
    memory_sources: dict[str, str] = Field(default_factory=dict)  # source → the labels' LLM
    sn: SNConfig = Field(default_factory=SNConfig)
    fusions: dict[str, FusionConfig] = Field(default_factory=dict)
    score_gates: dict[str, dict[str, float]] = Field(default_factory=dict)
    default: str = "ccsk"
    training: dict[str, Any] = Field(default_factory=dict)


class GateBundle:
    """Everything a trained gate directory holds, in memory."""

    def __init__(self, manifest: Manifest, embedder: Embedder, memory: list[LabelRecord],
                 memory_vectors: np.ndarray, rqm: ResponseQuality | None,
                 fusions: dict[str, AttentionFusion], extras: dict[str, Any] | None = None,
                 *, carries_table: bool = True) -> None:
        if embedder.spec != manifest.embedder:
            raise ConfigError(f"this gate was trained with embedder {manifest.embedder!r}; "
                              f"got {embedder.spec!r}: load it with the same embedder")
        found = getattr(embedder, "fingerprint", "")
        if manifest.embedder_fingerprint and found and found != manifest.embedder_fingerprint:
            trained = (f"this gate was trained with the {manifest.embedder} table "
                       f"{manifest.embedder_fingerprint[:12]}; this one is {found[:12]}")
            if carries_table:
                raise ConfigError(f"{trained}: load the gate without an embedder (it carries "
                                  "its table), or retrain it (quaderno gate train)")
            raise ConfigError(f"{trained}, and the gate was saved before gates carried their "
                              "table: restore that table under $QUADERNO_HOME/embedders/, or "
                              "retrain the gate (quaderno gate train)")
        self.manifest, self.embedder, self.memory = manifest, embedder, memory
        self.memory_vectors, self.rqm, self.fusions = memory_vectors, rqm, fusions
        self.extras = dict(extras or {})  # JSON files saved beside (grids, Fig. 4)
        self._sn: dict[str, SimilarQueries] = {}
        self.other_llm_note = self._other_llm_memory()
        if self.other_llm_note:
            log.warning("%s", self.other_llm_note)

    def _other_llm_memory(self) -> str | None:
        """A note when the SN memory holds labels made with another LLM than the gate's own
        labels (e.g. SKR's InstructGPT labels)."""
        own = self.manifest.labels_llm
        other = {src: llm for src, llm in self.manifest.memory_sources.items() if llm != own}
        if not other:
            return None
        n = sum(1 for r in self.memory if r.source in other)
        if n == 0 and not any(r.source in self.manifest.memory_sources for r in self.memory):
            n = len(self.memory)  # sources not recorded per item: the whole memory
        described = ", ".join(f"{src} ({llm})" for src, llm in sorted(other.items()))
        return (f"SN memory holds {n} labels made with another LLM: {described}; their "
                "votes are about that model's knowledge")

    def sn(self, mode: str = "drop_same") -> SimilarQueries:
        if mode not in self._sn:
            cfg = self.manifest.sn
            self._sn[mode] = SimilarQueries(
                self.embedder, k=cfg.k, memory=mode, novelty=cfg.novelty,  # type: ignore[arg-type]
                novelty_percentile=cfg.novelty_percentile,
                theta_new=cfg.theta_new.get(mode)).fit(self.memory, self.memory_vectors)
        return self._sn[mode]

    @property
    def names(self) -> list[str]:
        return [*self.fusions, "skr-knn", "flashrag-skr", *self.manifest.score_gates,
                "always", "never"]

    def gate(self, name: str | None = None) -> Gate:
        name = name or self.manifest.default
        if name in CONSTANT:
            return ConstantGate(CONSTANT[name])
        learned = self._learned(name)
        if self.other_llm_note:
            learned.notes = (self.other_llm_note,)
        return learned

    def _learned(self, name: str) -> CCSKGate | KNNRuleGate | ScoreGate:
        llm = self.manifest.labels_llm or UNKNOWN_LLM
        if name in self.fusions:
            cfg = self.manifest.fusions[name]
            if self.rqm is None:
                raise IndexFormatError(f"gate {name!r} needs the RQM model, which is missing")
            return CCSKGate(self.embedder, self.sn("drop_same"), self.rqm, self.fusions[name],
                            cfg.thresholds, name=name, token_len=cfg.token_len, labels_llm=llm)
        if name == "skr-knn":
            return KNNRuleGate(self.sn("drop_same"), rule="skr", labels_llm=llm)
        if name == "flashrag-skr":
            return KNNRuleGate(self.sn("all"), rule="flashrag", labels_llm=llm)
        if name in self.manifest.score_gates:
            cfg = self.manifest.score_gates[name]
            return ScoreGate(name, self.embedder, self.sn("drop_same"), self.rqm,
                             tau=cfg["tau"], weight=cfg.get("weight", 0.5), labels_llm=llm)
        raise ConfigError(f"this gate directory has no gate {name!r}; it has "
                          f"{', '.join(self.names)}")

    # -- persistence --------------------------------------------------------------------
    def save(self, root: Path) -> Path:
        with VersionedDir(Path(root)).build() as tmp:
            write_json_atomic(tmp / "manifest.json", self.manifest.model_dump(mode="json"))
            write_json_atomic(tmp / "memory.json", [
                {"question": r.question, "judgement": r.labelled(), "source": r.source}
                for r in self.memory])
            np.save(tmp / "memory.npy", np.asarray(self.memory_vectors, dtype=np.float32),
                    allow_pickle=False)
            if self.rqm is not None:
                self.rqm.save(tmp / "rqm.txt")
            for name, model in self.fusions.items():
                save_file({k: v.contiguous() for k, v in model.state_dict().items()},
                          str(tmp / f"fusion-{name}.safetensors"))
            for name, data in self.extras.items():
                write_json_atomic(tmp / name, data)
            save_table = getattr(self.embedder, "save_table", None)
            if save_table is not None:  # a static embedder's table, from memory
                save_table(tmp)
        return Path(root)

    @classmethod
    def load(cls, root: Path, embedder: Embedder | None = None) -> GateBundle:
        current = VersionedDir(Path(root)).current()
        if current is None:
            raise NotFoundError(f"{root} holds no trained gate (train one with `quaderno gate "
                                "train`)")
        data = read_manifest(current / "manifest.json", kind=KIND, format_version=FORMAT_VERSION)
        manifest = Manifest.model_validate(data)
        carried = _carried_table(manifest, current)
        if embedder is not None:
            emb = embedder
        elif carried is not None:  # the table it was trained with, whatever this machine has
            emb = StaticEmbedder(carried[0], dim=carried[1], cache_dir=current)
        else:
            emb = make_embedder(manifest.embedder)
        rows = json.loads((current / "memory.json").read_text(encoding="utf-8"))
        memory = [LabelRecord(question=r["question"], golden_answers=[],
                              judgement=r["judgement"], source=r.get("source", ""))
                  for r in rows]
        vectors = np.load(current / "memory.npy", allow_pickle=False)
        rqm = ResponseQuality.load(current / "rqm.txt") if (current / "rqm.txt").exists() \
            else None
        fusions = {}
        for name, cfg in manifest.fusions.items():
            model = AttentionFusion(cfg.dim, heads=cfg.heads, dropout=cfg.dropout,
                                    attention=cfg.attention,  # type: ignore[arg-type]
                                    trust=cfg.trust)  # type: ignore[arg-type]
            model.load_state_dict(_fusion_state(current, name))
            model.eval()
            fusions[name] = model
        extras = {p.name: json.loads(p.read_text(encoding="utf-8"))
                  for p in current.glob("*.json")
                  if p.name not in ("manifest.json", "memory.json")
                  and not p.name.startswith(TABLE_PREFIX)}  # a carried table
        return cls(manifest, emb, memory, vectors, rqm, fusions, extras,
                   carries_table=carried is not None)


def _carried_table(manifest: Manifest, current: Path) -> tuple[str, int] | None:
    """(source, dim) of the static table a bundle carries (its low bits may differ from a
    table rebuilt on this machine); None for a model embedder or a bundle saved before gates
    carried their table. Half a table (the ``.npy`` without its ``.json`` sidecar, or the
    reverse) is damage, refused: never rebuilt into the saved version."""
    if not manifest.embedder.startswith("static:"):
        return None
    source, dim = parse_spec(manifest.embedder)
    files = table_files(current, source, dim)
    present = [f.is_file() for f in files]
    if not any(present):
        return None
    if not all(present):
        missing = files[present.index(False)].name
        raise IndexFormatError(f"{current}: the gate's {manifest.embedder} table is "
                               f"incomplete ({missing} is missing); the gate is damaged: "
                               "restore it, or retrain it (quaderno gate train)")
    return source, dim


def _fusion_state(current: Path, name: str) -> dict[str, torch.Tensor]:
    """A fusion's weights: ``fusion-<gate>.safetensors``, or the ``.pt`` state dict of bundles
    saved before (read with ``weights_only=True``)."""
    path = current / f"fusion-{name}.safetensors"
    if path.is_file():
        return load_file(str(path))
    old = current / f"fusion-{name}.pt"
    if old.is_file():
        try:
            return torch.load(old, weights_only=True)
        except (RuntimeError, ValueError, OSError, pickle.UnpicklingError) as exc:
            raise IndexFormatError(f"{old}: unreadable fusion weights ({exc}); retrain the gate "
                                   "(quaderno gate train)") from exc
    raise IndexFormatError(f"{current}: the weights of gate {name!r} are missing "
                           f"(fusion-{name}.safetensors); the gate is damaged: retrain it "
                           "(quaderno gate train)")


def split_spec(spec: str) -> tuple[str, str | None]:
    """``DIR`` or ``DIR:GATE`` → (DIR, GATE or None)."""
    path, sep, name = spec.rpartition(":")
    if sep and path and name in GATES:
        return path, name
    return spec, None


def load_gate(spec: str, *, embedder: Embedder | None = None) -> Gate:
    """``always`` / ``never``, a trained gate directory (its default gate, CCSK) or
    ``DIR:GATE`` (one of the bundle's gates, e.g. ``DIR:skr-knn``)."""
    if spec in CONSTANT:
        return ConstantGate(CONSTANT[spec])
    path, name = split_spec(spec)
    if not Path(path).is_dir():
        raise NotFoundError(f"no gate {spec!r}: give always, never, a trained gate directory "
                            "or DIR:GATE (quaderno gate train makes one)")
    return GateBundle.load(Path(path), embedder).gate(name)
