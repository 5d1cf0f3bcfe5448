"""The README is the user's door: what it lists must be what the project has."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_benchmark_script_is_named_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    scripts = [p for p in sorted((ROOT / "benchmarks").iterdir())
               if p.suffix in {".py", ".sh"} and not p.name.startswith("_")]
    assert len(scripts) >= 10, "the benchmark scripts are missing"
    missing = [p.name for p in scripts if p.name not in readme]
    assert not missing, f"benchmark scripts the README does not name: {missing}"
