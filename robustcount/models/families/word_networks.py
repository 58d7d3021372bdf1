"""The word-network families over frozen GloVe 6B 50d embeddings: `word-cnn`, a CNN in the
manner of Kim (2014) as TextFooler's WordCNN (built-in: `cnn-rt`), and `word-lstm`, a
bidirectional LSTM as Yang et al. 2022's BiLSTM and TextFooler's WordLSTM (built-in: `lstm-rt`).

Both read lower-cased words (robustcount's word rule) through one shared vocabulary: GloVe's most
frequent words and demo:train's, with their GloVe vectors (float16, frozen). A word outside it is
the unknown token, which the networks see (as a position, unlike bow-rt). The package ships the
shared embeddings and each built-in network's own weights as safetensors, with a card holding the
recipe and the demo:test accuracy; `experiments/train_word_models.py` writes them.

Training: Adam (learning rate 1e-3) on batches of 50 formed within length-sorted groups of 20
batches, for the family's number of epochs; a share of the training groups (10%), held out with
the seed, picks the epoch whose weights are kept. A group is an original example with its
perturbed copies, so no copy of a held-out example is trained on. Deterministic for a seed on a
fixed number of threads, and resumable: a checkpoint after every epoch holds everything the next
one needs. What a batch's loss is and how the kept epoch is chosen is an `Objective`: cross-entropy
and held-out accuracy here; certified (IBP) training (`training/certified.py`) gives its own.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import torch
from safetensors.torch import load_file
from torch import nn

from robustcount.errors import RobustcountError
from robustcount.models.batches import batches_per_epoch, grouped_batches
from robustcount.models.checkpoint import Checkpoint, generator_states, restore_generators
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.families import ASSETS, Family, Trained, TrainingJob
from robustcount.models.torch_adapter import Encoding, TorchClassifier, padded_ids
from robustcount.options import option, options_dataclass
from robustcount.text import Input, perturbed_part, tokenize

EMBEDDINGS = ASSETS / "glove_50d_rt.safetensors"
VOCABULARY = ASSETS / "glove_50d_rt_vocabulary.txt.gz"
PAD, UNKNOWN = 0, 1
"""Ids 0 and 1; the vocabulary's words follow from 2."""
WIDTHS = (3, 4, 5)
"""The CNN's filter widths (Kim 2014)."""


class GloveWords:
    """Inputs to padded word ids (at least `min_width` columns), with each word's character span: a
    word-level tokenizer (`WordTokenizer`), each word one id, UNKNOWN outside the vocabulary."""

    def __init__(self, vocabulary: Sequence[str], min_width: int = 1):
        self.ids = {word: i + 2 for i, word in enumerate(vocabulary)}
        self.min_width = min_width

    def word_ids(self, word: str) -> tuple[int, ...]:
        return (self.ids.get(word.lower(), UNKNOWN),)

    def encode_ids(self, rows: Sequence[Sequence[int]]) -> dict[str, torch.Tensor]:
        return {"input_ids": padded_ids(rows, PAD, self.min_width)}

    def __call__(self, batch: Sequence[Input]) -> Encoding:
        tokens = [tokenize(perturbed_part(item)) for item in batch]
        inputs = self.encode_ids([[i for word in t.words for i in self.word_ids(word)] for t in tokens])
        width = inputs["input_ids"].shape[1]
        return Encoding(inputs, [[*t.spans(), *[None] * (width - len(t.words))] for t in tokens])


def word_embedding(vectors: torch.Tensor, trainable: bool = False) -> nn.Embedding:
    """The pad and unknown rows (zeros) and the GloVe rows, frozen unless `trainable` (the pad
    row stays zero either way)."""
    table = torch.cat([torch.zeros(2, vectors.shape[1]), vectors.float()])
    return nn.Embedding.from_pretrained(table, freeze=not trainable, padding_idx=PAD)


class WordCNN(nn.Module):
    """Embeddings (frozen unless `train_embeddings`), one convolution per width in WIDTHS
    (`filters` each, ReLU, max over time), dropout, a linear layer; returns logits.

    A text of n words is read as its n words followed by zero (padding) vectors up to
    max(WIDTHS) columns when it is shorter; the max runs over the windows that lie within those
    max(n, max(WIDTHS)) columns only, so that the padding a batch adds for its longer texts never
    reaches a text's answer: each text gets exactly the answer it gets alone."""

    def __init__(self, vectors: torch.Tensor, n_labels: int, filters: int = 100, dropout: float = 0.5,
                 train_embeddings: bool = False):
        super().__init__()
        self.embedding = word_embedding(vectors, train_embeddings)
        self.convolutions = nn.ModuleList(nn.Conv1d(vectors.shape[1], filters, w) for w in WIDTHS)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(filters * len(WIDTHS), n_labels)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embedding(input_ids).transpose(1, 2)
        columns = (input_ids != PAD).sum(dim=1, keepdim=True).clamp(min=max(WIDTHS))
        pooled = []
        for width, convolution in zip(WIDTHS, self.convolutions):
            h = torch.relu(convolution(x))
            ends = torch.arange(width, h.shape[2] + width, device=input_ids.device)
            pooled.append(h.masked_fill((ends > columns).unsqueeze(1), float("-inf")).amax(dim=2))
        return self.out(self.dropout(torch.cat(pooled, dim=1)))


