"""Training the word networks `cnn-rt` and `lstm-rt` over the frozen GloVe vocabulary.

Adam (learning rate 1e-3) on batches of 50 formed within length-sorted groups of 20 batches, for
a fixed number of epochs; a share of the training groups (10%), held out with the seed, picks
the epoch whose weights are kept. A group is an original example with its perturbed copies, so no
copy of a held-out example is trained on. Deterministic for a seed on a fixed number of threads,
and resumable: a checkpoint after every epoch holds everything the next one needs.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from robustcount.models.word_networks import WIDTHS, GloveWords, build_network, shared_embeddings
from robustcount.training.batches import batches_per_epoch, grouped_batches
from robustcount.training.checkpoint import Checkpoint, generator_states, restore_generators

BATCH = 50
LEARNING_RATE = 1e-3
HELD_OUT = 0.1
GROUP = 20
"""Batches are formed within groups of GROUP batches' worth of shuffled examples sorted by length."""


@dataclass(frozen=True)
class NetworkRecipe:
    """A word network's architecture options and its number of epochs."""

    options: dict
    epochs: int


RECIPES = {
    "cnn-rt": NetworkRecipe({"filters": 100, "dropout": 0.5}, epochs=10),
    "lstm-rt": NetworkRecipe({"hidden": 150, "dropout": 0.3}, epochs=8),
}


@dataclass
class TrainedNetwork:
    """The kept weights (every tensor but the frozen embedding), the held-out accuracy after each
    epoch and the epoch kept."""

    state: dict[str, torch.Tensor]
    held_out_accuracy: list[float] = field(default_factory=list)
    epoch: int = 0


def accuracy(network, encoded: torch.Tensor, targets: torch.Tensor) -> float:
    network.eval()
    with torch.inference_mode():
        predicted = torch.cat([network(encoded[i : i + 500]).argmax(dim=1) for i in range(0, len(encoded), 500)])
    return float((predicted == targets).float().mean())


def train_word_network(
    kind: str,
    texts: Sequence[str],
    targets: Sequence[int],
    groups: Sequence[int],
    *,
    n_labels: int,
    seed: int = 0,
    epochs: int | None = None,
    checkpoint: Checkpoint | None = None,
    progress=None,
    log=print,
) -> TrainedNetwork:
    """Train network `kind` on `texts` with label indices `targets`; `groups[i]` is the original
    example text i comes from (its own index when it is an original). `progress(total, done)`
    returns an object whose `update(n)` counts batches."""
    recipe = RECIPES[kind]
    epochs = recipe.epochs if epochs is None else epochs
    rng = random.Random(seed)
    vocabulary, vectors = shared_embeddings()
    originals = sorted(set(groups))
    rng.shuffle(originals)
    held_groups = set(originals[: int(HELD_OUT * len(originals))])
    held = sorted(i for i, g in enumerate(groups) if g in held_groups)
    fit = [i for i, g in enumerate(groups) if g not in held_groups]
    encoded = GloveWords(vocabulary, min_width=max(WIDTHS))(list(texts)).inputs["input_ids"]
    targets = torch.tensor(list(targets))
    lengths = (encoded != 0).sum(dim=1)
    held_index = torch.tensor(held, dtype=torch.long)
    torch.manual_seed(seed)
    network = build_network(kind, vectors, n_labels, recipe.options)
    optimiser = torch.optim.Adam([p for p in network.parameters() if p.requires_grad], lr=LEARNING_RATE)
    trained, best, start = TrainedNetwork({}), -1.0, 0
    saved = checkpoint.load() if checkpoint else None
    if saved is not None:
        network.load_state_dict(saved["network"])
        optimiser.load_state_dict(saved["optimiser"])
        restore_generators(rng, saved["generators"])
        trained = TrainedNetwork(saved["best_state"], saved["history"], saved["best_epoch"])
        best, start = saved["best"], saved["epoch"]
    per_epoch = batches_per_epoch(len(fit), BATCH, GROUP)
    bar = progress(epochs * per_epoch, start * per_epoch) if progress else None
    for epoch in range(start, epochs):
        network.train()
        for batch in grouped_batches(fit, lengths.tolist(), BATCH, GROUP, rng):
            width = max(max(WIDTHS), int(lengths[batch].max()))
            loss = torch.nn.functional.cross_entropy(network(encoded[batch, :width]), targets[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            if bar:
                bar.update(1)
        held_accuracy = accuracy(network, encoded[held_index], targets[held_index])
        trained.held_out_accuracy.append(round(held_accuracy, 4))
        log(f"{kind} epoch {epoch + 1}: held-out accuracy {held_accuracy:.4f}")
        if held_accuracy > best:
            best, trained.epoch = held_accuracy, epoch + 1
            trained.state = {k: v.contiguous() for k, v in copy.deepcopy(network.state_dict()).items()
                             if k != "embedding.weight"}
        if checkpoint:
            checkpoint.save({"epoch": epoch + 1, "network": network.state_dict(), "optimiser": optimiser.state_dict(),
                             "generators": generator_states(rng), "best": best, "best_epoch": trained.epoch,
                             "best_state": trained.state, "history": trained.held_out_accuracy})
    if bar:
        bar.close()
    return trained
