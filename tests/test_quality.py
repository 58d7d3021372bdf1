"""The default synonym source and the measures of a source's quality."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from robustcount.cli import main
from robustcount.spaces.build import DEFAULT_SOURCE, build_space, make_source
from robustcount.spaces.quality import frequent_words, measure_source, read_lexicon
from robustcount.spaces.resources import wordnet_antonyms
from robustcount.spaces.synonyms import CounterFittedSynonyms, NeighbourTable

ROOT = Path(__file__).resolve().parent.parent

# A hand-made table whose measures are known by counting: words good, bad, film, movie, "isn't".
TABLE = {
    "good": ["great", "bad", "fine"],   # bad: a flip (+ vs -) and a WordNet antonym
    "bad": ["awful", "i'm"],            # awful: same sign; "i'm" is one word, not a fragment
    "film": ["movie", "'s"],            # "'s" is a fragment; neither word is in the lexicon
    "dull": [],                         # no neighbours
}
LEXICON = "good\t1.9\nbad\t-2.5\ngreat\t3.1\nawful\t-2.0\nfine\t0.8\nfilm\t0\n"


def test_measures_of_a_hand_made_table_are_exact(tmp_path):
    table = tmp_path / "table.json"
    table.write_text(json.dumps(TABLE))
    lexicon = tmp_path / "lexicon.tsv"
    lexicon.write_text(LEXICON)
    quality = measure_source(NeighbourTable(table), ["Good", "bad", "film", "dull", "good"], read_lexicon(lexicon),
                             sample_size=100, seed=1)
    assert (quality.words, quality.covered, quality.neighbour_pairs) == (4, 3, 7)
    assert quality.neighbours_per_word == 7 / 3 and quality.coverage == 3 / 4
    # lexicon pairs: good-great, good-bad, good-fine, bad-awful (film has score 0, so no sign)
    assert (quality.lexicon_pairs, quality.polarity_flips, quality.flip_share) == (4, 1, 0.25)
    assert quality.flip_examples == (("good", "bad"),)
    assert quality.antonym_pairs == 1
    assert quality.fragments == 1
    assert sorted(quality.sample) == sorted([("good", "great"), ("good", "bad"), ("good", "fine"), ("bad", "awful"),
                                             ("bad", "i'm"), ("film", "movie"), ("film", "'s")])


def test_source_quality_command_prints_the_same_figures(tmp_path, capsys):
    table = tmp_path / "table.json"
    table.write_text(json.dumps(TABLE))
    lexicon = tmp_path / "lexicon.tsv"
    lexicon.write_text(LEXICON)
    data = tmp_path / "texts.csv"
    data.write_text("text,label\ngood film and a bad film,a\nthe dull film,b\n")
    args = ["source-quality", "--source", f"table:{table}", "--data", str(data), "--lexicon", str(lexicon), "--json"]
    assert main(args) == 0
    measured = json.loads(capsys.readouterr().out)
    assert measured["words"] == 4 and measured["texts"] == 2
    (row,) = measured["sources"]
    assert (row["covered"], row["lexicon_pairs"], row["polarity_flips"], row["antonym_pairs"], row["fragments"]) == (
        3, 4, 1, 1, 1)


def test_source_quality_measures_word_sources_only(capsys):
    assert main(["source-quality", "--source", "segment"]) == 2
    assert "segment is not one word source" in capsys.readouterr().err
    assert main(["source-quality", "--source", "zeroe"]) == 2
    assert main(["source-quality", "--source", "truncate", "--words", "20", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["sources"]
    assert row["source"] == "truncate" and row["neighbours_per_word"] == 1.0


def test_frequent_words_skip_stop_words_and_numbers():
    texts = ["The film, the FILM and 42 films.", "A film of films"]
    assert frequent_words(texts, 10, {"the", "and", "a", "of"}) == ["film", "films"]


def test_default_source_is_the_counter_fitted_table():
    (source,) = make_source(DEFAULT_SOURCE)
    assert isinstance(source, CounterFittedSynonyms)
    assert source.definition()["source"] == "synonyms" and len(source.definition()["sha256"]) == 16
    space = build_space("A dull, lazy film.", [DEFAULT_SOURCE])
    film = next(p for p in space.positions if p.candidates[0] == "film")
    assert "movie" in film.candidates


def test_default_table_holds_no_wordnet_antonym_pair():
    table = CounterFittedSynonyms().table
    antonyms = wordnet_antonyms()
    pairs = [(w, n) for w, found in table.items() for n in found
             if n in antonyms.get(w, ()) or w in antonyms.get(n, ())]
    assert pairs == []
    assert not any(n == w for w, found in table.items() for n in found)


def test_raw_glove_needs_its_explicit_name(capsys):
    assert main(["space", "good film", "--source", "vectors"]) == 1
    assert "glove-raw" in capsys.readouterr().err


def test_neighbour_tables_read_gzip_and_cards(tmp_path):
    import gzip

    plain = tmp_path / "t.json.gz"
    plain.write_bytes(gzip.compress(json.dumps({"film": ["movie"]}).encode()))
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"format": "robustcount-neighbours/1", "neighbours": {"Film": ["movie"]}}))
    assert NeighbourTable(plain).neighbours("Film") == ("Movie",)
    assert NeighbourTable(card).neighbours("Film") == ("Movie",)


@pytest.mark.slow
def test_build_script_is_deterministic(tmp_path):
    """Two builds with the same inputs write the same bytes (a small vocabulary keeps it quick)."""
    outputs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.json.gz"
        subprocess.run([sys.executable, str(ROOT / "experiments" / "build_synonym_table.py"), "--out", str(out),
                        "--vocabulary", "3000", "--epochs", "5"], check=True, capture_output=True)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    card = json.loads(__import__("gzip").decompress(outputs[0]))
    assert card["parameters"]["vocabulary"] == 3000 and card["neighbours"]
