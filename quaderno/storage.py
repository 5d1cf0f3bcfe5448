"""Crash-safe directories: build into a temporary folder, then switch a pointer atomically.

A directory managed by :class:`VersionedDir` looks like::

    root/CURRENT          -> "v-20261121T064400-1a2b3c" (written with os.replace)
    root/v-20261121T064400-1a2b3c/...

A build writes into ``root/.build-*``; only when it finished is the folder renamed and
``CURRENT`` replaced. A crash or ``kill -9`` at any moment leaves the previous version
loadable; leftovers of a dead build are removed by the next one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from quaderno.errors import ConfigError, IndexFormatError

log = logging.getLogger(__name__)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_name(name: str, what: str = "name") -> str:
    """Validate a user-chosen name used as a directory name."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(
            f"invalid {what} {name!r}: use 1-64 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit")
    return name


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to ``path`` so that readers see the old or the new file, never half of one."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_manifest(path: Path, *, kind: str, format_version: int) -> dict[str, Any]:
    """Read a manifest and check that it is ours and of the expected format version."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise IndexFormatError(f"{path}: manifest missing; the directory is damaged") from exc
    except json.JSONDecodeError as exc:
        raise IndexFormatError(f"{path}: manifest is not valid JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise IndexFormatError(f"{path}: not a quaderno {kind} manifest")
    found = data.get("format_version")
    if found != format_version:
        raise IndexFormatError(
            f"{path}: written by {kind} format version {found}, this quaderno reads version "
            f"{format_version}; rebuild it with this version")
    return data


class VersionedDir:
    """A directory whose content is replaced atomically as a whole."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def pointer(self) -> Path:
        return self.root / "CURRENT"

    def current(self) -> Path | None:
        """The folder of the last complete build, or None when there is none."""
        try:
            name = self.pointer.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        path = self.root / name
        return path if name and path.is_dir() else None

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def build(self) -> Iterator[Path]:
        """Yield an empty folder to fill; on success it becomes the current version."""
        with self.lock():
            self._remove_dead_builds()
            tmp = self.root / f".build-{uuid.uuid4().hex}"
            tmp.mkdir()
            try:
                yield tmp
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            version = f"v-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
            final = self.root / version
            os.rename(tmp, final)
            _fsync_dir(self.root)
            old = self.current()
            ptr_tmp = self.root / f".CURRENT.{uuid.uuid4().hex}.tmp"
            ptr_tmp.write_text(version, encoding="utf-8")
            with open(ptr_tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            os.replace(ptr_tmp, self.pointer)
            _fsync_dir(self.root)
            log.debug("switched %s to %s", self.root, version)
            if old is not None and old != final:
                shutil.rmtree(old, ignore_errors=True)

    def _remove_dead_builds(self) -> None:
        # Called under the lock: any .build-* folder now belongs to a dead builder.
        current = self.current()
        for child in self.root.iterdir():
            if child.name.startswith(".build-") or child.name.startswith(".CURRENT."):
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(
                    missing_ok=True)
            elif child.name.startswith("v-") and child != current and child.is_dir():
                shutil.rmtree(child, ignore_errors=True)

    def remove(self) -> None:
        with self.lock():
            pass
        shutil.rmtree(self.root, ignore_errors=True)
