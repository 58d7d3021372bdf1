"""The search BAE and BERT-Attack share: words by importance, each replaced greedily by a masked
language model's candidates in the context of the text as it stands, under the recipe's constraints.

As TextAttack's greedy word swap by importance (`GreedyWordSwapWIR`), which both papers describe:
word importance is the drop in p(gold) when the word is deleted or replaced by a placeholder;
words are visited from the most important, each once, stop words and the words the space's filters
leave alone skipped; at each word the masked LM proposes its K most probable whole words (`rules`
say how) for the text with the substitutions made so far; the candidates that pass the part of
speech and sentence-similarity checks are evaluated; a candidate that flips the label ends the
attack (the one most similar to the original, else the lowest p(gold)), else the candidate with
the lowest p(gold) is kept if it lowers p(gold).

The masked LM's candidates depend on the context, so they are no source of a fixed space: the
search records, for each word it visits, the candidates it evaluated there, and the adversary is
a point of the space those lists make (`Space` with the recipe, masked LM and filters as its
definition), re-checked there like any other (`result.success`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from robustcount.attacks.result import FAILED, AttackResult, success
from robustcount.attacks.search import stop_words_left_alone
from robustcount.goal import evaluate_all
from robustcount.models.base import MaskQuery
from robustcount.models.engine import QueryEngine
from robustcount.models.masked_lm import whole_word
from robustcount.models.sentence_encoder import cosine, sentence_engine
from robustcount.spaces.pos import same_pos
from robustcount.spaces.space import Point, Position, Space
from robustcount.text import Tokens, perturbed_part, replace_perturbed_part, words_between


def masked_lm_calls(space: Space, rules: SwapRules) -> int:
    """The most model calls of `masked_lm_attack`: the input, an importance score per word and
    each word's candidates (at most `rules.candidates`) once."""
    words = space.changeable_words
    return 1 + words + words * rules.candidates


@dataclass(frozen=True)
class SwapRules:
    """How one recipe proposes and checks candidates (see bae.py and bert_attack.py)."""

    masked: bool
    """BAE masks the word and reads the mask; BERT-Attack reads the word's own pieces, unmasked."""
    candidates: int
    min_confidence: float
    """Candidates below this probability are dropped (BAE, as TextAttack: 5e-4)."""
    importance: str
    """What replaces a word to score it: "" (deleted), "[UNK]" or "[MASK]"."""
    pos_check: bool
    """Same part of speech, NOUN and VERB compatible."""
    similarity: float | None
    """Least cosine of sentence embeddings against the original; None: no check."""
    window: int | None
    """Words of the window around the change the similarity compares (None: the whole texts);
    a text shorter than the window passes unchecked."""
    final_similarity: bool
    """Check the similarity once, on the adversary found, rather than on every candidate."""
    max_share: float | None
    """The most words changed, as a share of the words."""
    rank_pieces: bool
    """For a word of several pieces: rank the combinations of each piece's top candidates by
    perplexity (the paper), or take them in product order (TextAttack)."""


class MaskedLMRecipe:
    """What BAE and BERT-Attack share as recipes (mixed in before `Recipe`): English stop words left
    alone, the sentence encoder when the similarity check is on, and the search with the masked LM
    their options name (`--masked-lm`, which the worker loads and injects) under the rules that
    `rules(options)` gives."""

    def rules(self, options) -> SwapRules:
        raise NotImplementedError

    def space(self, space, options):
        return stop_words_left_alone(space)

    def uses_sentence_encoder(self, options) -> bool:
        return options.similarity_check

    def uses_masked_lm(self, options) -> str:
        return options.masked_lm

    def attack(self, engine, space, gold, options, sentence_encoder, masked_lm) -> AttackResult:
        return masked_lm_attack(self.name, engine, masked_lm, space, gold,
                                self.rules(options), sentence_encoder, space.definition.get("filters", {}))

    def planned_calls(self, space, options) -> int:
        return masked_lm_calls(space, self.rules(options))


