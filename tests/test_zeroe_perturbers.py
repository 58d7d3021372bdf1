import random
import string
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robustcount.attacks.zeroe_protocol import LEVELS, parse_level, zeroe_attack
from robustcount.errors import RobustcountError
from robustcount.spaces.perturbers import (
    INTRUDER_SYMBOLS,
    PERTURBERS,
    QWERTY,
    VOWELS,
    Disemvowel,
    FullShuffle,
    InnerShuffle,
    Intrude,
    Keyboard,
    Natural,
    Phonetic,
    Segment,
    Truncate,
    Visual,
    get_perturber,
)
from robustcount.spaces.resources import visual_neighbours
from robustcount.text import tokenize

words = st.text(alphabet=string.ascii_letters + "'-", min_size=1, max_size=14)
phis = st.floats(min_value=0.0, max_value=1.0)
seeds = st.integers(min_value=0, max_value=2**32)


@given(words, phis, seeds)
def test_inner_shuffle_keeps_ends_and_letters(word, phi, seed):
    out = InnerShuffle().perturb(word, phi, random.Random(seed))
    assert Counter(out) == Counter(word)
    if len(word) >= 2:
        assert out[0] == word[0] and out[-1] == word[-1]
    variants = InnerShuffle(seed=seed % 100).neighbours(word)
    assert bool(variants) == (len(set(word[1:-1])) >= 2)  # any inner letters that can move do
    for variant in variants:
        assert Counter(variant) == Counter(word) and variant != word
        assert variant[0] == word[0] and variant[-1] == word[-1]


@given(words, seeds)
def test_full_shuffle_keeps_letters_and_neighbourhoods_are_distinct(word, seed):
    out = FullShuffle().perturb(word, 0.5, random.Random(seed))
    assert Counter(out) == Counter(word)
    found = FullShuffle(seed=seed % 100, max_shuffles=5).neighbours(word)
    assert len(found) == len(set(found)) <= 5 and word not in found


def test_shuffle_neighbourhoods_are_complete_when_small_and_seeded_when_large():
    assert set(InnerShuffle().neighbours("abcd")) == {"acbd"}
    assert len(InnerShuffle(max_shuffles=10).neighbours("abcde")) == 5  # 3! - 1
    assert InnerShuffle(seed=1).neighbours("wonderful") == InnerShuffle(seed=1).neighbours("wonderful")
    assert InnerShuffle(seed=1).neighbours("wonderful") != InnerShuffle(seed=2).neighbours("wonderful")
    assert InnerShuffle().neighbours("ab") == ()


@given(words, phis, seeds)
def test_intrude_inserts_one_symbol_of_the_paper_set_throughout(word, phi, seed):
    out = Intrude().perturb(word, phi, random.Random(seed))
    if len(word) < 3:
        assert out == word
        return
    inserted = Counter(out) - Counter(word)
    assert len(set(inserted)) <= 1
    assert set(inserted) <= set(INTRUDER_SYMBOLS)
    assert out[0] == word[0] and out[-1] == word[-1]
    assert "".join(_remove_one_kind(out, word, inserted)) == word


def _remove_one_kind(out, word, inserted):
    # Removing the inserted symbol's extra occurrences (never at a position of the word) gives the word.
    if not inserted:
        return out
    symbol = next(iter(inserted))
    result, k = [], 0
    for ch in out:
        if k < len(word) and ch == word[k]:
            result.append(ch)
            k += 1
        else:
            assert ch == symbol
    return result


def test_intrude_neighbourhood_is_every_single_insertion():
    found = Intrude().neighbours("abc")
    assert len(found) == len(INTRUDER_SYMBOLS) * 2
    assert "a.bc" in found and "ab c" in found


@given(words)
def test_disemvowel_removes_only_vowels_and_spares_short_and_all_vowel_words(word):
    out = Disemvowel().perturb(word, 1.0, random.Random(0))
    if len(word) <= 3 or all(ch in VOWELS for ch in word):
        assert out == word
    else:
        assert out == "".join(ch for ch in word if ch not in VOWELS)


@given(words)
def test_truncate_removes_exactly_one_trailing_letter_from_long_words(word):
    out = Truncate().perturb(word, 1.0, random.Random(0))
    assert out == (word[:-1] if len(word) >= 3 else word)


@given(words, phis, seeds)
def test_keyboard_slips_are_adjacent_keys_of_the_same_case(word, phi, seed):
    out = Keyboard().perturb(word, phi, random.Random(seed))
    assert len(out) == len(word)
    for a, b in zip(word, out):
        if a != b:
            assert b.lower() in QWERTY[a.lower()] and a.isupper() == b.isupper()


def test_keyboard_neighbourhood_is_every_single_slip():
    assert set(Keyboard().neighbours("Ab")) == {"Qb", "Sb", "Wb", "Zb", "Ag", "Ah", "Av", "An"}


@given(st.text(alphabet=string.ascii_letters, min_size=1, max_size=12), phis, seeds)
def test_visual_output_differs_only_by_look_alikes(word, phi, seed):
    table = visual_neighbours()
    out = Visual().perturb(word, phi, random.Random(seed))
    assert len(out) == len(word)
    for a, b in zip(word, out):
        assert a == b or b in table[a]


