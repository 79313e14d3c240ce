#!/usr/bin/env python3
"""Train regolith's default model: a small qwen3moe (Qwen3-MoE architecture) on Go source.

Steps, in one process: train a byte-level BPE tokenizer with Qwen2's pre-tokenizer (or load
one), tokenize the corpus shards written by tools/corpus, train the model, evaluate on the
held-out packages, and export a Hugging Face-style checkpoint (sharded bf16 safetensors with
Qwen3MoeForCausalLM tensor names, config.json, tokenizer.json, tokenizer_config.json).

The model code is self-contained PyTorch (no transformers). It follows HF Qwen3MoE exactly
where inference depends on it: RMSNorm on q and k per head before RoPE, NeoX RoPE, GQA,
softmax router, top-k with norm_topk_prob, SwiGLU experts, tied embeddings. Training computes
all experts densely and masks them with the routing weights, which gives the same outputs and
gradients as sparse dispatch and is fast at this size. The load-balancing loss is HF's
load_balancing_loss_func, per layer, averaged.

    python3 tools/train/train.py --data .train --out $OUT --budget-s 420
"""
import argparse
import gzip
import json
import math
import os
import random
import tarfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                 r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|fim_prefix|>", "<|fim_middle|>",
           "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"]
USER_DEFINED = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}")

T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


def read_docs(path):
    with gzip.open(path, "rb") as f:
        return f.read().decode("utf-8").split("\x00")


# ---------------------------------------------------------------- tokenizer

def train_tokenizer(docs, vocab_size):
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE(byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    n_bpe = vocab_size - len(SPECIAL) - len(USER_DEFINED)
    trainer = trainers.BpeTrainer(vocab_size=n_bpe, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator(docs, trainer, length=len(docs))
    assert tok.get_vocab_size() == n_bpe, (tok.get_vocab_size(), n_bpe)
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIAL])
    tok.add_tokens([AddedToken(s, special=False, normalized=False) for s in USER_DEFINED])
    assert tok.get_vocab_size() == vocab_size
    return tok


def encode(tok, docs, eos):
    encs = tok.encode_batch(docs, add_special_tokens=False)
    parts = []
    for e in encs:
        parts.append(np.asarray(e.ids, dtype=np.int32))
        parts.append(np.asarray([eos], dtype=np.int32))
    return np.concatenate(parts)


# ---------------------------------------------------------------- model

class Cfg:
    def __init__(self, **kw):
        self.vocab_size = 8192
        self.hidden_size = 256
        self.num_hidden_layers = 8
        self.num_attention_heads = 8
        self.num_key_value_heads = 2
        self.head_dim = 32
        self.num_experts = 64
        self.num_experts_per_tok = 4
        self.moe_intermediate_size = 64
        self.max_position_embeddings = 1024
        self.rope_theta = 10000.0
        self.rms_norm_eps = 1e-6
        self.router_aux_loss_coef = 0.01
        self.dropout = 0.0  # training only: on the attention and MoE outputs before the residual add
        self.__dict__.update(kw)


def rope_tables(cfg, T, device):
    hd = cfg.head_dim
    inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd))
    f = torch.outer(torch.arange(T, device=device, dtype=torch.float32), inv)
    return f.cos(), f.sin()  # [T, hd/2]


def apply_rope(x, cos, sin):  # x [B, T, H, hd], NeoX / HF rotate_half
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h].float(), x[..., h:].float()
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).type_as(x)


class Attn(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        d, H, KV, hd = cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        self.q_proj = nn.Linear(d, H * hd, bias=False)
        self.k_proj = nn.Linear(d, KV * hd, bias=False)
        self.v_proj = nn.Linear(d, KV * hd, bias=False)
        self.o_proj = nn.Linear(H * hd, d, bias=False)
        self.q_norm = nn.Parameter(torch.ones(hd))
        self.k_norm = nn.Parameter(torch.ones(hd))

    def forward(self, x, cos, sin):
        c = self.cfg
        B, T, _ = x.shape
        H, KV, hd = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        q = self.q_proj(x).view(B, T, H, hd)
        k = self.k_proj(x).view(B, T, KV, hd)
        v = self.v_proj(x).view(B, T, KV, hd)
        q = F.rms_norm(q.float(), (hd,), self.q_norm, c.rms_norm_eps).type_as(v)
        k = F.rms_norm(k.float(), (hd,), self.k_norm, c.rms_norm_eps).type_as(v)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        rep = H // KV
        q = q.transpose(1, 2)
        k = k.transpose(1, 2).repeat_interleave(rep, dim=1)
        v = v.transpose(1, 2).repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(B, T, H * hd))


