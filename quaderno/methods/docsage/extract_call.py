"""One extraction call as it is declared (spec §3.1): the settings an extraction depends on,
the typed :class:`~quaderno.llm.steps.Step` and its prompt, the output models built per table
set (so a backend can constrain decoding to their JSON schema), and the fingerprint of all of
it that keys the tuple store. :mod:`.extract` makes the calls.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from quaderno.llm.steps import Step
from quaderno.methods.docsage.schema import Column, Schema, Table

ConfidenceMode = Literal["auto", "logprobs", "samples", "none"]
_JSON_TYPES = {"TEXT": "string", "INT": "integer", "DOUBLE": "number", "DATE": "string",
               "BOOL": "boolean"}
_HOW = {"TEXT": "text", "INT": "integer", "DOUBLE": "number", "DATE": "YYYY-MM-DD or a year",
        "BOOL": "true/false"}


class ExtractionSettings(BaseModel):
    """What, besides the chunk, the table and the model, an extraction depends on; part of
    the tuple store's key. ``confidence``: ``auto`` asks for token log-probabilities and
    falls back to sample agreement when the backend sends none; ``none`` skips Level A."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    confidence: ConfidenceMode = "auto"
    samples: int = Field(default=3, ge=2, le=9)        # greedy + (samples-1) at temperature
    sample_temperature: float = Field(default=0.7, gt=0, le=2)
    max_tokens: int = Field(default=1024, ge=64)

    def key(self) -> str:
        """These settings and the extraction prompt as it is now (:func:`prompt_fingerprint`):
        a change of the instruction, of how tables are described to the model or of the
        output JSON schema gives new keys, so tuples from an older prompt are not re-used."""
        body = self.model_dump_json() + prompt_fingerprint()
        return hashlib.sha256(body.encode()).hexdigest()[:16]


EXTRACT = Step(
    name="docsage.extract",
    instruction=(
        "Extract into the tables below every record that this text states.\n\n"
        "Schema:\n{schema}\n\n"
        "Text (from document {doc}):\n\"\"\"\n{text}\n\"\"\"\n\n"
        "Rules: one object per entity or fact the text states, as many as there are (none "
        "if the text states none); copy names as they are written; copy each number's digits "
        "as the text writes them and never convert between thousands, millions and billions "
        "(\"$42.8 billion\" is 42.8: the scale is read from the text); dates as YYYY-MM-DD "
        "or a year; null for every value the text does not state: never guess, never write "
        "the word None."),
    inputs=("schema", "doc", "text"),
    output=None, parse=None, max_tokens=1024)


def row_model(table: Table) -> type[BaseModel]:
    """The JSON shape of one tuple of ``table``: every column a key, typed, null allowed.
    Validation is lax (a weak model's "2,300" survives and is read by :func:`coerce` later);
    the JSON schema is strict, for backends that constrain decoding."""
    fields: dict[str, Any] = {}
    for col in table.columns:
        schema = {"anyOf": [{"type": _JSON_TYPES[col.type]}, {"type": "null"}]}
        desc = "; ".join(x for x in (col.description, f"unit: {col.unit}" if col.unit else "")
                         if x)
        fields[col.name] = (Annotated[Any, WithJsonSchema(schema)],
                            Field(default=None, description=desc or None))
    config = ConfigDict(extra="ignore", json_schema_extra={
        "required": table.column_names, "additionalProperties": False})
    return create_model(f"{table.name}_row", __config__=config, **fields)


def extraction_model(tables: Sequence[Table]) -> type[BaseModel]:
    """The reply of one extraction call: a list of tuples per table."""
    fields: dict[str, Any] = {}
    for t in tables:
        cols = ", ".join(f'"{c.name}" ({_HOW[c.type]})' for c in t.columns)
        fields[t.name] = (list[row_model(t)],  # type: ignore[valid-type]
                          Field(default_factory=list,
                                description=f"one object per {t.name} record, keys {cols}"))
    config = ConfigDict(extra="ignore", json_schema_extra={
        "required": [t.name for t in tables], "additionalProperties": False})
    return create_model("extraction", __config__=config, **fields)


_PROBE = Table(name="probe", description="a probe table", columns=[
    Column(name=f"c_{t.lower()}", type=t, description=f"a {t} column", unit="u")
    for t in _JSON_TYPES])


# what the store's rows are: the model's values as written (read on every read); a store
# keyed before that held them read, and is not served
_STORED_AS = "as-written-1"


@functools.cache
def prompt_fingerprint() -> str:
    """A hash of what extraction shows the model besides the chunk and the table's own
    definition (which :meth:`Table.signature` covers): the instruction text, how a table is
    described in it (:func:`extraction_schema_text`) and the output JSON schema built for
    it, each rendered for a fixed probe table. How replies are read is not part of it: the
    store holds them as the model wrote them (:func:`read_values`)."""
    body = json.dumps([EXTRACT.instruction, extraction_schema_text([_PROBE]),
                       extraction_model([_PROBE]).model_json_schema(), _STORED_AS],
                      sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def extraction_schema_text(tables: Sequence[Table]) -> str:
    """The tables as the extraction prompt describes them: names, descriptions and columns
    only. Keys and foreign keys are left out: they are not part of the table's signature
    (the tuple store's key), so the prompt must not depend on them; foreign keys may also
    name tables that are not extracted in this call."""
    return Schema(tables=[t.model_copy(update={"primary_key": [], "foreign_keys": []})
                          for t in tables]).describe()


def extraction_step(tables: Sequence[Table], settings: ExtractionSettings, *,
                    temperature: float = 0.0, seed: int | None = None,
                    logprobs: bool = False, output: type[BaseModel] | None = None) -> Step:
    """The extraction step for ``tables`` with the given sampling parameters (``output``:
    the :func:`extraction_model` of ``tables``, when the caller built it already)."""
    params: dict[str, Any] = {"temperature": temperature}
    if seed is not None:
        params["seed"] = seed
    if logprobs:
        params["logprobs"] = True
    return dataclasses.replace(EXTRACT, output=output or extraction_model(tables), params=params,
                               max_tokens=settings.max_tokens)


__all__ = ["EXTRACT", "ConfidenceMode", "ExtractionSettings", "extraction_model",
           "extraction_schema_text", "extraction_step", "prompt_fingerprint", "row_model"]
