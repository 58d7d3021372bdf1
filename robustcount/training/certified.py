"""Certified (IBP) training of the word networks (`word-cnn`, `word-lstm`), after Jia et al. 2019
("Certified Robustness to Adversarial Word Substitutions"): each training text's loss mixes its
clean cross-entropy with an upper bound of the worst cross-entropy over every point of its space,

    loss = (1 - kappa) * CE(clean logits) + kappa * log(1 + sum_j exp(-l_j)),

where l_j is a lower bound of z_gold - z_j over the box in which every changeable word ranges over
its candidates (all of them at once: the whole space, so every radius) and the right-hand term is
the cross-entropy of the worst-case logits (z_gold - z_j at its lower bound for every j; the
cross-entropy falls as each difference rises, so it bounds every point's loss from above).
Bounding the differences directly, through the rows W_gold - W_j of the output layer, is tighter
than a lower bound of z_gold and upper bounds of the other logits taken apart.

The bounds are interval bounds, differentiable, in the model's precision and without the
rounding widening the sound engine adds (`bounds/relaxed.py`, shared with the sound bounds:
training needs no proof; certification always goes through `bounds/networks.py`). As that
engine does, the first layer over a word's candidates is bounded exactly per output: the CNN's
convolution per filter and column, the LSTM's input projection per gate. epsilon scales the box
towards the clean text: a column's bound is the clean value plus epsilon times the candidates'
lowest (highest) change, the bound of the embeddings interpolated between the clean word and its
candidates. The schedule (`Schedule`): epsilon and kappa rise linearly from 0 over the first
`ramp` epochs (step by step), then hold at 1 and `kappa`; the epoch kept is the one, from the
ramp's end on, whose held-out texts the training bound certifies most often, never one whose
held-out accuracy is no higher than always answering the most common label (`collapsed`: a
network that ignores its input, which the bound "certifies" everywhere); when every epoch from the
ramp's end on collapsed, the training is refused and writes no model. A training may
start from a trained network of the family (`initial_weights`: a warm start, as from `cnn-rt`)
and may train the embeddings too (frozen by default), which lets a word's candidates move
towards it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import torch
from torch import nn

from robustcount.errors import RobustcountError
from robustcount.models.families import Trained, TrainingJob, family_field, family_named
from robustcount.models.families.word_networks import (
    PAD,
    WIDTHS,
    word_embedding,
    LEARNING_RATE,
    GloveWords,
    Objective,
    WordCNN,
    WordLSTM,
    WordNetwork,
    accuracy,
    shared_embeddings,
)
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.zoo import load_model
from robustcount.bounds.relaxed import convolution_max_pool, lstm_max_pool, output_lower_bounds
from robustcount.options import option, options_dataclass
from robustcount.spaces.build import SpaceSpec
from robustcount.spaces.space import Space
from robustcount.text import tokenize

KAPPA = 0.8
"""The final weight of the worst-case loss (Jia et al. 2019)."""

Columns = tuple[tuple[int, tuple[int, ...]], ...]
"""A text's changeable columns: (column, the token ids its candidates give, never the clean one)."""


def learning_rate_field(help: str):
    """The learning rate, declared alike wherever a training takes one (None: the training's own)."""
    return field(default=None, metadata=option(help, minimum=0, open_minimum=True, kind=float))


@options_dataclass
class CertifiedTraining:
    """A certified training of a network of the word family `family` (the module docstring), as
    each field's help says; the options `harden --certified-training` takes, passed down whole."""

    family: str = family_field()
    kappa: float = field(default=KAPPA, metadata=option(
        "the worst-case loss's final weight (the clean loss gets 1 - kappa).", names=("--certified-kappa",),
        minimum=0, maximum=1, open_minimum=True))
    ramp: float | None = field(default=None, metadata=option(
        "epochs over which epsilon and kappa rise linearly from 0 (default: half the epochs).",
        names=("--certified-ramp",), minimum=0, kind=float))
    box_words: int | None = field(default=None, metadata=option(
        "let only this many of a text's changeable words range over their candidates in a training box, drawn "
        "afresh for each text at each step (default: all of them, the whole space).", names=("--certified-box-words",),
        minimum=1, kind=int))
    init_from: str | None = field(default=None, metadata=option(
        "start from this trained network of the family (cnn-rt, lstm-rt or a model directory) instead of random "
        "weights.", kind=str))
    train_embeddings: bool = field(default=False, metadata=option(
        "train the GloVe embeddings too (saved in the model directory) instead of keeping them frozen.", flag=True))
    embeddings_only: bool = field(default=False, metadata=option(
        "with --init-from and --train-embeddings: train the embeddings only; the network's own weights stay those "
        "it starts from.", flag=True))
    learning_rate: float | None = learning_rate_field("Adam's learning rate (default 1e-3).")

    def __post_init__(self):
        word_network(self.family)
        if self.embeddings_only and not (self.init_from and self.train_embeddings):
            raise RobustcountError("--embeddings-only trains the embeddings of a warm start: give --init-from "
                                   "and --train-embeddings too")

    def recorded(self) -> dict:
        """What a hardened model's card records of it (as cards always have)."""
        return {"certified": True, **asdict(self)}


