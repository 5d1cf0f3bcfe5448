"""The tuple store: extraction is paid once per collection (issue 11, item 5).

A user asks many questions of one collection, and every question builds its own schema.
Extracted tuples are kept per

    (chunk id, chunk text hash, table signature, extraction model, extraction settings)

where the settings key also hashes the extraction prompt as the code renders it (instruction,
table description, output JSON schema: :func:`extract.prompt_fingerprint`), so a changed
prompt never re-uses tuples extracted under the old one (old entries simply stop matching;
the file format is unchanged)

in ``<dir>/tuples.sqlite`` beside the knowledge base (e.g. ``<kb dir>/docsage/``), so a later
question whose schema shares a table (same :meth:`Table.signature`) re-uses them and extracts
only what is new; a chunk whose text changed is extracted again. A table that differs from
stored ones of the same name and key only by dropped or added columns is assembled from them
(:meth:`TupleStore.cover`), and only its new columns are extracted.

Crash safety: one SQLite file in WAL mode (the helper the response cache and the call log
use); every (chunk, table) result is one autocommitted statement, so a ``kill -9`` at any
moment loses at most the results in flight and never damages committed ones. The columns a
result fills once read go into ``tuple_filled`` by a second statement after it; a result
without that line (a crash between the two, an older quaderno's write) is read by its rows.
An entry is replaced in two cases only: an unreadable one by the next extraction, and a
chunk's reading of no row of a table it was expected to hold (extract.py) by the rows a
re-read of that table alone finds. A re-read that found no row either is recorded in
``tuple_rereads`` under the entry's key and the way it was made
(:meth:`TupleStore.reread_none`), so no later question asks it again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError

from quaderno.corpus.chunk import Chunk
from quaderno.errors import IndexFormatError
from quaderno.llm.sqlite_conn import ThreadConnections
from quaderno.methods.docsage.extract_call import ExtractionSettings
from quaderno.methods.docsage.normalize import (entity_key, key_columns, multi_valued,
                                                row_identity)
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Table

log = logging.getLogger(__name__)

STORE_FORMAT_VERSION = 1
STORE_FILE = "tuples.sqlite"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tuples (key TEXT PRIMARY KEY, chunk_id TEXT NOT NULL, "
    "text_hash TEXT NOT NULL, table_name TEXT NOT NULL, table_sig TEXT NOT NULL, "
    "model TEXT NOT NULL, settings TEXT NOT NULL, rows TEXT NOT NULL, created REAL NOT NULL, "
    "table_json TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS tuples_chunk ON tuples (chunk_id)",
    # the columns some row of an entry holds a value of once read (the rows are stored as
    # the model wrote them, and reading empties placeholders and misplaced names); a table
    # of its own, so that an older quaderno still writes ``tuples`` as it did
    "CREATE TABLE IF NOT EXISTS tuple_filled (key TEXT PRIMARY KEY, columns TEXT NOT NULL)",
    # the re-reads of an entry's table alone (extract.py: a chunk found for an entity and
    # read as no row of its table) that found nothing either, so that a later question
    # expecting the chunk does not ask again; a table of its own, like tuple_filled
    "CREATE TABLE IF NOT EXISTS tuple_rereads (key TEXT NOT NULL, how TEXT NOT NULL, "
    "created REAL NOT NULL, PRIMARY KEY (key, how))",
)



class StoreStats(BaseModel):
    """Look-ups since the store was opened, and what it holds."""

    hits: int = 0
    misses: int = 0
    assembled: int = 0     # misses answered, in part or whole, from other table definitions
    writes: int = 0
    entries: int = 0


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


class TupleStore:
    """Extracted rows per (chunk, table definition, model, settings), crash-safe."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.path = self.root / STORE_FILE
        self._conns = ThreadConnections(self.path)
        self._lock = threading.Lock()
        self._stats = StoreStats()
        conn = self._conns.get()
        for ddl in _SCHEMA:
            conn.execute(ddl)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('format_version', ?)",
                     (str(STORE_FORMAT_VERSION),))
        found = conn.execute("SELECT value FROM meta WHERE name = 'format_version'").fetchone()
        if found is None or found[0] != str(STORE_FORMAT_VERSION):
            raise IndexFormatError(
                f"{self.path}: tuple store format version {found[0] if found else None}, "
                f"this quaderno reads version {STORE_FORMAT_VERSION}; delete the file to "
                "extract again")

    @staticmethod
    def key(chunk: Chunk, table: Table, model_id: str, settings: ExtractionSettings) -> str:
        body = json.dumps([chunk.id, text_hash(chunk.render()), table.signature(), model_id,
                           settings.key()])
        return hashlib.sha256(body.encode("utf-8")).hexdigest()

    def get(self, chunk: Chunk, table: Table, model_id: str,
            settings: ExtractionSettings) -> list[Row] | None:
        """The rows stored for this chunk and table definition, or None (a miss). An entry
        that cannot be read is a miss, logged, and overwritten by the next :meth:`put`."""
        found = self._conns.get().execute(
            "SELECT rows FROM tuples WHERE key = ?",
            (self.key(chunk, table, model_id, settings),)).fetchone()
        rows = None
        if found is not None:
            try:
                rows = [Row.model_validate(r) for r in json.loads(found[0])]
            except (ValueError, ValidationError) as exc:
                log.warning("tuple store %s: unreadable entry for chunk %s, table %s (%s); "
                            "extracting again", self.path, chunk.id, table.name, exc)
        with self._lock:
            if rows is None:
                self._stats.misses += 1
            else:
                self._stats.hits += 1
        return rows

    def put(self, chunk: Chunk, table: Table, model_id: str, settings: ExtractionSettings,
            rows: Sequence[Row], filled: Sequence[str] | None = None) -> None:
        """Store the rows (possibly none: "this chunk states nothing for this table" is
        worth keeping too) in one atomic statement, and then what they fill. ``filled``:
        the columns some row holds a value of once read, when that differs from what the
        rows hold as written (:meth:`known_tables`); by default, the columns they fill."""
        body = json.dumps([r.model_dump(mode="json") for r in rows], ensure_ascii=False)
        if filled is None:
            filled = [c for c in table.column_names
                      if any(r.values.get(c) is not None for r in rows)]
        self._write(self.key(chunk, table, model_id, settings), chunk.id,
                    text_hash(chunk.render()), table, model_id, settings.key(), body,
                    json.dumps(sorted(filled)))

    def reread_none(self, chunk: Chunk, table: Table, model_id: str,
                    settings: ExtractionSettings, how: str) -> None:
        """Record that ``table`` alone was read again from ``chunk`` in the way ``how``
        names (the caller's tag: :data:`.extract.REREAD_TAGS`) and found no row; the
        entry's rows stay as they are (none)."""
        if not isinstance(how, str) or not how.strip() or len(how) > 100:
            raise ValueError(f"how must name a way of reading (1-100 characters), "
                             f"got {how!r}")
        key = self.key(chunk, table, model_id, settings)
        self._retrying(lambda conn: conn.execute(
            "INSERT OR IGNORE INTO tuple_rereads VALUES (?, ?, ?)", (key, how, time.time())))

    def rereads_none(self, chunk: Chunk, table: Table, model_id: str,
                     settings: ExtractionSettings) -> set[str]:
        """The ways ``table`` alone was read again from ``chunk`` and found no row
        (:meth:`reread_none`)."""
        return {how for (how,) in self._conns.get().execute(
            "SELECT how FROM tuple_rereads WHERE key = ?",
            (self.key(chunk, table, model_id, settings),))}

    def _retrying(self, write: Callable[[sqlite3.Connection], object]) -> None:
        """Run ``write`` on this thread's connection, up to three times while another
        writer holds the file locked past the connection's timeout."""
        for attempt in range(3):
            try:
                write(self._conns.get())
                return
            except sqlite3.OperationalError as exc:  # locked by another writer past timeout
                if attempt == 2:
                    raise
                log.info("tuple store busy (%s); retrying", exc)
                time.sleep(0.2 * (attempt + 1))

    def _write(self, key: str, chunk_id: str, thash: str, table: Table, model_id: str,
               settings_key: str, body: str, filled: str | None = None) -> None:
        def write(conn: sqlite3.Connection) -> None:
            conn.execute(   # columns named: a store with more of them is written too
                "INSERT OR REPLACE INTO tuples (key, chunk_id, text_hash, table_name, "
                "table_sig, model, settings, rows, created, table_json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, chunk_id, thash, table.name, table.signature(), model_id,
                 settings_key, body, time.time(), table.model_dump_json()))
            if filled is not None:   # after the rows: a crash between the two leaves
                # an entry read by its rows (_FILLED)
                conn.execute("INSERT OR REPLACE INTO tuple_filled VALUES (?, ?)",
                             (key, filled))
        self._retrying(write)
        with self._lock:
            self._stats.writes += 1

    def cover(self, chunk: Chunk, table: Table, model_id: str, settings: ExtractionSettings,
              ) -> tuple[list[Row], list[str]] | None:
        """Rows of ``table`` assembled from this chunk's entries for *other* definitions of
        a table of the same name, description and key (same model, settings and chunk
        text) whose
        columns have the same definitions (:meth:`Column.definition`), and the columns
        still missing; None when no entry shares the key. A question whose minimal schema
        drops or adds a column of a stored table thus re-uses what was extracted."""
        found = self._conns.get().execute(
            "SELECT rows, table_json FROM tuples WHERE chunk_id = ? AND text_hash = ? AND "
            "table_name = ? AND model = ? AND settings = ?",
            (chunk.id, text_hash(chunk.render()), table.name, model_id,
             settings.key())).fetchall()
        want = {c.name: c.definition() for c in table.columns}
        keys = key_columns(table)
        entries = []
        for body, definition in found:
            try:
                stored = Table.model_validate_json(definition)
                rows = [Row.model_validate(r) for r in json.loads(body)]
            except (ValueError, ValidationError):
                continue
            # the description says which records belong in the table ("companies founded
            # after 1990" holds fewer than "companies"): rows for another one are not re-used
            if stored.description != table.description or key_columns(stored) != keys or any(
                    stored.column(k).definition() != want[k] for k in keys):
                continue
            # a table with a row per value of a multi-valued column is shaped differently
            # from one with a row per entity: neither's rows build the other's
            if set(multi_valued(stored)) != set(multi_valued(table)):
                continue
            entries.append((rows, {c.name for c in stored.columns
                                   if want.get(c.name) == c.definition()} - set(keys)))
        covered: set[str] = set()
        parts: list[tuple[list[Row], set[str]]] = []
        for rows, cols in sorted(entries, key=lambda e: -len(e[1])):
            if cols - covered:
                parts.append((rows, cols - covered))
                covered |= cols
        if not parts:
            return None
        missing = [c for c in table.column_names if c not in covered and c not in keys]
        with self._lock:
            self._stats.assembled += 1
        return join_rows(table, parts), missing

    def stats(self) -> StoreStats:
        entries = self._conns.get().execute("SELECT COUNT(*) FROM tuples").fetchone()[0]
        with self._lock:
            return self._stats.model_copy(update={"entries": entries})

    def __len__(self) -> int:
        return int(self._conns.get().execute("SELECT COUNT(*) FROM tuples").fetchone()[0])

    def known_tables(self, *, filled: bool = False) -> list[tuple[Table, int]]:
        """Every table definition extracted so far, with how many chunks it covers, most
        covered first (one definition per signature; keys may differ between questions):
        ASK can offer these to the schema so that a new question re-uses the tuples
        (re-use needs the same :meth:`Table.signature`, or :meth:`cover`).

        With ``filled``, only what the stored tuples hold: each definition is cut to its key
        and the columns some stored row has a value of once read (a placeholder year 0, or a
        company's own name as its chief executive, is no value), and one no chunk gave a
        row of is left out. An earlier draft's mistake (``companies.grounlenkreenergy_id``, a column
        for a table merged away) is then not offered again, and re-use still holds: a table
        with fewer columns is assembled from the stored one (:meth:`cover`)."""
        conn = self._conns.get()
        found = conn.execute(
            "SELECT table_sig, MAX(table_json), COUNT(*) FROM tuples GROUP BY table_sig "
            "ORDER BY 3 DESC, 2").fetchall()
        values: dict[str, set[str]] = {}
        if filled:
            for sig, column in conn.execute(_FILLED):
                values.setdefault(sig, set()).add(column)
        out = []
        for sig, body, n in found:
            try:
                table = Table.model_validate_json(body)
            except ValidationError as exc:
                log.warning("tuple store %s: unreadable table definition (%s)", self.path, exc)
                continue
            if filled:
                if sig not in values:
                    continue
                table = delta_table(table, [c for c in table.column_names if c in values[sig]])
            out.append((table, int(n)))
        return out