def masked_lm_attack(method: str, engine: QueryEngine, masked_lm: QueryEngine, space: Space, gold: int,
                     rules: SwapRules, encoder: QueryEngine | None, filters: dict) -> AttackResult:
    """The search of the module docstring on `space`'s input, the words it may change chosen by
    `filters` (a `Filters.definition()`); `encoder` is the sentence encoder's engine (default: a
    new one over all-MiniLM-L6-v2; none is used when `rules.similarity` is None)."""
    if rules.similarity is not None:
        encoder = encoder or sentence_engine()
    original = space.tokens
    words = list(original.words)
    stop, skip = set(filters.get("stop_words", ())), set(filters.get("skip_positions", ()))
    eligible = [i for i, w in enumerate(words[:space.changeable_words]) if w.lower() not in stop and i not in skip
                and len(w) >= filters.get("min_length", 0)]
    base = engine.predict_proba([space.item])[0]
    scores = _importance(engine, space, eligible, gold, base, rules.importance)
    order = sorted(eligible, key=lambda i: (-scores[i], i))
    most = math.floor(rules.max_share * len(words)) if rules.max_share is not None else len(words)
    definition = {"method": method, "masked_lm": masked_lm.model.name, "filters": filters}
    lists: dict[int, tuple[str, ...]] = {}
    chosen: dict[int, int] = {}
    current = base[gold]
    for index in order:
        if len(chosen) >= most:
            break
        proposed = _proposals(masked_lm, Tokens(tuple(words), original.separators), index, rules)
        if not proposed:
            continue
        variants = [words[:index] + [c] + words[index + 1:] for c in proposed]
        keep = np.ones(len(proposed), bool)
        if rules.pos_check:
            keep &= np.array(same_pos(original, index, variants, noun_verb_compatible=True), dtype=bool)
        sims = None
        if rules.similarity is not None and not rules.final_similarity:
            sims = _similarity(encoder, original, variants, index, rules.window)
            if sims is not None:
                keep &= sims >= rules.similarity
        if not keep.any():
            continue
        lists[index] = (original.words[index], *[c for c, k in zip(proposed, keep) if k])
        kept_sims = None if sims is None else sims[keep]
        candidate_space = Space(space.item, _positions(lists), definition)
        trials = [_point(candidate_space, {**chosen, index: c}) for c in range(1, len(lists[index]))]
        evaluated = evaluate_all(engine, candidate_space, trials, gold)
        p_gold = evaluated.probs[:, gold]
        if evaluated.adversarial.any():
            ranking = kept_sims if kept_sims is not None else -p_gold
            best = int(np.argmax(np.where(evaluated.adversarial, ranking, -np.inf)))
            return _found(method, engine, candidate_space, trials[best], gold, rules, encoder)
        pick = int(np.argmin(p_gold))
        if p_gold[pick] < current:
            chosen[index], current = pick + 1, p_gold[pick]
            words[index] = lists[index][pick + 1]
    return AttackResult(method, FAILED, space.item, gold, reason="no substitution sequence flipped the label")


def _found(method, engine, space: Space, point: Point, gold: int, rules: SwapRules, encoder) -> AttackResult:
    """The re-checked success at `point`, with its similarity to the original when one is measured
    (and, with `final_similarity`, a failure when it is below the threshold)."""
    result = success(method, engine, space, point, gold)
    if encoder is not None:
        result.similarity = float(cosine(encoder, [perturbed_part(result.adversarial)],
                                         [perturbed_part(space.item)])[0])
        if rules.final_similarity and result.similarity < rules.similarity:
            return AttackResult(method, FAILED, space.item, gold, reason=(
                f"the adversary found is too far in meaning (similarity {result.similarity:.3f} "
                f"< {rules.similarity:g})"))
    return result


def _importance(engine, space: Space, indices: list[int], gold: int, base, placeholder: str) -> dict[int, float]:
    """p(gold) minus p(gold) with each word deleted (`placeholder` "") or replaced, in one batch."""
    tokens = space.tokens
    texts = []
    for index in indices:
        if placeholder:
            replaced = list(tokens.words)
            replaced[index] = placeholder
            texts.append(tokens.join(replaced))
        else:
            texts.append(tokens.without(index))
    probs = engine.predict_proba([replace_perturbed_part(space.item, t) for t in texts]) if texts else []
    return {index: float(base[gold] - p[gold]) for index, p in zip(indices, probs)}


