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


def rows(name):
    s = load(name)
    if s is None:
        return []
    if isinstance(s, dict):
        s = s.get("results", [s])
    return s


def decode_mpt(r):
    d = r["decode"]
    return d["misses"] / max(1, d["tokens"])


# Decode misses per token of every configuration, per corpus, from the replays of the
# exact model's trace of the same windows (every position a decode step).
misses = {}
for c in ("code", "prose"):
    m = {}
    for r in rows("sweep-%s-moce.json" % c):
        lam = r["config"].get("moce_lambda", 0)
        m["moce%g" % lam if lam else "moce0"] = decode_mpt(r)
    for r in rows("sweep-%s-keep.json" % c):
        keep = r["config"].get("keep", "")
        m[os.path.basename(keep).replace(".json", "").replace(".keep", "")] = decode_mpt(r)
    for key, f in (("q8_0-bytes", "replay-%s-q8_0-bytes.json"), ("xq4_k-bytes", "replay-%s-xq4_k-bytes.json")):
        for r in rows(f % c):
            m[key] = decode_mpt(r)
    misses[c] = m

configs = [("exact through the store, λ = 0 (`-b 1`; floor)", "moce0", "moce0"),
           ("MoCE λ = 0.05, J = 2 (`-b 1`)", "moce0.05", "moce0.05"),
           ("MoCE λ = 0.1, J = 2 (`-b 1`)", "moce0.1", "moce0.1")]
for K in (48, 32):
    for S in ("l2_sum", "shrink", "hybrid"):
        configs.append(("pruned to %d/64 (%d%%), %s" % (K, K * 100 // 64, S), "p%d-%s" % (K, S), "p%d-%s" % (K, S)))
configs += [("Q4_K experts only (convert's Q4_K experts in the Q8_0 file)", "xq4_k", "xq4_k-bytes"),
            ("Q4_K experts only, requantized from Q8_0", "rq4_k", None),
            ("Q4_K (convert -type q4_k: attention Q4_K too)", "q4_k", None)]

for c in ("code", "prose"):
    m = misses.get(c, {})
    base = m.get("moce0")
    print("**%s**" % c)
    print()
    print("| test model | KLD (nats) [95% CI] | top-1 % [95% CI] | flips | ΔNLL [95% CI] | decode misses/token (saved) |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, key, mkey in configs:
        r = load("eval-%s-%s.json" % (c, key))
        if not r:
            continue
        mis = ""
        if mkey == "xq4_k-bytes" and "xq4_k-bytes" in m and "q8_0-bytes" in m:
            mis = "%.2f (%+.2f vs Q8_0 %.2f, same bytes)" % (m["xq4_k-bytes"], m["q8_0-bytes"] - m["xq4_k-bytes"], m["q8_0-bytes"])
        elif mkey in m and base is not None:
            mis = "%.2f (%+.2f)" % (m[mkey], base - m[mkey])
        print("| %s | %s | %s | %s | %s | %s |" % (label, ci(r["kld"], 1, "%.5f"), ci(r["top1"], 100, "%.2f"),
                                                 r["flips_text"], ci(r["delta_nll"], 1, "%+.4f"), mis))
    r = load("eval-%s-moce0.json" % c)
    if r:
        print()
        print("reference NLL %s nats/token; %d positions in %d documents" % (ci(r["nll_ref"]), r["positions"], len(r["documents"])))
    print()