# (table signature, column) for every column some stored row has a value of: the entry's
# ``tuple_filled`` list where it has a readable one (a JSON array of names), else (written
# before that table, or damaged) the values its rows hold; an entry that is not a JSON list
# of rows with a "values" object (damaged: get() reads it as a miss) adds nothing. One pass
# over every stored row: linear in the store's size.
_GOOD_FILLED = """
  json_valid(u.columns) AND json_type(u.columns) = 'array' AND NOT EXISTS (
    SELECT 1 FROM json_each(u.columns) e WHERE e.type != 'text')"""
_FILLED = f"""
SELECT t.table_sig, f.value FROM tuples t JOIN tuple_filled u ON u.key = t.key,
  json_each(CASE WHEN {_GOOD_FILLED} THEN u.columns ELSE '[]' END) f
UNION
SELECT t.table_sig, v.key FROM tuples t,
  json_each(CASE WHEN json_valid(t.rows) THEN t.rows ELSE '[]' END) r,
  json_each(CASE WHEN r.type = 'object' THEN
              CASE WHEN json_type(r.value, '$.values') = 'object'
                   THEN json_extract(r.value, '$.values') ELSE '{{}}' END
            ELSE '{{}}' END) v
WHERE v.type != 'null' AND NOT EXISTS (
  SELECT 1 FROM tuple_filled u WHERE u.key = t.key AND {_GOOD_FILLED})
GROUP BY 1, 2"""


