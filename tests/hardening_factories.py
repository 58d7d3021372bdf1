"""Small trainable models for `harden --model` (py:tests.hardening_factories:NAME) and a tiny
transformers checkpoint built from scratch."""

from collections import Counter
from functools import lru_cache
from pathlib import Path

import torch
from torch import nn

from robustcount.data import DEMO_LABELS, load_demo
from robustcount.models.families.word_networks import GloveWords
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.text import tokenize


@lru_cache(maxsize=1)
def vocabulary(n: int = 1500) -> list[str]:
    """demo:train's `n` most frequent lower-cased words."""
    counts = Counter(w.lower() for e in load_demo("train") for w in tokenize(e.input).words)
    return [w for w, _ in counts.most_common(n)]


class MeanWords(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.embedding = nn.Embedding(size + 2, 16, padding_idx=0)
        self.out = nn.Linear(16, len(DEMO_LABELS))

    def forward(self, input_ids):
        mask = (input_ids != 0).unsqueeze(-1).float()
        return self.out((self.embedding(input_ids) * mask).sum(1) / mask.sum(1).clamp(min=1))

    def get_input_embeddings(self):
        return self.embedding


def mean_words():
    """A bag of learned word vectors, freshly initialised with seed 0: a TorchClassifier that trains."""
    words = vocabulary()
    torch.manual_seed(0)
    return TorchClassifier(MeanWords(len(words)), GloveWords(words), DEMO_LABELS, name="mean-words", device="cpu")


def tfidf_pipeline():
    """An sklearn pipeline fitted on 300 demo:train examples."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    train = load_demo("train")[:300]
    return make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=500)).fit(
        [e.input for e in train], [e.label for e in train])


def tiny_checkpoint(directory: Path) -> Path:
    """A 2-layer BERT sequence classifier over demo:train's words (random weights, seed 0) with its
    fast tokenizer, saved as a transformers checkpoint directory."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    (directory / "vocab.txt").write_text("\n".join(specials + vocabulary()) + "\n")
    tokenizer = BertTokenizerFast(str(directory / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, num_labels=2,
                        id2label=dict(enumerate(DEMO_LABELS)), label2id={x: i for i, x in enumerate(DEMO_LABELS)})
    BertForSequenceClassification(config).save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    return directory
