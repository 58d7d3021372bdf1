"""A model's identity (its digest) is the same in every process, so that certificates verify and
runs resume in a fresh process; and it changes with anything the model computes from."""

import copy
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.models.sklearn_adapter import SklearnClassifier
from robustcount.models.sklearn_digest import estimator_digest
from tests.factories import stop_word_list_pipeline

ROOT = Path(__file__).parents[1]
USER_PIPELINES = ["py:tests.factories:english_stop_words_pipeline", "py:tests.factories:stop_word_list_pipeline"]
DIGESTS = ("import json, sys\n"
           "from robustcount.models.engine import QueryEngine\n"
           "from robustcount.models.zoo import load_model\n"
           "print(json.dumps([QueryEngine(load_model(spec, device='cpu')).digest() for spec in sys.argv[1:]]))")


def digests_in_a_fresh_process(specs: list[str], hash_seed: int) -> list[str]:
    done = subprocess.run([sys.executable, "-c", DIGESTS, *specs], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONHASHSEED": str(hash_seed)}, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def robustcount_process(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "robustcount"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


@pytest.mark.slow
def test_every_adapter_gives_the_same_digest_in_two_fresh_processes(tiny_bert_dir):
    # scikit-learn (the zoo's and users' pipelines), torch, a function (code and answers), transformers
    specs = ["tfidf-rt", *USER_PIPELINES, "bow-rt", "py:tests.factories:keyword_model", str(tiny_bert_dir)]
    first, second = digests_in_a_fresh_process(specs, 1), digests_in_a_fresh_process(specs, 2)
    assert first == second
    assert all(first) and len(set(first)) == len(specs)


def test_the_sklearn_digest_follows_the_fitted_model_not_the_objects():
    pipeline = stop_word_list_pipeline()
    digest = estimator_digest(pipeline)
    assert estimator_digest(stop_word_list_pipeline()) == digest  # fitted again, with a stop-word list of its own
    assert estimator_digest(copy.deepcopy(pipeline)) == digest
    vectorizer, regression = pipeline.steps[0][1], pipeline.steps[1][1]

    def edited(step, edit) -> str:
        changed = copy.deepcopy(pipeline)
        edit(changed.steps[step][1])
        return estimator_digest(changed)

    changes = [
        edited(1, lambda lr: lr.coef_.__setitem__((0, 0), lr.coef_[0, 0] + 1e-12)),  # a weight
        edited(0, lambda tf: tf._tfidf.idf_.__setitem__(0, tf._tfidf.idf_[0] * 2)),  # an idf, held privately
        edited(0, lambda tf: tf.vocabulary_.__setitem__("film", len(tf.vocabulary_))),  # the vocabulary
        edited(0, lambda tf: tf.set_params(stop_words=[*tf.stop_words, "film"])),  # the stop words
        edited(1, lambda lr: lr.set_params(C=2.0)),  # a parameter
        edited(1, lambda lr: setattr(lr, "classes_", lr.classes_[::-1].copy())),  # the labels' order
    ]
    assert len({digest, *changes}) == len(changes) + 1
    assert vectorizer.vocabulary_ and regression.coef_.shape[0] == 1


def test_sets_and_object_arrays_are_digested_by_content():
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression().fit(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array(["b", "a", "b", "a"], dtype=object))
    other = copy.deepcopy(model)
    other.classes_ = np.array(["".join(list(c)) for c in model.classes_], dtype=object)  # other str objects
    model.seen_ = {"x", "y", "z"}
    other.seen_ = {"z", "y", "x"}
    assert estimator_digest(model) == estimator_digest(other)
    other.seen_ = {"x", "y"}
    assert estimator_digest(model) != estimator_digest(other)


def test_an_estimator_that_refers_to_itself_is_refused_in_one_line():
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression().fit(np.array([[0.0], [1.0]]), [0, 1])
    model.itself_ = model
    with pytest.raises(RobustcountError, match="it refers to itself") as err:
        estimator_digest(model, "py:mine:model")
    assert "\n" not in str(err.value)


def test_what_has_no_canonical_digest_is_refused_in_one_line():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    class Splitter:
        def __call__(self, text):
            return text.split()

    typed = {"__name__": "typed"}
    exec(compile("def split(text):\n    return text.split()\n", "<typed>", "exec"), typed)  # as at a prompt
    refused = {
        eval("lambda text: text.split()"): "whose source cannot be read",  # noqa: S307 (code with no source)
        typed["split"]: "whose source cannot be read",
        Splitter(): "neither a function nor named by its module",
    }
    for tokenizer, reason in refused.items():
        fitted = make_pipeline(CountVectorizer(tokenizer=tokenizer, token_pattern=None), LogisticRegression())
        fitted.fit(["good film", "bad film"], ["positive", "negative"])
        with pytest.raises(RobustcountError, match=reason) as err:
            SklearnClassifier(fitted, name="py:mine:model").digest()
        assert str(err.value).startswith("py:mine:model: cannot identify the model across processes: "
                                         "estimator.steps[0][1].tokenizer is ") and "\n" not in str(err.value)
    locked = make_pipeline(CountVectorizer(), LogisticRegression()).fit(["good", "bad"], ["positive", "negative"])
    locked.steps[1][1].lock_ = threading.Lock()
    with pytest.raises(RobustcountError, match=r"estimator.steps\[1\]\[1\].lock_ is a _thread.lock"):
        estimator_digest(locked)


def split_words(text):
    return text.split()


def split_lower_words(text):
    return text.lower().split()


def test_functions_of_a_module_are_digested_by_their_source():
    from sklearn.feature_extraction.text import CountVectorizer

    def vectorizer(tokenizer):
        return CountVectorizer(tokenizer=tokenizer, token_pattern=None).fit(["good film", "bad film"])

    assert estimator_digest(vectorizer(split_words)) == estimator_digest(vectorizer(split_words))
    # two functions of one module: the same module source, not the same function source
    assert estimator_digest(vectorizer(split_words)) != estimator_digest(vectorizer(split_lower_words))
    assert estimator_digest(vectorizer(str.split)) == estimator_digest(vectorizer(str.split))  # a builtin, by name


@pytest.mark.slow
@pytest.mark.parametrize("model", ["tfidf-rt", USER_PIPELINES[0]])
def test_a_certified_sklearn_run_verifies_and_resumes_in_a_fresh_process(capsys, tmp_path, model):
    run = tmp_path / "certify.jsonl"
    args = ["certify", "--model", model, "--sample", "4", "--radius", "1", "--output", str(run)]
    assert main(args) == 0, capsys.readouterr().err
    certificates = sum(len(json.loads(line).get("certificates", ())) for line in run.read_text().splitlines()[1:])
    assert certificates
    done = robustcount_process("verify", str(run), *(["--model", model] if model.startswith("py:") else []))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"all {certificates} certificates hold" in done.stdout
    whole = run.read_bytes()
    run.write_bytes(b"".join(whole.splitlines(keepends=True)[:3]))  # the header and two examples: a killed run
    done = robustcount_process(*args, "--resume")
    assert done.returncode == 0, done.stderr
    assert run.read_bytes() == whole