def delta_table(table: Table, columns: Sequence[str]) -> Table:
    """``table`` cut to its key columns and ``columns``: what to extract when the store
    covers the rest."""
    keys = key_columns(table)
    # a key may name a column twice (a model's ["data", "data"]): each is taken once
    return Table(name=table.name, description=table.description,
                 columns=[table.column(c) for c in dict.fromkeys([*keys, *columns])],
                 primary_key=list(table.primary_key))


def join_rows(table: Table, parts: Sequence[tuple[Sequence[Row], set[str]]]) -> list[Row]:
    """One chunk's rows of ``table`` from parts that each hold some of its columns: rows
    are paired by entity key and the values of multi-valued columns (:func:`row_identity`:
    the n-th such row in one part with the n-th in another); a row without a key stays on
    its own. Values, confidences and the evidence span are combined."""
    keys = [*key_columns(table), *multi_valued(table)]
    out: list[Row] = []
    slots: dict[tuple[str, ...], list[int]] = {}
    for rows, cols in parts:
        seen: dict[tuple[str, ...], int] = {}
        for r in rows:
            k = row_identity(table, r.values) if any(entity_key(table, r.values)) else ()
            n = seen.get(k, 0)
            seen[k] = n + 1
            places = slots.setdefault(k, []) if any(k) else []
            if n < len(places):
                base = out[places[n]]
            else:
                base = Row(table=table.name, values={c: None for c in table.column_names},
                           provenance=r.provenance.model_copy(update={"confidence": {},
                                                                      "confidence_kind": {}}))
                if any(k):
                    places.append(len(out))
                out.append(base)
            take = [c for c in table.column_names if c in cols or c in keys]
            # key cells keep the first part's spelling; other cells come from their part
            values = {**base.values, **{c: r.values.get(c) for c in take
                                        if c not in keys or base.values.get(c) is None}}
            conf = {**base.provenance.confidence,
                    **{c: p for c, p in r.provenance.confidence.items() if c in take}}
            kinds = {**base.provenance.confidence_kind,
                     **{c: k for c, k in r.provenance.confidence_kind.items() if c in take}}
            spans = [(p.char_start, p.char_end) for p in (base.provenance, r.provenance)
                     if p.char_end > p.char_start]
            start, end = (min(a for a, _ in spans), max(b for _, b in spans)) if spans else (0, 0)
            prov = base.provenance.model_copy(update={"confidence": conf, "char_start": start,
                                                      "char_end": end,
                                                      "confidence_kind": kinds})
            idx = places[n] if any(k) else len(out) - 1
            out[idx] = base.model_copy(update={"values": values, "provenance": prov})
    return out


def store_dir(kb_dir: Path) -> Path:
    """Where a knowledge base's tuple store lives: ``<kb dir>/docsage``."""
    return Path(kb_dir) / "docsage"
