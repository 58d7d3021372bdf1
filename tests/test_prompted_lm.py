"""Prompted causal language models as classifiers (`models/llm/`): the prompt, the verbaliser and
calibration, the key/value cache reuse against the bare forward on a tiny random LM, and the
packaged SmolLM2 through the commands, its certificates verified in a fresh process."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from robustcount.cli import main
from robustcount.goal import is_adversarial
from robustcount.errors import RobustcountError
from robustcount.models.engine import BATCH_INVARIANT, QueryEngine
from robustcount.models.llm.classifier import (
    SMOLLM2_CALIBRATION,
    SMOLLM2_PROMPT,
    SMOLLM2_VERBALIZER,
    LMRuntime,
    load_prompted_lm,
    prompted_lm,
)
from robustcount.models.llm.prefix import groups, heavy_path
from robustcount.models.llm.prompting import PromptSpec, PromptTemplate, Verbalizer
from robustcount.models.minilm import encoder_path
from robustcount.models.zoo import load_model
from robustcount.orders import word_sensitivities
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, certify_radii
from robustcount.spaces.build import Filters, SpaceBuilder, build_space
from robustcount.text import tokenize

PROMPT = "Review: {text}\nIs it positive or negative?"
VERBALIZER = "negative=bad|not good at all,positive=good|great"
"""Multi-token answers ("not good at all") as well as one-token ones."""
WORDS = ["a", "good", "bad", "film", "dull", "warm", "story", "the", "not", "cast", "very", "slow"]


@pytest.fixture(scope="module")
def tiny_lm_dir(tmp_path_factory):
    """A randomly initialised two-layer Llama with MiniLM's tokenizer (no chat template)."""
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(encoder_path(), local_files_only=True)
    config = LlamaConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         initializer_range=0.3, tie_word_embeddings=False, pad_token_id=0)
    path = tmp_path_factory.mktemp("tiny-lm")
    LlamaForCausalLM(config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_lm(tiny_lm_dir):
    return load_model(f"llm:{tiny_lm_dir}", device="cpu", prompt=PROMPT, verbalizer=VERBALIZER)


def test_the_verbalizer_and_the_prompt_are_checked_in_one_line():
    assert Verbalizer.parse("neg=No|nope,pos=Yes").answers == (("neg", ("No", "nope")), ("pos", ("Yes",)))
    for bad in ("neg=No", "neg=No,neg=Yes", "neg=,pos=Yes", "negNo,pos=Yes"):
        with pytest.raises(RobustcountError, match="verbalizer"):
            Verbalizer.parse(bad)
    with pytest.raises(RobustcountError, match="put {text} in it once"):
        PromptTemplate("no placeholder")
    template = PromptTemplate("P: {premise} H: {hypothesis}?")
    assert template.parts(("x", "y")) == ["P: ", "x", " H: ", "y", "?"] and template.perturbed_index() == 3
    with pytest.raises(RobustcountError, match="takes \\(premise, hypothesis\\) pairs"):
        template.parts("a text")


def test_language_model_options_are_refused_for_other_models_and_required_for_llm_paths(tiny_lm_dir):
    with pytest.raises(RobustcountError, match="apply to language models"):
        load_model("bow-rt", prompt="{text}")
    with pytest.raises(RobustcountError, match="needs --prompt and --verbalizer"):
        load_model(f"llm:{tiny_lm_dir}")
    with pytest.raises(RobustcountError, match="no such model directory or .gguf file"):
        load_model("llm:/no/such/model.gguf", prompt="{text}", verbalizer="a=x,b=y")


def test_the_groups_cut_rows_exactly_and_the_heavy_path_is_the_majority_prefix():
    lengths = [5, 40, 38, 6, 7, 39, 1]
    cut = groups(lengths, cost=10)
    assert sorted(i for group in cut for i in group) == list(range(len(lengths)))
    assert [sorted(lengths[i] for i in group) for group in cut] == [[1, 5, 6, 7], [38, 39, 40]]
    rows = [np.array(row) for row in ([1, 2, 3, 4], [1, 2, 3, 5], [1, 2, 9], [7, 2, 3])]
    assert heavy_path(rows).tolist() == [1, 2, 3]


@settings(max_examples=15)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), min_size=1, max_size=9),
       st.randoms(use_true_random=False))
