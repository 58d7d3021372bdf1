"""The model-family registry: every built-in model names a registered family, the shipped models
keep their digests (so that stored runs and certificates keep verifying), and a family added in
one module (here, this test; the worked example of docs/architecture.md) trains, hardens, writes
and loads its model directories through the CLI like a built-in family."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.models.families import ASSETS, FAMILIES, Family, Trained, TrainingJob, families, family_named
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.identity import FORMER_DIGESTS, current_digest
from robustcount.models.model_dir import CARD_FILE
from robustcount.models.torch_adapter import Encoding, TorchClassifier
from robustcount.models.zoo import MODELS, load_model
from robustcount.runs.provenance import dependency_versions
from robustcount.text import perturbed_part, tokenize
from robustcount.training import HardenSpec

SHIPPED_DIGESTS = {
    # measured before the family registry existed: a change here breaks every stored certificate
    "minilm-rt": "461b6bbd2ef5eee3f4ce5b927c2d82b87546bb38153b5f396fa1afb095cfbc67",
    "minilm-rt-ft": "565e4fcf667f3cb76cf0af2f94095195b9b6f1ab56dae2b380c01467a7b19f53",
    "cnn-rt": "056184199bb766a1ed4ea4f2150a50202504b00bf87b036beaab3efdd52c0ce3",
    "lstm-rt": "ab75195e9cecefaac0551a74b11392b44ac720b4f1153ffcc6806eff2799eff0",
    # bow-rt's weights ship since they came out other on AVX-512 CPUs (earlier: 0073403d..., fitted
    # at load on AVX2 machines, not reproducible on others); tests/data/runs name these weights.
    "bow-rt": "a0997b79c3d7b4f5186b575399bfd08f5f2712166eb1f4ddc5296eebaf6bbcb6",
    "tfidf-rt": "62399baeeeae8cbcaf9d3994693b701c5c44d9dca4acad0fb3551a1616358532",
    # vader's declared identity, vader/1 (earlier: 9285ac0c..., the digest of models/small.py's
    # source, which models/identity.py maps to this one; tests/data/runs/certify_vader.jsonl names it)
    "vader": "59dbc7c103c810908a49a9ef570fb937541a87ba5a699d2560251b5499967240",
    # the converted float32 tensors of the packaged GGUF file, the default prompt, verbaliser and
    # the shipped content-free calibration (models/llm/classifier.py)
    "smollm2": "af74af3efe5ecb51ec758d06a3b14ee2d8b85aee0bec8c695f1e4b36cdb87557",
}


@pytest.mark.parametrize("name", list(SHIPPED_DIGESTS))
def test_the_shipped_models_keep_their_digests(name):
    assert QueryEngine(load_model(name, device="cpu")).digest() == SHIPPED_DIGESTS[name]


def test_vaders_digest_is_its_declared_identity_not_a_modules_source():
    """Another function in another module with vader's identity has vader's digest: an edit to
    a module (models/small.py held vader, and every comment changed its digest) changes nothing."""
    vader = load_model("vader")
    assert re.fullmatch(r"vader/1 vaderSentiment==3\.3\.2 lexicons sha256:[0-9a-f]{64}", vader.identity)
    twin = FunctionClassifier(lambda batch: vader.fn(batch), vader.labels, name="vader", identity=vader.identity)
    assert twin.digest() == vader.digest()
    assert QueryEngine(twin).digest() == SHIPPED_DIGESTS["vader"]
    assert FunctionClassifier(vader.fn, vader.labels, name="vader").digest() != vader.digest()


def test_certificates_under_vaders_former_digest_verify_and_no_other_digest_does(capsys, tmp_path):
    """tests/data/runs/certify_vader.jsonl was written while vader's digest hashed models/small.py:
    it verifies through the alias; the same file naming another digest does not."""
    stored = Path(__file__).parent / "data" / "runs" / "certify_vader.jsonl"
    former = json.loads(stored.read_text(encoding="utf-8").partition("\n")[0])["models"][0]["digest"]
    assert FORMER_DIGESTS[former] == SHIPPED_DIGESTS["vader"] == current_digest(former) != former
    assert main(["verify", str(stored), "--data", "demo:test"]) == 0
    assert "all 3 certificates hold" in capsys.readouterr().out
    other = tmp_path / "other.jsonl"
    other.write_text(stored.read_text(encoding="utf-8").replace(former, "0" * 64), encoding="utf-8")
    assert main(["verify", str(other), "--data", "demo:test"]) == 1
    assert "DOES NOT HOLD: the model vader at precision float32 has the weight digest 59dbc7c103c8, the header " \
        "records 000000000000" in capsys.readouterr().err


def test_a_run_written_under_vaders_former_digest_and_before_language_models_resumes_and_verifies(capsys, tmp_path):
    """The stored run's first three records, resumed today (its header lacks the language-model
    options and names vader's former digest; its dependencies set to those installed here, since
    a resume under other versions is refused): the run finishes and every certificate holds."""
    stored = Path(__file__).parent / "data" / "runs" / "certify_vader.jsonl"
    header, *records = stored.read_text(encoding="utf-8").splitlines(keepends=True)[:4]
    header = json.loads(header)
    assert "prompt" not in header["models"][0] and header["models"][0]["digest"] in FORMER_DIGESTS
    header["dependencies"] = dependency_versions()
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(header) + "\n" + "".join(records), encoding="utf-8")
    assert main(["certify", "--model", "vader", "--data", "demo:test", "--first", "6", "--radius", "1", "--source",
                 "synonyms", "--output", str(run), "--resume"]) == 0
    assert len(run.read_text(encoding="utf-8").splitlines()) == 7
    capsys.readouterr()
    assert main(["verify", str(run)]) == 0, capsys.readouterr()


@pytest.mark.parametrize("kernels", [{"OPENBLAS_CORETYPE": "Haswell", "ATEN_CPU_CAPABILITY": "default"},
                                     {"OPENBLAS_CORETYPE": "Prescott", "MKL_CBWR": "COMPATIBLE"}])
def test_bow_rt_and_tfidf_rt_are_the_same_models_whatever_the_cpus_kernels_and_threads(kernels, tmp_path):
    """In a fresh process whose torch and BLAS run other kernels (as on another CPU) on two
    threads, with an empty weights cache: the shipped digests (fitted at load, they moved)."""
    code = ("from threadpoolctl import threadpool_limits\n"
            "from robustcount.models.engine import QueryEngine\nfrom robustcount.models.zoo import load_model\n"
            "with threadpool_limits(limits=2):\n"
            "    print(*[QueryEngine(load_model(n, device='cpu')).digest() for n in ('bow-rt', 'tfidf-rt')])\n")
    env = {**os.environ, **kernels, "ROBUSTCOUNT_CACHE": str(tmp_path), "OMP_NUM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == [SHIPPED_DIGESTS["bow-rt"], SHIPPED_DIGESTS["tfidf-rt"]]


def test_every_built_in_model_names_a_registered_family():
    assert set(SHIPPED_DIGESTS) == set(MODELS) and {e.family for e in MODELS.values()} <= set(families())
    built_in = {n: f for n, f in families().items() if type(f).__module__.startswith("robustcount.")}
    assert {n for n, f in built_in.items() if f.hardenable} == {"minilm-head", "minilm-lora", "word-cnn", "word-lstm"}
    assert [n for n, f in built_in.items() if f.savable] == ["minilm-lora"]
    with pytest.raises(RobustcountError, match="unknown family 'word-gru'"):
        family_named("word-gru")
    with pytest.raises(RobustcountError, match="the family 'vader' cannot harden"):
        HardenSpec("vader")


def test_a_model_directory_written_before_families_had_names_still_loads(tmp_path):
    """Its card names the built-in model of the family (`architecture`): the same network and digest."""
    from robustcount.models.model_dir import FORMAT, WEIGHTS_FILE

    card = json.loads((ASSETS / "cnn_rt_card.json").read_text())
    (tmp_path / WEIGHTS_FILE).write_bytes((ASSETS / "cnn_rt.safetensors").read_bytes())
    (tmp_path / CARD_FILE).write_text(json.dumps({"format": FORMAT, "architecture": "cnn-rt", "labels": card["labels"],
                                                  "options": card["network"]}))
    assert QueryEngine(load_model(str(tmp_path), device="cpu")).digest() == SHIPPED_DIGESTS["cnn-rt"]
    (tmp_path / CARD_FILE).write_text(json.dumps({"format": FORMAT, "labels": card["labels"], "options": {}}))
    with pytest.raises(RobustcountError, match="names no family"):
        load_model(str(tmp_path), device="cpu")


# The worked example of docs/architecture.md ("A model"): a family declared in one module.

class LengthTable(nn.Module):
    """One learned logit vector per text length in words (15 and more share one)."""

    def __init__(self, n_labels: int):
        super().__init__()
        self.table = nn.Embedding(16, n_labels)

    def forward(self, lengths: torch.Tensor) -> torch.Tensor:
        return self.table(lengths)


def word_counts(batch) -> Encoding:
    """A tokenizer: each input's length in words, as the module's one input."""
    lengths = [min(len(tokenize(perturbed_part(item)).words), 15) for item in batch]
    return Encoding({"lengths": torch.tensor(lengths)}, [[None] for _ in batch])


class TextLength(Family):
    name = "text-length"
    description = "a logit vector per text length"

    def rebuild(self, tensors, options, labels, name, **settings):
        module = LengthTable(len(labels))
        module.load_state_dict(tensors)
        return TorchClassifier(module, word_counts, labels, name=name, **settings)

    def train(self, job: TrainingJob) -> Trained:
        counts = torch.ones(16, job.n_labels)  # add-one smoothed label counts per length
        for length, target in zip(word_counts(job.texts).inputs["lengths"].tolist(), job.targets):
            counts[length, target] += 1
        return Trained({"table.weight": torch.log(counts / counts.sum(dim=1, keepdim=True))})


def test_the_architecture_page_shows_this_family():
    page = (Path(__file__).parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    shown = re.search(r"### A model\n.*?```python\n(.*?)```", page, re.S).group(1)
    assert shown in Path(__file__).read_text(encoding="utf-8")


@pytest.fixture
def text_length():
    FAMILIES["text-length"] = TextLength()  # as its module's import registered it
    yield
    FAMILIES.pop("text-length", None)


def test_a_family_declared_in_one_module_trains_hardens_and_loads(capsys, tmp_path, text_length):
    plain, hardened = tmp_path / "plain", tmp_path / "hardened"
    assert main(["harden", "--family", "text-length", "--augment", "none", "--sample", "300", "--out", str(plain)]) == 0
    assert main(["harden", "--family", "text-length", "--attacker", "truncate", "--sample", "300",
                 "--out", str(hardened)]) == 0
    printed = capsys.readouterr().out
    cards = [json.loads((d / CARD_FILE).read_text()) for d in (plain, hardened)]
    assert [c["family"] for c in cards] == ["text-length"] * 2 and cards[0]["labels"] == ["negative", "positive"]
    assert [c["training"]["trained_on"] for c in cards] == [300, 600]
    assert f"demo:test accuracy {cards[1]['demo_test']['test_accuracy']:.4f}" in printed
    for directory, card in zip((plain, hardened), cards):
        assert main(["evaluate", "--model", str(directory), "--json"]) == 0
        assert round(json.loads(capsys.readouterr().out)["accuracy"], 4) == card["demo_test"]["test_accuracy"]
    model = load_model(str(hardened), device="cpu")
    assert isinstance(model, TorchClassifier) and model.predict_proba(["a fine film"]).shape == (1, 2)
    assert main(["predict", "--model", str(plain), "a gorgeous, moving film"]) == 0
    capsys.readouterr()
    assert main(["harden", "--family", "text-length", "--augment", "pdp", "--out", str(tmp_path / "x")]) == 1
    assert "has none" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_a_model_directory_of_an_unknown_family_is_refused_in_one_line(capsys, tmp_path, text_length):
    directory = tmp_path / "model"
    assert main(["harden", "--family", "text-length", "--augment", "none", "--sample", "50", "--no-evaluate",
                 "--out", str(directory)]) == 0
    FAMILIES.pop("text-length")
    capsys.readouterr()
    assert main(["evaluate", "--model", str(directory)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown family 'text-length'" in err
