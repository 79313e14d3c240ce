#!/bin/sh
# The measurements of docs/quality.md. Usage (from the repository root):
#   tools/quality/run.sh REGOLITH DOCCOMMENTS OUTDIR [Q4K.gguf]
# REGOLITH and DOCCOMMENTS are built binaries (go build ./cmd/regolith ./tools/doccomments);
# .train/ holds tools/corpus's shards. Writes JSON reports and logs under OUTDIR.
set -eu
R=$1; DC=$2; O=$3; Q4K=${4:-}
mkdir -p "$O"
# Corpora: held-out Go source (code) and the doc comments of the held-out packages (prose);
# calibration: the training shard and its doc comments (no held-out package is seen).
"$DC" -in .train/heldout.txt.gz -out "$O/heldout-doc.txt.gz"
"$DC" -in .train/train.txt.gz -out "$O/train-doc.txt.gz"
"$R" prune calibrate --corpus .train/train.txt.gz,"$O/train-doc.txt.gz" --tokens ${CAL_TOKENS:-262144} -o "$O/sal.json" 2>&1 | tee "$O/calibrate.log"
for K in 48 32; do for S in l2_sum shrink hybrid; do
  "$R" prune apply --scores "$O/sal.json" --keep $K --score $S -o "$O/p$K-$S.gguf"
done; done
# Teacher-forced evaluation: the first DOC_TOKENS (128) tokens of every document, reference saved once.
for C in code prose; do
  if [ $C = code ]; then SRC=.train/heldout.txt.gz; else SRC="$O/heldout-doc.txt.gz"; fi
  "$R" eval --ref default --corpus "$SRC" --max-doc-tokens ${DOC_TOKENS:-128} -c 128 --save-ref "$O/ref-$C.logits"
  E="$R eval --ref-logits $O/ref-$C.logits -c 128 --json"
  for K in 48 32; do for S in l2_sum shrink hybrid; do
    $E --test "$O/p$K-$S.gguf" > "$O/eval-$C-p$K-$S.json"
  done; done
  # MoCE in the decode regime: the test side runs one token per forward pass (-b 1), so each
  # token routes against the residency its predecessors left (a prefill chunk routes all its
  # tokens against the residency before it, which at 137 slots for 8 layers is nearly empty).
  for L in 0 0.05 0.1; do
    $E -b 1 --test default --test-slots 137 --moce $L --moce-protect 2 > "$O/eval-$C-moce$L.json"
  done
  if [ -n "$Q4K" ]; then $E --test "$Q4K" > "$O/eval-$C-q4k.json"; fi
done
# Misses per token: a trace of the first 4,096 held-out tokens + 511 greedy (docs/TRACES.md),
# replayed with the engine's store (LRU, 137 slots = --mem 44MiB) or a byte budget.
zcat .train/heldout.txt.gz | head -c 40000 > "$O/heldout-40k.go"
"$R" trace record -f "$O/heldout-40k.go" --max-prompt 4096 -n 512 -b 512 -c 8192 -o "$O/q8.trace"
"$R" trace sweep "$O/q8.trace" --slots 137 --policy lru --moce 0,0.05,0.1 --moce-protect 2 --json "$O/sweep-moce.json" > "$O/sweep-moce.txt"
KEEPS=$(ls "$O"/p*.keep.json | tr '\n' ',' | sed 's/,$//')
"$R" trace sweep "$O/q8.trace" --slots 137 --policy lru --keep "$KEEPS" --json "$O/sweep-keep.json" > "$O/sweep-keep.txt"
"$R" trace replay "$O/q8.trace" --cache-bytes 7MiB --policy lru --json > "$O/replay-q8-7MiB.json"
if [ -n "$Q4K" ]; then
  "$R" trace record -m "$Q4K" -f "$O/heldout-40k.go" --max-prompt 4096 -n 512 -b 512 -c 8192 -o "$O/q4k.trace"
  "$R" trace replay "$O/q4k.trace" --cache-bytes 7MiB --policy lru --json > "$O/replay-q4k-7MiB.json"
fi
rm -f "$O"/*.logits "$O"/*.trace