@dataclass(frozen=True)
class Schedule:
    """epsilon and kappa after `progress` epochs of training: both rise linearly from 0 to 1 and
    `kappa` over the first `ramp` epochs, then hold (with `ramp` 0, they hold from the start)."""

    ramp: float
    kappa: float = KAPPA

    def epsilon(self, progress: float) -> float:
        return 1.0 if self.ramp == 0 else min(1.0, progress / self.ramp)

    def weight(self, progress: float) -> float:
        """kappa at `progress`."""
        return self.kappa * self.epsilon(progress)

    def keeps(self, epoch: int, epochs: int) -> bool:
        """Whether the weights after `epoch` (1-based, of `epochs`) may be kept: the ramp is done
        (or it is the last epoch)."""
        return epoch >= self.first_kept(epochs)

    def first_kept(self, epochs: int) -> int:
        """The first epoch (1-based, of `epochs`) whose weights may be kept."""
        return max(1, min(math.ceil(self.ramp), epochs))


def changeable_columns(tokenizer: GloveWords, space: Space) -> Columns:
    """Where `space`'s word changes reach a word network (one token id per word: word i is column
    i) and the ids they give. A candidate of several words (which would shift the columns) and
    gaps (which the networks do not see) are left out; the clean id is never listed."""
    found = []
    for position in space.positions:
        if position.kind != "word":
            continue
        clean = tokenizer.word_ids(position.candidates[0])[0]
        ids = {tokenizer.word_ids(c)[0] for c in position.candidates[1:] if len(tokenize(c).words) == 1} - {clean}
        if ids:
            found.append((position.index, tuple(sorted(ids))))
    return tuple(found)


def candidate_universe(ids: torch.Tensor, columns: Sequence[Columns]) -> torch.Tensor:
    """Every column's token ids, the clean one first: shape (texts, width, K), padded with the
    clean id (which changes no bound), for the texts encoded as `ids` with their `columns`."""
    most = max([len(c) for text in columns for _, c in text] + [0])
    universe = ids[..., None].repeat(1, 1, most + 1)
    for row, text in enumerate(columns):
        for column, found in text:
            universe[row, column, 1 : len(found) + 1] = torch.tensor(found)
    return universe


def difference_lower_bounds(network: nn.Module, ids: torch.Tensor, universe: torch.Tensor, targets: torch.Tensor,
                            epsilon: float = 1.0) -> torch.Tensor:
    """Lower bounds of z_gold - z_j over each text's box scaled by `epsilon` (see the module
    docstring), differentiable: shape (texts, labels), 0 at the gold label. Dropout is not applied."""
    if isinstance(network, WordCNN):
        pooled = convolution_max_pool(network.embedding, network.convolutions, ids, universe, epsilon)
    elif isinstance(network, WordLSTM):
        pooled = lstm_max_pool(network.embedding, network.lstm, ids, universe, epsilon)
    else:
        raise RobustcountError(f"certified training supports the word-cnn and word-lstm networks, not a "
                               f"{type(network).__name__}")
    return output_lower_bounds(network.out, pooled, targets)