def test_visual_table_holds_at_most_20_real_look_alikes_per_character():
    table = visual_neighbours()
    assert all(1 <= len(v) <= 20 for v in table.values())
    assert "а" in table["a"]  # Cyrillic a
    assert "m" not in table.get("n", ())


def test_natural_typos_from_the_packaged_and_a_user_table(tmp_path):
    assert "attaks" in Natural().neighbours("attacks")
    assert Natural().neighbours("Attacks")  # case carried over from the lower-case entry
    table = tmp_path / "noise.txt"
    table.write_text("film flim fillm\nmovie moive\n")
    assert Natural(table).neighbours("film") == ("flim", "fillm")
    assert Natural(table).neighbours("Movie") == ("Moive",)
    (tmp_path / "empty.txt").write_text("\n")
    with pytest.raises(RobustcountError, match="no entries"):
        Natural(tmp_path / "empty.txt").neighbours("film")


def test_phonetic_neighbours_sound_alike():
    from robustcount.spaces.phonetic import phoneme_distance, pronunciations

    assert "knight" in Phonetic().neighbours("night")
    assert "fone" in Phonetic().neighbours("phone")
    assert Phonetic().neighbours("attacks") and Phonetic().neighbours("knowledge")
    for variant in Phonetic().neighbours("attacks") + Phonetic().neighbours("knowledge"):
        best = min(phoneme_distance(p, q) for p in pronunciations("attacks") + pronunciations("knowledge")
                   for q in pronunciations(variant.lower()))
        assert best <= 0.2


def test_phoneme_distance_is_normalised_by_the_shorter_sequence():
    from robustcount.spaces.phonetic import phoneme_distance

    assert phoneme_distance(("K", "AE", "T"), ("K", "AE", "T")) == 0
    assert phoneme_distance(("K", "AE", "T"), ("K", "AE", "T", "S")) == pytest.approx(1 / 3)


def test_segment_joins_only_whitespace_gaps_with_decaying_probability():
    seg = Segment()
    assert seg.gap_neighbours(" ") == ("",)
    assert seg.gap_neighbours(", ") == ()
    assert seg.join_gaps([" ", " ", " "], 1.0, random.Random(0)) == ["", "", ""]
    assert seg.join_gaps([" ", " "], 0.0, random.Random(0)) == [" ", " "]
    # phi = 0.5: a run of merges is ever less likely; over many draws the second gap joins after
    # a joined first gap with probability 0.25.
    rng = random.Random(3)
    draws = [seg.join_gaps([" ", " "], 0.5, rng) for _ in range(4000)]
    after_join = [d[1] == "" for d in draws if d[0] == ""]
    assert abs(sum(after_join) / len(after_join) - 0.25) < 0.04


@pytest.mark.parametrize("name", list(PERTURBERS))
def test_level_zero_changes_nothing_and_one_seed_gives_one_output(name):
    perturber = get_perturber(name)
    text = "Adversarial attacks are harmless, said the knowledgeable reviewer."
    assert zeroe_attack(text, perturber, 0.0, seed=5) == text
    assert zeroe_attack(text, perturber, "high", seed=5) == zeroe_attack(text, perturber, "high", seed=5)


@pytest.mark.parametrize("name", [n for n in PERTURBERS if n != "segment"])
def test_protocol_perturbs_about_p_of_the_words(name):
    text = " ".join(["wonderful", "narrative", "phone", "attacks", "knowledge"] * 4)
    out = zeroe_attack(text, get_perturber(name), "mid", seed=11)
    changed = sum(a != b for a, b in zip(tokenize(text).words, out.split(" ")))
    assert 5 <= changed <= 10  # the goal is ceil(0.5 * 20); each drawn word is attacked with p = 0.5


def test_pairs_keep_their_premise():
    pair = ("The premise stays.", "The hypothesis changes here.")
    out = zeroe_attack(pair, Truncate(), 1.0, seed=0)
    assert out[0] == pair[0] and out[1] != pair[1]


@pytest.mark.parametrize("text", ["", "   \n\t", " ".join(["word"] * 10_000)])
def test_empty_whitespace_and_huge_texts(text):
    out = zeroe_attack(text, Truncate(), "high", seed=0)
    assert len(out) <= len(text)


def test_bad_names_and_levels_are_refused():
    with pytest.raises(RobustcountError, match="unknown source"):
        get_perturber("rot13")
    for bad in (-0.1, 1.5, "extreme", float("nan")):
        with pytest.raises(RobustcountError, match="level"):
            parse_level(bad)
    assert parse_level("low") == LEVELS["low"] == 0.2


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.ascii_lowercase + "'-", min_size=1, max_size=40))
def test_phonetic_never_fails_on_any_word(word):
    for variant in Phonetic().neighbours(word):
        assert variant != word


def test_phonetic_survives_words_the_g2p_model_cannot_finish():
    from robustcount.spaces.phonetic import pronunciations

    assert pronunciations("kubrick-meetz-spielberg") == ()  # the model gives up after 20 phones
    assert "kubrick-meetz-spielberg" not in Phonetic().neighbours("kubrick-meets-spielberg")


def test_visual_look_alikes_never_turn_a_word_right_to_left():
    import unicodedata

    table = visual_neighbours()
    assert all(unicodedata.bidirectional(other) not in ("R", "AL", "AN") for v in table.values() for other in v)
    assert table["l"] and table["o"]  # the left-to-right look-alikes stay
