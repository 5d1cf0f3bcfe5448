#!/bin/bash
# CCSK on WebQuestions with the measuring model (issue 12): labels, training, evaluation.
# Reproduces benchmarks/results/ccsk-webq-measuring/. Needs the measuring model serving:
#   PROJECT_VENV=$PWD/.venv bash ../shared/tools/measuring-llm.sh 1.5b   (http://127.0.0.1:8800/v1)
# Every step resumes: labels are appended per question (and LLM replies are cached), so a
# crash loses at most the question in flight. Budget: ~15-18 s per labelled question.
# Sizes (override with N_TEST / N_VAL / N_TRAIN): 60 test, 50 val, 130 train; k = 3 passages
# (k = 5 took 18-28 s per retrieval answer on 2 cores). STEPS picks steps (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QUADERNO:-.venv/bin/quaderno}
OUT=${OUT:-benchmarks/results/ccsk-webq-measuring}
export QUADERNO_HOME=${QUADERNO_HOME:-/tmp/ccsk/home}
DATA=${DATA:-../shared/data}
LLM=(--llm openai --model measuring --base-url http://127.0.0.1:8800/v1)
LABELS=$OUT/labels.jsonl
mkdir -p "$OUT"
STEPS=${STEPS:-"corpus labels train eval"}
step() { [[ " $STEPS " == *" $1 "* ]]; }

# 1. the retrieval corpus: the 1,000-passage Wikipedia sample (the only general corpus offline)
if step corpus && ! "$Q" kb list 2>/dev/null | grep -q '\bwiki\b'; then
  "$Q" kb add wiki "$DATA/wiki_sample/wiki_sample_1000.jsonl"
  "$Q" index build wiki --embedder minilm
fi

# 2. labels: test (WebQuestions devtest), then val and train, each kept apart from the others
common=(--kb wiki --method vanilla-rag --k 3 --out "$LABELS" --data-dir "$DATA" "${LLM[@]}"
        --note "WebQuestions (brmson split), wiki_sample_1000 hybrid BM25+MiniLM")
if step labels; then
"$Q" -v gate label -d webquestions --split test --n "${N_TEST:-60}" "${common[@]}"
"$Q" -v gate label -d "$DATA/webquestions/webquestions_val.json" --format webquestions \
  --split val --n "${N_VAL:-50}" --exclude webquestions "${common[@]}"
"$Q" -v gate label -d "$DATA/webquestions/webquestions_trainmodel.json" --format webquestions \
  --split train --n "${N_TRAIN:-130}" --exclude webquestions \
  --exclude "$DATA/webquestions/webquestions_val.json" "${common[@]}"
fi

# 3. train CCSK and the baselines (SN memory: the train labels + SKR's 849 InstructGPT labels,
#    deduplicated against val and test), tune thresholds on val
step train && "$Q" gate train --labels "$LABELS" --out "$OUT/gate" --embedder minilm \
  --skr "$DATA/skr/skr_training_849.json" --seed 0

# 4. score every gate on the test labels (no LLM needed: the answers are in the label file)
step eval && "$Q" gate eval "$OUT/gate" --answers "$LABELS" --split test --report "$OUT/report.md" \
  --json-out "$OUT/report.json"
