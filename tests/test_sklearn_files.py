"""`--model PATH.skops` and `--model PATH.joblib`: a scikit-learn pipeline saved in a file, run
with no module of the user's, identified by its canonical digest, its certificates verified in a
fresh process; a pickle only with --trust-remote-code; bad files refused in one line."""

import json
import subprocess
import sys

import joblib
import pytest
import skops.io as sio
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from robustcount.cli import main
from robustcount.data import load_demo
from robustcount.models.sklearn_digest import estimator_digest
from robustcount.runs import read_run


def lower_case(texts):
    """A function of this module: a type skops does not trust."""
    return [text.lower() for text in texts]


@pytest.fixture(scope="module")
def pipeline():
    """TF-IDF and logistic regression fitted on a few demo texts."""
    train = load_demo("train")[:300]
    return make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000)).fit(
        [e.input for e in train], [e.label for e in train])


@pytest.fixture
def saved(pipeline, tmp_path):
    """The pipeline saved with skops and with joblib."""
    skops_file, joblib_file = tmp_path / "model.skops", tmp_path / "model.joblib"
    sio.dump(pipeline, skops_file)
    joblib.dump(pipeline, joblib_file)
    return skops_file, joblib_file


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def test_both_files_evaluate_as_the_same_model(capsys, saved, pipeline, tmp_path):
    skops_file, joblib_file = saved
    headers = []
    for path, trust in ((skops_file, []), (joblib_file, ["--trust-remote-code"])):
        out = tmp_path / f"{path.suffix[1:]}.jsonl"
        assert main(["evaluate", "--model", str(path), *trust, "--sample", "20", "--output", str(out), "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["examples"] == 20 and 0 <= summary["accuracy"] <= 1
        headers.append(read_run(out).header["models"][0])
    for header in headers:
        assert header["labels"] == list(pipeline.classes_)  # the estimator's classes_
        assert header["digest"] == estimator_digest(pipeline)  # its canonical digest, whichever file


def test_certificates_verify_in_a_fresh_process(capsys, saved, tmp_path):
    skops_file, joblib_file = saved
    out = tmp_path / "certify.jsonl"
    assert main(["certify", "--model", str(skops_file), "--sample", "6", "--radius", "1", "--output", str(out)]) == 0
    certificates = sum(len(r.get("certificates", [])) for r in read_run(out).records)
    assert certificates
    done = subprocess.run([sys.executable, "-m", "robustcount", "verify", str(out), "--model", str(skops_file)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"all {certificates} certificates hold" in done.stdout
    capsys.readouterr()  # the pickle of the same pipeline is the same model to verify
    assert main(["verify", str(out), "--model", str(joblib_file), "--trust-remote-code"]) == 0
    assert f"all {certificates} certificates hold" in capsys.readouterr().out


def test_a_pickle_loads_only_when_trusted(capsys, saved):
    assert main(["evaluate", "--model", str(saved[1]), "--sample", "2"]) == 1
    err = error_line(capsys)
    assert "a joblib file is a pickle, which runs code when it is loaded; give --trust-remote-code" in err


def test_types_skops_does_not_trust_are_refused_unless_trusted(capsys, tmp_path):
    train = load_demo("train")[:100]
    lowered = make_pipeline(FunctionTransformer(lower_case), TfidfVectorizer(), LogisticRegression()).fit(
        [e.input for e in train], [e.label for e in train])
    path = tmp_path / "lowered.skops"
    sio.dump(lowered, path)
    assert main(["evaluate", "--model", str(path), "--sample", "2"]) == 1
    err = error_line(capsys)
    assert f"{__name__}.lower_case" in err and "unless you trust them (--trust-remote-code)" in err
    assert main(["evaluate", "--model", str(path), "--sample", "2", "--trust-remote-code", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["examples"] == 2


@pytest.mark.parametrize("name", ["model.skops", "model.joblib", "missing.skops"])
def test_a_bad_file_is_one_line(capsys, saved, tmp_path, name):
    path = tmp_path / name
    if name.startswith("model"):
        path.write_bytes(path.read_bytes()[:200] + b"\x00 damaged")
    assert main(["evaluate", "--model", str(path), "--sample", "2", "--trust-remote-code"]) == 1
    err = error_line(capsys)
    assert err.startswith(f"robustcount: error: {path}: ")
    assert ("no such model file" if name.startswith("missing") else "not a readable") in err
