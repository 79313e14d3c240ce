#!/bin/bash
# Second training call (after run_h200.sh showed held-out loss bottoming out at ~5 epochs
# without dropout and ~8 epochs with dropout 0.1, mid-schedule): two runs whose cosine
# schedules end near those points, so no early-stopping checkpoint is needed. C: dropout
# 0.2, 95 s (~7 epochs); D: dropout 0.1, 75 s (~5.5 epochs). The shards of the run with
# the lower final held-out loss come back.
set -o pipefail
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true
OUT=${OUT:-out}
mkdir -p "$OUT"
python3 tools/train/train.py --data .train --tokenizer .train/tokenizer.json --out /tmp/run_c \
	--budget-s 95 --eval-every-s 30 --dropout 0.2 2>&1 | tee "$OUT/log_c" || exit 1
cp /tmp/run_c/*.safetensors "$OUT/" && cp /tmp/run_c/meta.tar "$OUT/meta_c.tar"
python3 tools/train/train.py --data .train --tokenizer .train/tokenizer.json --out /tmp/run_d \
	--budget-s 75 --eval-every-s 30 --dropout 0.1 2>&1 | tee "$OUT/log_d" || exit 1
cp /tmp/run_d/meta.tar "$OUT/meta_d.tar"
lc=$(grep -o 'SUMMARY heldout loss [0-9.]*' "$OUT/log_c" | awk '{print $4}')
ld=$(grep -o 'SUMMARY heldout loss [0-9.]*' "$OUT/log_d" | awk '{print $4}')
echo "heldout loss: C $lc, D $ld"
if awk -v a="$lc" -v b="$ld" 'BEGIN{exit !(b < a)}'; then
	echo "keeping D"
	rm -f "$OUT"/*.safetensors && cp /tmp/run_d/*.safetensors "$OUT/"
else
	echo "keeping C"
fi
ls -la "$OUT"
