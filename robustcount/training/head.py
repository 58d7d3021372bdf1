"""Training the head of `minilm-rt`: the all-MiniLM-L6-v2 encoder stays frozen, so each text is
embedded once (mean pooling, L2 normalisation) and a logistic regression is fitted on the
embeddings, its regularisation C chosen by 5-fold cross-validation on the training data alone.

Embedding is the cost (about 80 texts a second on one CPU thread); `embed_texts` saves its work
in chunks, so that an interrupted embedding continues where it stopped, and the hardening
experiments embed each perturbed set once and share it between heads.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from robustcount.atomic import replaced_whole
from robustcount.models.minilm import MAX_LENGTH, MeanPooledClassifier, load_encoder

BATCH = 128
CHUNK = 2048
"""Texts embedded between two saves of the work done."""
CS = tuple(float(c) for c in np.logspace(-2, 3, 11))
"""The regularisation strengths cross-validation chooses from."""


def frozen_encoder():
    """The packaged encoder (in inference mode) with mean pooling, and its tokenizer."""
    encoder, tokenizer = load_encoder()
    return MeanPooledClassifier(encoder, torch.nn.Linear(1, 1)).eval(), tokenizer


def embed_batches(model: MeanPooledClassifier, tokenizer, texts: Sequence[str], batch_size: int = BATCH) -> np.ndarray:
    """The normalised sentence embeddings of `texts`, `batch_size` texts a batch in the order given."""
    chunks = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            encoded = tokenizer(list(texts[start : start + batch_size]), padding=True, truncation=True,
                                max_length=MAX_LENGTH, return_tensors="pt")
            chunks.append(model.embed(**encoded).numpy())
    return np.concatenate(chunks) if chunks else np.zeros((0, 384), dtype=np.float32)


def embed_texts(texts: Sequence[str], folder: Path | None = None, *, encoder=None, progress=None) -> np.ndarray:
    """The embeddings of `texts`; with `folder`, each chunk of CHUNK texts is saved there as it is
    done and read back instead of recomputed (the folder belongs to this list of texts). Texts are
    embedded in length order, which puts similar lengths in a batch, and returned in the order given."""
    model, tokenizer = encoder or frozen_encoder()
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    chunks = [order[s : s + CHUNK] for s in range(0, len(order), CHUNK)]
    saved = [folder / f"chunk-{k:05d}.npy" if folder else None for k in range(len(chunks))]
    bar = progress(len(texts), sum(len(c) for c, path in zip(chunks, saved) if path and path.exists())) \
        if progress else None
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for chunk, path in zip(chunks, saved):
        if path is not None and path.exists():
            out[chunk] = np.load(path, allow_pickle=False)
            continue
        values = embed_batches(model, tokenizer, [texts[i] for i in chunk])
        if path is not None:
            with replaced_whole(path) as staged:
                np.save(staged, values, allow_pickle=False)
        out[chunk] = values
        if bar:
            bar.update(len(chunk))
    if bar:
        bar.close()
    return out


def fit_head(embeddings: np.ndarray, targets: Sequence[int], n_labels: int,
             c: float | None = None) -> tuple[dict[str, torch.Tensor], float]:
    """A logistic regression on `embeddings` (regularisation `c`, or chosen from CS by 5-fold
    cross-validation) as the tensors of a linear head, and its C."""
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV

    with warnings.catch_warnings():  # scikit-learn announces a change of attributes we do not use
        warnings.simplefilter("ignore", FutureWarning)
        search = (LogisticRegressionCV(Cs=list(CS), cv=5, max_iter=5000) if c is None else
                  LogisticRegression(C=c, max_iter=5000)).fit(embeddings, np.asarray(targets))
    if n_labels == 2:
        # A binary logistic regression has one weight vector w: logits (-w.x/2, w.x/2) give the same
        # softmax as sigmoid(w.x + b), so the head is a two-row linear layer.
        w = torch.tensor(search.coef_[0], dtype=torch.float32)
        b = float(search.intercept_[0])
        tensors = {"weight": torch.stack([-w / 2, w / 2]).contiguous(),
                   "bias": torch.tensor([-b / 2, b / 2], dtype=torch.float32)}
    else:
        tensors = {"weight": torch.tensor(search.coef_, dtype=torch.float32).contiguous(),
                   "bias": torch.tensor(search.intercept_, dtype=torch.float32)}
    return tensors, float(search.C_[0] if c is None else c)
