import json

import numpy as np
import pytest

from robustcount.errors import RobustcountError
from robustcount.spaces.build import build_space
from robustcount.spaces.pos import same_pos
from robustcount.spaces.sources import make_source
from robustcount.spaces.synonyms import NeighbourTable, VectorNeighbours, WordNetSynonyms
from robustcount.text import tokenize


def test_union_keeps_the_original_first_without_duplicates():
    space = build_space("The film was good", ["truncate", "disemvowel", "wordnet"])
    for position in space.positions:
        assert position.candidates[0] == space.tokens.words[position.index]
        assert len(set(position.candidates)) == len(position.candidates)
    film = next(p for p in space.positions if p.original == "film")
    assert film.candidates[:3] == ("film", "fil", "flm")
    assert film.sources[:3] == ("original", "truncate", "disemvowel")


def test_filters_stop_words_length_cap_and_skip():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    text = "The film was a very good ride"
    space = build_space(text, ["wordnet"], stop_words=ENGLISH_STOP_WORDS, max_candidates=2, min_length=4,
                        skip_positions=[6])
    originals = [p.original for p in space.positions]
    assert originals == ["film", "good"]
    assert all(len(p.candidates) <= 3 for p in space.positions)


def test_segment_adds_gap_positions_between_words_only():
    space = build_space("one, two three", ["segment"])
    assert [(p.kind, p.index) for p in space.positions] == [("gap", 2)]
    assert space.apply(((0, 1),)) == "one, twothree"


def test_wordnet_excludes_antonyms_and_keeps_case():
    found = WordNetSynonyms().neighbours("Good")
    assert "Bad" not in found and "Evil" not in found
    assert "Honest" in found


def test_wordnet_reduces_an_inflected_word_and_offers_its_lemmas_synonyms_in_its_inflection():
    source = WordNetSynonyms()
    assert {"films", "pictures", "flicks"} <= set(source.neighbours("movies"))  # movie's, plural
    assert "film" not in source.neighbours("movies")
    ran = set(source.neighbours("ran"))  # run's (WordNet's exception list), in the past tense
    assert {"escaped", "drew", "carried"} <= ran and "escape" not in ran and "run" not in ran
    assert {"dearer", "fuller"} <= set(source.neighbours("better"))  # good's, comparative
    assert {"Films", "Pictures"} <= set(source.neighbours("Movies"))
    assert not any(word.startswith("beryllium") for word in source.neighbours("is"))  # be's noun sense: no verb form


def test_vectors_from_text_and_npy_files(tmp_path):
    rows = {"good": [1, 0, 0], "great": [0.9, 0.1, 0], "fine": [0.8, 0.3, 0], "bad": [-1, 0, 0]}
    text = tmp_path / "vectors.txt"
    text.write_text("4 3\n" + "\n".join(f"{w} {' '.join(map(str, v))}" for w, v in rows.items()))
    source = VectorNeighbours(text, top_n=2, min_cosine=0.5)
    assert source.neighbours("good") == ("great", "fine")
    assert source.neighbours("Good") == ("Great", "Fine")
    assert VectorNeighbours(text, top_n=5, min_cosine=0.999).neighbours("good") == ()
    np.save(tmp_path / "m.npy", np.array(list(rows.values()), dtype=np.float32))
    (tmp_path / "vocab.txt").write_text("\n".join(rows))
    assert VectorNeighbours(tmp_path / "m.npy", tmp_path / "vocab.txt", top_n=1).neighbours("good") == ("great",)
    with pytest.raises(RobustcountError, match="vocabulary"):
        VectorNeighbours(tmp_path / "m.npy")


def test_packaged_glove_neighbours():
    assert "movie" in VectorNeighbours(top_n=10).neighbours("film")


def test_neighbour_tables(tmp_path):
    path = tmp_path / "neighbours.json"
    path.write_text(json.dumps({"good": ["fine", "decent", "multi word"]}))
    assert NeighbourTable(path).neighbours("good") == ("fine", "decent")
    path.write_text("[1, 2]")
    with pytest.raises(RobustcountError, match="JSON object"):
        NeighbourTable(path)


def test_same_pos_filter_drops_substitutes_of_another_part_of_speech():
    text = "The movie was good"  # "good" is an adjective here
    loose = build_space(text, ["wordnet"], skip_positions=[0, 1, 2])
    strict = build_space(text, ["wordnet"], skip_positions=[0, 1, 2], same_pos=True)
    assert {"goodness", "thoroughly", "honest"} <= set(loose.positions[0].candidates)
    assert not {"goodness", "thoroughly"} & set(strict.positions[0].candidates)
    assert "honest" in strict.positions[0].candidates


def test_pos_agreement_reads_each_variant_at_its_own_word():
    tokens = tokenize("The film runs long")  # "runs" is a verb here
    variants = [["The", "film", other, "long"] for other in ("movies", "lasts", "pictures")]
    assert same_pos(tokens, 2, variants) == [False, True, False]
    assert same_pos(tokens, 2, variants, noun_verb_compatible=True) == [True, True, True]
    shifted = tokenize("I saw the film today")  # earlier words of another length move the word changed
    assert same_pos(shifted, 3, [["We", "watched", "the", "movie", "today"], ["I", "saw", "the", "quickly", "today"]]) \
        == [True, False]


def test_building_is_deterministic_for_a_seed():
    a = build_space("wonderful narrative", ["inner-shuffle"], seed=3)
    b = build_space("wonderful narrative", ["inner-shuffle"], seed=3)
    c = build_space("wonderful narrative", ["inner-shuffle"], seed=4)
    assert a.digest() == b.digest() != c.digest()


def test_zeroe_stands_for_all_ten_and_unknown_sources_fail():
    assert len(make_source("zeroe")) == 10
    with pytest.raises(RobustcountError, match="unknown source"):
        make_source("thesaurus")
    with pytest.raises(RobustcountError, match="at least one"):
        build_space("text", [])


@pytest.mark.parametrize("text", ["", "  \n ", "!!! ..."])
def test_texts_without_words_give_an_empty_space(text):
    space = build_space(text, ["zeroe", "wordnet"])
    assert space.positions == () and space.count(2) == 1


def test_a_10000_word_text_builds_and_counts():
    space = build_space(" ".join(["good film"] * 5000), ["truncate"])
    assert len(space.positions) == 10_000
    assert space.count(3) == 1 + 10_000 + 10_000 * 9_999 // 2 + 10_000 * 9_999 * 9_998 // 6
