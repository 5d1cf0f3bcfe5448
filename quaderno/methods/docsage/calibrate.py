"""Calibrating Level A on labelled data D_1 (spec §3 Level A, A4).

D_1 is a set of chunks with the gold values each states, from the synthetic benchmark's
*train* domain families (``quaderno.eval.synth.calibration_examples``), never its test
families. The extraction model extracts every example as it would at question time (same
settings, so the same kind of confidence); each extracted cell is labelled right or wrong
against the gold; the conformal threshold is computed from the wrong cells
(:func:`confidence.calibrate`).

Labels: a row is matched to a gold entity by its normalized name (aliases, acronyms and
short forms as in :func:`aliases.alias_map`); its non-key cells are right when their
normalized value equals the gold one (a cell the text does not state must be NULL); a row
that matches no gold entity (a distractor, a roster page, an invention) has only wrong
non-NULL cells. ``against="stated"`` labels against what the text says (an older dated
value correctly read is right: Level B's job), ``"gold"`` against the current value.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from quaderno.corpus.chunk import Chunk
from quaderno.errors import ConfigError
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.docsage.aliases import alias_map
from quaderno.methods.docsage.confidence import Calibration, LabelledCell, calibrate, checked_on
from quaderno.methods.docsage.extract import ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.normalize import key_columns, normalize_entity, normalize_value
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table

log = logging.getLogger(__name__)


class LabelledExample(Protocol):
    """What D_1 provides per chunk (``quaderno.eval.synth.CalibrationExample`` has it)."""

    chunk_id: str
    text: str
    table: str
    cells: dict[str, dict[str, Any]]    # entity name -> column -> current gold value
    stated: dict[str, dict[str, Any]]   # entity name -> column -> value as the text says


def label_rows(table: Table, rows: Sequence[Row], gold: Mapping[str, Mapping[str, Any]],
               ) -> list[LabelledCell]:
    """Labelled cells of one chunk's extracted ``rows`` against ``gold`` (entity name ->
    column -> value); cells without a confidence are left out."""
    key = key_columns(table)[0]
    names = [str(r.values.get(key) or "") for r in rows] + list(gold)
    amap = alias_map(names)
    entity = {amap.get(normalize_entity(g), normalize_entity(g)): g for g in gold}
    out = []
    for r in rows:
        norm = normalize_entity(r.values.get(key))
        truth = gold.get(entity.get(amap.get(norm, norm), ""), None)
        for col in table.columns:
            p = r.provenance.confidence.get(col.name)
            if p is None or col.name == key:
                continue
            got = normalize_value(r.values.get(col.name), col.type)
            kind = r.provenance.confidence_kind.get(col.name)
            if truth is None:
                if got is not None:
                    out.append(LabelledCell(confidence=p, correct=False, kind=kind))
                continue
            want = normalize_value(truth.get(col.name), col.type)
            out.append(LabelledCell(confidence=p, correct=got == want, kind=kind))
    return out


async def labelled_cells(lm: LM, examples: Sequence[LabelledExample],
                         tables: Mapping[str, Table], settings: ExtractionSettings, *,
                         against: Literal["stated", "gold"] = "stated", store: Any = None,
                         trace: Trace | None = None, concurrency: int = 2,
                         ) -> list[LabelledCell]:
    """Extract every example's table from its text and label the cells (module doc).
    ``tables``: the :class:`Table` to extract for each example's ``table`` name."""
    if settings.confidence == "none":
        raise ConfigError("calibration needs confidences: extraction settings have "
                          "confidence='none'")
    missing = sorted({e.table for e in examples} - set(tables))
    if missing:
        raise ConfigError(f"no table definition for D_1 table(s) {missing}")
    cells: list[LabelledCell] = []
    for name, table in tables.items():
        mine = [e for e in examples if e.table == name]
        if not mine:
            continue
        chunks = [Chunk(id=e.chunk_id, text=e.text) for e in mine]
        alone = Schema(tables=[table.model_copy(update={"foreign_keys": []})])
        results = await extract(lm, chunks, alone, settings, store=store,
                                trace=trace, concurrency=concurrency)
        for example, result in zip(mine, results):
            gold = example.stated if against == "stated" else example.cells
            cells += label_rows(table, all_rows([result]), gold)
    log.info("D_1: %d labelled cells, %d wrong", len(cells),
             sum(not c.correct for c in cells))
    return cells


async def calibrate_on(lm: LM, examples: Sequence[LabelledExample],
                       tables: Mapping[str, Table], settings: ExtractionSettings, *,
                       alpha: float = 0.1, source: str = "d1",
                       held_out: Sequence[LabelledExample] = (),
                       **kwargs: Any) -> Calibration:
    """The conformal threshold from D_1 ``examples`` (see :func:`labelled_cells`), with the
    score kind and the extraction model it holds for; with ``held_out`` examples (none of
    them a chunk of ``examples``: :class:`ConfigError`), what it flags of their labelled
    cells is recorded (:func:`.confidence.checked_on`)."""
    shared = sorted({e.chunk_id for e in examples} & {e.chunk_id for e in held_out})
    if shared:
        raise ConfigError(f"held-out examples must not be calibrated on: {shared[:3]}")
    cells = await labelled_cells(lm, examples, tables, settings, **kwargs)
    out = calibrate(cells, alpha, source=f"{source}: {len(cells)} cells", model=lm.model_id)
    if held_out:
        out = checked_on(out, await labelled_cells(lm, held_out, tables, settings, **kwargs))
    return out
