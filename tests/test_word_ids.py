"""Points as token ids: for a model with a word-level tokenizer, `evaluate_points` gives the model
each point's ids (`goal.point_ids`) instead of its text, with the same answers, cache and batch
probe, each distinct ids run once a request; any other model or space goes as text."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from robustcount.goal import evaluate_all, point_ids
from robustcount.models.engine import QueryEngine
from robustcount.models.families.word_networks import GloveWords
from robustcount.models.small import BagOfWords
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.zoo import load_model
from robustcount.spaces.build import build_space
from robustcount.spaces.space import Position, Space
from robustcount.text import perturbed_part, tokenize

TEXTS = ["It's a well-made, gripping film -- don't miss it!", "A sly, GENTLE film; zyxwv's quirks aside.",
         ("The premise is fixed.", "the cast's warmth carries it")]
SOURCES = [["truncate", "disemvowel"], ["intrude", "keyboard"], ["synonyms", "keyboard"]]


@pytest.mark.parametrize("name", ["bow-rt", "cnn-rt", "lstm-rt"])
def test_word_ids_give_the_text_paths_probabilities_on_every_point(name):
    model = load_model(name, device="cpu")
    engine = QueryEngine(model)
    assert engine.reads_word_ids
    for item, sources in itertools.product(TEXTS, SOURCES):
        space = build_space(item, sources)
        ids = point_ids(engine, space)
        assert ids is not None, (item, sources)
        points = list(space.points(1 if space.count(2) > 1500 else 2))
        for start in range(0, len(points), 64):
            batch = points[start : start + 64]
            texts, rows = [space.apply(p) for p in batch], [ids(p) for p in batch]
            assert np.array_equal(model.predict_proba(texts), model.predict_proba_ids(rows))
            assert model.tokenizer(texts).inputs["input_ids"].equal(model.tokenizer.encode_ids(rows)["input_ids"])


class TextsOnly:
    """A model seen through its texts only (no word ids)."""

    def __init__(self, model):
        self.model, self.labels = model, model.labels

    def predict_proba(self, batch):
        return self.model.predict_proba(batch)


def test_word_ids_keep_the_engines_cache_counts_and_batch_probe_and_run_each_ids_once(bow_rt, monkeypatch):
    space = build_space("It's a well-made, gripping film -- don't miss it!", ["truncate", "disemvowel"])
    points = list(space.points(2))
    points = [p for p in points[:20] for _ in range(2)] + points  # duplicates in a request, then cache hits
    texts, words = QueryEngine(TextsOnly(bow_rt)), QueryEngine(bow_rt)
    results = {}
    for engine in (texts, words):
        engine.batching()  # the batch probe, on the probe texts
        if engine is words:  # from here on the model never tokenizes a text
            monkeypatch.setattr(type(bow_rt.tokenizer), "__call__", lambda self, batch: pytest.fail("tokenized"))
        with engine.example() as stats:
            first = evaluate_all(engine, space, points, 1)
            again = evaluate_all(engine, space, points[::3], 1)
        with engine.example() as by_text:  # a point is its text to the cache
            engine.predict_proba([space.apply(p) for p in points[:5]])
        results[engine is words] = (first.probs, again.probs, stats.as_dict(), engine.probe.as_dict(),
                                    engine.batching(), by_text.cache_hits)
    (probs, probs_again, stats, probe, batching, hits), other = results[True], results[False]
    assert np.array_equal(probs, other[0]) and np.array_equal(probs_again, other[1])
    drop = {"model_seconds", "model_calls", "duplicates", "model_batches"}
    assert {k: v for k, v in stats.items() if k not in drop} == {k: v for k, v in other[2].items() if k not in drop}
    assert other[2]["duplicates"] == 40 and stats["cache_hits"] == len(points[::3])
    # On ids, an input the model reads as an earlier one of its request (the same ids: two
    # misspellings of one word, both unknown) is a duplicate too: the rule written out request by request.
    ids, cached, calls = point_ids(words, space), set(), 0
    for start in range(0, len(points), words.batch_size):
        request = points[start : start + words.batch_size]
        calls += len({tuple(ids(p)) for p in request if space.apply(p) not in cached})
        cached.update(map(space.apply, request))
    assert stats["model_calls"] == calls < other[2]["model_calls"]
    assert stats["model_calls"] + stats["duplicates"] == other[2]["model_calls"] + other[2]["duplicates"]
    assert probe["model_calls"] == other[3]["model_calls"] > 0 and batching == other[4]
    assert hits == other[5] == 5


def test_models_and_spaces_without_word_ids_go_as_text(bow_rt, tfidf_rt):
    item = "the plot is thin but the cast is fun"
    assert point_ids(QueryEngine(tfidf_rt), build_space(item, ["truncate"])) is None  # no word-level tokenizer
    assert point_ids(QueryEngine(bow_rt), build_space(item, ["segment"])) is None  # a gap joins two words
    engine = QueryEngine(bow_rt)
    assert point_ids(engine, build_space(item, ["truncate"])) is not None
    words = tokenize(item).words
    for candidate in ("--", "", "thin but", "-thin'"):  # any word candidate: its non-word ends join the separators
        assert point_ids(engine, Space(item, (Position("word", 3, (words[3], candidate)),))) is not None
    for separator in ("", "-", "'", "a"):
        space = Space(item, (Position("gap", 2, (" ", separator)),))
        assert point_ids(engine, space) is None  # a separator that joins words or holds one


PIECES = st.text(st.sampled_from("ab'’- .,\u0301"), max_size=4)
JOINERS = ("", "'", "’", "-")
"""The separators that join the words either side of them (the word rule joins over one of these)."""
NON_WORD = st.text(st.sampled_from("'’- .,"), max_size=3)
INNER = NON_WORD.filter(lambda separator: separator not in JOINERS)
"""A separator between two words that keeps them two."""
WORDS = st.from_regex(r"[ab]\u0301?(?:['’-]?[ab])?", fullmatch=True)


@st.composite
def spaces(draw):
    """Small spaces, each with a point besides the clean input, over texts of words (letters, a
    combining mark, an inner apostrophe or hyphen) and separators that hold no word and keep two
    words apart; word candidates of any of those characters (a candidate may hold several words,
    none, or end in punctuation), gap candidates as the text's separators are made."""
    words = draw(st.lists(WORDS, min_size=1, max_size=4))
    separators = [draw(NON_WORD), *(draw(INNER) for _ in words[1:]), draw(NON_WORD)]
    item = "".join(s + w for s, w in zip(separators, words)) + separators[-1]
    assert tokenize(item).words == tuple(words), item
    slots = [("word", i, w, PIECES) for i, w in enumerate(words)]
    slots += [("gap", i, s, INNER if 0 < i < len(words) else NON_WORD) for i, s in enumerate(separators)]
    chosen = draw(st.lists(st.sampled_from(range(len(slots))), min_size=1, max_size=3, unique=True))
    positions = []
    for kind, index, original, pieces in (slots[k] for k in sorted(chosen)):
        extra = draw(st.lists(pieces.filter(lambda c, o=original: c != o), min_size=1, max_size=2, unique=True))
        positions.append(Position(kind, index, (original, *extra)))
    return Space(item, tuple(sorted(positions, key=lambda p: (p.index, p.kind))))


