"""BAE and BERT-Attack, the masked-language-model recipes: the loading code of a masked LM, its
own query engine, the recipes from the command line and the Python API, on a text model and a pair
model, resumed, with every adversary re-checked."""

import csv
import json

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

from robustcount.attacks.bae import BAEOptions
from robustcount.attacks.bert_attack import BertAttackOptions
from robustcount.attacks.recipe import recipe_named
from robustcount.attacks.result import SUCCESS, run_attack
from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.goal import judged_labels
from robustcount.models.base import MaskQuery, words_window
from robustcount.models.engine import QueryEngine
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.masked_lm import load_masked_lm, masked_lm_engine
from robustcount.models.minilm import encoder_path
from robustcount.models.zoo import load_model
from robustcount.runs.files import read_run
from robustcount.spaces.build import SpaceSpec

FAVOURED = ("awful", "dull", "boring", "terrible", "mess", "good", "great", "wonderful", "fine", "lovely")
"""The words the tiny masked LM below proposes everywhere, most probable first."""


@pytest.fixture(scope="session")
def tiny_masked_lm(tmp_path_factory):
    """A small BERT masked LM with MiniLM's tokenizer, saved as a checkpoint directory, whose bias
    makes FAVOURED its most probable pieces at every position (a real model, random otherwise)."""
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(encoder_path(), local_files_only=True)
    model = BertForMaskedLM(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                                       num_attention_heads=2, intermediate_size=64))
    with torch.no_grad():
        for rank, word in enumerate(FAVOURED):
            model.cls.predictions.bias[tokenizer.convert_tokens_to_ids(word)] = 12.0 - 0.1 * rank
    path = tmp_path_factory.mktemp("tiny-masked-lm")
    model.save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return str(path)


def test_a_masked_lm_directory_loads_and_answers_masked_and_unmasked_queries(tiny_masked_lm):
    model = load_masked_lm(tiny_masked_lm)
    text = "a gripping film"
    masked, unmasked = model.fill([MaskQuery(text, 2, 10, True), MaskQuery(text, 2, 10, False)])
    vocabulary = len(model.pieces)
    assert masked.shape == (model.max_pieces * vocabulary,)
    for answer in (masked, unmasked):
        first = answer[:vocabulary]
        assert first.sum() == pytest.approx(1.0) and model.pieces[int(first.argmax())] == "awful"
    pieces = len(model.word_pieces("gripping"))
    assert all(unmasked[j * vocabulary:(j + 1) * vocabulary].sum() == pytest.approx(1.0) for j in range(pieces))
    assert not masked[vocabulary:].any()  # a mask is one piece
    engine = masked_lm_engine(tiny_masked_lm)
    engine.fill_masks([MaskQuery(text, 2, 10, True)] * 2)
    assert engine.total.model_calls - engine.probe.model_calls == 1 and engine.total.duplicates == 1


