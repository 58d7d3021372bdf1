"""The built-in models: what `robustcount models` says of them holds, their shipped weights load
without pickle and reproduce their cards, and the fine-tuned transformer saves as a checkpoint
that loads like any user's."""

import json
import random

import pytest

from robustcount.cli import main
from robustcount.data import DEMO_LABELS, load_demo
from robustcount.models.engine import QueryEngine
from robustcount.models.families import ASSETS
from robustcount.orders import word_sensitivities
from robustcount.models.transformers_adapter import load_transformers
from robustcount.models.zoo import MODELS, load_model



def test_models_describes_every_built_in_model(capsys):
    assert main(["models", "--json"]) == 0
    described = {d["name"]: d for d in json.loads(capsys.readouterr().out)}
    assert list(described) == list(MODELS)
    for d in described.values():
        assert d["family"] and d["size"] and d["weights"] and d["box"] in ("white", "black")
        assert 0.5 < d["demo_test_accuracy"] < 1
    assert described["minilm-rt-ft"]["demo_test_accuracy"] >= 0.78
    assert described["cnn-rt"]["demo_test_accuracy"] >= 0.70 and described["lstm-rt"]["demo_test_accuracy"] >= 0.70
    assert [n for n, d in described.items() if d["box"] == "white"] == ["minilm-rt", "minilm-rt-ft", "cnn-rt",
                                                                       "lstm-rt", "bow-rt", "smollm2"]


def test_shipped_weights_are_safetensors_only():
    kinds = {p.suffix for p in ASSETS.iterdir()}
    assert not kinds & {".bin", ".pt", ".pth", ".pkl", ".pickle", ".joblib", ".npy"}
    assert sum(p.stat().st_size for p in ASSETS.glob("minilm_rt_ft*")) < 5_000_000


@pytest.mark.parametrize("name", ["cnn-rt", "lstm-rt"])
def test_the_word_networks_reproduce_their_card_predictions_whatever_the_batches(name):
    """The card was written from batches in file order; the engine sorts by length: the same labels."""
    card = json.loads((ASSETS / f"{name.replace('-', '_')}_card.json").read_text())
    model = load_model(name, device="cpu")
    inputs = [e.input for e in load_demo("test")]
    in_file_order = "".join(str(int(p)) for p in model.predict_proba(inputs).argmax(axis=1))
    sorted_by_length = "".join(str(int(p)) for p in QueryEngine(model).predict(inputs))
    assert in_file_order == sorted_by_length == card["test_predictions"]


@pytest.mark.parametrize("name", ["cnn-rt", "lstm-rt", "bow-rt", "tfidf-rt", "vader"])
def test_cheap_models_reproduce_their_documented_accuracy(capsys, name):
    assert main(["evaluate", "--model", name, "--json"]) == 0
    assert round(json.loads(capsys.readouterr().out)["accuracy"], 4) == MODELS[name].test_accuracy()


def test_the_fine_tuned_transformer_reproduces_its_card_on_a_sample():
    card = json.loads((ASSETS / "minilm_rt_ft_card.json").read_text())
    test = load_demo("test")
    chosen = sorted(random.Random(0).sample(range(len(test)), 150))
    model = load_model("minilm-rt-ft", device="cpu")
    predicted = model.predict_proba([test[i].input for i in chosen]).argmax(axis=1)
    assert "".join(str(int(p)) for p in predicted) == "".join(card["test_predictions"][i] for i in chosen)
    assert card["test_accuracy"] == round(sum(DEMO_LABELS[int(p)] == e.label
                                              for p, e in zip(card["test_predictions"], test)) / len(test), 4)


@pytest.mark.parametrize("name", ["minilm-rt-ft", "cnn-rt", "lstm-rt"])
def test_white_box_gradients_rank_the_words(name):
    engine = QueryEngine(load_model(name, device="cpu"))
    scores = word_sensitivities(engine, "a wonderful and moving film", 1, method="gradient")
    assert scores.shape == (5,) and (scores >= 0).all() and scores.max() > 0
    assert engine.total.gradient_calls == 1


def test_save_model_writes_a_checkpoint_that_loads_like_any_other(capsys, tmp_path):
    directory = tmp_path / "minilm-rt-ft"
    assert main(["save-model", "minilm-rt-ft", str(directory)]) == 0
    assert (directory / "model.safetensors").is_file() and not list(directory.glob("*.bin"))
    saved, built_in = load_transformers(str(directory), device="cpu"), load_model("minilm-rt-ft", device="cpu")
    assert saved.labels == built_in.labels == DEMO_LABELS and saved.digest() == built_in.digest()
    texts = ["a wonderful and moving film", "a dull, lifeless mess"]
    assert (saved.predict_proba(texts) == built_in.predict_proba(texts)).all()
    pair = [("The film was shown twice.", "It was wonderful.")]  # premise, hypothesis
    assert saved.predict_proba(pair).shape == (1, 2)
    assert main(["save-model", "minilm-rt-ft", str(directory)]) == 1  # never over a checkpoint
    assert main(["save-model", "bow-rt", str(tmp_path / "other")]) == 1
    assert "not a built-in model that saves as a checkpoint" in capsys.readouterr().err
