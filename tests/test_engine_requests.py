"""The query engine's request path against a plain statement of its rules, input by input: which
inputs reach the model and in which batches, every counter, and the cache's contents in
least-recently-used order (what a checkpoint records); and `word_saliency`'s per-span sums against
the plain token-by-span loop."""

from collections import OrderedDict

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from robustcount.models.engine import QueryEngine
from robustcount.models.small import BagOfWords
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.families.word_networks import GloveWords


class Recorded:
    """A real classifier on texts (p(second label) grows with a text's letters' codes), recording
    every batch it is given."""

    labels = ("a", "b")

    def __init__(self):
        self.batches = []

    def predict_proba(self, batch):
        self.batches.append(list(batch))
        share = np.array([(sum(map(ord, text)) % 97 + 1) / 99 for text in batch])
        return np.stack([1 - share, share], axis=1)


def expected(requests, cache_size, batch_size):
    """The engine's rules, input by input: per request, a repeat of an input still to run is a
    duplicate, an input in the cache a hit (now the most recently used), any other runs; those
    run sorted by length (first asked first among equals), `batch_size` at a time, each then put
    in the cache, which drops its least recently used entry beyond `cache_size`."""
    cache, batches, counts = OrderedDict(), [], dict(candidates=0, duplicates=0, cache_hits=0, model_calls=0)
    for request in requests:
        to_run = []
        for text in request:
            counts["candidates"] += 1
            if text in to_run:
                counts["duplicates"] += 1
            elif text in cache:
                cache.move_to_end(text)
                counts["cache_hits"] += 1
            else:
                to_run.append(text)
        to_run.sort(key=len)
        for start in range(0, len(to_run), batch_size):
            batches.append(to_run[start : start + batch_size])
            for text in batches[-1]:
                counts["model_calls"] += 1
                if cache_size:
                    cache[text] = True
                    cache.move_to_end(text)
                    if len(cache) > cache_size:
                        cache.popitem(last=False)
    return batches, counts, list(cache)


TEXTS = st.sampled_from(["a", "bb", "cc", "ddd", "e", "ffff", "gg", "h h"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(TEXTS, max_size=9), min_size=1, max_size=6), st.integers(0, 4), st.integers(1, 4))
def test_requests_follow_the_rules_input_by_input(requests, cache_size, batch_size):
    model = Recorded()
    engine = QueryEngine(model, cache_size=cache_size, batch_size=batch_size)
    engine.batching()  # the batch probe first, so that the model's record holds the requests' batches only
    model.batches.clear()
    with engine.example() as stats:
        for request in requests:
            answers = engine.predict_proba(request)
            assert np.array_equal(answers, Recorded().predict_proba(request) if request else answers)
        cached = [item for item, _ in engine.state().cache]
    batches, counts, in_cache = expected(requests, cache_size, batch_size)
    assert model.batches == batches
    assert {key: getattr(stats, key) for key in counts} == counts
    assert cached == in_cache


def loop_sums(token_norms, offsets, spans):
    """The per-span sums as a plain loop: each token's value added to every span it overlaps."""
    scores = np.zeros(len(spans))
    for norm, offset in zip(token_norms, offsets):
        if offset is None:
            continue
        for j, (start, end) in enumerate(spans):
            if offset[0] < end and offset[1] > start:
                scores[j] += norm
    return scores


SPANS = st.lists(st.tuples(st.integers(0, 30), st.integers(1, 8)).map(lambda s: (s[0], s[0] + s[1])), max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["good", "bad", "film", "not", "dull"]), min_size=1, max_size=6), SPANS)
def test_word_saliency_sums_each_spans_tokens_as_the_plain_loop(words, spans):
    """Any spans (overlapping several tokens, or none, or each other): the same float64 sums,
    bit for bit, as the token-by-span loop over the same gradient norms."""
    torch.manual_seed(0)
    module, tokenizer = BagOfWords(7, 4, 2), GloveWords(["good", "bad", "film", "not", "dull"])
    model = TorchClassifier(module, tokenizer, ["neg", "pos"], embedding=module.embedding, device="cpu")
    text = " ".join(words)
    offsets = tokenizer([text]).offsets[0]
    # each token's own value (a span over it alone: word tokens never overlap), float32 as the model's norms
    per_token = np.array([model.word_saliency(text, [o], 1)[0] if o else 0.0 for o in offsets], dtype=np.float32)
    assert np.array_equal(model.word_saliency(text, spans, 1), loop_sums(per_token, offsets, spans))