def test_a_hub_name_is_never_downloaded_at_run_time(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with pytest.raises(RobustcountError, match="robustcount downloads none at run time"):
        load_masked_lm("someone/not-a-cached-masked-lm")


def test_bae_and_bert_attack_from_the_api_give_rechecked_adversaries(tiny_masked_lm, vader):
    engine = QueryEngine(vader)
    text = "a gripping and lovely film"
    space = SpaceSpec().builder()(text)
    gold = int(engine.predict([text])[0])
    for name, options in (("bae", BAEOptions(masked_lm=tiny_masked_lm, pos_check=False)),
                          ("bert-attack", BertAttackOptions(masked_lm=tiny_masked_lm, similarity_check=False))):
        recipe = recipe_named(name)
        result = run_attack(name, recipe.attack, engine, space, gold, options=options, sentence_encoder=None,
                            masked_lm=masked_lm_engine(tiny_masked_lm))
        assert result.status == SUCCESS, result.reason
        assert int(engine.predict([result.adversarial])[0]) != gold
        changed = [w for w, o in zip(result.adversarial.split(), text.split()) if w != o]
        assert changed and set(changed) <= set(FAVOURED) and result.distance == len(changed) == len(result.point)


def test_bae_from_the_command_line_counts_its_masked_lm_apart_and_resumes(tiny_masked_lm, tmp_path, capsys):
    out = tmp_path / "bae.jsonl"
    args = ["attack", "--recipe", "bae", "--masked-lm", tiny_masked_lm, "--no-pos-check", "--no-similarity-check",
            "--model", "vader", "--sample", "4", "--seed", "2", "--output", str(out), "--json"]
    assert main(args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    run = read_run(out)
    assert run.header["options"]["method"] == "bae" and run.header["options"]["settings"]["masked_lm"] == tiny_masked_lm
    assert run.header["space"]["filters"]["stop_words"]  # BAE's space preset leaves stop words alone
    attacked = [r for r in run.records if r["status"] != "skipped"]
    assert attacked and all(r["masked_lm_queries"]["model_calls"] >= 1 for r in attacked)
    assert all(r["queries"]["model_calls"] > r["masked_lm_queries"]["model_calls"] for r in attacked)
    broken = [r for r in run.records if r["status"] == "success"]
    assert broken
    engine = QueryEngine(load_model("vader"))
    for r in broken:
        gold = engine.labels.index(r["gold"])
        assert judged_labels(engine.predict_proba([r["adversarial"]])[0], gold)[0] != gold
    assert [line["id"] for line in lines[:-1]] == [r["id"] for r in run.records]  # one JSON line each, then the summary
    assert lines[-1]["examples"] == 4
    first = out.read_text().splitlines()
    out.write_text("\n".join(first[:3]) + "\n")  # the header and two records: resume the rest
    assert main([*args[:-1], "--resume"]) == 0
    assert out.read_text().splitlines() == first
    assert "rt-" in capsys.readouterr().out  # the resumed session shows the examples it ran


def test_bert_attack_on_a_pair_model_changes_the_hypothesis_only(tiny_masked_lm, tiny_bert_dir, tmp_path, capsys):
    model = QueryEngine(load_model(str(tiny_bert_dir)))
    pairs = [("The film was shown twice.", "It was a gripping and lovely story."),
             ("A man plays the piano.", "Nobody is playing any music tonight.")]
    data = tmp_path / "pairs.csv"
    with data.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["premise", "hypothesis", "label"])
        writer.writerows((p, h, model.labels[int(model.predict([(p, h)])[0])]) for p, h in pairs)
    out, log = tmp_path / "pairs.jsonl", tmp_path / "pairs.csv.log"
    assert main(["attack", "--recipe", "bert-attack", "--masked-lm", tiny_masked_lm, "--no-similarity-check",
                 "--model", str(tiny_bert_dir), "--data", str(data), "--premise-column", "premise",
                 "--text-column", "hypothesis", "--output", str(out), "--log-csv", str(log)]) == 0
    records = read_run(out).records
    assert [r["status"] for r in records] != ["skipped", "skipped"]
    for r, (premise, _) in zip(records, pairs):
        if r["status"] == "success":
            assert r["adversarial"][0] == premise
            assert int(model.predict([tuple(r["adversarial"])])[0]) != model.labels.index(r["gold"])
    rows = list(csv.DictReader(log.open()))
    assert [row["original_text"].split("<SPLIT>")[0] for row in rows] == [p for p, _ in pairs]


def test_bert_attack_respects_its_share_of_words(tiny_masked_lm, vader):
    engine = QueryEngine(vader)
    text = "the plot is thin but the two leads are charming and the quiet ending works"
    space = SpaceSpec().builder()(text)
    gold = int(engine.predict([text])[0])
    options = BertAttackOptions(masked_lm=tiny_masked_lm, max_share=0.1, similarity_check=False)
    result = run_attack("bert-attack", recipe_named("bert-attack").attack, engine, space, gold, options=options,
                        sentence_encoder=None, masked_lm=masked_lm_engine(tiny_masked_lm))
    assert result.status != SUCCESS or result.distance <= 1  # 10% of 15 words
    assert result.queries["model_calls"] <= 1 + 15 + 2 * 48  # the input, importance, then at most one word

def test_the_packaged_masked_lm_is_the_default_and_recovers_masked_demo_words():
    from experiments.train_masked_lm import recovery
    from robustcount.data import load_demo
    from robustcount.models.masked_lm import DEFAULT_MASKED_LM

    assert BAEOptions().masked_lm == BertAttackOptions().masked_lm == DEFAULT_MASKED_LM == "minilm-mlm"
    measured = recovery(masked_lm_engine(), [e.input for e in load_demo("test")[:64]])
    assert measured["texts"] >= 60 and measured["top_1"] <= measured["top_10"] <= measured["top_50"]
    assert measured["top_50"] >= 0.25  # 42% over the whole of demo:test (docs/attacks/masked-lm.md)


def test_bae_and_bert_attack_change_no_word_beyond_the_models_window(tiny_masked_lm):
    """A model that reads three words and that nothing breaks: both searches try every word they
    may change, and none beyond the window."""
    seen = []

    def unbreakable(batch):
        seen.extend(batch)
        return np.tile([0.2, 0.8], (len(batch), 1))

    engine = QueryEngine(FunctionClassifier(unbreakable, ["negative", "positive"], window=words_window(3)))
    text = "a gripping and lovely film"
    space = SpaceSpec().builder(0, engine.window)(text)
    assert space.window == {"size": "3-word", "words": 5, "beyond": 2}
    for name, options in (("bae", BAEOptions(masked_lm=tiny_masked_lm, pos_check=False)),
                          ("bert-attack", BertAttackOptions(masked_lm=tiny_masked_lm, similarity_check=False))):
        result = run_attack(name, recipe_named(name).attack, engine, space, 1, options=options, sentence_encoder=None,
                            masked_lm=masked_lm_engine(tiny_masked_lm))
        assert result.status != SUCCESS
    tried = [t for t in seen if len(t.split()) == 5 and t != text]
    assert tried and all(t.split()[3:] == ["lovely", "film"] for t in tried)


def test_the_recipes_that_need_a_masked_lm_declare_it_and_the_worker_injects_one_engine_per_name(tiny_masked_lm):
    """BAE and BERT-Attack declare the masked LM their options name; no other recipe declares one.
    A run's worker loads each masked LM once and hands the same engine to every example, as it
    does the sentence encoder's."""
    import robustcount.commands  # noqa: F401  (registers the built-in commands)
    from robustcount.attacks.recipe import RECIPES
    from robustcount.models.spec import ModelSpec
    from robustcount.runs.registry import command_named
    from robustcount.runs.spec import RunSpec, Worker

    declared = {name: recipe.uses_masked_lm(recipe.Options(masked_lm=tiny_masked_lm) if name in ("bae", "bert-attack")
                                            else recipe.Options()) for name, recipe in RECIPES.items()}
    assert declared.pop("bae") == declared.pop("bert-attack") == tiny_masked_lm
    assert set(declared.values()) == {None}
    worker = Worker(RunSpec("evaluate", (ModelSpec("bow-rt"),)), command_named("evaluate"))
    engine = worker.masked_lm(tiny_masked_lm)
    assert worker.masked_lm(tiny_masked_lm) is engine and engine.model.name == tiny_masked_lm