def _proposals(masked_lm: QueryEngine, tokens: Tokens, index: int, rules: SwapRules) -> list[str]:
    """The masked LM's candidates for word `index` of `tokens`, most probable first, distinct and
    none the word itself in any case: masked (BAE), the K most probable whole words at least
    `min_confidence` probable; unmasked (BERT-Attack), the whole words among the K most probable
    pieces of a one-piece word, or the pieces' combinations (`_combinations`)."""
    model = masked_lm.model
    start, end = tokens.spans()[index]
    pieces = len(model.word_pieces(tokens.words[index]))
    if not rules.masked and pieces > model.max_pieces:
        return []
    (answer,) = masked_lm.fill_masks([MaskQuery(tokens.join(), start, end, rules.masked)])
    rows = answer.reshape(model.max_pieces, len(model.pieces))
    if rules.masked or pieces == 1:
        ranked = np.argsort(-rows[0], kind="stable")
        if rules.masked:
            ranked = ranked[rows[0][ranked] >= rules.min_confidence]
        else:
            ranked = ranked[: rules.candidates]
        proposed = (model.pieces[i] for i in ranked if whole_word(model.pieces[i]))
    else:
        proposed = iter(_combinations(model.pieces, rows[:pieces], rules))
    seen, out = {tokens.words[index].lower()}, []
    for candidate in proposed:
        if len(out) == rules.candidates:
            break
        if candidate.lower() not in seen:
            seen.add(candidate.lower())
            out.append(candidate)
    return out


def _combinations(pieces: tuple[str, ...], rows: np.ndarray, rules: SwapRules) -> list[str]:
    """Words made of one top-K piece per position (BERT-Attack's sub-word combinations): ranked by
    perplexity (the paper) or in product order (TextAttack), letters only."""
    tops = [np.argsort(-row, kind="stable")[: rules.candidates] for row in rows]
    combos = []
    for ids in itertools.product(*tops):
        word = "".join(pieces[i].removeprefix("##") for i in ids)
        if word.isalpha():
            combos.append((word, float(np.exp(-np.mean([np.log(rows[j][i]) for j, i in enumerate(ids)])))))
        if not rules.rank_pieces and len(combos) == rules.candidates:
            break
    if rules.rank_pieces:
        combos.sort(key=lambda c: c[1])
    return [word for word, _ in combos]


def _similarity(encoder, original: Tokens, variants: list[list[str]], index: int, window: int | None):
    """Cosine of each variant against the original, over the whole texts or the `window` words
    around `index`; None when the text is shorter than the window (every variant passes)."""
    if window is None:
        return cosine(encoder, [original.join(v) for v in variants], [original.join()] * len(variants))
    if len(original.words) < window:
        return None
    start, end = _window_bounds(len(original.words), index, window)
    base = words_between(original, list(original.words), start, end)
    texts = [words_between(original, v, start, end) for v in variants]
    return cosine(encoder, texts, [base] * len(texts))


def _window_bounds(n: int, index: int, size: int) -> tuple[int, int]:
    """The words [start, end) of the `size`-word window around `index` (TextAttack's)."""
    half = (size - 1) / 2
    if index - half < 0:
        return 0, min(size, n)
    if index + half >= n:
        return max(0, n - size), n
    return index - math.ceil(half), index + math.floor(half) + 1




def _positions(lists: dict[int, tuple[str, ...]]) -> tuple[Position, ...]:
    return tuple(Position("word", index, candidates) for index, candidates in sorted(lists.items()))


def _point(space: Space, choices: dict[int, int]) -> Point:
    """The point choosing candidate `choices[word index]` at those words."""
    where = {p.index: i for i, p in enumerate(space.positions)}
    return tuple(sorted((where[index], choice) for index, choice in choices.items()))
