"""`harden` and the model directories it writes: reloadable, reproducing their reported accuracy
exactly, deterministic, and resumable to the same bytes."""

import json

import pytest
import torch
from safetensors.torch import load_file

from robustcount.cli import main
from robustcount.data import DEMO_LABELS, Example, load_demo
from robustcount.errors import RobustcountError
from robustcount.models.model_dir import CARD_FILE, WEIGHTS_FILE
from robustcount.models.zoo import load_model
from robustcount.runs import read_run
from robustcount.training import FamilyTraining, HardenSpec, Sitting, TrainingCopies, harden
from robustcount.training.copies import ZeroeCopies
from robustcount.training.harden import ADVERSARIES, WORK, training_labels


def sample(n: int, seed: int = 0):
    import random

    train = load_demo("train")
    return [train[i] for i in sorted(random.Random(seed).sample(range(len(train)), n))]


DATA = {"spec": "demo:train", "sample": "test"}


def test_a_hardened_network_reloads_and_reproduces_its_demo_test_accuracy(capsys, tmp_path):
    out = tmp_path / "hardened"
    assert main(["harden", "--family", "word-cnn", "--sample", "300", "--epochs", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    card = json.loads((out / CARD_FILE).read_text())
    assert f"demo:test accuracy {card['demo_test']['test_accuracy']:.4f}" in printed
    assert card["training"]["trained_on"] == 600 and card["training"]["copies_made"] == 300
    assert card["provenance"]["command"].startswith("robustcount") and not (out / WORK).exists()
    model = load_model(str(out), device="cpu")
    test = load_demo("test")
    predicted = model.predict_proba([e.input for e in test]).argmax(axis=1)
    assert "".join(map(str, predicted)) == card["demo_test"]["test_predictions"]
    assert main(["evaluate", "--model", str(out), "--json"]) == 0
    assert round(json.loads(capsys.readouterr().out)["accuracy"], 4) == card["demo_test"]["test_accuracy"]


def test_an_interrupted_training_resumes_to_the_same_bytes(tmp_path):
    examples = sample(200)
    spec = HardenSpec(FamilyTraining("word-lstm"), epochs=3,
                      copies=TrainingCopies(settings=ZeroeCopies(("truncate", "keyboard"))))
    harden(spec, examples, DATA, tmp_path / "whole", Sitting(progress=False, log=lambda line: None), evaluate=False)

    def stop_in_epoch_2(line):
        if "epoch 2" in line:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        harden(spec, examples, DATA, tmp_path / "cut", Sitting(progress=False, log=stop_in_epoch_2), evaluate=False)
    assert (tmp_path / "cut" / WORK / "network.pt").exists() and not (tmp_path / "cut" / CARD_FILE).exists()
    with pytest.raises(RobustcountError, match="other options or data"):
        harden(HardenSpec(FamilyTraining("word-lstm"), epochs=3), examples, DATA, tmp_path / "cut",
               Sitting(resume=True, progress=False))
    with pytest.raises(RobustcountError, match="not an empty directory"):
        harden(spec, examples, DATA, tmp_path / "cut", Sitting(progress=False))
    harden(spec, examples, DATA, tmp_path / "cut",
           Sitting(resume=True, progress=False, log=lambda line: None), evaluate=False)
    assert (tmp_path / "cut" / WEIGHTS_FILE).read_bytes() == (tmp_path / "whole" / WEIGHTS_FILE).read_bytes()
    whole, cut = (json.loads((tmp_path / d / CARD_FILE).read_text()) for d in ("whole", "cut"))
    assert whole["training"] == cut["training"]
    with pytest.raises(RobustcountError, match="finished"):
        harden(spec, examples, DATA, tmp_path / "cut", Sitting(resume=True, progress=False))


def test_the_frozen_sentence_encoders_head_hardens_reproducibly(tmp_path):
    examples = sample(60, seed=1)
    spec = HardenSpec(FamilyTraining("minilm-head"), copies=TrainingCopies(settings=ZeroeCopies(("visual",))))
    card = harden(spec, examples, DATA, tmp_path / "a", Sitting(progress=False), evaluate=False)
    assert card["training"]["trained_on"] == 120 and card["training"]["C"] > 0
    again = harden(spec, examples, DATA, tmp_path / "b", Sitting(progress=False), evaluate=False)
    assert (tmp_path / "a" / WEIGHTS_FILE).read_bytes() == (tmp_path / "b" / WEIGHTS_FILE).read_bytes()
    assert again["training"] == card["training"]
    model = load_model(str(tmp_path / "a"), device="cpu")
    assert model.labels == DEMO_LABELS and model.predict_proba(["a gorgeous film"]).shape == (1, 2)


def test_fine_tuning_resumes_mid_epoch_to_the_same_adapters(monkeypatch):
    from robustcount.models.families import minilm_lora as lora
    from robustcount.models.checkpoint import Checkpoint

    monkeypatch.setattr(lora, "CHECKPOINT_STEPS", 1)
    examples = sample(70, seed=2)
    texts, targets = [e.input for e in examples], [DEMO_LABELS.index(e.label) for e in examples]
    whole, config, _ = lora.train_lora(texts, targets, seed=3, epochs=2, log=lambda line: None)

    class StopAt:
        def __init__(self, total, done):
            self.done = done

        def update(self, n):
            self.done += n
            if self.done == 4:  # the second step of the second epoch (3 batches an epoch)
                raise KeyboardInterrupt

        def close(self):
            pass

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as scratch:
        checkpoint = Checkpoint(Path(scratch) / "lora.pt")
        with pytest.raises(KeyboardInterrupt):
            lora.train_lora(texts, targets, seed=3, epochs=2, checkpoint=checkpoint, progress=StopAt,
                            log=lambda line: None)
        assert checkpoint.load()["step"] == 3  # the interrupted step was not saved
        resumed, resumed_config, _ = lora.train_lora(texts, targets, seed=3, epochs=2, checkpoint=checkpoint,
                                                     log=lambda line: None)
    assert resumed_config == config and resumed.keys() == whole.keys()
    assert all(torch.equal(resumed[k], whole[k]) for k in whole)


def test_adversarial_training_keeps_the_attack_that_made_its_examples(capsys, tmp_path):
    out = tmp_path / "pdp-hardened"
    assert main(["harden", "--family", "word-cnn", "--augment", "pdp", "--sample", "120", "--attack-sample", "25",
                 "--epochs", "1", "--no-evaluate", "--out", str(out)]) == 0
    card = json.loads((out / CARD_FILE).read_text())
    attack = read_run(out / ADVERSARIES)
    found = [r for r in attack.records if r["status"] == "success"]
    assert len(attack.records) == 25 and card["training"]["copies_made"] == len(found) > 0
    assert card["training"]["attack_sample"] == 25 and "attackers" not in card["training"]
    assert "demo_test" not in card and load_file(out / WEIGHTS_FILE)


def test_ctrl_c_keeps_the_work_and_says_how_to_continue(capsys, tmp_path, monkeypatch):
    from robustcount.models.families import FAMILIES

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(type(FAMILIES["word-cnn"]), "train", interrupted)
    out = tmp_path / "cut"
    assert main(["harden", "--family", "word-cnn", "--sample", "50", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--resume" in err and str(out / WORK) in err
    assert (out / WORK / "spec.json").exists()


def test_a_family_trained_on_other_or_more_classes_takes_the_datas_labels():
    """A built-in model's labels only when they hold the data's: three classes were refused."""
    three = [Example(str(i), "a text", label) for i, label in enumerate(("Republican", "Moderator", "Democratic"))]
    assert training_labels("minilm-head", three) == ["Democratic", "Moderator", "Republican"]
    assert training_labels("minilm-head", load_demo("test")[:5]) == list(DEMO_LABELS)
