"""Model factories for the `py:module:function` model spec, and test data paths, used by the tests."""

from pathlib import Path

import torch
from torch import nn

from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.families.word_networks import GloveWords


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


def _noisy(batch):
    import warnings

    from robustcount.errors import RobustcountWarning

    warnings.warn("a library's note on every call", FutureWarning)
    warnings.warn("the model's own warning on every call", RobustcountWarning)
    return [[0.3, 0.7] if "film" in str(text) else [0.6, 0.4] for text in batch]


def noisy_model():
    """A model that warns twice on every call: a library's FutureWarning and a RobustcountWarning."""
    return FunctionClassifier(_noisy, ["negative", "positive"])


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


def tie_model():
    """Positive (0.9) on texts with the word "good", an exact 0.5/0.5 tie on every other text: its
    adversaries (ties) are adversarial whatever the gold label."""
    return FunctionClassifier(lambda batch: [[0.1, 0.9] if "good" in t.split() else [0.5, 0.5] for t in batch],
                              ["negative", "positive"], name="tie")


SENTIMENT_TABLE = "table:" + str(Path(__file__).parent / "data" / "sentiment_neighbours.json")
"""A small sentiment neighbour table (`table:` source), named by an absolute path so that tests run from anywhere."""


def english_stop_words_pipeline():
    """A user's scikit-learn pipeline: word counts without English stop words, logistic regression,
    fitted on demo:train."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return _fitted(make_pipeline(CountVectorizer(stop_words="english"), LogisticRegression(max_iter=1000)))


def stop_word_list_pipeline():
    """A user's scikit-learn pipeline: TF-IDF without a list of stop words (a new list at every call),
    logistic regression, fitted on demo:train."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    stop_words = ["a", "an", "the", "of", "and", "is"]
    return _fitted(make_pipeline(TfidfVectorizer(stop_words=stop_words), LogisticRegression(max_iter=1000)))


def _fitted(pipeline):
    from robustcount.data import load_demo

    train = load_demo("train")
    return pipeline.fit([e.input for e in train], [e.label for e in train])


class TwinLabels:
    """A classifier of the user's own whose two labels have one name."""

    labels = ("positive", "positive")

    def predict_proba(self, batch):
        return [[0.5, 0.5] for _ in batch]


def twin_labels_model():
    return TwinLabels()


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


def short_texts_model():
    """A keyword model that refuses texts of more than 30 words (as a model with a short maximum
    length might): the batch probe's long texts fail on it."""

    def classify(batch):
        if any(len(t.split()) > 30 for t in batch):
            raise ValueError("texts of more than 30 words are not supported")
        return [int("good" in t) for t in batch]

    return FunctionClassifier(classify, ["negative", "positive"], output="label", name="short-texts")


def sleepy_model():
    """A model positive on every text (robust everywhere) that takes 0.1 s per call and acts as if the user
    pressed Ctrl-C once it has classified $ROBUSTCOUNT_TEST_STOP_AFTER inputs while that variable is set (its
    answers and digest do not depend on it)."""
    import os
    import time

    seen = [0]

    def classify(batch):
        time.sleep(0.1)
        stop_after = os.environ.get("ROBUSTCOUNT_TEST_STOP_AFTER")
        seen[0] = seen[0] + len(batch) if stop_after else 0
        if stop_after and seen[0] > int(stop_after):
            raise KeyboardInterrupt
        return [[0.3, 0.7] for _ in batch]

    return FunctionClassifier(classify, ["negative", "positive"], name="sleepy")


def dying_model():
    """keyword_model whose process dies (os._exit) when a Dask worker gives it the text "boom": a worker lost
    mid-run (the process that starts the run, which probes the model on the examples, lives)."""
    import os

    from distributed import get_worker

    def classify(batch):
        if "boom" in batch:
            try:
                get_worker()
            except ValueError:  # not in a Dask worker
                pass
            else:
                os._exit(3)
        return [int("good" in t) for t in batch]

    return FunctionClassifier(classify, ["negative", "positive"], output="label", name="dying")