def bag_of_words_on(space: Space) -> TorchClassifier:
    """A word-level model whose vocabulary holds every word of the space (one id a word)."""
    every = {w.lower() for c in (space.item, *(c for p in space.positions for c in p.candidates))
             for w in tokenize(c).words}
    return TorchClassifier(BagOfWords(len(every) + 2, 4, 2), GloveWords(sorted(every)), ["neg", "pos"], device="cpu")


@given(spaces())
def test_point_ids_are_the_ids_of_each_points_text(space):
    """On every space whose separators keep words apart, `point_ids` offers ids, and they are
    those of each point's text, on every point (the clean input and at least one other)."""
    model = bag_of_words_on(space)
    ids = point_ids(QueryEngine(model), space)
    assert ids is not None, space
    points = list(space.points(len(space.positions)))
    assert len(points) > 1
    for point in points:
        text = perturbed_part(space.apply(point))
        assert ids(point) == [i for word in tokenize(text).words for i in model.tokenizer.word_ids(word)], text
    assert [list(row) for row in ids.rows(points)] == [ids(point) for point in points]  # a batch's rows at once


@given(spaces(), st.sampled_from(JOINERS), st.data())
def test_point_ids_refuse_a_space_where_a_separator_may_join_two_words(space, joiner, data):
    """A gap between two words that may hold a joiner (or be the text's own joiner) goes as text."""
    inner = [i for i in range(1, len(space.tokens.words))]
    if not inner:  # one word: add a second after a space, then join it
        space = Space(space.item + " b", space.positions)
        inner = [1]
    index = data.draw(st.sampled_from(inner))
    kept = tuple(p for p in space.positions if (p.kind, p.index) != ("gap", index))
    joined = Space(space.item, tuple(sorted((*kept, Position("gap", index, (space.tokens.separators[index], joiner))),
                                             key=lambda p: (p.index, p.kind))))
    assert point_ids(QueryEngine(bag_of_words_on(joined)), joined) is None


def test_a_batchs_rows_are_each_points_ids_when_two_positions_change_one_word():
    """`rows` gives each point's ids at once, also where two positions change the same word (the
    later change wins, as in the point's text)."""
    item = "a good film"
    model = TorchClassifier(BagOfWords(6, 4, 2), GloveWords(["a", "good", "film", "fine", "great"]), ["neg", "pos"],
                            device="cpu")
    for positions in [(Position("word", 1, ("good", "fine")), Position("word", 2, ("film", "great"))),
                      (Position("word", 1, ("good", "fine")), Position("word", 1, ("good", "great")))]:
        space = Space(item, positions)
        ids = point_ids(QueryEngine(model), space)
        points = list(space.points(2))
        assert np.array_equal(ids.rows(points), [ids(point) for point in points])
        assert [ids(point) for point in points] == [[model.tokenizer.word_ids(w)[0] for w in tokenize(space.apply(p)).words]
                                                    for p in points]
