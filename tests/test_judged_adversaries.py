"""The judged set of adversaries: joining the readers' judgments, reading it, and the in-context
validity and text coverage `source-quality` reports."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.models.context_models import context_models
from robustcount.spaces.build import Filters, SpaceBuilder, english_stop_words
from robustcount.spaces.judged_adversaries import JudgedAdversary, JudgedSet, read_judged_set
from robustcount.spaces.quality import text_coverage

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "data" / "judged_adversaries"  # one reader: the test's author


def join(tmp_path, judgments: Path = FIXTURE / "judgments.jsonl") -> tuple[Path, str]:
    out = tmp_path / "judged.jsonl"
    done = subprocess.run([sys.executable, str(ROOT / "experiments" / "join_judged_adversaries.py"), "--dir",
                           str(FIXTURE), "--judgments", str(judgments), "--out", str(out),
                           "--judged-by", "the fixture's author, a language model (tests only)"],
                          capture_output=True, text=True, check=True)
    return out, done.stdout


def counts(validity: dict) -> dict:
    return {name: None if p is None else (p.successes, p.trials) for name, p in validity.items()}


def test_the_join_takes_the_majority_and_leaves_unjudged_items_out(tmp_path):
    out, said = join(tmp_path)
    assert "9 adversary lines by 1 readers" in said and "1 items unjudged" in said
    judged = read_judged_set(out)
    assert judged.readers == ("fixture-author",) and "language model" in judged.judged_by
    assert "would still give it the original label" in judged.rule
    assert counts(judged.validity("counter-fitted")) == {"1": (1, 1), "2": (1, 2), "3+": (0, 1), "all": (2, 4)}
    assert counts(judged.validity("wordnet", "lstm-rt")) == {"1": (1, 2), "2": (2, 3), "3+": None, "all": (3, 5)}
    assert counts(judged.validity("wordnet", "cnn-rt"))["all"] is None
    second = tmp_path / "two_readers.jsonl"  # a second reader disagrees on a0002 and a0007: ties are invalid
    second.write_text((FIXTURE / "judgments.jsonl").read_text() + "".join(
        json.dumps({"id": i, "valid": False, "reader": "other"}) + "\n" for i in ("a0002", "a0007")))
    out, _ = join(tmp_path, second)
    tied = read_judged_set(out)
    assert counts(tied.validity("counter-fitted"))["1"] == (0, 1) and counts(tied.validity("wordnet"))["2"] == (1, 3)
    assert next(a for a in tied.adversaries if a.id == "a0002").votes == {"fixture-author": True, "other": False}


def test_the_join_refuses_a_judgment_twice_and_unknown_items(tmp_path):
    for extra, said in (({"id": "a0001", "valid": True, "reader": "fixture-author"}, "judged a0001 twice"),
                        ({"id": "a9999", "valid": True, "reader": "x"}, "not in the key"),
                        ({"id": "a0010", "valid": "yes", "reader": "x"}, "valid true or false")):
        judgments = tmp_path / "judgments.jsonl"
        judgments.write_text((FIXTURE / "judgments.jsonl").read_text() + json.dumps(extra) + "\n")
        with pytest.raises(subprocess.CalledProcessError) as failed:
            join(tmp_path, judgments)
        assert said in failed.value.stderr


def test_source_quality_reports_in_context_validity_of_the_spaces_of_its_sources(tmp_path, capsys):
    out, _ = join(tmp_path)
    data = tmp_path / "texts.csv"
    data.write_text("text\nA gentle and engrossing character study.\n")
    args = ["source-quality", "--source", "counter-fitted", "--source", "wordnet", "--source", "synonyms",
            "--data", str(data), "--judged-adversaries", str(out)]
    assert main([*args, "--json"]) == 0
    measured = json.loads(capsys.readouterr().out)
    counter_fitted, wordnet, synonyms = (s["in_context_validity"] for s in measured["sources"])
    assert set(counter_fitted) == {"counter-fitted"} and set(wordnet) == {"wordnet"} and synonyms == {}
    assert set(wordnet["wordnet"]) == {"all models", "lstm-rt"}
    cell = wordnet["wordnet"]["all models"]["2"]
    assert (cell["successes"], cell["trials"]) == (2, 3) and cell["low"] < 2 / 3 < cell["high"]
    assert measured["judged_adversaries"]["readers"] == ["fixture-author"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "in-context validity" in text and "66.7% [20.8%, 93.9%] of 3" in text  # Wilson, as scipy gives it
    header, *rows = out.read_text().splitlines()
    changed = json.loads(header)
    changed["spaces"]["wordnet"]["sources"][0]["lexicon"] = "another lexicon"
    out.write_text("\n".join([json.dumps(changed), *rows]) + "\n")
    assert main([*args, "--json"]) == 0  # a source defined otherwise now is not credited with those judgments
    assert json.loads(capsys.readouterr().out)["sources"][1]["in_context_validity"] == {}


def test_a_bad_judged_set_is_refused_in_one_line(tmp_path, capsys):
    out, _ = join(tmp_path)
    header, first, *rest = out.read_text().splitlines()
    out.write_text("\n".join([header, first.replace('"valid": false', '"valid": "no"'), *rest]) + "\n")
    with pytest.raises(RobustcountError, match="judged.jsonl:2: valid must be a bool"):
        read_judged_set(out)
    assert main(["source-quality", "--source", "wordnet", "--texts", "1", "--judged-adversaries", str(out)]) == 1
    assert "valid must be a bool" in capsys.readouterr().err
    out.write_text('{"record": "example"}\n')
    with pytest.raises(RobustcountError, match="not a judged set"):
        read_judged_set(out)


def test_text_coverage_of_a_hand_made_table_is_exact(tmp_path, capsys):
    table = tmp_path / "table.json"
    table.write_text(json.dumps({"good": ["great", "fine"], "film": ["movie"], "the": ["a"]}))
    texts = ["The good film was good.", "A dull ending."]
    coverage = text_coverage(SpaceBuilder([f"table:{table}"]), texts, english_stop_words())
    # content words: good, film, good, dull, ending (the, was, a are stop words); 3 have candidates.
    # changeable: The (1), good (2), film (1), good (2): 6 candidates. Text 1's |Omega_r|: 1 + 6 = 7,
    # + 1*2 + 1*1 + 1*2 + 2*1 + 2*2 + 1*2 = 20, + 2 + 4 + 2 + 4 = 32; text 2's: 1 at every radius.
    assert (coverage.content_words, coverage.covered, coverage.changeable, coverage.candidates) == (5, 3, 4, 6)
    assert coverage.content_share == 0.6 and coverage.candidates_per_word == 1.5
    assert coverage.median_sizes == {1: 4.0, 2: 10.5, 3: 16.5}
    data = tmp_path / "texts.csv"
    data.write_text("text\n" + "\n".join(texts) + "\n")
    assert main(["source-quality", "--source", f"table:{table}", "--data", str(data), "--json"]) == 0
    measured = json.loads(capsys.readouterr().out)["sources"][0]["text_coverage"]
    assert measured == {**coverage.as_dict(), "median_sizes": {"1": 4.0, "2": 10.5, "3": 16.5}}
    assert main(["source-quality", "--source", f"table:{table}", "--data", str(data), "--sample", "1", "--seed",
                 "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["texts"] == 1
    assert main(["source-quality", "--source", f"table:{table}", "--data", str(data), "--coverage-texts", "1",
                 "--json"]) == 0  # coverage counted on a seeded sample of one text of the two
    measured = json.loads(capsys.readouterr().out)
    assert measured["texts"] == 2 and measured["sources"][0]["text_coverage"]["texts"] == 1


def test_an_adversary_several_models_found_counts_once_over_all_models():
    def found(model, valid=True, item="a1"):
        return JudgedAdversary(item, "a good film", "a fine film", "positive", 1, "synonyms", model, valid, {})

    judged = JudgedSet(Path("x"), "rule", "nobody", (), {"synonyms": {}},
                       (found("lstm-rt"), found("cnn-rt"), found("cnn-rt", False, "a2")))
    assert counts(judged.validity("synonyms")) == {"1": (1, 2), "2": None, "3+": None, "all": (1, 2)}
    assert counts(judged.validity("synonyms", "cnn-rt"))["all"] == (1, 2)


def test_source_quality_measures_the_space_its_sources_give_together_under_its_filters(tmp_path, capsys):
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps({"good": ["great", "fine"], "film": ["movie"]}))
    second.write_text(json.dumps({"good": ["nice", "great"], "ending": ["finale"]}))
    data = tmp_path / "texts.csv"
    data.write_text("text\nThe good film was good.\nA dull ending.\n")
    args = ["source-quality", "--source", f"table:{first}", "--source", f"table:{second}", "--data", str(data), "--json"]
    assert main(args) == 0
    alone = json.loads(capsys.readouterr().out)
    assert "space" not in alone  # without --space or a filter, the output is as before
    assert main([*args, "--space"]) == 0
    together = json.loads(capsys.readouterr().out)
    assert together["sources"] == alone["sources"]
    # the union: good -> great, fine, nice (3); film -> movie; ending -> finale. Content words: good, film, good,
    # dull, ending, 4 with a candidate; 8 candidates over 4 changeable words. |Omega_r| of the first text: 1 + 7 = 8,
    # + 3*1 + 3*3 + 1*3 = 23, + 3*1*3 = 32; of the second: 2 at every radius.
    coverage = together["space"]["text_coverage"]
    assert (coverage["content_share"], coverage["candidates_per_changeable_word"]) == (0.8, 2.0)
    assert coverage["median_sizes"] == {"1": 5.0, "2": 12.5, "3": 17.0}
    assert together["space"]["name"] == "table + table" and together["space"]["in_context_validity"] == {}
    assert main([*args, "--min-length", "5"]) == 0  # a filter implies --space: only "ending" is long enough (|Omega_1| 1, 2)
    narrowed = json.loads(capsys.readouterr().out)["space"]
    assert narrowed["name"] == "table + table (--min-length 5)"
    assert narrowed["text_coverage"]["content_share"] == 0.2 and narrowed["text_coverage"]["median_sizes"]["1"] == 1.5
    assert main([*args, "--context-lm-min", "nan"]) == 1  # a bad filter: one line, before any work
    assert "--context-lm-min must be a finite number" in capsys.readouterr().err
    assert main([*args[:-1], "--space"]) == 0
    printed = capsys.readouterr().out
    assert "then the space of the sources together (--space)" in printed
    row = next(line for line in printed.splitlines() if line.startswith("table + table "))
    assert row.split()[3:8] == ["80.0%", "of", "5", "2.0000", "5"], row


def test_source_quality_gives_the_in_context_validity_of_the_judged_space_defined_as_its_space(tmp_path, capsys):
    out, _ = join(tmp_path)
    data = tmp_path / "texts.csv"
    data.write_text("text\nA gentle and engrossing character study.\n")
    args = ["source-quality", "--source", "wordnet", "--data", str(data), "--judged-adversaries", str(out), "--json"]
    assert main([*args, "--space"]) == 0
    space = json.loads(capsys.readouterr().out)["space"]
    assert space["name"] == "wordnet" and set(space["in_context_validity"]) == {"wordnet"}
    assert space["in_context_validity"]["wordnet"]["lstm-rt"]["all"]["trials"] == 5
    assert main([*args, "--same-pos"]) == 0  # another space: no judged adversary was found in it
    assert json.loads(capsys.readouterr().out)["space"]["in_context_validity"] == {}


def test_source_quality_measures_a_contextual_space_as_its_builder_builds_it(tmp_path, capsys):
    texts = ["a wonderful and moving film about Adam Sandler", "the script is clever and the cast is fine"]
    data = tmp_path / "texts.csv"
    data.write_text("text\n" + "\n".join(texts) + "\n")
    assert main(["source-quality", "--source", "synonyms", "--source", "wordnet", "--data", str(data), "--keep-names",
                 "--context-lm-min", "-4", "--context-similarity-min", "0.85", "--pairs", "0", "--json"]) == 0
    space = json.loads(capsys.readouterr().out)["space"]
    filters = Filters(keep_names=True, context_lm_min=-4, context_similarity_min=0.85)
    builder = SpaceBuilder(["synonyms", "wordnet"], filters, context=context_models())
    assert space["text_coverage"] == json.loads(json.dumps(text_coverage(builder, texts, english_stop_words()).as_dict()))
    assert space["definition"]["context"]["lm"]["name"] == "smollm2-135m"
    wide = text_coverage(SpaceBuilder(["synonyms", "wordnet"]), texts, english_stop_words())
    assert space["text_coverage"]["candidates_per_changeable_word"] < wide.candidates_per_word  # the filters narrow it
