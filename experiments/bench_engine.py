"""Query-engine throughput against a bare batched forward pass over the same texts.

Both sides run the default model `minilm-rt` on the same distinct demo:test texts with the same
batch size, alternating, `--rounds` times each; the figure is the ratio of the median throughputs
(engine / bare). The engine starts each round with an empty cache, so no answer comes for free:
what it adds is bookkeeping and length-sorted batches (less padding). Run:

    .venv/bin/python experiments/bench_engine.py --texts 1000 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from robustcount.data import load_demo
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model


def bare_forward(model, texts: list[str], batch_size: int) -> None:
    """Tokenize and run the module in data order, nothing else."""
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            encoding = model.tokenizer(texts[start : start + batch_size])
            torch.softmax(model.module(**encoding.inputs), dim=-1).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    model = load_model("minilm-rt", device="cpu", batch_size=args.batch_size)
    texts = list(dict.fromkeys(e.input for e in load_demo("test")))[: args.texts]
    bare_forward(model, texts[: args.batch_size], args.batch_size)  # warm-up
    bare, engine_rates = [], []
    for _ in range(args.rounds):
        began = time.perf_counter()
        bare_forward(model, texts, args.batch_size)
        bare.append(len(texts) / (time.perf_counter() - began))
        engine = QueryEngine(model, batch_size=args.batch_size)
        began = time.perf_counter()
        engine.predict_proba(texts)
        engine_rates.append(len(texts) / (time.perf_counter() - began))
        assert engine.total.model_calls == len(texts)
    bare_rate, engine_rate = statistics.median(bare), statistics.median(engine_rates)
    print(f"texts {len(texts)}, batch size {args.batch_size}, rounds {args.rounds}, "
          f"torch threads {torch.get_num_threads()}")
    print(f"bare forward pass: {bare_rate:8.1f} texts/s")
    print(f"query engine:      {engine_rate:8.1f} texts/s")
    print(f"ratio engine/bare: {engine_rate / bare_rate:8.2f}")


if __name__ == "__main__":
    main()
