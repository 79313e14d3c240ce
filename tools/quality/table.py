#!/usr/bin/env python3
"""Renders docs/quality.md's tables from tools/quality/run.sh's output directory."""
import json, os, sys

O = sys.argv[1]

def load(name):
    p = os.path.join(O, name)
    if not os.path.exists(p) or os.path.getsize(p) == 0:
        return None
    return json.load(open(p))

def ci(m, scale=1, fmt="%.4f"):
    return (fmt + " [" + fmt + ", " + fmt + "]") % (m["mean"] * scale, m["ci_lo"] * scale, m["ci_hi"] * scale)

# misses per decoded token from the sweeps/replays
def decode_misses(res):
    d = res["decode"]
    return d["misses"] / max(1, d["tokens"]) if "tokens" in d else None

sweep = {}
for f in ("sweep-moce.json", "sweep-keep.json"):
    s = load(f)
    if not s:
        continue
    rows = s["results"] if isinstance(s, dict) and "results" in s else s
    for r in rows:
        sweep[r["config"]["label"] if "label" in r["config"] else json.dumps(r["config"], sort_keys=True)] = r

configs = [("MoCE λ=0 (137 slots, exact)", "moce0"), ("MoCE λ=0.05, J=2", "moce0.05"), ("MoCE λ=0.1, J=2", "moce0.1")]
for K in (48, 32):
    for S in ("l2_sum", "shrink", "hybrid"):
        configs.append(("pruned to %d/64 (%d%%), %s" % (K, K * 100 // 64, S), "p%d-%s" % (K, S)))
configs.append(("Q4_K (vs Q8_0)", "q4k"))

print("| test model | corpus | KLD (nats) [95% CI] | top-1 % [95% CI] | flips | ΔNLL [95% CI] |")
print("|---|---|---:|---:|---:|---:|")
for label, key in configs:
    for c in ("code", "prose"):
        r = load("eval-%s-%s.json" % (c, key))
        if not r:
            continue
        print("| %s | %s | %s | %s | %s | %s |" % (label, c, ci(r["kld"]), ci(r["top1"], 100, "%.2f"), r["flips_text"], ci(r["delta_nll"], 1, "%+.4f")))
print()
print("NLL of the reference (Q8_0): " + ", ".join(
    "%s %s" % (c, ci(load("eval-%s-moce0.json" % c)["nll_ref"])) for c in ("code", "prose") if load("eval-%s-moce0.json" % c)))

# Misses per decoded token (trace replay of the Q8_0 trace: 4,096 held-out tokens + 511 greedy).
def rows(name):
    s = load(name)
    if s is None:
        return []
    if isinstance(s, dict):
        s = s.get("results", [s])
    return s

print()
print("| configuration (replay) | decode misses/token | decode MB/token | all misses/token |")
print("|---|---:|---:|---:|")
for name in ("sweep-moce.json", "sweep-keep.json", "replay-q8-7MiB.json", "replay-q4k-7MiB.json"):
    for r in rows(name):
        d = r["decode"]
        print("| %s%s | %.2f | %.3f | %.2f |" % (name.split(".")[0].replace("replay-", "") + ": " if name.startswith("replay") else "", r["label"],
              d["misses"] / max(1, d["tokens"]), d["bytes"] / max(1, d["tokens"]) / 1e6, r["misses_per_token"]))
