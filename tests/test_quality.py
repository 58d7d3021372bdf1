"""The synonym sources, the measures of a source's quality and the judged sample."""

import gzip
import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import binomtest

from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.spaces.build import build_space, english_stop_words
from robustcount.spaces.judged import PAIR_SOURCES, Key, Proportion, judged_files, read_judgments, read_key
from robustcount.spaces.quality import content_words, measure_source, offered_pairs, read_lexicon
from robustcount.spaces.resources import ASSETS, CONSTRAINTS, curated_antonyms
from robustcount.spaces.sources import make_source
from robustcount.spaces.synonyms import (
    CounterFittedNeighbours,
    NeighbourTable,
    SynonymTable,
    WordNetSynonyms,
    WordVectors,
    packaged_glove,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
JUDGED = DATA / "judged"  # three readers' judgments of six pairs drawn for three sources
READERS = [JUDGED / f"reader_{name}.tsv" for name in "xyz"]


def _experiment(name: str):
    """An experiments/ script as a module (drawing the judged sample is experiment code)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAMPLING = _experiment("sample_pairs_to_judge")
draw_sample, resample, write_blind, write_key = (SAMPLING.draw_sample, SAMPLING.resample, SAMPLING.write_blind,
                                                 SAMPLING.write_key)
JUDGING_RULE = SAMPLING.JUDGING_RULE

# A hand-made table whose measures are known by counting: words good, bad, film, dull, dog.
TABLE = {
    "good": ["great", "bad", "fine"],   # bad: a flip (+ vs -) and a curated antonym
    "bad": ["awful", "i'm"],            # awful: same sign; "i'm" is one word, not a fragment
    "film": ["movie", "'s"],            # "'s" is a fragment; movie: in WordNet, PPDB and COUNTER_FITTED
    "dull": [],                         # no neighbours
    "dog": ["cat"],                     # SimLex-999 rates dog/cat 1.75 of 10: dissimilar
}
COUNTER_FITTED = {"film": ["movie"], "awful": ["bad"]}  # film/movie and bad/awful (listed the other way)
LEXICON = "good\t1.9\nbad\t-2.5\ngreat\t3.1\nawful\t-2.0\nfine\t0.8\nfilm\t0\n"


def test_measures_of_a_hand_made_table_are_exact(tmp_path):
    table = tmp_path / "table.json"
    table.write_text(json.dumps(TABLE))
    lexicon = tmp_path / "lexicon.tsv"
    lexicon.write_text(LEXICON)
    quality = measure_source(NeighbourTable(table), ["Good", "bad", "film", "dull", "good", "dog"],
                             read_lexicon(lexicon), COUNTER_FITTED, sample_size=100, seed=1)
    assert (quality.words, quality.covered, quality.neighbour_pairs) == (5, 4, 8)
    assert quality.neighbours_per_word == 8 / 4 and quality.coverage == 4 / 5
    # lexicon pairs: good-great, good-bad, good-fine, bad-awful (film has score 0, so no sign)
    assert (quality.lexicon_pairs, quality.polarity_flips, quality.flip_share) == (4, 1, 0.25)
    assert quality.flip_examples == (("good", "bad"),)
    assert quality.antonym_pairs == 1
    assert quality.fragments == 1
    assert (quality.in_wordnet, quality.in_ppdb, quality.in_counter_fitted) == (1, 1, 2)
    assert quality.share(quality.in_counter_fitted) == 2 / 8
    assert quality.simlex_offered == 1 and quality.simlex_dissimilar == 319 and quality.simlex_examples == (("dog", "cat"),)
    assert quality.precision is None
    assert sorted(quality.sample) == sorted([("good", "great"), ("good", "bad"), ("good", "fine"), ("bad", "awful"),
                                             ("bad", "i'm"), ("film", "movie"), ("film", "'s"), ("dog", "cat")])


def test_source_quality_command_prints_the_same_figures(tmp_path, capsys):
    table = tmp_path / "table.json"
    table.write_text(json.dumps(TABLE))
    lexicon = tmp_path / "lexicon.tsv"
    lexicon.write_text(LEXICON)
    data = tmp_path / "texts.csv"
    data.write_text("text,label\ngood film and a bad film,a\nthe dull film,b\nthe dog, 2 dog's,c\n")
    args = ["source-quality", "--source", f"table:{table}", "--data", str(data), "--lexicon", str(lexicon), "--json"]
    assert main(args) == 0
    measured = json.loads(capsys.readouterr().out)
    assert measured["words"] == 5 and measured["texts"] == 3  # "dog's" and "2" are no content words
    (row,) = measured["sources"]
    assert (row["covered"], row["lexicon_pairs"], row["polarity_flips"], row["antonym_pairs"], row["fragments"]) == (
        4, 4, 1, 1, 1)
    assert (row["simlex_dissimilar_offered"], row["precision"]) == (1, None)


def test_judged_precision_is_the_majority_of_readers_on_the_source_s_own_sample():
    judgments = read_judgments(READERS, JUDGED / "sources.tsv")
    assert judgments.readers == ("reader_x", "reader_y", "reader_z")
    wordnet, truncate, synonyms = (("wordnet", make_source("wordnet")[0].definition()), ("truncate", {"source": "truncate"}),
                                   ("synonyms", make_source("synonyms")[0].definition()))
    # wordnet's sample: film/movie 3 yes, good/commodity 1 of 3, little/small 2 of 3, story/tale 2 of 3
    assert judgments.precision(*wordnet) == Proportion(3, 4)
    assert [judgments.precision(*wordnet, r) for r in judgments.readers] == [Proportion(3, 4), Proportion(2, 4),
                                                                             Proportion(3, 4)]
    assert judgments.precision(*truncate) == Proportion(1, 2)
    assert judgments.precision(*truncate, "reader_y") == Proportion(0, 2)
    assert judgments.precision(*synonyms) is None  # its definition at judging time is not today's
    # Fleiss' kappa over the five pairs all three judged (yes counts 3, 1, 2, 0, 2): observed agreement
    # 18/30, chance (8/15)^2 + (7/15)^2 = 113/225, kappa (0.6 - 113/225) / (1 - 113/225)
    assert judgments.agreement() == pytest.approx((0.6 - 113 / 225) / (1 - 113 / 225))
    assert read_judgments(READERS[:1], JUDGED / "sources.tsv").agreement() is None


def test_source_quality_reports_judged_precision_with_its_interval(tmp_path, capsys):
    data = tmp_path / "texts.csv"
    data.write_text("text\nA little film, a good story.\n")
    args = ["source-quality", "--source", "wordnet", "--source", "truncate", "--source", "synonyms", "--data",
            str(data), *(a for r in READERS for a in ("--judged", str(r))), "--judged-key", str(JUDGED / "sources.tsv")]
    assert main([*args, "--json"]) == 0
    measured = json.loads(capsys.readouterr().out)
    wordnet, truncate, synonyms = measured["sources"]
    assert (wordnet["precision"]["successes"], wordnet["precision"]["trials"]) == (3, 4)
    assert wordnet["reader_precision"]["reader_y"]["estimate"] == 0.5
    assert (truncate["precision"]["successes"], truncate["precision"]["trials"]) == (1, 2)
    assert synonyms["precision"] is None and measured["readers"] == ["reader_x", "reader_y", "reader_z"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "75.0% [30.1%, 95.4%] of 4" in out and "wordnet reader_x 75.0%, reader_y 50.0%, reader_z 75.0%" in out


def test_wilson_interval_matches_scipy():
    for successes, trials in [(0, 5), (3, 4), (270, 300), (300, 300)]:
        expected = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
        low, high = Proportion(successes, trials).interval
        assert low == pytest.approx(expected.low, abs=1e-12) and high == pytest.approx(expected.high, abs=1e-12)


def test_judgments_that_do_not_match_the_key_are_refused(tmp_path):
    key = JUDGED / "sources.tsv"
    lines = READERS[0].read_text().splitlines()
    for bad, message in [(lines[2].replace("movie", "film"), "not in the key"),
                         (lines[2].replace("yes", "maybe"), "yes or no"),
                         (lines[2] + "\n" + lines[2], "judged twice"),
                         ("p0001\tfilm", "columns")]:
        judged = tmp_path / "judged.tsv"
        judged.write_text("\n".join([*lines[:2], bad]) + "\n")
        with pytest.raises(RobustcountError, match=message):
            read_judgments([judged], key)
    judged = tmp_path / "judged.tsv"
    judged.write_text("word\tneighbour\n")
    with pytest.raises(RobustcountError, match="header"):
        read_judgments([judged], key)


def test_the_blind_sample_is_seeded_deduplicated_and_names_no_source(tmp_path):
    offered = {"a": [("film", "movie"), ("good", "nice"), ("big", "large")], "b": [("film", "movie"), ("dog", "cat")]}
    sample = draw_sample(offered, 2, seed=4)
    assert sample == draw_sample(offered, 2, seed=4)
    assert sum("a" in p.sources for p in sample) == 2 and sum("b" in p.sources for p in sample) == 2
    assert len({(p.word, p.neighbour) for p in sample}) == len(sample)
    assert [p.id for p in sample] == [f"p{i:04d}" for i in range(1, len(sample) + 1)]
    assert {p.sources for p in draw_sample(offered, 10, seed=4) if p.word == "film"} == {("a", "b")}
    write_blind(sample, tmp_path / "blind.tsv")
    write_key(Key(("a test",), {"a": {"source": "a"}, "b": {"source": "b"}}, tuple(sample)), tmp_path / "key.tsv")
    blind = (tmp_path / "blind.tsv").read_text()
    assert "\ta\n" not in blind and "\tb\n" not in blind and blind.splitlines()[2] == "id\tword\tneighbour"
    assert blind.startswith(f"# {JUDGING_RULE}")
    judged = tmp_path / "judged.tsv"
    judged.write_text("id\tword\tneighbour\tjudgment\n" + "".join(
        f"{p.id}\t{p.word}\t{p.neighbour}\t{'yes' if p.word != 'dog' else 'no'}\n" for p in sample))
    judgments = read_judgments([judged], tmp_path / "key.tsv")
    assert judgments.definitions == {"a": {"source": "a"}, "b": {"source": "b"}}
    assert sorted(map(len, judgments.samples.values())) == [2, 2] and judgments.readers == ("judged",)


def test_a_rebuilt_source_is_drawn_again_and_keeps_the_judged_pairs(tmp_path):
    first = draw_sample({"a": [("film", "movie"), ("good", "nice")], "b": [("film", "movie"), ("dog", "cat")]}, 2, seed=0)
    key = Key(("round 1",), {"a": {"source": "a", "v": 1}, "b": {"source": "b"}}, tuple(first))
    fresh = draw_sample({"a": [("film", "movie"), ("big", "large")]}, 2, seed=1)
    again, new = resample(key, fresh, {"a": {"source": "a", "v": 2}}, "round 2")
    ids = {(p.word, p.neighbour): p for p in again.pairs}
    assert ids["film", "movie"].id == next(p.id for p in first if p.word == "film")  # judged once, kept
    assert ids["film", "movie"].sources == ("a", "b") and ids["good", "nice"].sources == ()
    assert ids["dog", "cat"].sources == ("b",) and [(p.id, p.word) for p in new] == [("p0004", "big")]
    assert again.definitions["a"] == {"source": "a", "v": 2} and again.descriptions == ("round 1", "round 2")
    write_key(again, tmp_path / "key.tsv")
    assert read_key(tmp_path / "key.tsv") == again


def test_content_words_are_alphabetic_and_not_stop_words():
    texts = ["The film, the FILM and 42 films.", "A film of films, it's"]
    assert content_words(texts, 10, {"the", "and", "a", "of"}) == ["film", "films"]


def test_packaged_judgments_credit_every_built_in_source():
    """The judged sample was drawn from today's tables (a rebuilt table is not credited with
    another table's judgments), with at least 300 pairs per source."""
    judgments = read_judgments(key=PAIR_SOURCES)
    assert judgments.readers
    for name in ("synonyms", "counter-fitted", "glove-raw"):  # wordnet's sample is of its lemma-only version
        (source,) = make_source(name)
        assert judgments.definitions[name] == source.definition()
        assert judgments.precision(name, source.definition()).trials >= 300
    assert all(path.read_text().startswith("# ") for path in judged_files())  # the judging rule comes first


def test_counter_fitted_source_is_jia_et_al_s_table_with_its_card():
    card = json.loads((ASSETS / "counter_fitted" / "card.json").read_text())
    source = CounterFittedNeighbours()
    assert source.definition() == {"source": "counter-fitted", "table": "counter_fitted/counterfitted_neighbors.json.gz",
                                   "sha256": card["original_sha256"]}
    assert card["original_sha256"] == "103247143f39bd5dd66850f3a912393392641dbd98093c61e2b24a4cc8a96fb0"
    assert card["origin"]["commit"].startswith("42006fe") and "Robin Jia" in (ASSETS / "counter_fitted" / "LICENSE").read_text()
    assert len(source.table) == card["counts"]["words"] == 49975
    assert sum(map(len, source.table.values())) == card["counts"]["pairs"] and max(map(len, source.table.values())) == 8
    assert source.neighbours("Movie")[:3] == ("Film", "Filmmaking", "Films")
    space = build_space("A dull film.", ["counter-fitted"])
    assert space.definition["sources"][0]["sha256"] == card["original_sha256"]


def test_linguistic_constraints_are_the_files_their_card_names():
    card = json.loads((CONSTRAINTS / "card.json").read_text())
    for name, entry in card["files"].items():
        assert hashlib.sha256(gzip.decompress((CONSTRAINTS / name).read_bytes())).hexdigest() == entry["original_sha256"]
    assert "Apache License" in (CONSTRAINTS / card["repository_licence"]["text"]).read_text()


def test_synonym_table_pairs_are_close_curated_and_keep_the_inflection():
    table = SynonymTable().table
    close = CounterFittedNeighbours().table
    antonyms, stop = curated_antonyms(), set(english_stop_words())
    glove = WordVectors.load(*packaged_glove())
    for word, found in table.items():
        assert found and word not in stop and word not in found
        for other in found:
            assert other in close.get(word, []) or word in close.get(other, []), (word, other)
            assert other not in antonyms.get(word, ()) and other not in stop, (word, other)
            assert glove.matrix[glove.index[word]] @ glove.matrix[glove.index[other]] >= 0.4, (word, other)
        listed = [other for other in found if other in close.get(word, [])]
        assert found[:len(listed)] == sorted(listed, key=close[word].index)  # nearest first
    assert table["films"] == ["movies"] and "movies" not in table["film"]  # WordNet's film/movie, inflected
    assert table["little"] == ["small"] and "title" not in table
    assert not {"cat", "puppy"} & set(table["dog"]) and "son" not in table and "constitute" not in table["given"]


def test_synonym_table_definition_records_its_digest():
    (source,) = make_source("synonyms")
    assert isinstance(source, SynonymTable)
    definition = source.definition()
    assert definition["source"] == "synonyms" and definition["table"] == "synonyms_table.json.gz"
    card = json.loads((ASSETS / "synonyms_table.card.json").read_text())
    assert {"counter_fitted", "wordnet", "ppdb_and_wordnet3_antonyms", "inflection"} <= set(card["inputs"])
    assert card["counts"]["table_pairs"] == sum(map(len, source.table.values()))
    assert definition["sha256"] == hashlib.sha256(gzip.decompress((ASSETS / "synonyms_table.json.gz").read_bytes())).hexdigest()


def test_wordnet_source_leaves_out_antonyms():
    assert "bad" not in WordNetSynonyms().neighbours("good")
    assert offered_pairs(WordNetSynonyms(), ["Film"])[0][0] == "film"


def test_raw_glove_needs_its_explicit_name(capsys):
    assert main(["space", "good film", "--source", "vectors"]) == 1
    assert "glove-raw" in capsys.readouterr().err


def test_neighbour_tables_read_gzip_and_cards(tmp_path):
    plain = tmp_path / "t.json.gz"
    plain.write_bytes(gzip.compress(json.dumps({"film": ["movie"]}).encode()))
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"format": "robustcount-neighbours/1", "neighbours": {"Film": ["movie"]}}))
    assert NeighbourTable(plain).neighbours("Film") == ("Movie",)
    assert NeighbourTable(card).neighbours("Film") == ("Movie",)


def test_source_quality_measures_word_sources_only(capsys):
    assert main(["source-quality", "--source", "segment"]) == 2
    assert "segment is not one word source" in capsys.readouterr().err
    assert main(["source-quality", "--source", "zeroe"]) == 2


@pytest.mark.slow
def test_build_script_is_deterministic(tmp_path):
    """Two builds with the same inputs write the same bytes (a few words keep it quick), and the
    card beside the table is the table's own."""
    outputs = []
    for name in ("a", "b"):
        out = tmp_path / name / "synonyms_table.json.gz"
        subprocess.run([sys.executable, str(ROOT / "experiments" / "build_synonym_table.py"), "--out", str(out),
                        "--words", "2000"], check=True, capture_output=True)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    built = json.loads(gzip.decompress(outputs[0]))
    neighbours = built.pop("neighbours")
    assert neighbours and built == json.loads((tmp_path / "a" / "synonyms_table.card.json").read_text())
    assert built["counts"]["candidate_words"] == 2000
    shipped = SynonymTable().table  # the same rules as the shipped table, on its first 2,000 words
    assert all(shipped.get(word) == found for word, found in neighbours.items())