def worst_case_loss(lower: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy of the worst-case logits given the difference bounds `lower`
    (0 at the gold label): log(1 + sum_j exp(-l_j)) per text."""
    return torch.logsumexp(-lower, dim=1).mean()


class CertifiedObjective(Objective):
    """The certified training's loss (the module docstring) for the texts whose changeable
    columns are `columns[i]`, on `schedule`, over `epochs` epochs, as `training` says (its boxes,
    learning rate, and whether the embeddings alone move)."""

    def __init__(self, columns: Sequence[Columns], schedule: Schedule, epochs: int, training: CertifiedTraining):
        self.columns, self.schedule, self.epochs, self.training = columns, schedule, epochs, training
        self.box_words = training.box_words
        self.learning_rate = LEARNING_RATE if training.learning_rate is None else training.learning_rate

    def moves(self, name):
        return name == "embedding.weight" or not self.training.embeddings_only

    def box_columns(self, text: Columns) -> Columns:
        """The columns of `text` a training box lets range: all of them, or `box_words` of them
        drawn by torch's generator (which a checkpoint saves, so a resumed training draws the same)."""
        if self.box_words is None or len(text) <= self.box_words:
            return text
        return tuple(text[i] for i in sorted(torch.randperm(len(text))[: self.box_words].tolist()))

    def loss(self, network, ids, targets, batch, progress):
        clean = nn.functional.cross_entropy(network(ids), targets)
        kappa = self.schedule.weight(progress)
        if kappa == 0:
            return clean
        universe = candidate_universe(ids, [self.box_columns(self.columns[i]) for i in batch])
        lower = difference_lower_bounds(network, ids, universe, targets, self.schedule.epsilon(progress))
        return (1 - kappa) * clean + kappa * worst_case_loss(lower)

    def held_out(self, network, encoded, targets, held):
        """The share of the held-out texts whose whole box the training bound certifies (every
        z_gold - z_j above 0), which chooses, their accuracy, and the share of their most common
        label (what a network answering that label everywhere scores)."""
        network.eval()
        certified = 0
        with torch.no_grad():
            for start in range(0, len(held), 500):
                chunk = list(held[start : start + 500])
                ids = encoded[start : start + 500]
                ids = ids[:, : max(max(WIDTHS), int((ids != PAD).sum(dim=1).max()))]
                lower = difference_lower_bounds(network, ids, candidate_universe(ids, [self.columns[i] for i in chunk]),
                                                targets[start : start + 500])
                others = torch.ones_like(lower, dtype=torch.bool).scatter(1, targets[start : start + 500, None], False)
                certified += int(torch.where(others, lower > 0, True).all(dim=1).sum())
        return {"certified": certified / max(len(held), 1), "accuracy": accuracy(network, encoded, targets),
                "majority_share": float(torch.bincount(targets).max()) / max(len(held), 1)}

    def keeps(self, epoch, measures):
        """From the ramp's end on, and never a collapsed epoch (`collapsed`)."""
        return self.schedule.keeps(epoch, self.epochs) and not collapsed(measures)


def collapsed(measures: dict[str, float]) -> bool:
    """Whether an epoch's held-out `measures` are those of a network that ignores its input: an
    accuracy no higher than always answering the most common label (every text predicted one
    label scores at most that). Such a network's bound certifies every text it gets right, since
    nothing in the input moves its output; it is never kept."""
    return measures["accuracy"] <= measures["majority_share"]


def word_network(family: str) -> WordNetwork:
    """The family `family`, refused in one line unless it is a word network certified training supports."""
    found = family_named(family, can="harden")
    if not isinstance(found, WordNetwork):
        raise RobustcountError(f"certified training supports the word-cnn and word-lstm families, not {family}")
    return found


def initial_weights(training: CertifiedTraining, labels: Sequence[str]) -> dict[str, torch.Tensor] | None:
    """The state of `training.init_from` (a zoo name or a model directory) to start from (None
    without one), refused in one line unless it is a network of the training's family over
    `labels` whose embeddings are GloVe's where the training keeps them frozen."""
    if training.init_from is None:
        return None
    model, network_family = training.init_from, word_network(training.family)
    classifier = load_model(model, device="cpu")
    if not isinstance(classifier, TorchClassifier) or not isinstance(classifier.module, network_family.network):
        raise RobustcountError(f"--init-from {model} is not a {training.family} network")
    if list(classifier.labels) != list(labels):
        raise RobustcountError(f"--init-from {model} has the labels {list(classifier.labels)}, the training "
                               f"{list(labels)}")
    state = classifier.module.state_dict()
    glove = word_embedding(shared_embeddings()[1]).weight
    if not training.train_embeddings and not torch.equal(state["embedding.weight"], glove):
        raise RobustcountError(f"--init-from {model} has trained embeddings: train them on (--train-embeddings)")
    return {name: tensor.detach().clone() for name, tensor in state.items()}


def train_certified(job: TrainingJob, space: SpaceSpec, training: CertifiedTraining,
                    initial: dict[str, torch.Tensor] | None = None) -> Trained:
    """A network of the training's word family trained on `job` as `training` says, with the
    certified loss over each text's `space`, from the state `initial` (`initial_weights`; None:
    the seed's)."""
    network_family = word_network(training.family)
    epochs = network_family.epochs if job.epochs is None else job.epochs
    ramp = epochs / 2 if training.ramp is None else training.ramp
    tokenizer, builder = network_family.tokenizer(), space.builder(job.seed)
    bar, columns = job.bar("candidate sets", "texts"), []
    counter = bar(len(job.texts), 0) if bar else None
    for text in job.texts:
        columns.append(changeable_columns(tokenizer, builder(text)))
        counter and counter.update(1)
    counter and counter.close()
    schedule = Schedule(ramp, training.kappa)
    options = ({**network_family.options, "train_embeddings": True} if training.train_embeddings
               else network_family.options)
    trained = network_family.train(job, CertifiedObjective(columns, schedule, epochs, training), initial, options)
    if trained.details["kept_epoch"] == 0:
        first, majority = schedule.first_kept(epochs), trained.details["held_out_majority_share"][0]
        raise RobustcountError(
            f"certified training collapsed: from the ramp's end on (epochs {first}-{epochs}) every epoch's held-out "
            f"accuracy (at best {max(trained.details['held_out_accuracy'][first - 1:]):.4f}) is no higher than always "
            f"answering the most common label ({majority:.4f}), so no model is written; train with a lower "
            "--certified-kappa or a longer --certified-ramp")
    changeable = [len(c) for c in columns]
    trained.details.update({"certified_training": {
        "kappa": training.kappa, "ramp_epochs": ramp, "epochs": epochs, "box_words": training.box_words,
        "sources": list(space.sources), "texts_with_candidates": sum(1 for n in changeable if n),
        "changeable_words_per_text": round(sum(changeable) / max(len(changeable), 1), 3)}})
    return trained
