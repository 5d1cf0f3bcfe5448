"""Helpers shared by the benchmark scripts (not part of the library)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    path = Path(os.environ.get("QUADERNO_DATA", ROOT.parent / "shared" / "data"))
    if not path.is_dir():
        raise SystemExit(f"benchmark data not found at {path}; set QUADERNO_DATA")
    return path


def reset_peak_rss() -> None:
    """Reset the kernel's peak-RSS counter of this process (Linux clear_refs 5)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def latencies_ms(fn: Callable[[str], object], queries: list[str], warmup: int = 3) -> np.ndarray:
    for q in queries[:warmup]:
        fn(q)
    out = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - t0) * 1000)
    return np.asarray(out)


def pct(values: np.ndarray) -> str:
    return f"p50 {np.percentile(values, 50):7.2f} ms   p95 {np.percentile(values, 95):7.2f} ms"
