"""Certified (IBP) training (`training/certified.py`): its loss bounds the worst point's loss from
above (brute force over small boxes), the schedule ramps as documented, the candidate columns are
the sound engine's, and a tiny `harden --certified-training` is deterministic, resumable and
writes a model every command loads."""

import itertools
import json

import pytest
import torch

from robustcount.bounds.networks import bounds_for
from robustcount.bounds.slots import token_slots
from robustcount.cli import main
from robustcount.data import DEMO_LABELS, load_demo
from robustcount.errors import RobustcountError
from robustcount.models.families import family_named
from robustcount.models.families.word_networks import Objective, shared_embeddings
from robustcount.models.model_dir import CARD_FILE, WEIGHTS_FILE
from robustcount.models.zoo import load_model
from robustcount.spaces.build import SpaceSpec
from robustcount.models.families import TrainingJob
from robustcount.training import CertifiedTraining, HardenSpec, Sitting, TrainingCopies, harden
from robustcount.training.certified import (
    CertifiedObjective,
    Schedule,
    candidate_universe,
    changeable_columns,
    difference_lower_bounds,
    worst_case_loss,
)
from robustcount.training.harden import WORK


def random_network(family: str, seed: int):
    torch.manual_seed(seed)
    _, vectors = shared_embeddings()
    return family_named(family).build(vectors, 2, family_named(family).options).eval()


def small_boxes(count: int, seed: int):
    """`count` random texts of 3 to 9 word ids, each with 1 to 3 columns of 1 to 3 candidate ids."""
    generator = torch.Generator().manual_seed(seed)
    vocabulary = len(shared_embeddings()[0]) + 2
    for _ in range(count):
        words = int(torch.randint(3, 10, (1,), generator=generator))
        ids = torch.randint(2, vocabulary, (1, max(words, 5)), generator=generator)
        ids[0, words:] = 0
        changed = torch.randperm(words, generator=generator)[: int(torch.randint(1, 4, (1,), generator=generator))]
        columns = tuple((int(c), tuple(torch.randint(2, vocabulary, (int(torch.randint(1, 4, (1,),
                                                                                        generator=generator)),),
                                                     generator=generator).tolist())) for c in sorted(changed))
        yield ids, columns, torch.randint(0, 2, (1,), generator=generator)


def points(ids, columns):
    """Every text of the box: each changeable column at its clean id or one of its candidates."""
    for choice in itertools.product(*[(None, *found) for _, found in columns]):
        point = ids.clone()
        for (column, _), chosen in zip(columns, choice):
            if chosen is not None:
                point[0, column] = chosen
        yield point


@pytest.mark.parametrize("family", ["word-cnn", "word-lstm"])
def test_the_interval_loss_bounds_the_worst_points_loss(family):
    networks = [random_network(family, 0), load_model("cnn-rt" if family == "word-cnn" else "lstm-rt",
                                                      device="cpu").module.eval()]
    checked = 0
    for network, (ids, columns, gold) in itertools.product(networks, small_boxes(12, 1)):
        universe = candidate_universe(ids, [columns])
        with torch.no_grad():
            box = torch.cat(list(points(ids, columns)))
            losses = torch.nn.functional.cross_entropy(network(box), gold.expand(len(box)), reduction="none")
            bound = worst_case_loss(difference_lower_bounds(network, ids, universe, gold))
            assert float(bound) >= float(losses.max()) - 1e-5
            assert float(worst_case_loss(difference_lower_bounds(network, ids, universe, gold, 0.0))) \
                == pytest.approx(float(losses[0]), abs=1e-4)  # epsilon 0: the clean text alone
            assert float(worst_case_loss(difference_lower_bounds(network, ids, universe, gold, 0.5))) \
                <= float(bound) + 1e-6
        checked += len(box)
    assert checked > 100


def test_the_bounds_are_differentiable_and_batched_like_each_text_alone():
    network = random_network("word-cnn", 2)
    boxes = list(small_boxes(4, 3))
    width = max(ids.shape[1] for ids, _, _ in boxes)
    ids = torch.cat([torch.nn.functional.pad(i, (0, width - i.shape[1])) for i, _, _ in boxes])
    gold = torch.cat([g for _, _, g in boxes])
    lower = difference_lower_bounds(network, ids, candidate_universe(ids, [c for _, c, _ in boxes]), gold)
    for row, (one, columns, g) in enumerate(boxes):
        alone = difference_lower_bounds(network, one, candidate_universe(one, [columns]), g)
        assert torch.allclose(lower[row], alone[0], atol=1e-5)
    worst_case_loss(lower).backward()
    assert network.convolutions[0].weight.grad.abs().sum() > 0


