"""Model factories for the `py:module:function` model spec, and test data paths, used by the tests."""

from pathlib import Path

import torch
from torch import nn

from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.word_networks import GloveWords


def keyword_model():
    return FunctionClassifier(lambda batch: [int("good" in t) for t in batch], ["negative", "positive"],
                              output="label", name="keyword")


def not_a_model():
    return "nothing"


def fragile_model():
    """Like keyword_model, but fails on the text "boom" (a model that breaks mid-run)."""

    def classify(batch):
        if "boom" in batch:
            raise RuntimeError("model failed on 'boom'")
        return [int("good" in t) for t in batch]

    return FunctionClassifier(classify, ["negative", "positive"], output="label", name="fragile")


def logged_model():
    """keyword_model that appends its process id to the file $ROBUSTCOUNT_TEST_LOAD_LOG on every load."""
    import os

    with open(os.environ["ROBUSTCOUNT_TEST_LOAD_LOG"], "a") as log:
        log.write(f"{os.getpid()}\n")
    return keyword_model()


def interrupted_model():
    """keyword_model that acts as if the user pressed Ctrl-C once it has classified 300 inputs."""
    seen = [0]

    def classify(batch):
        seen[0] += len(batch)
        if seen[0] > 300:
            raise KeyboardInterrupt
        return [int("good" in t) for t in batch]

    return FunctionClassifier(classify, ["negative", "positive"], output="label", name="interrupted")


def weighted_keyword_model():
    """A keyword model whose weight it reads from the file $ROBUSTCOUNT_TEST_WEIGHTS (its code does not change
    when the file does)."""
    import os

    weight = float(open(os.environ["ROBUSTCOUNT_TEST_WEIGHTS"]).read())

    def classify(batch):
        return [[1 - p, p] for p in (min(0.99, max(0.01, 0.5 + weight * ("good" in t))) for t in batch)]

    return FunctionClassifier(classify, ["negative", "positive"], name="weighted-keyword")


SENTIMENT_TABLE = "table:" + str(Path(__file__).parent / "data" / "sentiment_neighbours.json")
"""A small sentiment neighbour table (`table:` source), named by an absolute path so that tests run from anywhere."""


class PaddedMean(nn.Module):
    """A word-score model with the padding bug: it averages its words' scores (good +1, bad -1,
    any other word 0) over every column of the batch, padding included, so that a text scores
    closer to 0 beside a longer text; p(positive) = sigmoid(5 * mean - 1)."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(4, 1, padding_idx=0)  # padding, unknown, good, bad
        self.out = nn.Linear(1, 2)
        with torch.no_grad():
            self.embedding.weight.copy_(torch.tensor([[0.0], [0.0], [1.0], [-1.0]]))
            self.out.weight.copy_(torch.tensor([[0.0], [5.0]]))
            self.out.bias.copy_(torch.tensor([0.0, -1.0]))

    def forward(self, input_ids):
        return self.out(self.embedding(input_ids).mean(dim=1))


def padded_mean_model():
    """`PaddedMean` as a white-box classifier: a small real model whose answers depend on its batch."""
    return TorchClassifier(PaddedMean(), GloveWords(("good", "bad")), ["negative", "positive"], name="padded-mean",
                           device="cpu")
