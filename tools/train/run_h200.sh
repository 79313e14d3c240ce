#!/bin/bash
# The training run of regolith's default model, as executed on one NVIDIA H200 through the
# device tool (the repository root is the working directory; .train holds the shards written
# by `go run ./tools/corpus -out .train` and the tokenizer.json trained by train.py's first,
# smoke run; OUT is where results go). Two configurations run one after the other, and the
# one with the lower held-out loss is kept: A without dropout, B with dropout 0.1 and twice
# the time.
set -o pipefail
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true
OUT=${OUT:-out}
mkdir -p "$OUT"
python3 tools/train/train.py --data .train --tokenizer .train/tokenizer.json --out /tmp/run_a \
	--budget-s 110 --eval-every-s 20 2>&1 | tee "$OUT/log_a" || exit 1
cp /tmp/run_a/*.safetensors "$OUT/" && cp /tmp/run_a/meta.tar "$OUT/meta_a.tar"
python3 tools/train/train.py --data .train --tokenizer .train/tokenizer.json --out /tmp/run_b \
	--budget-s 200 --eval-every-s 25 --dropout 0.1 2>&1 | tee "$OUT/log_b" || exit 1
cp /tmp/run_b/meta.tar "$OUT/meta_b.tar"
la=$(grep -o 'SUMMARY heldout loss [0-9.]*' "$OUT/log_a" | awk '{print $4}')
lb=$(grep -o 'SUMMARY heldout loss [0-9.]*' "$OUT/log_b" | awk '{print $4}')
echo "heldout loss: A $la, B $lb"
if awk -v a="$la" -v b="$lb" 'BEGIN{exit !(b < a)}'; then
	echo "keeping B"
	rm -f "$OUT"/*.safetensors && cp /tmp/run_b/*.safetensors "$OUT/"
else
	echo "keeping A"
fi
ls -la "$OUT"
