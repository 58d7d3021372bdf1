"""TextFooler (Jin et al. 2020), the Type-1 baseline (Yang et al. 2022), on any space of word
substitutions.

Two named settings of its search and constraints, after the paper and its official code (the
differences a card of the paper tabulates as "Paper vs code"):

| | `paper` (default) | `official-code` |
|---|---|---|
| importance | delete the word (eq. 2, with the label-flip case) | replace it by `<oov>`, same formula |
| similarity | cosine of sentence embeddings of the whole texts | 1 - arccos(cosine) over a 15-word window around the change; texts under 15 words use threshold 0.1 |
| threshold epsilon | 0.7 | 0.7 |
| part of speech | same universal tag (spaCy) | same tag, NOUN and VERB compatible |
| no candidate flips | take the kept candidate with the lowest p(gold) | score = p(gold) + 1 per failed check over all candidates; commit only below the current p(gold) |

Words are visited by importance, highest first (or, for the paper's Table 8 ablation, in a random
order fixed by the space: `word_order="random"`, no importance queries); the attack stops at the
first flip. The synonyms are the space's: TextFooler's space preset (`textfooler_space`) is the
space asked for with stop words left alone. The paper's synonyms, the top 50 counter-fitted
word-vector neighbours with cosine >= 0.7 (0.5 in its code), are a source of the space:
`--source vectors:PATH` keeps the code's (`VectorNeighbours`, whose `min_cosine` gives the paper's
in Python), and run headers record the source with its cosine. Sentence embeddings come from the
packaged all-MiniLM-L6-v2 instead of the Universal Sentence Encoder, through a query engine of
their own: `encoder`'s counters are the similarity model's calls, apart from the attacked model's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from robustcount.attacks.recipe import Recipe
from robustcount.attacks.result import FAILED, AttackResult, success
from robustcount.attacks.search import stop_words_left_alone
from robustcount.errors import RobustcountError
from robustcount.goal import evaluate_all, judged_labels
from robustcount.models.engine import QueryEngine
from robustcount.models.sentence_encoder import cosine, sentence_engine
from robustcount.options import option, options_dataclass
from robustcount.orders import position_order
from robustcount.spaces.build import SpaceSpec
from robustcount.spaces.pos import same_pos
from robustcount.spaces.space import Point, Space
from robustcount.text import Tokens, perturbed_part, replace_perturbed_part, words_between

METHOD = "textfooler"
WORD_ORDERS = ("importance", "random")
"""Which words TextFooler tries first: its importance ranking (eq. 2), or a random order (the ablation)."""


@dataclass(frozen=True)
class Setting:
    """The rules of one column of the table above."""

    deletion_importance: bool
    angular_window: bool
    epsilon: float
    noun_verb_compatible: bool
    penalised_fallback: bool


SETTINGS = {
    "paper": Setting(True, False, 0.7, False, False),
    "official-code": Setting(False, True, 0.7, True, True),
}
WINDOW = 15


def get_setting(name: str) -> Setting:
    if name not in SETTINGS:
        raise RobustcountError(f"unknown TextFooler setting {name!r} (use {', '.join(SETTINGS)})")
    return SETTINGS[name]


def textfooler_space(space: SpaceSpec) -> SpaceSpec:
    """TextFooler's space preset: `space` with English stop words (scikit-learn's list) left alone,
    as both settings do; a space that already leaves stop words alone is kept as it is."""
    return stop_words_left_alone(space)


def textfooler_attack(
    engine: QueryEngine,
    space: Space,
    gold: int,
    setting: str = "paper",
    encoder: QueryEngine | None = None,
    pos_check: bool = True,
    similarity_check: bool = True,
    word_order: str = "importance",
) -> AttackResult:
    """TextFooler on the word positions of `space` (see the module docstring). Without
    `similarity_check` no sentence encoder is used: every candidate passes the similarity
    constraint, a flip is chosen by the lowest p(gold), and the result has no similarity (with
    `pos_check` off as well, this is TextFooler's pure greedy search). `encoder` is the query
    engine of the sentence encoder (default: a new one over all-MiniLM-L6-v2). `word_order` is one of
    WORD_ORDERS; the random order is the space's random position order (`position_order`), its words only."""
    rules = get_setting(setting)
    if word_order not in WORD_ORDERS:
        raise RobustcountError(f"unknown word order {word_order!r} (use {', '.join(WORD_ORDERS)})")
    if similarity_check:
        encoder = encoder or sentence_engine()
    tokens = space.tokens
    words = [i for i, p in enumerate(space.positions) if p.kind == "word"]
    base = engine.predict_proba([space.item])[0]
    order = _visit_order(engine, space, gold, word_order, words, base, rules)
    chosen: dict[int, int] = {}
    current_prob = base[gold]
    for position in order:
        p = space.positions[position]
        trials = [_point(chosen, position, c) for c in range(1, len(p.candidates))]
        texts = [perturbed_part(space.apply(t)) for t in trials]
        if similarity_check:
            sims = _similarity(encoder, space, trials, texts, p.index, rules)
            sim_ok = sims >= _threshold(tokens, rules)
        else:
            sim_ok = np.ones(len(trials), bool)
        pos_ok = (np.array(same_pos(tokens, p.index, [_words(space, t) for t in trials], rules.noun_verb_compatible),
                           dtype=bool) if pos_check else np.ones(len(trials), bool))
        evaluated = evaluate_all(engine, space, trials, gold)
        probs = evaluated.probs
        flips = evaluated.adversarial & sim_ok & pos_ok
        if flips.any():
            if not similarity_check:
                return success(METHOD, engine, space, trials[int(np.argmin(np.where(flips, probs[:, gold], np.inf)))],
                               gold)
            best = int(np.argmax(np.where(flips, sims, -np.inf)))
            result = success(METHOD, engine, space, trials[best], gold)
            result.similarity = float(cosine(encoder, [texts[best]], [tokens.join()])[0])
            return result
        pick = _kept_substitution(rules, probs[:, gold], sim_ok, pos_ok, current_prob)
        if pick is not None:
            chosen[position], current_prob = pick + 1, probs[pick, gold]
    return AttackResult(METHOD, FAILED, space.item, gold, reason="no substitution sequence flipped the label")


def _visit_order(engine: QueryEngine, space: Space, gold: int, word_order: str, words: list[int], base, rules) -> list:
    """The word positions in the order the attack visits them: the space's random position order
    (its words only) or by decreasing importance (ties by position)."""
    if word_order == "random":
        return [i for i in position_order(engine, space, gold, "random") if space.positions[i].kind == "word"]
    importance = dict(zip(words, _importance(engine, space, words, gold, base, rules)))
    return sorted(words, key=lambda i: (-importance[i], i))


def _kept_substitution(rules, gold_probs: np.ndarray, sim_ok: np.ndarray, pos_ok: np.ndarray, current_prob):
    """The index of the trial to keep when none flipped the label, or None: with a penalised
    fallback, the lowest p(gold) plus one per failed check, when below `current_prob`; else the
    lowest p(gold) among those that pass both checks."""
    if rules.penalised_fallback:
        scores = gold_probs + (~sim_ok) + (~pos_ok)
        pick = int(np.argmin(scores))
        return pick if scores[pick] < current_prob else None
    kept = sim_ok & pos_ok
    return int(np.argmin(np.where(kept, gold_probs, np.inf))) if kept.any() else None


def _point(chosen: dict[int, int], position: int, candidate: int) -> Point:
    return tuple(sorted({**chosen, position: candidate}.items()))


def _importance(engine, space, positions, gold, base, rules) -> list[float]:
    """Eq. 2 for each word position, in one batch: the drop in p(gold) when the word goes
    (deleted, or `<oov>` in the code), plus the rise of the new label when the prediction changes."""
    tokens = space.tokens
    texts = []
    for position in positions:
        index = space.positions[position].index
        if rules.deletion_importance:
            texts.append(tokens.without(index))
        else:
            replaced = list(tokens.words)
            replaced[index] = "<oov>"
            texts.append(tokens.join(replaced))
    scores = []
    for probs in engine.predict_proba([replace_perturbed_part(space.item, t) for t in texts]):
        score = base[gold] - probs[gold]
        new = int(judged_labels(probs, gold)[0])
        if new != gold:
            score += probs[new] - base[new]
        scores.append(float(score))
    return scores


def _window(tokens: Tokens, words: list[str], index: int) -> str:
    """The 15 words around `index` (as TextFooler's code), joined with their separators."""
    n = len(words)
    half = (WINDOW - 1) // 2
    if n <= WINDOW:
        start, end = 0, n
    elif index < half:
        start, end = 0, WINDOW
    elif n - index - 1 < half:
        start, end = n - WINDOW, n
    else:
        start, end = index - half, index + half + 1
    return words_between(tokens, words, start, end)


def _similarity(encoder, space: Space, trials: list[Point], texts: list[str], index: int,
                rules: Setting) -> np.ndarray:
    """Paper: cosine of the whole texts. Code: 1 - arccos(cosine) of 15-word windows."""
    tokens = space.tokens
    if not rules.angular_window:
        return cosine(encoder, texts, [tokens.join()] * len(texts))
    windows = [_window(tokens, _words(space, trial), index) for trial in trials]
    base = _window(tokens, list(tokens.words), index)
    similarity = np.clip(cosine(encoder, windows, [base] * len(windows)), -1.0, 1.0)
    return 1.0 - np.arccos(similarity)


def _threshold(tokens: Tokens, rules: Setting) -> float:
    if rules.angular_window and len(tokens.words) < WINDOW:
        return 0.1  # the official code's short-text bypass
    return rules.epsilon


def _words(space: Space, point: Point) -> list[str]:
    """The words of the perturbed part at `point` (TextFooler changes words only)."""
    words = list(space.tokens.words)
    for position, choice in point:
        words[space.positions[position].index] = space.positions[position].candidates[choice]
    return words


@options_dataclass
class TextFoolerOptions:
    setting: str = field(default="paper", metadata=option(
        "paper: as the paper describes it; official-code: as its code runs (importance by <oov>, windowed "
        "similarity, NOUN and VERB compatible, penalised fallback).", choices=tuple(SETTINGS)))
    pos_check: bool = field(default=True, metadata=option(
        "Without the part-of-speech check.", names=("--no-pos-check",), flag=True, invert=True))
    similarity_check: bool = field(default=True, metadata=option(
        "Without the sentence-similarity check (with --no-pos-check: the pure greedy search).",
        names=("--no-similarity-check",), flag=True, invert=True))
    word_order: str = field(default="importance", metadata=option(
        "The word order: the importance ranking (eq. 2), or random (the paper's Table 8 ablation).",
        choices=WORD_ORDERS))


class TextFooler(Recipe, name="textfooler", options=TextFoolerOptions):
    """TextFooler, the baseline: words by importance, greedily, under POS and similarity checks."""

    def space(self, space: SpaceSpec, options: TextFoolerOptions) -> SpaceSpec:
        return textfooler_space(space)

    def uses_sentence_encoder(self, options: TextFoolerOptions) -> bool:
        return options.similarity_check

    def attack(self, engine, space, gold, options: TextFoolerOptions, sentence_encoder, masked_lm) -> AttackResult:
        return textfooler_attack(engine, space, gold, encoder=sentence_encoder, **dataclasses.asdict(options))

    def planned_calls(self, space, options: TextFoolerOptions) -> int:
        """The input, one importance score per word position (none in random order), then each
        word position's candidates once (the greedy pass)."""
        words = [i for i, p in enumerate(space.positions) if p.kind == "word"]
        scores = 0 if options.word_order == "random" else len(words)
        return 1 + scores + sum(space.sizes[i] for i in words)
