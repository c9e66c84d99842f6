#!/usr/bin/env python3
"""How far int8 linear layers move all-MiniLM-L6-v2's vectors, before building a kernel.

Fake quantisation of every linear layer in PyTorch, with the rounding src/model/int8.rs uses
(weights per output column, inputs per row or per group of values, optionally SmoothQuant-scaled
per input channel with maxima measured on calibration texts). Prints, per variant, the lowest
cosine to the f32 vectors over the reference texts and over them plus code windows, and the mean.

    PY scripts/bench/int8_quantisation_study.py MODEL_DIR REFERENCE_JSON CODE_DIR

MODEL_DIR: the default model (`~/.local/share/coret-tui/models/all-MiniLM-L6-v2`);
REFERENCE_JSON: tests/data/minilm-reference.json; CODE_DIR: a checkout whose `*.py` files give
code windows (flask's src/flask). PY: a Python with sentence-transformers (docs/GUIDE.md).
"""
import glob
import json
import sys

import torch
from sentence_transformers import SentenceTransformer

torch.set_num_threads(2)
model_dir, reference, code_dir = sys.argv[1:4]
m = SentenceTransformer(model_dir, device="cpu")
m.max_seq_length = 256
texts = [it["text"] for it in json.load(open(reference))["items"]]
code = []
for f in sorted(glob.glob(f"{code_dir}/*.py"))[:12]:
    s = open(f).read()
    code += [s[i : i + 600] for i in range(0, min(len(s), 3000), 600)]
every = texts + code
encode = lambda t: m.encode(t, convert_to_tensor=True, normalize_embeddings=True, batch_size=1)
with torch.no_grad():
    base = encode(every)
linears = [mod for mod in m.modules() if isinstance(mod, torch.nn.Linear)]
original = {id(l): l.forward for l in linears}


def quantise_weights(w):  # [out, in], one scale per output column of the [in, out] product
    s = w.abs().amax(dim=1, keepdim=True) / 127
    return torch.round(w / s).clamp(-127, 127) * s


def quantise_inputs(x, group):
    shape, k = x.shape, x.shape[-1]
    g = x.reshape(*shape[:-1], k // group, group) if group else x
    s = g.abs().amax(dim=-1, keepdim=True).clamp_min(1e-12) / 127
    return (torch.round(g / s).clamp(-127, 127) * s).reshape(shape)


def run(group=None, smooth=None):
    for l in linears:
        sc = smooth[id(l)] if smooth else torch.ones(l.in_features)
        wq = quantise_weights(l.weight.data * sc[None, :])
        l.forward = lambda x, l=l, wq=wq, sc=sc: torch.nn.functional.linear(quantise_inputs(x / sc, group), wq, l.bias)
    with torch.no_grad():
        v = encode(every)
    for l in linears:
        l.forward = original[id(l)]
    c = (v * base).sum(-1)
    return f"{c[: len(texts)].min().item():.4f} {c.min().item():.4f} {c.mean().item():.4f}"


def calibrate(alpha, cal):
    amax, hooks = {}, []
    for l in linears:
        def hook(mod, inp, out):
            a = inp[0].detach().abs().reshape(-1, inp[0].shape[-1]).amax(0)
            amax[id(mod)] = torch.maximum(amax.get(id(mod), a), a)
        hooks.append(l.register_forward_hook(hook))
    with torch.no_grad():
        m.encode(cal, batch_size=8)
    for h in hooks:
        h.remove()
    return {
        id(l): (amax[id(l)].clamp_min(1e-5) ** alpha / l.weight.data.abs().amax(0).clamp_min(1e-5) ** (1 - alpha)).clamp_min(1e-5)
        for l in linears
    }


print("variant: lowest cosine (reference texts) / lowest (all) / mean")
print("one scale per row:", run())
for g in [128, 64, 32]:
    print(f"groups of {g}:", run(group=g))
calibration = code[1::5]  # not the reference texts
for a in [0.3, 0.4, 0.5, 0.7]:
    sm = calibrate(a, calibration)
    print(f"smoothquant {a}, one scale per row:", run(smooth=sm))
    print(f"smoothquant {a} + groups of 128:", run(group=128, smooth=sm))
    print(f"smoothquant {a} + groups of 64:", run(group=64, smooth=sm))