def test_the_schedule_ramps_linearly_then_holds():
    schedule = Schedule(ramp=4, kappa=0.8)
    assert [schedule.epsilon(p) for p in (0, 1, 2, 4, 7)] == [0.0, 0.25, 0.5, 1.0, 1.0]
    assert schedule.weight(2) == pytest.approx(0.4) and schedule.weight(9) == pytest.approx(0.8)
    assert [schedule.keeps(e, 10) for e in (3, 4, 5)] == [False, True, True]
    assert Schedule(ramp=12).keeps(10, 10) and not Schedule(ramp=12).keeps(9, 10)
    assert Schedule(ramp=0).epsilon(0) == 1.0


def test_the_training_loop_reports_its_progress_through_each_epoch(monkeypatch):
    seen = []
    original = Objective.loss

    def recording(self, network, ids, targets, batch, progress):
        seen.append(progress)
        return original(self, network, ids, targets, batch, progress)

    monkeypatch.setattr(Objective, "loss", recording)
    train = load_demo("train")[:300]
    family = family_named("word-cnn")
    from robustcount.models.families.word_networks import train_word_network

    train_word_network(family, TrainingJob([e.input for e in train], [DEMO_LABELS.index(e.label) for e in train],
                                           list(range(len(train))), 2, None, epochs=2, log=lambda line: None))
    per_epoch = len(seen) // 2
    assert seen[per_epoch - 1] == 1.0 and seen[-1] == 2.0 and seen[0] == pytest.approx(1 / per_epoch)
    assert seen == sorted(seen)


def test_the_candidate_columns_are_the_sound_engines_slots():
    tokenizer, builder = family_named("word-cnn").tokenizer(), SpaceSpec().builder(0)
    compared = 0
    for example in load_demo("test")[:60]:
        space = builder(example.input)
        slots = token_slots(tokenizer, space)
        expected = {slots.column[p]: set(ids[1:]) - {ids[0]} for p, ids in enumerate(slots.candidate_ids) if ids}
        found = {column: set(ids) for column, ids in changeable_columns(tokenizer, space)}
        assert found == {c: ids for c, ids in expected.items() if ids}
        compared += len(found)
    assert compared > 50


DATA = {"spec": "demo:train", "sample": "first 80"}
NONE = TrainingCopies("none")


def test_a_tiny_certified_training_is_deterministic_resumable_and_loads_everywhere(tmp_path, capsys):
    examples = load_demo("train")[:80]
    spec = HardenSpec(CertifiedTraining("word-cnn", ramp=1.0, init_from="cnn-rt"), copies=NONE, epochs=2)
    quiet = lambda line: None  # noqa: E731
    harden(spec, examples, DATA, tmp_path / "whole", Sitting(progress=False, log=quiet), evaluate=False)

    def stop_in_epoch_2(line):
        if "epoch 2" in line:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        harden(spec, examples, DATA, tmp_path / "cut", Sitting(progress=False, log=stop_in_epoch_2), evaluate=False)
    assert (tmp_path / "cut" / WORK / "network.pt").exists()
    harden(spec, examples, DATA, tmp_path / "cut", Sitting(resume=True, progress=False, log=quiet), evaluate=False)
    assert (tmp_path / "cut" / WEIGHTS_FILE).read_bytes() == (tmp_path / "whole" / WEIGHTS_FILE).read_bytes()
    training = json.loads((tmp_path / "whole" / CARD_FILE).read_text())["training"]
    assert training["certified"] and training["kappa"] == 0.8 and training["ramp"] == 1
    assert training["certified_training"]["texts_with_candidates"] > 50 and len(training["held_out_certified"]) == 2

    model = str(tmp_path / "cli")
    assert main(["harden", "--family", "word-lstm", "--certified-training", "--augment", "none", "--sample", "40",
                 "--epochs", "1", "--init-from", "lstm-rt", "--no-evaluate", "--out", model]) == 0
    assert "load it with --model" in capsys.readouterr().out
    assert main(["evaluate", "--model", model, "--sample", "20", "--json"]) == 0
    assert main(["certify", "--model", model, "--sample", "3", "--radius", "2",
                 "--output", str(tmp_path / "certify.jsonl")]) == 0
    assert main(["verify", str(tmp_path / "certify.jsonl"), "--model", model]) == 0
    assert main(["attack", "--model", model, "--sample", "3", "--output", str(tmp_path / "attack.jsonl")]) == 0
    assert main(["estimate", "--model", model, "--sample", "2", "--output", str(tmp_path / "estimate.jsonl")]) == 0
    assert main(["predict", "--model", model, "a fine film"]) == 0
    assert bounds_for(load_model(model, device="cpu")) is not None


