"""The genetic attack of Alzantot et al. 2018 ("Generating Natural Language Adversarial Examples").

A population of S = 60 members, each the input with some words substituted, evolves for at most
G = 20 generations. `perturb` picks a word (with probability proportional to its number of
candidates, as the authors' code and TextAttack do), keeps the K = 4 candidates the language
model ranks first, and puts in the one with the best fitness (1 - p(gold)). The first population
is 60 perturbations of the input; each generation keeps its elite and breeds S - 1 children:
two parents drawn with probability softmax(fitness / 0.3), each word from either parent with
probability 1/2, then perturbed. It stops at the first adversary (the fittest one when several).

Candidates: the `counter-fitted` table, which is exactly the paper's selection (the N = 8 nearest
words within Euclidean distance delta = 0.5 in Mrkšić et al.'s counter-fitted vectors, as Jia et
al. published it); at most 20% of the words change (TextAttack's `MaxWordsPerturbed`; the
paper's success criterion for sentiment); stop words are left alone (TextAttack's
`StopwordModification`). TextAttack 0.3.11's `alzantot` is this algorithm (its
`post_crossover_check=False` included; a child over the 20% is kept out here by taking its first
parent instead, so that every adversary meets the limit).

What differs from both, offline: the language model. The paper and TextAttack rank a word's
candidates with the Google One Billion Words language model on the words around it, in the
member's current text; no such model ships offline, so the K candidates kept are those whose
substitution into the original text the sentence encoder (all-MiniLM-L6-v2, through its own
query engine) finds most similar to the original: a meaning score in the original context, not a
fluency score in the current one, computed once per word.
"""

from __future__ import annotations

from dataclasses import field

import numpy as np

from robustcount.attacks.recipe import Recipe
from robustcount.attacks.result import FAILED, AttackResult, success
from robustcount.attacks.search import (RecipeSources, PopulationOptions, State, point_of, seeded_numpy, similarity,
                                        trials_at, word_positions)
from robustcount.goal import evaluate_all
from robustcount.models.sentence_encoder import sentence_engine
from robustcount.options import option, options_dataclass
from robustcount.spaces.space import Space

METHOD = "alzantot"
TEMPERATURE = 0.3


def kept_candidates(encoder, space: Space, positions: list[int], top_k: int) -> dict[int, list[int]]:
    """For each position, the `top_k` candidate indices whose single substitution the sentence
    encoder finds most similar to the original (the language-model filter's stand-in)."""
    kept = {}
    for position in positions:
        trials = trials_at({}, position, space)
        scores = similarity(encoder, space, trials) if len(trials) > top_k else np.zeros(len(trials))
        order = sorted(range(len(trials)), key=lambda i: (-scores[i], i))[:top_k]
        kept[position] = sorted(i + 1 for i in order)
    return kept


def change_limit(space: Space, max_share: float) -> int:
    """The most words a member may change: `max_share` of the words, rounded down, at least one."""
    return max(1, int(max_share * len(space.tokens.words)))


def genetic_attack(engine, space, gold, population: int = 60, generations: int = 20, max_share: float = 0.2,
                   top_k: int = 4, encoder=None) -> AttackResult:
    """The genetic attack on the word positions of `space` (see the module docstring)."""
    positions = word_positions(space)
    if not positions:
        return AttackResult(METHOD, FAILED, space.item, gold, reason="no word of the input can change")
    encoder = encoder or sentence_engine()
    rng = seeded_numpy(space)
    kept = kept_candidates(encoder, space, positions, top_k)
    limit = change_limit(space, max_share)
    weights = np.array([len(kept[p]) for p in positions], dtype=float)

    def perturb(state: State) -> State:
        eligible = np.array([len(state) < limit or p in state for p in positions])
        chances = weights * eligible
        position = positions[int(rng.choice(len(positions), p=chances / chances.sum()))]
        trials = [point_of({**state, position: c}) for c in kept[position]]
        probs = evaluate_all(engine, space, trials, gold).probs[:, gold]
        return dict(trials[int(np.argmin(probs))])

    members = [perturb({}) for _ in range(population)]
    for _ in range(generations):
        points = [point_of(m) for m in members]
        evaluated = evaluate_all(engine, space, points, gold)
        fitness = 1.0 - evaluated.probs[:, gold]
        if (found := evaluated.lowest_adversary()) is not None:
            return success(METHOD, engine, space, found[0], gold)
        elite = int(np.argmax(fitness))
        chances = np.exp((fitness - fitness.max()) / TEMPERATURE)
        chances /= chances.sum()
        children = [members[elite]]
        for _ in range(population - 1):
            first, second = (members[int(i)] for i in rng.choice(population, size=2, p=chances))
            child = {}
            for position in sorted(set(first) | set(second)):
                parent = first if rng.random() < 0.5 else second
                if position in parent:
                    child[position] = parent[position]
            children.append(perturb(child if len(child) <= limit else dict(first)))
        members = children
    return AttackResult(METHOD, FAILED, space.item, gold, reason=f"no adversary in {generations} generations")


@options_dataclass
class AlzantotOptions(PopulationOptions):
    max_share: float = field(default=0.2, metadata=option("The largest share of the words an adversary changes.",
                                                          minimum=0.0, maximum=1.0, open_minimum=True))
    top_k: int = field(default=4, metadata=option("Candidates kept per word by the language-model filter (K).",
                                                  minimum=1))


class Alzantot(RecipeSources, Recipe, name="alzantot", options=AlzantotOptions):
    """The genetic attack of Alzantot et al. 2018: a population of substitutions, bred for 20 generations."""

    needs_sentence_encoder = True

    own_sources = ("counter-fitted",)

    def attack(self, engine, space, gold, options: AlzantotOptions, sentence_encoder, masked_lm) -> AttackResult:
        return genetic_attack(engine, space, gold, options.population, options.generations, options.max_share,
                              options.top_k, sentence_encoder)

    def planned_calls(self, space, options: AlzantotOptions) -> int:
        """The input; a perturbation (at most K candidates) per member of the first population;
        then per generation the members' fitness and a perturbation per child but the elite."""
        if not word_positions(space):
            return 1
        p, k = options.population, options.top_k
        return 1 + p * k + options.generations * (p + (p - 1) * k)
