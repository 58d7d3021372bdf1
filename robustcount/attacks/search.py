"""The pieces the TextAttack-named recipes share (PWWS, DeepWordBug, TextBugger, the genetic attack,
PSO, A2T): their space preset, their options, word scores, the constraints they check on a
candidate before the model sees it, and the greedy search over ranked words (TextAttack's
`GreedyWordSwapWIR`).

A recipe's candidates are a space's: a *state* is a dict {position: candidate index} of the
changes made so far (at most one per position: TextAttack's `RepeatModification`), its point the
sorted changes. Every model call goes through the engine (`goal.evaluate_all`, or
`engine.predict_proba` for the texts a word score needs), every sentence-encoder call through the
encoder's own engine; randomness is seeded by the space's points, so a run resumes byte-identically.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import field

import numpy as np

from robustcount.attacks.result import FAILED, AttackResult, success
from robustcount.goal import evaluate_all
from robustcount.models.engine import QueryEngine
from robustcount.models.sentence_encoder import cosine
from robustcount.options import option, options_dataclass
from robustcount.orders import word_sensitivities
from robustcount.spaces.build import SpaceSpec, english_stop_words
from robustcount.spaces.pos import same_pos
from robustcount.spaces.space import Point, Space
from robustcount.text import perturbed_part, replace_perturbed_part

UNKNOWN = "[UNK]"
"""The token a word becomes when its saliency is measured by replacement (TextAttack's `unk_token`)."""
TRANSFORMATIONS = ("recipe", "space")
FOLLOWS = ("paper", "textattack")

State = dict[int, int]
Allowed = Callable[[int, list[Point]], np.ndarray]
"""A constraint check: for the position being changed and the trial points, which trials pass (a
boolean array), checked before the model is asked."""


def transformation_field():
    return field(default="recipe", metadata=option(
        "recipe: the recipe's own candidates, as its paper (replaces --source); space: the space asked for.",
        choices=TRANSFORMATIONS))


@options_dataclass
class PopulationOptions:
    """The options the population-based searches (the genetic attack, PSO) share, declared once."""

    transformation: str = transformation_field()
    population: int = field(default=60, metadata=option("Members of the population (S).", minimum=2))
    generations: int = field(default=20, metadata=option("The most generations (iterations) to run (G).", minimum=1,
                                                         names=("--iterations",)))


def follow_field(default: str = "paper", help: str = "paper: as the paper describes it; textattack: as "
                 "TextAttack 0.3.11 runs it (see docs/attacks/recipes.md)."):
    """The option choosing a recipe's paper settings or TextAttack's, one declaration for every recipe."""
    return field(default=default, metadata=option(help, choices=FOLLOWS))


def recipe_space(space: SpaceSpec, transformation: str, sources: Sequence[str]) -> SpaceSpec:
    """A recipe's space preset: with `transformation` "recipe", the space of `sources` under the
    filters asked for, else the space asked for; both with English stop words left alone
    (TextAttack's `StopwordModification`, with scikit-learn's list)."""
    if transformation == "recipe":
        space = dataclasses.replace(space, sources=tuple(sources))
    return stop_words_left_alone(space)


class RecipeSources:
    """A recipe (mixed in before `Recipe`) whose space preset is `recipe_space` with its own
    candidate sources: `own_sources`, unless `sources(options)` chooses them by its options."""

    own_sources: tuple[str, ...] = ()

    def sources(self, options) -> tuple[str, ...]:
        return self.own_sources

    def space(self, space: SpaceSpec, options) -> SpaceSpec:
        return recipe_space(space, options.transformation, self.sources(options))


def stop_words_left_alone(space: SpaceSpec) -> SpaceSpec:
    """`space` with English stop words (scikit-learn's list) left alone; a space that already
    leaves stop words alone is kept as it is."""
    if space.filters.stop_words:
        return space
    return dataclasses.replace(space, filters=dataclasses.replace(space.filters, stop_words=english_stop_words()))


def point_of(state: State) -> Point:
    return tuple(sorted(state.items()))


def trials_at(state: State, position: int, space: Space) -> list[Point]:
    """The points that change `position` of `state` to each of its candidates."""
    return [point_of({**state, position: c}) for c in range(1, space.sizes[position] + 1)]


def seeded_numpy(space: Space) -> np.random.Generator:
    """The recipe's random source for this space: seeded by its points, the same wherever it runs."""
    return np.random.default_rng(int(hashlib.sha256(space.points_digest().encode()).hexdigest()[:16], 16))


def word_positions(space: Space) -> list[int]:
    return [i for i, p in enumerate(space.positions) if p.kind == "word"]


def greedy_calls(space: Space, scores: int) -> int:
    """The most model calls of `scores` calls of word scores, then `greedy_swap` over the word
    positions: the input, the scores, and each word position's candidates once."""
    return 1 + scores + sum(space.sizes[i] for i in word_positions(space))


def leave_one_out(engine: QueryEngine, space: Space, positions: Sequence[int], gold: int,
                  replacement: str | None) -> np.ndarray:
    """p(gold | x) - p(gold | x with the word of each position deleted (`replacement` None) or
    replaced by `replacement`), one engine batch; the clean input's answer is the engine's cache."""
    tokens = space.tokens
    texts = []
    for position in positions:
        index = space.positions[position].index
        if replacement is None:
            texts.append(tokens.without(index))
        else:
            words = list(tokens.words)
            words[index] = replacement
            texts.append(tokens.join(words))
    probs = engine.predict_proba([space.item, *(replace_perturbed_part(space.item, t) for t in texts)])[:, gold]
    return probs[0] - probs[1:]


def gradient_or_deletion(engine: QueryEngine, space: Space, positions: Sequence[int], gold: int) -> np.ndarray:
    """Gradient-times-input word scores when the model has gradients (one gradient call), else
    leave-one-out by deletion; one score per position."""
    if engine.supports_gradients:
        scores = word_sensitivities(engine, space.item, gold, method="gradient")
        return np.array([scores[space.positions[p].index] for p in positions])
    return leave_one_out(engine, space, positions, gold, None)


def ranked(positions: Sequence[int], scores: Sequence[float]) -> list[int]:
    """`positions` by score, highest first, ties in text order."""
    score = dict(zip(positions, scores))
    return sorted(positions, key=lambda p: (-float(score[p]), p))


def words_at(space: Space, point: Point) -> list[str]:
    words = list(space.tokens.words)
    for position, choice in point:
        p = space.positions[position]
        if p.kind == "word":
            words[p.index] = p.candidates[choice]
    return words


def similarity(encoder: QueryEngine, space: Space, points: Sequence[Point], angular: bool = False) -> np.ndarray:
    """Sentence similarity of each point's perturbed part to the clean one, through the encoder's
    engine: cosine, or TextAttack's angular similarity 1 - arccos(cosine) / pi."""
    texts = [perturbed_part(space.apply(p)) for p in points]
    cosines = np.clip(cosine(encoder, texts, [space.tokens.join()] * len(texts)), -1.0, 1.0)
    return 1.0 - np.arccos(cosines) / math.pi if angular else cosines


def pos_agrees(space: Space, position: int, points: Sequence[Point]) -> np.ndarray:
    """Whether each point keeps the universal part of speech of the word at `position` (spaCy, in
    context; a noun for a verb is refused, as TextAttack's `allow_verb_noun_swap=False`)."""
    index = space.positions[position].index
    return np.array(same_pos(space.tokens, index, [words_at(space, p) for p in points]), dtype=bool)


def within_rate(space: Space, points: Sequence[Point], rate: float, at_least: int) -> np.ndarray:
    """Whether each point changes at most max(`at_least`, ceil(`rate` x words)) positions
    (TextAttack's `MaxModificationRate`)."""
    limit = max(at_least, math.ceil(rate * len(space.tokens.words)))
    return np.array([len(p) <= limit for p in points], dtype=bool)


@dataclasses.dataclass(frozen=True)
class SwapRules:
    """What `greedy_swap` may try and how it chooses: trials pass `allowed` (when given); among
    adversarial trials the one with the highest `similarity_of` (when given) wins; with
    `always_commit` the best trial is kept even when it does not lower p(gold); `give_up(point)`,
    when given, ends the search as failed with the reason it returns."""

    allowed: Allowed | None = None
    similarity_of: Callable[[list[Point]], np.ndarray] | None = None
    always_commit: bool = False
    give_up: Callable[[Point], str | None] | None = None


def greedy_swap(method: str, engine: QueryEngine, space: Space, gold: int, order: Sequence[int],
                rules: SwapRules = SwapRules()) -> AttackResult:
    """The greedy search over ranked words: for each position of `order`, the trials that change
    it to each of its candidates (on top of the changes so far) that pass `rules.allowed` are sent
    to the model; if some leave the gold label, the result is the one among them with the highest
    `rules.similarity_of` (when given), else with the lowest p(gold). Otherwise the trial with the
    lowest p(gold) is kept when it lowers p(gold) (TextAttack's `GreedyWordSwapWIR`), or whatever
    it does with `rules.always_commit` (the papers' "replace the words in order");
    `rules.give_up(point)`, when given, is asked about each point kept or found adversarial and
    ends the search as failed with the reason it returns (TextBugger's similarity check)."""
    allowed, similarity_of = rules.allowed, rules.similarity_of
    always_commit, give_up = rules.always_commit, rules.give_up
    state: State = {}
    current = float(engine.predict_proba([space.item])[0][gold])
    for position in order:
        trials = trials_at(state, position, space)
        if allowed is not None:
            trials = [t for t, ok in zip(trials, allowed(position, trials)) if ok]
        if not trials:
            continue
        evaluated = evaluate_all(engine, space, trials, gold)
        gold_probs = evaluated.probs[:, gold]
        flips = np.flatnonzero(evaluated.adversarial)
        if flips.size:
            if similarity_of is not None:
                best = int(flips[np.argmax(similarity_of([trials[i] for i in flips]))])
            else:
                best = int(flips[np.argmin(gold_probs[flips])])
            if give_up is not None and (reason := give_up(trials[best])) is not None:
                return AttackResult(method, FAILED, space.item, gold, reason=reason)
            return success(method, engine, space, trials[best], gold)
        best = int(np.argmin(gold_probs))
        if always_commit or gold_probs[best] < current:
            state, current = dict(trials[best]), float(gold_probs[best])
            if give_up is not None and (reason := give_up(trials[best])) is not None:
                return AttackResult(method, FAILED, space.item, gold, reason=reason)
    return AttackResult(method, FAILED, space.item, gold, reason="no substitution sequence left the gold label")