def test_certified_training_is_refused_where_it_does_not_apply():
    with pytest.raises(RobustcountError, match="word-cnn and word-lstm"):
        CertifiedTraining("minilm-head")
    with pytest.raises(RobustcountError, match="word-cnn and word-lstm"):
        HardenSpec(trains="certified")  # the default family, minilm-head
    with pytest.raises(RobustcountError, match="kappa must be more than 0"):
        CertifiedTraining("word-cnn", kappa=0.0)
    with pytest.raises(RobustcountError, match="bad options for the training model"):
        HardenSpec(trains="model", trainee={"model": "tfidf-rt", "kappa": 0.5})


def test_a_warm_start_begins_from_the_given_network_and_trained_embeddings_are_saved(tmp_path, capsys):
    examples = load_demo("train")[:80]
    quiet = lambda line: None  # noqa: E731
    for name, train_embeddings, learning_rate, embeddings_only in (("warm", True, None, False),
                                                                   ("frozen", False, 1e-4, False),
                                                                   ("embeddings", True, None, True)):
        spec = HardenSpec(CertifiedTraining("word-cnn", ramp=1.0, init_from="cnn-rt", train_embeddings=train_embeddings,
                                            learning_rate=learning_rate, embeddings_only=embeddings_only),
                          copies=NONE, epochs=1)
        harden(spec, examples, DATA, tmp_path / name, Sitting(progress=False, log=quiet), evaluate=False)
    natural = load_model("cnn-rt", device="cpu").module.state_dict()
    seeds = random_network("word-cnn", 0).state_dict()  # where a training without --init-from begins
    states = {name: load_model(str(tmp_path / name), device="cpu").module.state_dict()
              for name in ("warm", "frozen", "embeddings")}
    assert all(torch.equal(tensor, natural[key]) for key, tensor in states["embeddings"].items()
               if key != "embedding.weight")  # --embeddings-only: the network stays cnn-rt's
    assert not torch.equal(states["embeddings"]["embedding.weight"], natural["embedding.weight"])  # they trained
    states.pop("embeddings")
    distance = {name: max(float((tensor - natural[key]).abs().max()) for key, tensor in state.items())
                for name, state in states.items()}
    assert distance["frozen"] < 2.5e-4 < distance["warm"] < 2.5e-3  # two Adam steps from cnn-rt's, of 1e-4 and 1e-3
    for state in states.values():  # far from the seed's
        assert max(float((tensor - seeds[key]).abs().max()) for key, tensor in state.items()) > 0.01
    moved = (states["warm"]["embedding.weight"] - natural["embedding.weight"]).abs().amax(dim=1)
    assert moved[2:].max() > 0 and moved[0] == 0  # trained, saved and loaded; the pad row stays zero
    assert torch.equal(states["frozen"]["embedding.weight"], natural["embedding.weight"])  # frozen: GloVe
    training = json.loads((tmp_path / "warm" / CARD_FILE).read_text())["training"]
    assert training["init_from"] == "cnn-rt" and training["train_embeddings"] and training["learning_rate"] is None
    assert json.loads((tmp_path / "frozen" / CARD_FILE).read_text())["training"]["learning_rate"] == 1e-4
    with pytest.raises(RobustcountError, match="not a word-cnn network"):
        harden(HardenSpec(CertifiedTraining("word-cnn", init_from="lstm-rt"), copies=NONE, epochs=1), examples, DATA,
               tmp_path / "wrong", Sitting(progress=False, log=quiet), evaluate=False)
    assert not (tmp_path / "wrong").exists()
    with pytest.raises(RobustcountError, match="has trained embeddings"):  # frozen here, they would not be saved
        harden(HardenSpec(CertifiedTraining("word-cnn", init_from=str(tmp_path / "warm")), copies=NONE, epochs=1),
               examples, DATA, tmp_path / "wrong", Sitting(progress=False, log=quiet), evaluate=False)
    for given in ("--init-from cnn-rt", "--train-embeddings", "--certified-box-words 2", "--embeddings-only",
                  "--learning-rate 1e-4", "--certified-kappa 0.5", "--certified-ramp 1"):
        capsys.readouterr()
        assert main(["harden", "--family", "word-cnn", *given.split(), "--out", str(tmp_path / "never")]) == 2
        assert f"{given.split()[0]} applies to --certified-training" in capsys.readouterr().err
    assert not (tmp_path / "never").exists()
    with pytest.raises(RobustcountError, match="--embeddings-only trains the embeddings of a warm start"):
        CertifiedTraining("word-cnn", init_from="cnn-rt", embeddings_only=True)