class MoE(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        E, Fd, d = cfg.num_experts, cfg.moe_intermediate_size, cfg.hidden_size
        self.gate = nn.Linear(d, E, bias=False)  # router
        self.w_gate = nn.Parameter(torch.empty(E, Fd, d))  # experts.e.gate_proj.weight [F, d]
        self.w_up = nn.Parameter(torch.empty(E, Fd, d))  # experts.e.up_proj.weight [F, d]
        self.w_down = nn.Parameter(torch.empty(E, d, Fd))  # experts.e.down_proj.weight [d, F]

    def forward(self, x):  # x [N, d]
        c = self.cfg
        E, Fd, d, k = c.num_experts, c.moe_intermediate_size, c.hidden_size, c.num_experts_per_tok
        N = x.shape[0]
        logits = self.gate(x).float()
        probs = logits.softmax(-1)
        topw, topi = probs.topk(k, dim=-1)
        topw = topw / topw.sum(-1, keepdim=True)  # norm_topk_prob
        combine = torch.zeros_like(probs).scatter(1, topi, topw)
        g = F.linear(x, self.w_gate.reshape(E * Fd, d))
        u = F.linear(x, self.w_up.reshape(E * Fd, d))
        h = F.silu(g) * u
        h = (h.view(N, E, Fd) * combine.to(h.dtype).unsqueeze(-1)).view(N, E * Fd)
        out = F.linear(h, self.w_down.permute(1, 0, 2).reshape(d, E * Fd))
        # HF load_balancing_loss_func for one layer
        mask = F.one_hot(topi, E).float()  # [N, k, E]
        aux = (mask.mean(0) * probs.mean(0).unsqueeze(0)).sum() * E
        return out, aux, topi


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        d = cfg.hidden_size
        self.input_layernorm = nn.Parameter(torch.ones(d))
        self.post_attention_layernorm = nn.Parameter(torch.ones(d))
        self.self_attn = Attn(cfg)
        self.mlp = MoE(cfg)

    def forward(self, x, cos, sin):
        eps = self.cfg.rms_norm_eps
        d = x.shape[-1]
        p = self.cfg.dropout if self.training else 0.0
        x = x + F.dropout(self.self_attn(F.rms_norm(x, (d,), self.input_layernorm, eps), cos, sin), p)
        B, T, _ = x.shape
        m, aux, topi = self.mlp(F.rms_norm(x, (d,), self.post_attention_layernorm, eps).view(B * T, d))
        return x + F.dropout(m.view(B, T, d), p), aux, topi


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([Block(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = nn.Parameter(torch.ones(cfg.hidden_size))
        std = 0.02
        proj_std = std / math.sqrt(2 * cfg.num_hidden_layers)
        for n, p in self.named_parameters():
            if p.dim() < 2:
                continue
            s = proj_std if (n.endswith("o_proj.weight") or n.endswith("w_down")) else std
            nn.init.normal_(p, 0.0, s)

    def forward(self, idx, targets=None, want_routes=False):
        B, T = idx.shape
        cos, sin = rope_tables(self.cfg, T, idx.device)
        x = self.embed_tokens(idx)
        auxes, routes = [], []
        for blk in self.layers:
            x, aux, topi = blk(x, cos, sin)
            auxes.append(aux)
            if want_routes:
                routes.append(topi)
        x = F.rms_norm(x, (x.shape[-1],), self.norm, self.cfg.rms_norm_eps)
        logits = F.linear(x, self.embed_tokens.weight)  # tied
        aux = torch.stack(auxes).mean()
        if targets is None:
            return logits, aux, routes
        loss = F.cross_entropy(logits.float().view(B * T, -1), targets.reshape(-1))
        return loss, aux, routes

    def hf_state_dict(self):
        """Tensors under HF Qwen3MoeForCausalLM names (lm_head omitted: tied)."""
        out = {"model.embed_tokens.weight": self.embed_tokens.weight, "model.norm.weight": self.norm}
        for i, b in enumerate(self.layers):
            p = f"model.layers.{i}."
            out[p + "input_layernorm.weight"] = b.input_layernorm
            out[p + "post_attention_layernorm.weight"] = b.post_attention_layernorm
            for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
                out[p + f"self_attn.{n}.weight"] = getattr(b.self_attn, n).weight
            out[p + "self_attn.q_norm.weight"] = b.self_attn.q_norm
            out[p + "self_attn.k_norm.weight"] = b.self_attn.k_norm
            out[p + "mlp.gate.weight"] = b.mlp.gate.weight
            for e in range(self.cfg.num_experts):
                out[p + f"mlp.experts.{e}.gate_proj.weight"] = b.mlp.w_gate[e]
                out[p + f"mlp.experts.{e}.up_proj.weight"] = b.mlp.w_up[e]
                out[p + f"mlp.experts.{e}.down_proj.weight"] = b.mlp.w_down[e]
        return out


# ---------------------------------------------------------------- eval, sample, export

@torch.no_grad()
def evaluate(model, stream, T, B, n_bytes=None, max_windows=None, routes=False):
    model.eval()
    n = (len(stream) - 1) // T
    if max_windows:
        n = min(n, max_windows)
    tot, cnt = 0.0, 0
    L, E = model.cfg.num_hidden_layers, model.cfg.num_experts
    counts = torch.zeros(L, E, device=stream.device)
    for s in range(0, n, B):
        w = torch.arange(s, min(s + B, n), device=stream.device)
        ix = w[:, None] * T + torch.arange(T + 1, device=stream.device)[None, :]
        chunk = stream[ix]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss, _, rts = model(chunk[:, :-1], chunk[:, 1:], want_routes=routes)
        tot += loss.item() * chunk.shape[0] * T
        cnt += chunk.shape[0] * T
        for l, r in enumerate(rts):
            counts[l] += torch.bincount(r.reshape(-1), minlength=E).float()
    model.train()
    res = {"loss": tot / cnt, "ppl": math.exp(tot / cnt), "tokens": cnt}
    if n_bytes:  # bits per byte over the evaluated part, scaled by its share of the stream
        res["bpb"] = tot / math.log(2) / (n_bytes * cnt / (len(stream) - 1))
    if routes:
        share = counts / counts.sum(1, keepdim=True)
        ent = -(share.clamp_min(1e-12) * share.clamp_min(1e-12).log2()).sum(1)
        res["routing"] = [{"layer": l, "max_share": share[l].max().item(), "min_share": share[l].min().item(),
                           "entropy_bits": ent[l].item()} for l in range(L)]
    return res


@torch.no_grad()
def greedy(model, tok, prompt, n):
    model.eval()
    ids = tok.encode(prompt, add_special_tokens=False).ids
    x = torch.tensor([ids], device="cuda")
    for _ in range(n):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, _, _ = model(x[:, -model.cfg.max_position_embeddings:])
        x = torch.cat([x, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    model.train()
    return tok.decode(x[0].tolist()[len(ids):], skip_special_tokens=False)


def export(model, cfg, tok, out, extra_files):
    from safetensors.torch import save_file
    os.makedirs(out, exist_ok=True)
    sd = {k: v.detach().to(torch.bfloat16).contiguous().cpu().clone() for k, v in model.hf_state_dict().items()}
    total = sum(t.numel() * 2 for t in sd.values())
    shard_max = 15 << 20
    shards, cur, cur_b = [], {}, 0
    for k, t in sd.items():
        b = t.numel() * 2
        if cur and cur_b + b > shard_max:
            shards.append(cur)
            cur, cur_b = {}, 0
        cur[k] = t
        cur_b += b
    shards.append(cur)
    wmap = {}
    for i, sh in enumerate(shards):
        fn = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        save_file(sh, os.path.join(out, fn), metadata={"format": "pt"})
        for k in sh:
            wmap[k] = fn
    eos = tok.token_to_id("<|endoftext|>")
    config = {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
        "vocab_size": cfg.vocab_size, "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.moe_intermediate_size * cfg.num_experts_per_tok,
        "moe_intermediate_size": cfg.moe_intermediate_size, "num_hidden_layers": cfg.num_hidden_layers,
        "num_attention_heads": cfg.num_attention_heads, "num_key_value_heads": cfg.num_key_value_heads,
        "head_dim": cfg.head_dim, "num_experts": cfg.num_experts, "num_experts_per_tok": cfg.num_experts_per_tok,
        "norm_topk_prob": True, "decoder_sparse_step": 1, "mlp_only_layers": [],
        "max_position_embeddings": cfg.max_position_embeddings, "rope_theta": cfg.rope_theta,
        "rope_scaling": None, "rms_norm_eps": cfg.rms_norm_eps, "hidden_act": "silu",
        "attention_bias": False, "attention_dropout": 0.0, "tie_word_embeddings": True,
        "router_aux_loss_coef": cfg.router_aux_loss_coef, "output_router_logits": False,
        "use_sliding_window": False, "sliding_window": None, "initializer_range": 0.02,
        "bos_token_id": eos, "eos_token_id": eos, "torch_dtype": "bfloat16", "use_cache": True,
    }
    tcfg = {
        "add_bos_token": False, "add_eos_token": False, "bos_token": None, "eos_token": "<|endoftext|>",
        "pad_token": "<|endoftext|>", "unk_token": None, "model_max_length": cfg.max_position_embeddings,
        "clean_up_tokenization_spaces": False, "split_special_tokens": False,
        "tokenizer_class": "PreTrainedTokenizerFast", "chat_template": CHAT_TEMPLATE,
    }
    meta = {
        "config.json": json.dumps(config, indent=2),
        "tokenizer_config.json": json.dumps(tcfg, indent=2),
        "tokenizer.json": tok.to_str(),
        "model.safetensors.index.json": json.dumps({"metadata": {"total_size": total}, "weight_map": wmap}, indent=2),
    }
    meta.update(extra_files)
    import io
    with tarfile.open(os.path.join(out, "meta.tar"), "w") as tf:
        for name, s in meta.items():
            b = s.encode()
            ti = tarfile.TarInfo(name)
            ti.size = len(b)
            tf.addfile(ti, io.BytesIO(b))
    log(f"exported {len(sd)} tensors, {total / 1e6:.1f} MB bf16 in {len(shards)} shards + meta.tar to {out}")


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=".train")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokenizer", default="", help="existing tokenizer.json (else train one)")
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr-frac", type=float, default=0.05)
    ap.add_argument("--wd", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--budget-s", type=float, default=420, help="wall-clock seconds for the training loop")
    ap.add_argument("--max-epochs", type=float, default=100)
    ap.add_argument("--eval-every-s", type=float, default=60)
    ap.add_argument("--aux", type=float, default=0.01)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--ffn", type=int, default=64)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--compile", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    log("args", vars(a))
    log("torch", torch.__version__, torch.cuda.get_device_name())

    train_docs = read_docs(os.path.join(a.data, "train.txt.gz"))
    held_docs = read_docs(os.path.join(a.data, "heldout.txt.gz"))
    random.Random(a.seed).shuffle(train_docs)
    train_bytes = sum(len(d.encode()) for d in train_docs)
    held_bytes = sum(len(d.encode()) for d in held_docs)
    log(f"docs: train {len(train_docs)} ({train_bytes} bytes), heldout {len(held_docs)} ({held_bytes} bytes)")

    from tokenizers import Tokenizer
    if a.tokenizer:
        tok = Tokenizer.from_file(a.tokenizer)
        log("loaded tokenizer", a.tokenizer, tok.get_vocab_size())
    else:
        tok = train_tokenizer(train_docs, a.vocab)
        log("trained tokenizer", tok.get_vocab_size())
    eos = tok.token_to_id("<|endoftext|>")
    tr = encode(tok, train_docs, eos)
    he = encode(tok, held_docs, eos)
    log(f"tokens: train {len(tr)} ({train_bytes / len(tr):.2f} bytes/token), heldout {len(he)}")
    sample_ids = tok.encode("func main() {\n\tfmt.Println(\"hello, world\")\n}\n").ids
    log("sample tokenization", [tok.id_to_token(i) for i in sample_ids])

    dev = "cuda"
    tr_t = torch.from_numpy(tr).to(dev).long()
    he_t = torch.from_numpy(he).to(dev).long()

    cfg = Cfg(vocab_size=tok.get_vocab_size(), num_hidden_layers=a.layers, moe_intermediate_size=a.ffn,
              max_position_embeddings=a.seq, router_aux_loss_coef=a.aux, dropout=a.dropout)
    model = Model(cfg).to(dev)
    n_params = sum(p.numel() for p in model.parameters())
    E, k = cfg.num_experts, cfg.num_experts_per_tok
    n_exp = sum(p.numel() for n, p in model.named_parameters() if ".w_" in n)
    active = n_params - n_exp + n_exp * k // E
    log(f"params: total {n_params} ({n_exp} in experts), active per token {active} (embedding included once)")

    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (decay if p.dim() >= 2 else no_decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.wd}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8, fused=True)
    fwd = torch.compile(model) if a.compile else model

    B, T = a.batch, a.seq
    max_tokens = a.max_epochs * len(tr)
    seen, step = 0, 0
    t_start, last_eval = None, None
    best = None
    history = []
    ar = torch.arange(T + 1, device=dev)
    while True:
        now = time.time()
        progress = 0.0 if t_start is None else max(seen / max_tokens, (now - t_start) / a.budget_s)
        if progress >= 1.0:
            break
        if last_eval is not None and now - last_eval >= a.eval_every_s:
            r = evaluate(model, he_t, T, 64, held_bytes)
            history.append((step, seen, r["loss"]))
            log(f"eval step {step} epochs {seen / len(tr):.2f} heldout loss {r['loss']:.4f} ppl {r['ppl']:.2f} bpb {r['bpb']:.4f}")
            if best is None or r["loss"] < best[0]:
                best = (r["loss"], step, {n: p.detach().clone() for n, p in model.state_dict().items()})
            last_eval = time.time()
        lr_scale = min(1.0, (step + 1) / a.warmup) * (a.min_lr_frac + (1 - a.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * progress)))
        for g in opt.param_groups:
            g["lr"] = a.lr * lr_scale
        ix = torch.randint(0, len(tr_t) - T - 1, (B,), device=dev)
        chunk = tr_t[ix[:, None] + ar[None, :]]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss, aux, _ = fwd(chunk[:, :-1], chunk[:, 1:])
        (loss + a.aux * aux).backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        seen += B * T
        if t_start is None:
            torch.cuda.synchronize()
            log(f"first step done (compile) loss {loss.item():.4f}")
            t_start = last_eval = time.time()
        if step % 25 == 0:
            el = time.time() - t_start
            log(f"step {step} epochs {seen / len(tr):.2f} loss {loss.item():.4f} aux {aux.item():.3f} gnorm {gn.item():.2f} "
                f"lr {a.lr * lr_scale:.2e} tok/s {seen / max(el, 1e-9):.0f} progress {progress:.3f}")
    train_s = time.time() - t_start
    log(f"training done: {step} steps, {seen} tokens ({seen / len(tr):.2f} epochs), {train_s:.0f}s, "
        f"{seen / train_s:.0f} tok/s")
    final = evaluate(model, he_t, T, 64, held_bytes, routes=True)
    log(f"final heldout loss {final['loss']:.4f} ppl {final['ppl']:.2f} bpb {final['bpb']:.4f}")
    if best is not None and best[0] < final["loss"] - 1e-4:
        log(f"restoring best eval checkpoint from step {best[1]} (heldout {best[0]:.4f})")
        model.load_state_dict(best[2])
        final = evaluate(model, he_t, T, 64, held_bytes, routes=True)
    trn = evaluate(model, tr_t, T, 64, train_bytes, max_windows=len(he) // T)
    log(f"SUMMARY heldout loss {final['loss']:.4f} ppl {final['ppl']:.2f} bpb {final['bpb']:.4f} | "
        f"train(subset {trn['tokens']} tokens) loss {trn['loss']:.4f} ppl {trn['ppl']:.2f} bpb {trn['bpb']:.4f}")
    for r in final["routing"]:
        log(f"routing heldout layer {r['layer']}: max share {r['max_share']:.4f} min share {r['min_share']:.4f} "
            f"entropy {r['entropy_bits']:.3f} bits (uniform {math.log2(E):.3f})")
    samples = {}
    for p in ["func main() {", "package main\n\nimport (\n", "// Copyright 2009 The Go Authors. All rights reserved.\n"]:
        s = greedy(model, tok, p, 64)
        samples[p] = s
        log("sample", repr(p), "->", repr(s))
    summary = {"steps": step, "tokens_seen": seen, "epochs": seen / len(tr), "train_seconds": train_s,
               "train_tokens": len(tr), "heldout_tokens": len(he), "params_total": n_params, "params_active": active,
               "heldout": final, "train_subset": trn, "history": history, "samples": samples, "args": vars(a)}
    export(model, cfg, tok, a.out, {"train_summary.json": json.dumps(summary, indent=2)})
    log(f"peak GPU memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")
    log("done")


if __name__ == "__main__":
    main()
