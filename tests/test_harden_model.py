"""`harden --model`: a user's transformers checkpoint (full and LoRA), py: torch classifier and
sklearn pipeline harden, reload as the same kind, and reproduce their card's held-out accuracy
exactly in a fresh process; training resumes to the same bytes; copies are uniform points of the space."""

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from robustcount.cli import main
from robustcount.data import Example
from robustcount.errors import RobustcountError
from robustcount.models.model_dir import CARD_FILE, WEIGHTS_FILE
from robustcount.spaces.build import SpaceSpec, build_space
from robustcount.training import HardenSpec, ModelTraining, Sitting, TrainingCopies
from robustcount.training.augment import space_copies
from robustcount.training.harden import WORK
from robustcount.training.harden_model import HARDENING_CARD, harden_model, read_hardening_card
from tests.hardening_factories import tiny_checkpoint

ROOT = Path(__file__).parents[1]
REPRODUCE = """
import json, sys
from robustcount.data import DataSpec, label_index
from robustcount.models.zoo import load_model
from robustcount.training.harden_model import read_hardening_card
card = read_hardening_card(sys.argv[1])["hardened"]
data = card["training"]["data"]
examples = {e.id: e for e in DataSpec(data["spec"], sample=data.get("sample")).load(data["seed"])}
model = load_model(sys.argv[1], device="cpu")
held = [examples[i] for i in card["training"]["held_out"]["ids"]]
predicted = model.predict_proba([e.input for e in held]).argmax(axis=1)
print(json.dumps({"accuracy": sum(model.labels[p] == e.label for p, e in zip(predicted, held)) / len(held),
                  "predictions": "".join(map(str, predicted))}))
"""


