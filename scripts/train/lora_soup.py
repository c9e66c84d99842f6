#!/usr/bin/env python3
"""Experiment (docs/RESULTS.md "Trained on a GPU"): the average of two rank-r LoRA adapter files' deltas as one rank-2r file.
B = [sqrt(w1) B1, sqrt(w2) B2], A = [sqrt(w1) A1; sqrt(w2) A2] so that B A = w1 B1 A1 + w2 B2 A2;
alpha doubles with the rank so alpha/r (the scale) stays. Pure Python (struct's "e" is f16).

    scripts/train/lora_soup.py FIRST.safetensors SECOND.safetensors OUT.safetensors W   # W for FIRST
"""
import json, struct, sys, hashlib, math
def read(p):
    b = open(p, 'rb').read(); n = struct.unpack('<Q', b[:8])[0]; h = json.loads(b[8:8+n]); d = b[8+n:]
    t = {}
    for k, v in h.items():
        if k == '__metadata__': continue
        s, e = v['data_offsets']; cnt = (e - s) // 2
        t[k] = (v['shape'], list(struct.unpack(f'<{cnt}e', d[s:e])))
    return h['__metadata__'], t
m1, t1 = read(sys.argv[1]); m2, t2 = read(sys.argv[2]); w1 = float(sys.argv[4]); w2 = 1 - w1
assert m1['coret.base'] == m2['coret.base'] and m1['coret.lora.rank'] == m2['coret.lora.rank'] and m1['coret.lora.alpha'] == m2['coret.lora.alpha']
r = int(m1['coret.lora.rank']); s1, s2 = math.sqrt(w1), math.sqrt(w2)
out = {}
for k in sorted(t1):
    (sh, v1), (_, v2) = t1[k], t2[k]
    if k.endswith('.lora_a'):   # [r, in]: stack rows
        out[k] = ([2 * r, sh[1]], [x * s1 for x in v1] + [x * s2 for x in v2])
    else:                        # [out, r]: interleave columns per row
        rows, vals = sh[0], []
        for i in range(rows):
            vals += [x * s1 for x in v1[i*r:(i+1)*r]] + [x * s2 for x in v2[i*r:(i+1)*r]]
        out[k] = ([sh[0], 2 * r], vals)
meta = dict(m1); meta['coret.lora.rank'] = str(2 * r); meta['coret.lora.alpha'] = str(2 * float(m1['coret.lora.alpha']))
meta['coret.command'] = f'soup {w1} x {sys.argv[1]} + {w2} x {sys.argv[2]}'
hdr, data, off = {'__metadata__': meta}, b'', 0
for k, (sh, v) in out.items():
    blob = struct.pack(f'<{len(v)}e', *v); hdr[k] = {'dtype': 'F16', 'shape': sh, 'data_offsets': [off, off + len(blob)]}; data += blob; off += len(blob)
hj = json.dumps(hdr, separators=(',', ':')).encode(); hj += b' ' * ((8 - len(hj) % 8) % 8)
blob = struct.pack('<Q', len(hj)) + hj + data
open(sys.argv[3], 'wb').write(blob); open(sys.argv[3] + '.sha256', 'w').write(hashlib.sha256(blob).hexdigest() + '\n')
print(sys.argv[3], len(blob), meta['coret.lora.alpha'])
