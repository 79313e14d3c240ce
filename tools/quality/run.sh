#!/bin/sh
# The measurements of docs/quality.md. Usage (from the repository root):
#   tools/quality/run.sh REGOLITH DOCCOMMENTS EXPERTQUANT OUTDIR
# REGOLITH, DOCCOMMENTS and EXPERTQUANT are built binaries (go build ./cmd/regolith
# ./tools/doccomments ./tools/expertquant); .train/ holds tools/corpus's shards and .ckpt/c the
# bf16 checkpoint of the shipped model. Writes JSON reports, traces' replays and logs under OUTDIR.
# Sizes: CAL_TOKENS calibration tokens (131072), DOC_TOKENS tokens per document (64), SLOTS the
# test side's expert-store arena (137 = the arena of --mem 44MiB on gomoe, ≈ 17 of 64 experts per layer).
set -eu
R=$1; DC=$2; XQ=$3; O=$4
CAL=${CAL_TOKENS:-131072}; DOC=${DOC_TOKENS:-64}; SLOTS=${SLOTS:-137}
mkdir -p "$O"
# Corpora: held-out Go source (code) and the doc comments of the held-out packages (prose);
# calibration: the training shard and its doc comments (no held-out package is seen).
"$DC" -in .train/heldout.txt.gz -out "$O/heldout-doc.txt.gz"
"$DC" -in .train/train.txt.gz -out "$O/train-doc.txt.gz"
"$R" prune calibrate --corpus .train/train.txt.gz,"$O/train-doc.txt.gz" --tokens $CAL -o "$O/sal.json" > "$O/calibrate.log" 2>&1
for K in 48 32; do for S in l2_sum shrink hybrid; do
  "$R" prune apply --scores "$O/sal.json" --keep $K --score $S -o "$O/p$K-$S.gguf"
done; done
# Q4_K: convert quantizes every matrix whose rows are 256 wide (attention too) to Q4_K; the
# experts-only variant takes convert's Q4_K expert tensors into the shipped Q8_0 file
# (attention, embeddings stay Q8_0); rq4_k requantizes the shipped Q8_0 experts instead.
"$R" convert -type q4_k -name gomoe -o "$O/gomoe-q4_k.gguf" .ckpt/c
"$XQ" -in defaultmodel/gomoe-q8_0.gguf -experts-from "$O/gomoe-q4_k.gguf" -o "$O/gomoe-xq4_k.gguf"
"$XQ" -in defaultmodel/gomoe-q8_0.gguf -type q4_k -o "$O/gomoe-rq4_k.gguf"
Q8B=$((SLOTS * 52224)) # the arena's bytes: SLOTS Q8_0 experts (gomoe: 52,224 bytes each)
for C in code prose; do
  if [ $C = code ]; then SRC=.train/heldout.txt.gz; else SRC="$O/heldout-doc.txt.gz"; fi
  # Teacher-forced evaluation of the first DOC tokens of every document, reference saved once.
  "$R" eval --ref default --corpus "$SRC" --max-doc-tokens $DOC -c 128 --save-ref "$O/ref-$C.logits"
  E="$R eval --ref-logits $O/ref-$C.logits -c 128 --json"
  for K in 48 32; do for S in l2_sum shrink hybrid; do
    $E --test "$O/p$K-$S.gguf" > "$O/eval-$C-p$K-$S.json"
  done; done
  for Q in q4_k xq4_k rq4_k; do $E --test "$O/gomoe-$Q.gguf" > "$O/eval-$C-$Q.json"; done
  # MoCE in the decode regime: the test side runs one token per forward pass (-b 1), so each
  # token routes against the residency its predecessors left (a prefill chunk routes all its
  # tokens against the residency before it, which at 137 slots for 8 layers is nearly empty:
  # MoCE then changes nothing). λ = 0 is the exact model through the same store; its run
  # records the routing of exactly these windows (--trace; every position a decode step).
  $E -b 1 --test default --test-slots $SLOTS --trace "$O/$C.trace" > "$O/eval-$C-moce0.json"
  for L in 0.05 0.1; do
    $E -b 1 --test default --test-slots $SLOTS --moce $L --moce-protect 2 > "$O/eval-$C-moce$L.json"
  done
  # Misses per decoded token: the exact model's trace replayed with the store's LRU at SLOTS,
  # MoCE in closed loop, pruned models as keep-maps (forced misses counted).
  "$R" trace sweep "$O/$C.trace" --slots $SLOTS --policy lru --moce 0,0.05,0.1 --moce-protect 2 --json "$O/sweep-$C-moce.json" > "$O/sweep-$C-moce.txt"
  KEEPS=$(ls "$O"/p*.keep.json | tr '\n' ',' | sed 's/,$//')
  "$R" trace sweep "$O/$C.trace" --slots $SLOTS --policy lru --keep "$KEEPS" --json "$O/sweep-$C-keep.json" > "$O/sweep-$C-keep.txt"
  # Q4_K experts: the same byte arena holds more of them; the experts-only model's own routing.
  "$R" trace replay "$O/$C.trace" --cache-bytes $Q8B --policy lru --json > "$O/replay-$C-q8_0-bytes.json"
  $E -b 1 --test "$O/gomoe-xq4_k.gguf" --test-slots $SLOTS --trace "$O/$C-xq4_k.trace" > "$O/eval-$C-xq4_k-b1.json"
  "$R" trace replay "$O/$C-xq4_k.trace" --cache-bytes $Q8B --policy lru --json > "$O/replay-$C-xq4_k-bytes.json"
done
rm -f "$O"/*.logits "$O"/*.trace
