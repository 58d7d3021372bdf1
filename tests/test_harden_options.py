"""`harden`'s and `augment`'s options: each variant's own (what is trained, which copies), refused
in one line where they do not apply, grouped in --help, and recorded in cards as they always were."""

import pytest

from robustcount.cli import main
from robustcount.spaces.build import Filters, SpaceSpec
from robustcount.spaces.perturbers import PERTURBERS
from robustcount.training import CertifiedTraining, FamilyTraining, HardenSpec, ModelTraining, TrainingCopies
from robustcount.training.copies import SpaceCopies, TrainingAttack, ZeroeCopies


@pytest.mark.parametrize("argv, refused", [
    (["harden", "--augment", "zeroe", "--radius", "2"], "--radius applies to --augment space, not zeroe"),
    (["harden", "--augment", "space", "--attacker", "keyboard"], "--attacker applies to --augment zeroe, not space"),
    (["harden", "--augment", "zeroe", "--attack-sample", "5"], "--attack-sample applies to --augment pdp or "),
    (["harden", "--family", "word-cnn", "--lora"], "--lora applies to --model, not --family"),
    (["harden", "--family", "word-cnn", "--certified-training", "--held-out", "0.2"],
     "--held-out applies to --model, not --certified-training"),
    (["harden", "--model", "tfidf-rt", "--certified-kappa", "0.5"],
     "--certified-kappa applies to --certified-training, not --model"),
    (["harden", "--family", "word-cnn", "--learning-rate", "1e-4"],
     "--learning-rate applies to --certified-training or --model, not --family"),
    (["augment", "--method", "space", "--model", "bow-rt"], "--model applies to --method pdp or "),
])
def test_an_option_of_another_variant_is_refused_in_one_line_naming_both(argv, refused, capsys, tmp_path):
    out = tmp_path / "never"
    given = [*argv, "--data", str(tmp_path / "missing.csv")] + (["--out", str(out)] if argv[0] == "harden" else [])
    assert main(given) == 2  # before any data is read
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and refused in err, err
    assert not out.exists()


def test_model_and_certified_training_together_are_refused_in_one_line(capsys, tmp_path):
    assert main(["harden", "--model", "tfidf-rt", "--certified-training", "--out", str(tmp_path / "never")]) == 1
    assert capsys.readouterr().err == ("robustcount: error: --certified-training trains a word-cnn or word-lstm family "
                                       "(--family), not a --model\n")


def test_harden_help_groups_each_variants_options_under_its_heading(capsys):
    assert main(["harden", "--help"]) == 0
    text = capsys.readouterr().out
    headings = [line for line in text.splitlines() if line.startswith("With ")]
    assert headings[:5] == ["With --family:", "With --certified-training:", "With --model:", "With --augment space:",
                            "With --augment zeroe:"]
    assert len(headings) == 6 and headings[5].startswith("With --augment pdp or textfooler or ")  # the recipes: one
    shared = [line.split()[0] for line in text.split("With --family:")[0].splitlines() if line.startswith("  --")]
    assert "--augment" in shared and not {"--lora", "--radius", "--certified-kappa", "--family"} & set(shared)


def test_cards_record_each_trainings_fields_under_the_names_they_always_had():
    """The card's and the resumable work folder's record of a spec: the fields that apply, named
    as before the spec had variants (so that a training started then resumes now)."""
    zeroe = HardenSpec(FamilyTraining("word-lstm"), copies=TrainingCopies(settings=ZeroeCopies(("truncate",))))
    assert zeroe.recorded() == {"family": "word-lstm", "augment": "zeroe", "attackers": ("truncate",),
                                "levels": ("low", "mid", "high"), "copies": 1, "epochs": None, "seed": 0, "threads": 2}
    assert HardenSpec().recorded()["attackers"] == tuple(PERTURBERS)
    certified = HardenSpec(CertifiedTraining("word-cnn", init_from="cnn-rt"), copies=TrainingCopies("none"), epochs=2)
    assert certified.recorded() == {
        "family": "word-cnn", "certified": True, "kappa": 0.8, "ramp": None, "box_words": None, "init_from": "cnn-rt",
        "train_embeddings": False, "embeddings_only": False, "learning_rate": None, "augment": "none",
        "sources": ["synonyms"], "epochs": 2, "seed": 0, "threads": 2}
    model = HardenSpec(ModelTraining("tfidf-rt"), copies=TrainingCopies("space", SpaceCopies(radius=2),
                                                                            SpaceSpec(("keyboard",))))
    assert model.recorded() == {"model": "tfidf-rt", "lora": False, "refresh": "once", "learning_rate": None,
                                "batch_size": 32, "held_out": 0.1, "augment": "space", "sources": ["keyboard"],
                                "radius": 2, "copies": 1, "epochs": None, "seed": 0, "threads": 2}
    attack = HardenSpec(FamilyTraining("word-cnn"), copies=TrainingCopies("pdp", {"attack_sample": 25}))
    assert attack.copies.settings == TrainingAttack(25)
    assert {k: v for k, v in attack.recorded().items() if k in ("augment", "attack_sample")} == {
        "augment": "pdp", "attack_sample": 25}
    filtered = HardenSpec(copies=TrainingCopies("space", space=SpaceSpec(filters=Filters(min_length=4))))
    assert filtered.recorded()["filters"]["min_length"] == 4  # recorded where a space is used and not the default
    unused = HardenSpec(copies=TrainingCopies(space=SpaceSpec(("keyboard",), Filters(min_length=4))))
    assert unused.recorded() == HardenSpec().recorded()  # Zéroe copies: no space, none recorded, as before


def test_the_kind_of_the_trainee_chooses_what_is_trained():
    assert HardenSpec(ModelTraining("tfidf-rt")).trains == "model"
    assert HardenSpec(CertifiedTraining("word-lstm")).trains == "certified"
    assert HardenSpec().trains == "family" and HardenSpec().trainee == FamilyTraining("minilm-head")
