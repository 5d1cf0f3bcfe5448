#!/usr/bin/env bash
# DocSage on real multi-entity questions: the comparison questions of 2WikiMultihopQA's dev
# set ("Who was born first, X or Y?", "Are both films from the same country?"), as
# committed in benchmarks/results/docsage-2wiki-$LLM/.
#
#   benchmarks/docsage_2wiki.sh measuring 6    # the measuring model (../shared/tools/measuring-llm.sh),
#                                              # the first 6 comparison questions
#   DOCSAGE_OPTS="max_chunks=4" CONFIGS="docsage" benchmarks/docsage_2wiki.sh embedded 2
#   DOCSAGE_NAME=docsage-a012d3c CONFIGS=docsage-a012d3c benchmarks/docsage_2wiki.sh measuring 20
#                                              # DocSage again under another name (a later
#                                              # commit), reported beside the first
#
# Each question is asked over its own gold paragraphs (2wiki-comparison: 2 or 4 Wikipedia
# paragraphs, BM25), so what is measured is schema, extraction and SQL over real text, not
# retrieval. Configurations: the closed-book LLM, vanilla RAG (docsage-no-extraction: the
# same paragraphs in the prompt), and DocSage with DOCSAGE_OPTS (CLEAR's calibration for the
# extraction model among them: benchmarks/docsage_calibrate.py). A run cut short resumes
# when the script runs again.
set -euo pipefail
cd "$(dirname "$0")/.."
LLM=${1:-measuring}; LIMIT=${2:-6}
HOME_DIR=${DOCSAGE_HOME:-/tmp/quaderno-docsage}
OUT=benchmarks/results/docsage-2wiki-$LLM
Q=".venv/bin/quaderno"
export QUADERNO_TIMEOUT=${QUADERNO_TIMEOUT:-900}
CONFIGS=${CONFIGS:-all}
if [ "$LLM" = measuring ]; then
  LLM_FLAGS=(--llm openai --model measuring --base-url http://127.0.0.1:8800/v1 --concurrency 1)
else
  LLM_FLAGS=(--concurrency 1)
fi
run() {  # name, method, then options
  local name=$1 method=$2; shift 2
  case " $CONFIGS " in *" all "*|*" $name "*) ;; *) return 0 ;; esac
  local opts=()
  while [ $# -gt 0 ]; do opts+=(--opt "$1"); shift; done
  $Q eval --dataset 2wiki-comparison --limit "$LIMIT" --method "$method" \
    --pool per-question --retrieval bm25 --out "$OUT" --name "$name" --home "$HOME_DIR" \
    "${LLM_FLAGS[@]}" "${opts[@]}"
}
docsage_opts=()
for o in ${DOCSAGE_OPTS:-}; do docsage_opts+=("$o"); done
run vanilla-llm           vanilla-llm
run docsage-no-extraction docsage-no-extraction
NAME=${DOCSAGE_NAME:-docsage}
run "$NAME"               docsage "${docsage_opts[@]}"
mkdir -p "$OUT"
runs=()
# every DocSage run, the ones under other names too (by name)
for d in "$OUT"/vanilla-llm "$OUT"/docsage-no-extraction "$OUT"/docsage \
         $(ls -d "$OUT"/docsage-* 2>/dev/null | grep -v -e '/docsage-no-extraction$'); do
  [ -f "$d/results.jsonl" ] && runs+=("$d")
done
$Q report "${runs[@]}" --out "$OUT/report" --metric em > "$OUT/report.txt"