def reproduced(directory: Path) -> dict:
    """The held-out accuracy and predictions of the model in `directory`, measured in a fresh process."""
    out = subprocess.run([sys.executable, "-c", REPRODUCE, str(directory)], cwd=ROOT, capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin",
                                          "HF_HUB_OFFLINE": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def check_card(directory: Path) -> dict:
    card = read_hardening_card(directory)["hardened"]
    again = reproduced(directory)
    assert again == {"accuracy": card["held_out"]["accuracy"], "predictions": card["held_out"]["predictions"]}
    assert len(card["training"]["epochs"]) >= 1 and card["training"]["data"]["digest"]
    assert card["provenance"]["dependencies"] and not (directory / WORK).exists()
    return card


def hardened(tmp_path: Path, *arguments: str) -> tuple[Path, dict]:
    """`robustcount harden ARGUMENTS --out DIR` (which must succeed): DIR and its checked card."""
    out = tmp_path / "hardened"
    assert main(["harden", *arguments, "--out", str(out)]) == 0
    return out, check_card(out)


def test_a_transformers_checkpoint_hardens_into_a_transformers_checkpoint(tmp_path, capsys):
    from transformers import AutoModelForSequenceClassification

    user = tiny_checkpoint(tmp_path / "mine")
    out, card = hardened(tmp_path, "--model", str(user), "--augment", "space", "--source", "synonyms", "--radius", "2",
                         "--sample", "40", "--epochs", "2", "--learning-rate", "1e-3")
    copies = [e["copies"] for e in card["training"]["epochs"]]
    assert card["kind"] == "transformers" and 25 < copies[0] <= 36 and copies[0] == copies[1]
    assert (out / HARDENING_CARD).exists() and not (out / CARD_FILE).exists()
    assert AutoModelForSequenceClassification.from_pretrained(out).config.id2label == {0: "negative", 1: "positive"}
    assert main(["evaluate", "--model", str(out), "--sample", "5", "--json"]) == 0


def test_lora_fine_tuning_saves_a_merged_plain_checkpoint(tmp_path):
    user = tiny_checkpoint(tmp_path / "mine")
    spec = HardenSpec(ModelTraining(str(user), lora=True), copies=TrainingCopies("none"), epochs=1)
    examples = [Example(str(i), text, label) for i, (text, label) in enumerate(
        [("a fine film", "positive"), ("a dull film", "negative")] * 20)]
    card = harden_model(spec, examples, {"spec": "inline"}, tmp_path / "out",
                        Sitting(progress=False, log=lambda line: None))
    assert card["hardened"]["kind"] == "transformers-lora" and card["hardened"]["training"]["lora"]["r"] == 8
    weights = json.loads((tmp_path / "out" / "config.json").read_text())
    assert weights["architectures"] == ["BertForSequenceClassification"]
    from safetensors.torch import load_file

    assert not any("lora" in key for key in load_file(tmp_path / "out" / "model.safetensors"))


def test_a_py_torch_classifier_hardens_by_attack_copies_refreshed_each_epoch(tmp_path):
    out, card = hardened(tmp_path, "--model", "py:tests.hardening_factories:mean_words", "--augment", "pdp",
                         "--refresh", "epoch", "--attack-sample", "15", "--sample", "100", "--epochs", "2")
    assert card["kind"] == "py-torch" and json.loads((out / CARD_FILE).read_text())["family"] == "py-torch"
    assert (out / "adversaries-1.jsonl").exists() and (out / "adversaries-2.jsonl").exists()


def test_an_sklearn_pipeline_refits_on_zeroe_copies_and_saves_without_pickle(tmp_path):
    import skops.io

    out, card = hardened(tmp_path, "--model", "py:tests.hardening_factories:tfidf_pipeline", "--augment", "zeroe",
                         "--attacker", "keyboard", "--attacker", "truncate", "--copies", "2", "--sample", "100")
    assert card["kind"] == "sklearn" and card["training"]["epochs"][0]["copies"] == 180
    assert list(skops.io.load(out / "model.skops").classes_) == ["negative", "positive"]


def test_hardening_an_sklearn_pipeline_twice_writes_the_same_model_bytes(tmp_path):
    import zipfile

    for out in ("first", "second"):
        assert main(["harden", "--model", "py:tests.hardening_factories:tfidf_pipeline", "--augment", "zeroe",
                     "--attacker", "keyboard", "--sample", "60", "--out", str(tmp_path / out)]) == 0
    for name in ("model.skops", "model.safetensors"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes(), name
    with zipfile.ZipFile(tmp_path / "first" / "model.skops") as saved:  # nothing of the process or the moment
        assert {info.date_time for info in saved.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert sorted(saved.namelist()) == sorted(["schema.json", *(f"{n}.npy" for n in
                                                                     _array_numbers(saved.read("schema.json")))])


def _array_numbers(schema: bytes) -> list[int]:
    """The numbers of the arrays a skops schema names (each below the number of its objects)."""
    import re

    numbers = [int(n) for n in re.findall(rb'"file": "(\d+)\.npy"', schema)]
    objects = len(re.findall(rb'"__id__"', schema))
    assert numbers and all(n < objects for n in numbers)
    return numbers


def test_an_untrusted_skops_estimator_is_refused(tmp_path):
    import numpy as np
    import skops.io
    from sklearn.preprocessing import FunctionTransformer

    from robustcount.models.families.sklearn_skops import estimator_from

    data = skops.io.dumps(FunctionTransformer(np.sum))
    with pytest.raises(RobustcountError, match="does not trust"):
        estimator_from(data, "untrusted")


def test_an_interrupted_hardening_resumes_to_the_same_bytes(tmp_path):
    from robustcount.data import load_demo

    examples = load_demo("train")[:90]
    spec = HardenSpec(ModelTraining("py:tests.hardening_factories:mean_words", batch_size=8),
                      copies=TrainingCopies("space"), epochs=3)
    harden_model(spec, examples, {"spec": "demo:train"}, tmp_path / "whole",
                 Sitting(progress=False, log=lambda line: None))

    def stop_after_epoch_2(line):
        if line.startswith("epoch 2"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        harden_model(spec, examples, {"spec": "demo:train"}, tmp_path / "cut",
                     Sitting(progress=False, log=stop_after_epoch_2))
    assert (tmp_path / "cut" / WORK / "training.pt").exists()
    harden_model(spec, examples, {"spec": "demo:train"}, tmp_path / "cut",
                 Sitting(resume=True, progress=False, log=lambda line: None))
    assert (tmp_path / "cut" / WEIGHTS_FILE).read_bytes() == (tmp_path / "whole" / WEIGHTS_FILE).read_bytes()
    whole, cut = (read_hardening_card(tmp_path / d)["hardened"] for d in ("whole", "cut"))
    assert whole["training"]["epochs"] == cut["training"]["epochs"] and whole["held_out"] == cut["held_out"]


def test_space_copies_are_uniform_over_the_space_without_the_original():
    example = Example("x", "a good film", "positive")
    space = build_space(example.input, ["synonyms"])
    others = {space.apply(p) for p in space.points(1)} - {example.input}
    drawn = Counter(c.example.input for c in space_copies([example], SpaceSpec(("synonyms",)), 1, copies=4000))
    assert set(drawn) == others and example.input not in drawn
    expected = 4000 / len(others)
    assert all(abs(n - expected) < 5 * expected ** 0.5 for n in drawn.values())


def test_a_built_in_network_is_pointed_to_its_family():
    with pytest.raises(RobustcountError, match="--family word-cnn"):
        harden_model(HardenSpec(ModelTraining("cnn-rt")), [Example("1", "a film", "positive")] * 3, {}, "/tmp/never",
                     Sitting(progress=False))


def test_family_and_model_together_are_refused_in_one_line(tmp_path, capsys):
    out = tmp_path / "hardened"
    assert main(["harden", "--model", "tfidf-rt", "--family", "word-cnn", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("robustcount: error: --family trains a new model of a family; --model trains the model you give "
                   "as its own kind: give one of them") and not out.exists()


def test_evaluate_reports_the_input_and_the_hardened_model_side_by_side(tmp_path, capsys):
    out = tmp_path / "hardened"
    argv = ["harden", "--model", "py:tests.hardening_factories:tfidf_pipeline", "--augment", "zeroe",
            "--attacker", "keyboard", "--sample", "100", "--out", str(out), "--evaluate", "demo:test", "--evaluate-sample", "8",
            "--evaluate-attack", "pdp"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "evaluation" / "summary.json").read_text())
    assert set(summary["models"]) == {"input", "hardened"} and summary["models"]["hardened"]["model"] == str(out)
    for figures in summary["models"].values():
        assert figures["examples"] == 8 and 0 <= figures["after_attack_accuracy"] <= figures["clean_accuracy"] <= 1
        assert figures["certified_r2"] <= figures["certified_r1"]
    assert "after-attack accuracy" in printed and "report.html" in printed
    html = (out / "evaluation" / "report.html").read_text()
    assert html.index("Input and hardened model side by side") < html.index("input pdp: Results")
    runs = sorted(p.name for p in (out / "evaluation").glob("*.jsonl") if "timings" not in p.name)
    assert runs == ["attack-hardened.jsonl", "attack-input.jsonl", "certify-hardened.jsonl", "certify-input.jsonl",
                    "compare.jsonl"]
    assert main([*argv, "--resume"]) == 0  # a finished model: the evaluation alone, continued from its run files
    assert json.loads((out / "evaluation" / "summary.json").read_text()) == summary
    browser = shutil.which("chromium")
    if browser is not None:
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                              f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                              (out / "evaluation" / "report.html").resolve().as_uri()],
                             capture_output=True, text=True, timeout=120).stdout
        assert "Input and hardened model side by side" in dom and "certified at r = 2" in dom
