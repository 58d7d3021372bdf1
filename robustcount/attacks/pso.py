"""The particle swarm attack of Zang et al. 2020 ("Word-level Textual Adversarial Attacking as
Combinatorial Optimization"), as their code and TextAttack 0.3.11's `pso` run it.

S = 60 particles, each the input with some words substituted, for at most T = 20 iterations. A
particle starts as one perturbation of the input: a word drawn with probability proportional to
how much its best candidate alone raises the fitness 1 - p(gold), set to the candidate that is
best in the particle's text. Each iteration, with inertia omega falling linearly from 0.8 to 0.2,
a particle's velocity on each word is omega v + (1 - omega)(e(local) + e(global)), where e is
+v_max where the particle's word differs from its own best's (local) or the swarm's best's
(global) and -v_max where it agrees (v_max = 3, velocities start uniform in [-3, 3]); with
probability C1 (0.8 falling to 0.2) it then takes each of its local best's words with
probability sigmoid(velocity), and with probability C2 (0.2 rising to 0.8) each of the global
best's. A particle is then mutated (perturbed) with probability 1 - 2 x (its share of words
changed). The search stops at the first adversary (the fittest when several).

What differs from the paper offline: the candidates. Zang et al. substitute words that share
sememes in HowNet (OpenHowNet), which does not ship offline (its package downloads the data);
the stand-in is the other curated lexicon, WordNet (the `wordnet` source), whose synonyms the
paper compares against as a baseline. Stop words are left alone (TextAttack's
`StopwordModification`; the paper substitutes only content words).
"""

from __future__ import annotations


import numpy as np

from robustcount.attacks.recipe import Recipe
from robustcount.attacks.result import FAILED, AttackResult, success
from robustcount.attacks.search import (RecipeSources, PopulationOptions, State, point_of, seeded_numpy, trials_at,
                                        word_positions)
from robustcount.goal import evaluate_all
from robustcount.options import options_dataclass

METHOD = "pso"
V_MAX = 3.0
OMEGA = (0.8, 0.2)
C1 = (0.8, 0.2)


def pso_attack(engine, space, gold, population: int = 60, iterations: int = 20) -> AttackResult:
    """The particle swarm attack on the word positions of `space` (see the module docstring)."""
    positions = word_positions(space)
    if not positions:
        return AttackResult(METHOD, FAILED, space.item, gold, reason="no word of the input can change")
    rng = seeded_numpy(space)
    chances, found = _perturbation_chances(engine, space, gold, positions)
    if found is not None:
        return success(METHOD, engine, space, found[0], gold)
    n_words = max(1, len(space.tokens.words))

    def perturb(state: State) -> State:
        position = positions[int(rng.choice(len(positions), p=chances))]
        trials = trials_at(state, position, space)
        return dict(trials[int(np.argmin(evaluate_all(engine, space, trials, gold).probs[:, gold]))])

    def fitness_of(states):
        evaluated = evaluate_all(engine, space, [point_of(s) for s in states], gold)
        return evaluated, 1.0 - evaluated.probs[:, gold]

    particles = [perturb({}) for _ in range(population)]
    evaluated, fitness = fitness_of(particles)
    if (found := evaluated.lowest_adversary()) is not None:
        return success(METHOD, engine, space, found[0], gold)
    local, local_fitness = list(particles), fitness.copy()
    best = int(np.argmax(fitness))
    swarm, swarm_fitness = particles[best], float(fitness[best])
    velocities = rng.uniform(-V_MAX, V_MAX, (population, len(positions)))
    for t in range(iterations):
        omega = (OMEGA[0] - OMEGA[1]) * (iterations - t) / iterations + OMEGA[1]
        c1 = C1[0] - t / iterations * (C1[0] - C1[1])
        c2 = C1[1] + t / iterations * (C1[0] - C1[1])
        for k in range(population):
            velocities[k] = omega * velocities[k] + (1 - omega) * (_differs(positions, particles[k], local[k])
                                                                   + _differs(positions, particles[k], swarm))
            probabilities = 1 / (1 + np.exp(-velocities[k]))
            if rng.random() < c1:
                particles[k] = _turn(rng, positions, local[k], particles[k], probabilities)
            if rng.random() < c2:
                particles[k] = _turn(rng, positions, swarm, particles[k], probabilities)
        evaluated, fitness = fitness_of(particles)
        if (found := evaluated.lowest_adversary()) is not None:
            return success(METHOD, engine, space, found[0], gold)
        for k in range(population):
            if rng.random() < 1 - 2 * len(particles[k]) / n_words:
                particles[k] = perturb(particles[k])
        evaluated, fitness = fitness_of(particles)
        if (found := evaluated.lowest_adversary()) is not None:
            return success(METHOD, engine, space, found[0], gold)
        for k in range(population):
            if fitness[k] > local_fitness[k]:
                local[k], local_fitness[k] = dict(particles[k]), fitness[k]
        if fitness.max() > swarm_fitness:
            best = int(np.argmax(fitness))
            swarm, swarm_fitness = dict(particles[best]), float(fitness[best])
    return AttackResult(METHOD, FAILED, space.item, gold, reason=f"no adversary in {iterations} iterations")


def _perturbation_chances(engine, space, gold, positions):
    """The chance that a perturbation picks each of `positions`: proportional to how much its best
    candidate alone lowers p(gold) (uniform when none does), and None; or, when a candidate is
    itself an adversary, None and the lowest adversary (`Evaluated.lowest_adversary`)."""
    base = float(engine.predict_proba([space.item])[0][gold])
    gains = []
    for position in positions:
        evaluated = evaluate_all(engine, space, trials_at({}, position, space), gold)
        if (found := evaluated.lowest_adversary()) is not None:
            return None, found
        gains.append(max(0.0, base - float(evaluated.probs[:, gold].min())))
    gains = np.array(gains)
    return (gains / gains.sum() if gains.sum() > 0 else np.full(len(positions), 1 / len(positions))), None


def _turn(rng, positions, source: State, target: State, probabilities: np.ndarray) -> State:
    """`target` with each of `positions` taken from `source` with its probability (a draw of `rng` each)."""
    turned = dict(target)
    for d, position in enumerate(positions):
        if rng.random() < probabilities[d]:
            if position in source:
                turned[position] = source[position]
            else:
                turned.pop(position, None)
    return turned


def _differs(positions, a: State, b: State) -> np.ndarray:
    """+V_MAX at each of `positions` where states `a` and `b` differ, -V_MAX where they agree."""
    return np.array([V_MAX if a.get(p) != b.get(p) else -V_MAX for p in positions])


@options_dataclass
class PSOOptions(PopulationOptions):
    """The population-based options, as the genetic attack's without its own."""


class PSO(RecipeSources, Recipe, name="pso", options=PSOOptions):
    """The particle swarm attack of Zang et al. 2020: 60 particles over word substitutions, 20 iterations."""

    own_sources = ("wordnet",)

    def attack(self, engine, space, gold, options: PSOOptions, sentence_encoder, masked_lm) -> AttackResult:
        return pso_attack(engine, space, gold, options.population, options.generations)

    def planned_calls(self, space, options: PSOOptions) -> int:
        """The input and every single substitution; a perturbation (at most the most candidates
        of a word) per particle and their fitness; then per iteration the fitness twice and a
        perturbation per particle."""
        sizes = [space.sizes[i] for i in word_positions(space)]
        if not sizes:
            return 1
        p = options.population
        return 1 + sum(sizes) + p * max(sizes) + p + options.generations * (2 * p + p * max(sizes))
