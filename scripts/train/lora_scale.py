#!/usr/bin/env python3
"""Experiment (docs/RESULTS.md, session 23): a LoRA adapter file whose delta alpha/r·B·A is
multiplied by S, by scaling the recorded alpha; the tensors are unchanged. S < 1 moves the merged
model towards the pretrained one (S = 0 is the pretrained model), S > 1 beyond the trained one.

    scripts/train/lora_scale.py IN.safetensors OUT.safetensors S     # writes OUT and OUT.sha256
"""
import hashlib, json, struct, sys

src, out, s = sys.argv[1], sys.argv[2], float(sys.argv[3])
b = open(src, 'rb').read()
try:
    n = struct.unpack('<Q', b[:8])[0]
    header, data = json.loads(b[8:8 + n]), b[8 + n:]
except (struct.error, ValueError) as e:
    sys.exit(f"{src}: not a safetensors file ({e})")
meta = header.get('__metadata__', {})
if 'coret.lora.alpha' not in meta:
    sys.exit(f"{src}: not a coret LoRA adapter file (no coret.lora.alpha in its metadata)")
alpha = float(meta['coret.lora.alpha'])
meta['coret.lora.alpha'] = repr(alpha * s)
meta['coret.command'] = meta.get('coret.command', '') + f' ; alpha scaled x{s}'
hj = json.dumps(header, separators=(',', ':')).encode()
hj += b' ' * ((8 - len(hj) % 8) % 8)  # safetensors: the data starts 8-byte aligned
blob = struct.pack('<Q', len(hj)) + hj + data
open(out, 'wb').write(blob)
open(out + '.sha256', 'w').write(hashlib.sha256(blob).hexdigest() + '\n')
print(out, len(blob), alpha, '->', alpha * s)
