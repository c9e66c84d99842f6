#!/usr/bin/env python3
"""Embedding throughput of sentence-transformers (PyTorch, CPU or CUDA) on the texts our bench embeds.

Reads a JSONL file with one {"text": ...} per line (coret's `bench::write_bench_texts`
writes it), loads the same model directory (config.json, tokenizer.json,
model.safetensors) as Transformer + mean pooling + normalisation, and prints chunks/s.

    pip install sentence-transformers   # CPU torch is enough
    python3 scripts/bench/bench_sentence_transformers.py texts.jsonl --model DIR \
        --max-seq-length 256 --batch-size 32 --threads 2
"""

import argparse
import json
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("texts", help="JSONL file, one {\"text\": ...} per line")
    ap.add_argument("--model", required=True, help="model directory")
    ap.add_argument("--max-seq-length", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    ap.add_argument("--device", default="cpu", help="torch device: cpu or cuda")
    ap.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"])
    ap.add_argument("--limit", type=int, default=0, help="embed only the first N texts")
    args = ap.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer, models

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)

    with open(args.texts, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f if line.strip()]
    if args.limit:
        texts = texts[: args.limit]

    transformer = models.Transformer(args.model, max_seq_length=args.max_seq_length)
    pooling = models.Pooling(transformer.get_word_embedding_dimension(), "mean")
    model = SentenceTransformer(modules=[transformer, pooling, models.Normalize()], device=args.device)
    if args.dtype == "f16":
        model.half()
    elif args.dtype == "bf16":
        model.bfloat16()

    tokens = sum(
        len(ids)
        for ids in model.tokenizer(
            texts, truncation=True, max_length=args.max_seq_length
        )["input_ids"]
    )
    model.encode(texts[: args.batch_size], batch_size=args.batch_size)  # warm-up, untimed

    start = time.perf_counter()
    vectors = model.encode(texts, batch_size=args.batch_size, convert_to_numpy=True)
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start

    print(
        f"sentence-transformers {args.device} {args.dtype}, {args.threads} threads, batch {args.batch_size}, "
        f"max_seq_length {args.max_seq_length}: embedded {len(vectors)} chunks "
        f"({tokens} tokens) in {seconds:.2f} s: {len(vectors) / seconds:.1f} chunks/s, "
        f"{tokens / seconds:.0f} tokens/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
