#!/usr/bin/env bash
# The missing-knowledge RAG evaluation (seed 001, Table 1's configurations) as committed in
# benchmarks/results/misknow-*: STD-RAG vs misknow over Wiki, QA pairs, Merged and 2-way.
#
#   benchmarks/misknow_runs.sh nq 16 measuring    # the measuring model (../shared/tools/measuring-llm.sh)
#   CONFIGS="std-merged mis-merged std-2way mis-wiki+qa" benchmarks/misknow_runs.sh medquad 8 embedded
#                                                  # the embedded SmolLM2, four configurations
#
# KBs come from `quaderno kb recipe` with the first 100 evaluation questions kept out (the run
# answers the first N <= 100 of them); retrieval is BM25 (the paper uses BGE + FAISS L2).
set -euo pipefail
cd "$(dirname "$0")/.."
DATASET=${1:-nq}; LIMIT=${2:-16}; LLM=${3:-measuring}
HOME_DIR=${MISKNOW_HOME:-/tmp/quaderno-misknow}
OUT=benchmarks/results/misknow-$DATASET-$LLM
Q=".venv/bin/quaderno"
if [ "$DATASET" = nq ]; then
  PASSAGES=nq-passages; QA=nq-qa; MERGED=nq-merged; RECIPES="nq-passages nq-qa nq-merged"
  READER=64; METRIC=acc
else
  PASSAGES=medquad-passages; QA=medquad-qa; MERGED=medical-merged
  RECIPES="medquad-passages medquad-qa medical-merged"; READER=256; METRIC=rouge1
fi
for r in $RECIPES; do
  if [ ! -d "$HOME_DIR/kbs/$r" ]; then
    $Q kb recipe "$r" --eval-dataset "$DATASET" --eval-limit 100 --home "$HOME_DIR"
    $Q index build "$r" --embedder none --home "$HOME_DIR"
  fi
done
if [ "$LLM" = measuring ]; then
  LLM_FLAGS=(--llm openai --model measuring --base-url http://127.0.0.1:8800/v1 --concurrency 1)
else
  LLM_FLAGS=(--concurrency 1)
fi
CONFIGS=${CONFIGS:-all}
run() {  # name, method, kbs..., then -- and options
  local name=$1 method=$2; shift 2
  case " $CONFIGS " in *" all "*|*" $name "*) ;; *) return 0 ;; esac
  local kbs=() opts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do kbs+=(--kb "$1"); shift; done
  [ $# -gt 0 ] && shift
  while [ $# -gt 0 ]; do opts+=(--opt "$1"); shift; done
  $Q eval --dataset "$DATASET" --limit "$LIMIT" --method "$method" --pool kb "${kbs[@]}" \
    --retrieval bm25 --out "$OUT" --name "$name" --home "$HOME_DIR" "${LLM_FLAGS[@]}" \
    --opt "reader_max_tokens=$READER" "${opts[@]}"
}
# most informative first (a run cut short resumes when the script runs again)
run std-wiki    std-rag  $PASSAGES
run std-qa      std-rag  $QA
run std-merged  std-rag  $MERGED
run mis-merged  misknow  $MERGED
run mis-wiki+qa misknow  $PASSAGES $QA -- "kb1=$PASSAGES" "kb2=$QA"
run std-2way    std-rag  $PASSAGES $QA -- "kbs=[\"$PASSAGES\",\"$QA\"]"
run mis-wiki    misknow  $PASSAGES
run mis-qa      misknow  $QA
$Q report "$OUT"/std-* "$OUT"/mis-* --out "$OUT/report" --baseline std-merged \
  --metric "$METRIC" > "$OUT/report.txt"