def test_a_box_of_k_words_lets_k_of_a_texts_columns_range_drawn_by_the_generator():
    tokenizer, builder = family_named("word-lstm").tokenizer(), SpaceSpec().builder(0)
    texts = [changeable_columns(tokenizer, builder(e.input)) for e in load_demo("train")[:40]]
    whole = CertifiedObjective(texts, Schedule(1), 1, CertifiedTraining("word-lstm"))
    boxes = CertifiedObjective(texts, Schedule(1), 1, CertifiedTraining("word-lstm", box_words=2))
    torch.manual_seed(0)
    drawn = [boxes.box_columns(text) for text in texts]
    torch.manual_seed(0)
    assert [boxes.box_columns(text) for text in texts] == drawn  # the generator's draws: resumable
    assert all(whole.box_columns(text) == text for text in texts)
    assert all(len(box) == min(2, len(text)) and set(box) <= set(text) for box, text in zip(drawn, texts))
    assert any(len(text) > 2 for text in texts) and len({box for box, text in zip(drawn, texts) if len(text) > 2}) > 1
    network = random_network("word-lstm", 0)
    ids = family_named("word-lstm").tokenizer()([e.input for e in load_demo("train")[:40]]).inputs["input_ids"]
    gold = torch.zeros(len(texts), dtype=torch.long)
    with torch.no_grad():  # a box of fewer ranging words lies inside the whole one: its bounds are no looser
        lower_whole = difference_lower_bounds(network, ids, candidate_universe(ids, texts), gold)
        lower_box = difference_lower_bounds(network, ids, candidate_universe(ids, drawn), gold)
    assert bool((lower_box >= lower_whole - 1e-5).all()) and bool((lower_box > lower_whole + 1e-4).any())


# Held-out figures a real training recorded (docs/hardening/certified-training.md, "Choosing the
# recipe": lstm-rt-ibp-warm-emb-k05, ramp 3, stopped after epoch 5): at epoch 4 the network
# answered the validation's most common label (57.25%) for every text, and its bound "certified"
# the most.
COLLAPSING_RUN = {"certified": [0.055, 0.267, 0.41, 0.5716, 0.453],
                  "accuracy": [0.729, 0.681, 0.609, 0.5725, 0.615], "majority_share": [0.5725] * 5}


def test_the_epoch_kept_is_never_a_collapsed_one():
    objective = CertifiedObjective([], Schedule(ramp=3, kappa=0.5), 6, CertifiedTraining("word-cnn"))
    assert objective.kept(COLLAPSING_RUN) == 5  # certifies less than epoch 4, but reads its input
    assert objective.kept({name: values[:4] for name, values in COLLAPSING_RUN.items()}) == 3
    assert objective.kept({name: values[:2] for name, values in COLLAPSING_RUN.items()}) == 0  # within the ramp
    assert Objective().kept({"accuracy": [0.7, 0.74, 0.74, 0.71]}) == 2  # natural training: the best accuracy


def test_a_training_that_collapses_at_every_epoch_writes_no_model(tmp_path, capsys):
    examples = load_demo("train")[:80]  # 72 texts to train on from random weights: no better than one label
    log = []
    with pytest.raises(RobustcountError, match=r"certified training collapsed: .*\(at best 0\.5000\) is no higher "
                                               r"than always answering the most common label \(0\.5000\)"):
        harden(HardenSpec(CertifiedTraining("word-cnn", ramp=1.0), copies=NONE, epochs=2), examples, DATA,
               tmp_path / "collapsed", Sitting(progress=False, log=log.append), evaluate=False)
    assert log == ["word-cnn epoch 1: held-out certified 0.2500, accuracy 0.5000, majority_share 0.5000",
                   "word-cnn epoch 2: held-out certified 0.3750, accuracy 0.5000, majority_share 0.5000"]
    assert not (tmp_path / "collapsed" / WEIGHTS_FILE).exists()
    assert main(["harden", "--family", "word-cnn", "--certified-training", "--augment", "none", "--sample", "80",
                 "--epochs", "1", "--no-evaluate", "--out", str(tmp_path / "cli")]) != 0
    said = capsys.readouterr().err.strip().splitlines()
    assert said[-1].count("collapsed") == 1 and "Traceback" not in "".join(said)