class WordLSTM(nn.Module):
    """Embeddings (frozen unless `train_embeddings`), a one-layer bidirectional LSTM (`hidden`
    units each way) over the words only, the max over time of its outputs, dropout, a linear
    layer; returns logits."""

    def __init__(self, vectors: torch.Tensor, n_labels: int, hidden: int = 150, dropout: float = 0.3,
                 train_embeddings: bool = False):
        super().__init__()
        self.embedding = word_embedding(vectors, train_embeddings)
        self.lstm = nn.LSTM(vectors.shape[1], hidden, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(2 * hidden, n_labels)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        lengths = (input_ids != PAD).sum(dim=1).clamp(min=1)
        packed = nn.utils.rnn.pack_padded_sequence(self.embedding(input_ids), lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        outputs, _ = self.lstm(packed)
        padded, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True, padding_value=float("-inf"),
                                                     total_length=input_ids.shape[1])
        return self.out(self.dropout(padded.amax(dim=1)))


BATCH = 50
LEARNING_RATE = 1e-3
HELD_OUT = 0.1
GROUP = 20
"""Batches are formed within groups of GROUP batches' worth of shuffled examples sorted by length."""


@dataclass
class TrainedNetwork:
    """The kept weights (every tensor but a frozen embedding), the held-out measures after each
    epoch (`held_out[name]`: one value per epoch; the objective's first measure chose) and the
    epoch kept."""

    state: dict[str, torch.Tensor]
    held_out: dict[str, list[float]] = field(default_factory=dict)
    epoch: int = 0

    @property
    def held_out_accuracy(self) -> list[float]:
        return self.held_out.get("accuracy", [])


def accuracy(network, encoded: torch.Tensor, targets: torch.Tensor) -> float:
    network.eval()
    with torch.inference_mode():
        predicted = torch.cat([network(encoded[i : i + 500]).argmax(dim=1) for i in range(0, len(encoded), 500)])
    return float((predicted == targets).float().mean())


class Objective:
    """What a training minimises, how and what it moves, and how it chooses the epoch it keeps: the
    cross-entropy of each batch, by Adam at `learning_rate`, every trainable weight (`moves`), and
    the best held-out accuracy. A subclass changes any of them."""

    learning_rate: float = LEARNING_RATE

    def moves(self, name: str) -> bool:
        """Whether the trainable weight `name` of the network (as `named_parameters` names it) trains."""
        return True

    def loss(self, network: nn.Module, ids: torch.Tensor, targets: torch.Tensor, batch: Sequence[int],
             progress: float) -> torch.Tensor:
        """The loss of the texts `batch` (indices into the training texts; `ids` their encoded
        columns, `targets` their labels) at the step that ends with `progress` epochs done (1.5:
        the middle of the second epoch's steps; 2: the last step of the second)."""
        return nn.functional.cross_entropy(network(ids), targets)

    def held_out(self, network: nn.Module, encoded: torch.Tensor, targets: torch.Tensor,
                 held: Sequence[int]) -> dict[str, float]:
        """The measures of the held-out texts `held` after an epoch, the one that chooses first."""
        return {"accuracy": accuracy(network, encoded, targets)}

    def keeps(self, epoch: int, measures: dict[str, float]) -> bool:
        """Whether the weights after `epoch` (1-based), whose held-out measures are `measures`, may
        be the ones kept."""
        return True

    def kept(self, history: dict[str, list[float]]) -> int:
        """The epoch kept given the held-out measures so far (`history[name][e - 1]`: after epoch
        e): of the epochs `keeps` allows, the first with the highest first measure; 0 when it
        allows none."""
        chosen = next(iter(history.values()), [])
        allowed = [epoch for epoch in range(1, len(chosen) + 1)
                   if self.keeps(epoch, {name: values[epoch - 1] for name, values in history.items()})]
        return max(allowed, key=lambda epoch: (chosen[epoch - 1], -epoch), default=0)


def held_out_groups(groups: Sequence[int], rng: random.Random) -> set[int]:
    """The groups (original examples) a training holds out: HELD_OUT of them, drawn by `rng` (the
    training's generator, `random.Random(seed)`, before any other draw)."""
    originals = sorted(set(groups))
    rng.shuffle(originals)
    return set(originals[: int(HELD_OUT * len(originals))])


def train_word_network(family: WordNetwork, job: TrainingJob, objective: Objective | None = None,
                       initial: dict[str, torch.Tensor] | None = None, options: dict | None = None) -> TrainedNetwork:
    """Train a network of `family` on `job` (its work folder, when it has one, holds the checkpoint
    a training resumes from) for `objective` (None: cross-entropy, kept by held-out accuracy).
    `initial`: the state the network starts from (a trained network of the family: a warm start)
    instead of the seed's; `options`: the network's (None: the family's)."""
    epochs = family.epochs if job.epochs is None else job.epochs
    objective = Objective() if objective is None else objective
    rng = random.Random(job.seed)
    vocabulary, vectors = shared_embeddings()
    held_groups = held_out_groups(job.groups, rng)
    held = sorted(i for i, g in enumerate(job.groups) if g in held_groups)
    fit = [i for i, g in enumerate(job.groups) if g not in held_groups]
    encoded = GloveWords(vocabulary, min_width=max(WIDTHS))(list(job.texts)).inputs["input_ids"]
    targets, held_index = torch.tensor(list(job.targets)), torch.tensor(held, dtype=torch.long)
    torch.manual_seed(job.seed)
    network = family.build(vectors, job.n_labels, family.options if options is None else options)
    frozen = set() if network.embedding.weight.requires_grad else {"embedding.weight"}  # not saved
    optimiser = _start(family, network, objective, initial)
    checkpoint = Checkpoint(job.work / "network.pt") if job.work is not None else None
    trained, start = TrainedNetwork({}), 0
    saved = checkpoint.load() if checkpoint else None
    if saved is not None:
        network.load_state_dict(saved["network"])
        optimiser.load_state_dict(saved["optimiser"])
        restore_generators(rng, saved["generators"])
        trained = TrainedNetwork(saved["best_state"], saved["history"], saved["best_epoch"])
        start = saved["epoch"]
    per_epoch = batches_per_epoch(len(fit), BATCH, GROUP)
    factory = job.bar("training", "batches")
    bar = factory(epochs * per_epoch, start * per_epoch) if factory else None
    for epoch in range(start, epochs):
        _train_epoch(network, optimiser, objective, (encoded, targets, fit), rng, epoch, bar)
        measures = objective.held_out(network, encoded[held_index], targets[held_index], held)
        for name, value in measures.items():
            trained.held_out.setdefault(name, []).append(round(value, 4))
        job.log(f"{family.name} epoch {epoch + 1}: held-out " + ", ".join(f"{k} {v:.4f}" for k, v in measures.items()))
        if objective.kept(trained.held_out) == epoch + 1:
            trained.epoch = epoch + 1
            trained.state = {k: v.contiguous() for k, v in copy.deepcopy(network.state_dict()).items()
                             if k not in frozen}
        if checkpoint:
            checkpoint.save({"epoch": epoch + 1, "network": network.state_dict(), "optimiser": optimiser.state_dict(),
                             "generators": generator_states(rng), "best_epoch": trained.epoch,
                             "best_state": trained.state, "history": trained.held_out})
    if bar:
        bar.close()
    return trained


def _start(family: WordNetwork, network: nn.Module, objective: Objective,
           initial: dict[str, torch.Tensor] | None) -> torch.optim.Adam:
    """Load `initial` (when given) into `network`, freeze the weights `objective` does not move,
    and return the optimiser of the rest."""
    if initial is not None:
        try:
            network.load_state_dict(initial, strict=True)
        except RuntimeError as err:
            raise RobustcountError(f"the initial weights do not fit a {family.name} network: "
                                   f"{str(err).splitlines()[0]}") from None
    for name, parameter in network.named_parameters():
        parameter.requires_grad_(parameter.requires_grad and objective.moves(name))
    return torch.optim.Adam([p for p in network.parameters() if p.requires_grad], lr=objective.learning_rate)


def _train_epoch(network: nn.Module, optimiser: torch.optim.Adam, objective: Objective, data: tuple, rng, epoch: int,
                 bar) -> None:
    """One epoch over the training texts of `data` (encoded ids, targets, the indices trained on)."""
    encoded, targets, fit = data
    lengths = (encoded != 0).sum(dim=1)
    per_epoch = batches_per_epoch(len(fit), BATCH, GROUP)
    network.train()
    for step, batch in enumerate(grouped_batches(fit, lengths.tolist(), BATCH, GROUP, rng), 1):
        width = max(max(WIDTHS), int(lengths[batch].max()))
        loss = objective.loss(network, encoded[batch, :width], targets[batch], batch, epoch + step / per_epoch)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if bar:
            bar.update(1)


class WordNetwork(Family):
    """A word network over the shared GloVe vocabulary: `network(vectors, n_labels, **options)`,
    trained `epochs` epochs; its inputs have at least `min_width` columns."""

    network: type[nn.Module]
    options: dict
    min_width: int = 1

    def build(self, vectors: torch.Tensor, n_labels: int, options: dict) -> nn.Module:
        """An untrained network of the family over the vocabulary's `vectors`."""
        return self.network(vectors, n_labels, **options)

    def tokenizer(self) -> GloveWords:
        """The family's inputs as word ids of the shared vocabulary."""
        vocabulary, _ = shared_embeddings()
        return GloveWords(vocabulary, min_width=self.min_width)

    def rebuild(self, tensors, options, labels, name, **settings) -> TorchClassifier:
        """The network built with `options` holding the trained `tensors` (every tensor but a frozen
        embedding) as a white-box classifier (`settings`: device, dtype, batch_size)."""
        _, vectors = shared_embeddings()
        network = self.build(vectors, len(labels), options)
        try:
            network.load_state_dict({"embedding.weight": network.embedding.weight, **tensors}, strict=True)
        except RuntimeError as err:
            raise RobustcountError(f"the {name} weights do not fit a {self.name} network: "
                                   f"{str(err).splitlines()[0]}") from None
        return TorchClassifier(network, self.tokenizer(), labels, name=name, embedding=network.embedding, **settings)

    def train(self, job: TrainingJob, objective: Objective | None = None,
              initial: dict[str, torch.Tensor] | None = None, options: dict | None = None) -> Trained:
        """A network with `options` (None: the family's) trained on `job` for `objective` (None:
        cross-entropy, kept by held-out accuracy), from the state `initial` (None: the seed's)."""
        options = self.options if options is None else options
        trained = train_word_network(self, job, objective, initial, options)
        return Trained(trained.state, options, {"kept_epoch": trained.epoch, **{
            f"held_out_{name}": values for name, values in trained.held_out.items()}})


MAX_UNITS = 100_000
"""More filters or hidden units than any word network here could train."""


def dropout_field(default: float):
    return field(default=default, metadata=option("dropout probability", minimum=0, maximum=1, open_maximum=True))


def train_embeddings_field():
    return field(default=False, metadata=option("whether the embeddings were trained too", flag=True))


@options_dataclass
class WordCNNOptions:
    """What a word-cnn card records: `WordCNN`'s arguments."""

    filters: int = field(default=100, metadata=option("filters per width", minimum=1, maximum=MAX_UNITS))
    dropout: float = dropout_field(0.5)
    train_embeddings: bool = train_embeddings_field()


@options_dataclass
class WordLSTMOptions:
    """What a word-lstm card records: `WordLSTM`'s arguments."""

    hidden: int = field(default=150, metadata=option("hidden units each way", minimum=1, maximum=MAX_UNITS))
    dropout: float = dropout_field(0.3)
    train_embeddings: bool = train_embeddings_field()


class WordCNNFamily(WordNetwork):
    name = "word-cnn"
    description = "word CNN (Kim 2014) over frozen GloVe 50d"
    network, options, epochs, min_width = WordCNN, {"filters": 100, "dropout": 0.5}, 10, max(WIDTHS)
    card_options = WordCNNOptions


class WordLSTMFamily(WordNetwork):
    name = "word-lstm"
    description = "bidirectional word LSTM over frozen GloVe 50d"
    network, options, epochs = WordLSTM, {"hidden": 150, "dropout": 0.3}, 8
    card_options = WordLSTMOptions


def weights_path(name: str) -> Path:
    return ASSETS / f"{name.replace('-', '_')}.safetensors"


def card_path(name: str) -> Path:
    return ASSETS / f"{name.replace('-', '_')}_card.json"


@lru_cache(maxsize=1)
def shared_embeddings() -> tuple[tuple[str, ...], torch.Tensor]:
    """The shared vocabulary and its GloVe vectors."""
    if not EMBEDDINGS.exists() or not VOCABULARY.exists():
        raise RobustcountError(f"the word networks' embeddings are missing ({EMBEDDINGS}); "
                               "run experiments/train_word_models.py")
    with gzip.open(VOCABULARY, "rt", encoding="utf-8") as handle:
        vocabulary = tuple(handle.read().split("\n"))
    return vocabulary, load_file(EMBEDDINGS)["vectors"]


def load_word_network(family: WordNetwork, name: str, device: str = "auto", dtype: str = "float32",
                      batch_size: int = DEFAULT_BATCH_SIZE) -> TorchClassifier:
    """The built-in network `name` (cnn-rt, lstm-rt) of `family` as a white-box classifier."""
    if not weights_path(name).exists():
        raise RobustcountError(f"the {name} weights are missing; run experiments/train_word_models.py")
    card = json.loads(card_path(name).read_text())
    return family.rebuild(load_file(weights_path(name)), card["network"], card["labels"], name,
                          device=device, dtype=dtype, batch_size=batch_size)