def test_prefix_reuse_gives_the_bare_forwards_probabilities(tiny_lm, changes, rng):
    """Points that change words of one text anywhere (some of them the text itself), in batches of
    every order: with the key/value cache reused, the probabilities of the bare batched forward
    and of each text alone, within 1e-6 (the margin tolerance is 1e-4)."""
    base = "the story is slow but the cast is warm and the film is good".split()
    points = []
    for change in changes:
        words = list(base)
        for word in change:
            words[rng.randrange(len(words))] = word
        points.append(" ".join(words))
    points.append(" ".join(base))
    tiny_lm.prefix_reuse = False
    bare = tiny_lm.predict_proba(points)
    alone = np.concatenate([tiny_lm.predict_proba([point]) for point in points])
    tiny_lm.prefix_reuse = True
    order = list(range(len(points)))
    rng.shuffle(order)
    reused = tiny_lm.predict_proba([points[i] for i in order])[np.argsort(order)]
    assert np.abs(reused - bare).max() < 1e-6 and np.abs(alone - bare).max() < 1e-6
    assert len(set(points)) == 1 or not np.allclose(bare, bare[:1])  # other texts get other answers


def test_answers_are_scored_in_full_as_the_lm_reads_them(tiny_lm):
    """Each answer's log-likelihood is the sum of its tokens' log-probabilities after the prompt,
    as the causal LM's own forward over the prompt and the answer gives them."""
    encoding = tiny_lm.tokenizer(["a warm film"])
    ids, module = encoding.inputs["input_ids"][0], tiny_lm.module
    assert max(map(len, module.answers)) > 1
    with torch.inference_mode():
        got = module.answer_log_likelihoods(encoding.inputs["input_ids"], encoding.inputs["attention_mask"])[0]
        for j, answer in enumerate(module.answers):
            log_probs = torch.log_softmax(module.lm(input_ids=torch.cat([ids, torch.tensor(answer)])[None]).logits[0], -1)
            expected = sum(float(log_probs[len(ids) - 1 + t, token]) for t, token in enumerate(answer))
            assert abs(float(got[j]) - expected) < 1e-5


def test_the_tiny_lm_passes_the_batch_probe_and_has_word_gradients(tiny_lm):
    engine = QueryEngine(tiny_lm)
    assert engine.batching() == BATCH_INVARIANT
    assert engine.supports_gradients
    scores = word_sensitivities(engine, "a warm story and a slow film", 1)
    assert scores.shape == (7,) and np.all(scores > 0)


def test_the_identity_holds_the_prompt_verbalizer_and_calibration(tiny_lm_dir, tiny_lm):
    other_prompt = load_model(f"llm:{tiny_lm_dir}", device="cpu", prompt=PROMPT + " ", verbalizer=VERBALIZER)
    calibrated = load_model(f"llm:{tiny_lm_dir}", device="cpu", prompt=PROMPT, verbalizer=VERBALIZER,
                            calibration="content-free")
    digests = {model.digest() for model in (tiny_lm, other_prompt, calibrated)}
    assert len(digests) == 3
    record = calibrated.settings["calibration"]
    assert record["method"] == "content-free" and record["inputs"] == ["N/A", "", "[MASK]"]
    # calibrated: the content-free inputs' mean probability is uniform
    calibrated_mean = calibrated.predict_proba(["N/A", "", "[MASK]"]).mean(axis=0)
    assert np.allclose(calibrated_mean, 0.5, atol=0.05) and not np.allclose(record["mean"], 0.5, atol=0.01)


