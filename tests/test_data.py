import json

import pytest

from robustcount.data import label_index, load_data, load_demo
from robustcount.errors import RobustcountError


def test_csv_tsv_and_jsonl_with_column_options(tmp_path):
    (tmp_path / "a.csv").write_text('review,stars,key\n"good, really",positive,r1\nbad,negative,r2\n')
    examples = load_data(str(tmp_path / "a.csv"), text_column="review", label_column="stars", id_column="key")
    assert [(e.id, e.input, e.label) for e in examples] == [("r1", "good, really", "positive"),
                                                            ("r2", "bad", "negative")]
    (tmp_path / "a.tsv").write_text("text\tlabel\nfine\t1\n")
    assert load_data(str(tmp_path / "a.tsv"))[0].input == "fine"
    (tmp_path / "a.jsonl").write_text(json.dumps({"text": "ok", "label": 0}) + "\n\n")
    assert load_data(str(tmp_path / "a.jsonl"))[0].label == 0


def test_repeated_ids_are_refused(tmp_path):
    """Ids name examples in run files and certificates, so `report` and `verify` refuse a run with
    one id twice: the data is refused before any run."""
    (tmp_path / "a.csv").write_text("text,label,key\ngood,positive,r1\nbad,negative,r2\nfine,positive,r1\n")
    with pytest.raises(RobustcountError, match="rows 1 and 3 have the same id 'r1'"):
        load_data(str(tmp_path / "a.csv"), id_column="key")


def test_premise_column_makes_pairs(tmp_path):
    rows = [{"premise": "A man sleeps.", "hypothesis": "A person rests.", "label": "entailment"}]
    (tmp_path / "nli.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    example = load_data(str(tmp_path / "nli.jsonl"), text_column="hypothesis", premise_column="premise")[0]
    assert example.input == ("A man sleeps.", "A person rests.")


@pytest.mark.parametrize("content, message", [
    (b"", "empty"),
    (b"  \n", "empty"),
    (b"text,label\n", "header but no rows"),
    (b"words,label\nhi,1\n", "no text column 'text'"),
    (b"text,label\ncaf\xe9,1\n", "not valid utf-8 text at byte 14"),
])
def test_bad_csv_files_get_one_line_errors(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(RobustcountError, match=message) as err:
        load_data(str(path))
    assert "\n" not in str(err.value)


def test_other_encodings_can_be_named(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"text,label\ncaf\xe9,1\n")
    assert load_data(str(path), encoding="latin-1")[0].input == "café"


def test_bad_jsonl_lines_are_located(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "a", "label": 1}\n{oops\n')
    with pytest.raises(RobustcountError, match="bad.jsonl:2: not valid JSON"):
        load_data(str(path))


def test_missing_files_and_unknown_formats(tmp_path):
    with pytest.raises(RobustcountError, match="no such file"):
        load_data(str(tmp_path / "nope.csv"))
    (tmp_path / "data.xlsx").write_text("x")
    with pytest.raises(RobustcountError, match="unknown format"):
        load_data(str(tmp_path / "data.xlsx"))


def test_saved_datasets_load_by_split(tmp_path):
    import datasets

    dd = datasets.DatasetDict({"test": datasets.Dataset.from_dict({"sentence": ["fine"], "label": [1]})})
    dd.save_to_disk(str(tmp_path / "saved"))
    with pytest.raises(RobustcountError, match="choose one"):
        load_data(str(tmp_path / "saved"), text_column="sentence")
    with pytest.raises(RobustcountError, match="no split 'dev'"):
        load_data(str(tmp_path / "saved"), text_column="sentence", split="dev")
    example = load_data(str(tmp_path / "saved"), text_column="sentence", split="test")[0]
    assert (example.input, example.label) == ("fine", 1)
    (tmp_path / "plain").mkdir()
    with pytest.raises(RobustcountError, match="not a dataset"):
        load_data(str(tmp_path / "plain"))


def test_demo_split_is_fixed_disjoint_and_complete():
    train, test = load_demo("train"), load_demo("test")
    assert (len(train), len(test)) == (10833, 1975)
    assert not {e.id for e in train} & {e.id for e in test}
    assert {e.label for e in test} == {"negative", "positive"}
    with pytest.raises(RobustcountError, match="unknown demo split"):
        load_demo("dev")


def test_label_index_by_name_case_and_number():
    labels = ("negative", "positive")
    assert label_index("positive", labels) == 1
    assert label_index("Negative", labels) == 0
    assert label_index("1", labels) == 1
    assert label_index(0, labels) == 0
    with pytest.raises(RobustcountError, match="not one of the model's labels"):
        label_index("neutral", labels)
    with pytest.raises(RobustcountError):
        label_index(2, labels)


def test_data_options_are_one_dataspec_checked_when_built_and_recorded_whole():
    from robustcount.cli.training import harden_command
    from robustcount.data import DataSpec

    with pytest.raises(RobustcountError, match="sample must be at least 1, got 0"):
        DataSpec(sample=0)
    spec = DataSpec("demo:test", sample=5)
    examples = spec.load(seed=3)
    assert len(examples) == 5 and examples == spec.load(seed=3) != spec.load(seed=4)
    assert DataSpec.from_header(spec.header()) == spec  # a run header names its data whole
    assert "encoding" not in spec.header() and spec.header()["sample"] == 5
    (data,) = [p for p in harden_command.params if p.name == "data_spec"]
    assert data.default == "demo:train"  # a command may default to another split
