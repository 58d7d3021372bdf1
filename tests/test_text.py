from hypothesis import given
from hypothesis import strategies as st

from robustcount.text import Tokens, perturbed_part, replace_perturbed_part, tokenize


@given(st.text())
def test_round_trip_is_lossless_for_any_unicode(text):
    tokens = tokenize(text)
    assert tokens.join() == text
    assert len(tokens.separators) == len(tokens.words) + 1


@given(st.text())
def test_spans_point_at_the_words(text):
    tokens = tokenize(text)
    for word, (start, end) in zip(tokens.words, tokens.spans()):
        assert text[start:end] == word


def test_punctuation_lives_in_separators():
    tokens = tokenize("Don't stop--it's well-made, naïve café!")
    assert tokens.words == ("Don't", "stop", "it's", "well-made", "naïve", "café")
    assert tokens.separators == ("", " ", "--", " ", ", ", " ", "!")


def test_join_replaces_words_and_keeps_separators():
    tokens = tokenize("a good, fine film.")
    assert tokens.join(["a", "bad", "poor", "movie"]) == "a bad, poor movie."


def test_without_drops_the_word_and_the_separator_after_it():
    tokens = tokenize("very good film.")
    assert tokens.without(0) == "good film."
    assert tokens.without(2) == "very good "


def test_empty_and_whitespace_texts_have_no_words():
    assert tokenize("").words == ()
    assert tokenize("  \n ").separators == ("  \n ",)


def test_only_the_hypothesis_of_a_pair_is_perturbed():
    pair = ("A man sleeps.", "A person rests.")
    assert perturbed_part(pair) == "A person rests."
    assert replace_perturbed_part(pair, "Nobody rests.") == ("A man sleeps.", "Nobody rests.")


def test_tokens_reject_inconsistent_separators():
    import pytest

    with pytest.raises(ValueError):
        Tokens(("a",), ("",))