@pytest.fixture(scope="module")
def smollm2():
    return load_prompted_lm("smollm2", device="cpu")


@pytest.mark.slow
def test_smollm2_defaults_reuse_and_chat_template(smollm2):
    assert smollm2.settings["prompt"] == SMOLLM2_PROMPT and smollm2.settings["calibration"]["method"] == "content-free"
    text = "a gripping, moving film"
    rendered, start, end = smollm2.tokenizer.render(text)
    assert rendered.startswith("<|im_start|>system") and rendered[start:end] == text
    assert rendered.endswith("<|im_start|>assistant\n")
    points = [text, "a gripping, dull film", "a boring, moving film", "a gripping, moving mess"]
    smollm2.prefix_reuse = False
    bare = smollm2.predict_proba(points)
    smollm2.prefix_reuse = True
    assert np.abs(smollm2.predict_proba(points) - bare).max() < 1e-5


@pytest.mark.slow
def test_smollm2_ships_the_calibration_its_defaults_fit(smollm2):
    refitted = prompted_lm(smollm2.module.lm, smollm2.tokenizer.tokenizer, "refit",
                           PromptSpec(SMOLLM2_PROMPT, SMOLLM2_VERBALIZER, "content-free"), runtime=LMRuntime("cpu"))
    assert refitted.settings == smollm2.settings
    assert smollm2.settings["calibration"]["mean"] == list(SMOLLM2_CALIBRATION.mean)


@pytest.mark.slow
def test_smollm2_certificates_verify_in_a_fresh_process(tmp_path, capsys):
    out = tmp_path / "certify.jsonl"
    assert main(["certify", "--model", "smollm2", "--data", "demo:test", "--sample", "2", "--seed", "3",
                 "--source", "truncate", "--radius", "1", "--output", str(out), "--json"]) == 0
    capsys.readouterr()
    verified = subprocess.run([sys.executable, "-m", "robustcount", "verify", str(out)], capture_output=True,
                              text=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "all 2 certificates hold" in verified.stdout


def test_a_prompt_file_is_recorded_as_its_template_and_verifies_once_gone(tiny_lm_dir, tmp_path, capsys):
    prompt, out = tmp_path / "prompt.txt", tmp_path / "certify.jsonl"
    prompt.write_text(PROMPT, encoding="utf-8")
    model = ["--model", f"llm:{tiny_lm_dir}", "--verbalizer", VERBALIZER]
    assert main(["certify", *model, "--prompt", str(prompt), "--data", "demo:test", "--first", "6", "--radius", "1",
                 "--source", "truncate", "--output", str(out), "--json"]) == 0
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["models"][0]["prompt"] == PROMPT
    prompt.unlink()  # another machine: the run file alone says what was asked
    assert main(["verify", str(out), *model]) == 0
    capsys.readouterr()


@pytest.mark.slow
@pytest.mark.parametrize("text", ["Nothing special but still good fun.", "A dull, lifeless mess."])
def test_smollm2_proofs_agree_with_brute_force_one_text_at_a_time(smollm2, text):
    """The prover (cache reuse on) against every point of the space run alone without it."""
    space = build_space(text, ["truncate"])
    smollm2.prefix_reuse = True
    gold = int(smollm2.predict_proba([text])[0].argmax())
    proofs = certify_radii(QueryEngine(smollm2), space, gold, 1)
    smollm2.prefix_reuse = False
    try:
        adversarial = [bool(is_adversarial(smollm2.predict_proba([space.apply(point)]), gold)[0])
                       for point in space.points(1)]
    finally:
        smollm2.prefix_reuse = True
    assert len(adversarial) == len(space.positions) + 1 > 3  # the text itself, and each word truncated
    assert proofs[0].status == (ADVERSARIAL if any(adversarial) else CERTIFIED)


@pytest.mark.parametrize("model", ["smollm2", "llm:./some-lm"])
def test_harden_refuses_a_language_model_in_one_line(model, tmp_path, capsys):
    assert main(["harden", "--model", model, "--out", str(tmp_path / "hardened")]) == 1
    assert "is a prompted language model: harden does not train language models" in capsys.readouterr().err


RECIPES = ["pdp", "textfooler", "exhaustive", "a2t", "alzantot", "bae", "bert-attack", "deepwordbug", "pso", "pwws",
           "textbugger"]


@pytest.mark.slow
def test_every_command_and_recipe_runs_on_a_local_causal_lm(tiny_lm_dir, tmp_path, capsys):
    model = ["--model", f"llm:{tiny_lm_dir}", "--prompt", PROMPT, "--verbalizer", VERBALIZER]
    data = ["--data", "demo:test", "--first", "1", "--seed", "0"]
    for recipe in RECIPES:
        assert main(["attack", *model, *data, "--recipe", recipe, "--budget", "40", "--json"]) == 0, recipe
    certificates = tmp_path / "certify.jsonl"
    for command in (["radius", "--radius", "1", "--source", "truncate"], ["estimate", "--source", "truncate"],
                    ["evaluate"]):
        assert main([command[0], *model, *data, *command[1:], "--json"]) == 0, command[0]
    # six examples, so that the random model gets some right and certify has certificates to write
    assert main(["certify", *model, *data[:2], "--first", "6", "--radius", "1", "--source", "truncate",
                 "--output", str(certificates), "--json"]) == 0
    assert main(["compare", *model, "--model", "bow-rt", *data[:2], "--first", "6", "--source", "truncate",
                 "--json"]) == 0
    assert main(["verify", str(certificates), *model]) == 0
    assert main(["predict", *model, "a warm film", "--json"]) == 0
    capsys.readouterr()


def test_a_long_text_is_cut_at_the_window_and_spaces_and_certificates_keep_to_it(tiny_lm_dir, tiny_lm, tmp_path,
                                                                                capsys):
    """The tiny LM reads 256 positions less its longest answer: a text past that is cut after its
    last token that fits, the prompt's own parts whole; the words beyond change nothing, spaces
    leave them out, and a certify run says so and its certificates verify."""
    engine = QueryEngine(tiny_lm)
    assert engine.window.size == f"{tiny_lm.max_length}-token" and tiny_lm.max_length < 256
    assert engine.window.end("a good film with a warm story") is None
    long_text = " ".join(WORDS[i % len(WORDS)] for i in range(400))
    end = engine.window.end(long_text)
    assert end is not None and 0 < end < len(long_text)
    beyond = long_text[:end] + " " + " ".join(["slow"] * 50)
    expected = tiny_lm.predict_proba([long_text[:end]])
    np.testing.assert_allclose(tiny_lm.predict_proba([long_text, beyond]), np.vstack([expected, expected]), atol=1e-6)
    space = SpaceBuilder(["synonyms"], Filters(), 0, engine.window)(long_text)
    visible = sum(e <= end for _, e in tokenize(long_text).spans())
    assert space.window["beyond"] == 400 - visible > 0 and all(p.index < visible for p in space.positions)
    data = tmp_path / "long.jsonl"
    data.write_text(json.dumps({"id": "long", "text": long_text, "label": "positive"}) + "\n", encoding="utf-8")
    model = ["--model", f"llm:{tiny_lm_dir}", "--prompt", PROMPT, "--verbalizer", VERBALIZER]
    run = tmp_path / "run.jsonl"
    assert main(["certify", *model, "--data", str(data), "--radius", "1", "--output", str(run)]) == 0
    assert f"{400 - visible} of 400 words (in 1 of the 1 texts) beyond the model's {tiny_lm.max_length}-token " \
        "window: left out" in capsys.readouterr().out
    assert main(["verify", str(run), *model]) == 0
