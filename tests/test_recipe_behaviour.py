"""What makes each TextAttack-named recipe itself, pinned on small real models whose answers the
tests compute by hand: its word scores, its search order and what it keeps, its transformation
and its constraints, as the paper (and TextAttack 0.3.11, where `follow="textattack"`) defines
them. Each case is built so that another score or order would find another adversary (the tests
assert that too), so a change to a recipe's search fails here.

- PWWS (Ren et al. 2019): H(i) = softmax(S)_i x dP*_i, S_i the drop in p(gold) when word i becomes
  `[UNK]`, dP*_i the drop that word i's best candidate makes; words in decreasing H, each one's
  best candidate (chosen against the clean text) put in until the label leaves gold.
- DeepWordBug (Gao et al. 2018): the combined score THS + TTS (temporal head and tail), words in
  decreasing score, each one's edit always made; the edit distance budget; its transformation,
  one letter substituted (the paper) or the four edits (TextAttack).
- TextFooler (Jin et al. 2020): importance (eq. 2: the drop in p(gold) when the word is deleted,
  plus the new label's rise when the label changes), words in decreasing importance, the same
  part of speech and sentence similarity >= 0.7, the most similar flip taken.
"""

import string

import numpy as np
import pytest

from robustcount.attacks.deepwordbug import DeepWordBug, DeepWordBugOptions, deepwordbug_attack
from robustcount.attacks.pwws import pwws_attack
from robustcount.attacks.result import FAILED, SUCCESS
from robustcount.attacks.textfooler import textfooler_attack
from robustcount.goal import MARGIN_TOLERANCE
from robustcount.models.engine import QueryEngine
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.sentence_encoder import cosine, sentence_engine
from robustcount.spaces.build import SpaceSpec
from robustcount.spaces.char_edits import CharacterEdit
from robustcount.spaces.space import Position, Space
from robustcount.text import tokenize
from tests.test_attacks import weighted_model


def p_positive(score: float) -> float:
    """`weighted_model`'s p(positive) for a text whose word weights sum to `score`."""
    return float(1 / (1 + np.exp(-4 * score)))


def leaves_positive(score: float) -> bool:
    """The goal's rule for gold = positive: p(positive) - p(negative) at most the tolerance."""
    return 2 * p_positive(score) - 1 <= MARGIN_TOLERANCE


def by_score(scores) -> tuple[int, ...]:
    """Positions by score, highest first, ties in text order."""
    return tuple(sorted(range(len(scores)), key=lambda i: (-scores[i], i)))


def put_in_order(order, weights, best) -> tuple | None:
    """The papers' search: each word of `order` takes candidate `best[i]` (weight `weights[i]`),
    always, until the label leaves positive; the adversary's point, or None."""
    score, point = sum(weights["words"]), {}
    for i in order:
        score += weights["candidates"][i][best[i]] - weights["words"][i]
        point[i] = best[i] + 1
        if leaves_positive(score):
            return tuple(sorted(point.items()))
    return None


def word_space(words, candidates) -> Space:
    return Space(" ".join(words), tuple(Position("word", i, (w, *c)) for i, (w, c) in enumerate(zip(words, candidates))))


PWWS_WORDS = [0.2, 0.15, 0.45, 0.06]
PWWS_CANDIDATES = [[0.18, -0.34], [-0.39, 0.22], [-0.06, 0.2], [-0.77, -0.62]]


def pwws_problem():
    words = [f"w{i}" for i in range(4)]
    candidates = [[f"w{i}s{j}" for j in range(2)] for i in range(4)]
    weights = {w: a for w, a in zip(words, PWWS_WORDS)}
    weights.update({c: b for row, values in zip(candidates, PWWS_CANDIDATES) for c, b in zip(row, values)})
    return word_space(words, candidates), weighted_model(weights)


def test_pwws_puts_in_each_words_best_candidate_by_probability_weighted_saliency():
    space, model = pwws_problem()
    a, b = np.array(PWWS_WORDS), np.array(PWWS_CANDIDATES)
    p = p_positive(a.sum())
    saliency = np.array([p - p_positive(a.sum() - a[i]) for i in range(4)])  # the word becomes [UNK], weight 0
    after = np.array([[p_positive(a.sum() - a[i] + b[i, j]) for j in range(2)] for i in range(4)])
    best, drop = after.argmin(axis=1), p - after.min(axis=1)
    normalised = np.exp(saliency) / np.exp(saliency).sum()  # softmax(S)
    order = by_score(normalised * drop)
    assert order == (3, 0, 1, 2) and list(best) == [1, 0, 0, 0]
    weights = {"words": a, "candidates": b}
    expected = put_in_order(order, weights, best)
    assert expected == ((0, 2), (3, 1))
    # saliency alone, the drop alone or the text's order would each find another adversary
    others = {put_in_order(o, weights, best) for o in (by_score(saliency), by_score(drop), (0, 1, 2, 3))}
    assert expected not in others and len(others) == 3
    result = pwws_attack(QueryEngine(model), space, 1)
    assert (result.status, result.point) == (SUCCESS, expected)


def test_pwws_as_textattack_runs_it_scores_by_one_minus_p_and_keeps_only_what_lowers_p():
    """TextAttack's weighted saliency: softmax(S) x (1 - p(gold | x*_i)), then its greedy search."""
    space, model = pwws_problem()
    a, b = np.array(PWWS_WORDS), np.array(PWWS_CANDIDATES)
    p = p_positive(a.sum())
    saliency = np.array([p - p_positive(a.sum() - a[i]) for i in range(4)])
    after = np.array([[p_positive(a.sum() - a[i] + b[i, j]) for j in range(2)] for i in range(4)])
    normalised = np.exp(saliency) / np.exp(saliency).sum()  # softmax(S)
    order = by_score(normalised * (1 - after.min(axis=1)))
    assert order == (3, 2, 0, 1) != by_score(normalised * (p - after.min(axis=1)))
    score, state = a.sum(), {}
    for i in order:  # each word's best candidate in the current text, kept when it lowers p(gold)
        trials = [score - a[i] + b[i, j] for j in range(2)]
        flips = [j for j in range(2) if leaves_positive(trials[j])]
        if flips:
            expected = tuple(sorted({**state, i: min(flips, key=lambda j: trials[j]) + 1}.items()))
            break
        j = int(np.argmin(trials))
        if p_positive(trials[j]) < p_positive(score):
            score, state[i] = trials[j], j + 1
    result = pwws_attack(QueryEngine(model), space, 1, follow="textattack")
    assert (result.status, result.point) == (SUCCESS, expected)
    assert expected != pwws_attack(QueryEngine(model), space, 1).point


DWB_WORDS = [0.12, 0.01, 0.01, 0.16]
DWB_EDITS = [0.15, -0.57, -0.04, 0.1]


def deepwordbug_problem():
    words = ["alpha", "bravo", "charlie", "delta"]
    edits = [["alpxa"], ["brbvo"], ["chbrlie"], ["dekta"]]  # one letter substituted each (edit distance 1)
    weights = {w: x for w, x in zip(words, DWB_WORDS)} | {e[0]: x for e, x in zip(edits, DWB_EDITS)}
    return word_space(words, edits), weighted_model(weights)


def combined_scores_by_hand() -> np.ndarray:
    """THS + TTS with lambda 1: p(gold) of the words up to i minus up to i - 1, plus p(gold) of the
    words from i on minus from i + 1 on (no words: p = 1/2)."""
    a = np.array(DWB_WORDS)
    head = [p_positive(a[:i].sum()) for i in range(5)]
    tail = [p_positive(a[i:].sum()) for i in range(5)]
    return np.array([(head[i + 1] - head[i]) + (tail[i] - tail[i + 1]) for i in range(4)])


def test_deepwordbug_edits_words_in_combined_score_order_and_always_keeps_the_edit():
    space, model = deepwordbug_problem()
    order = by_score(combined_scores_by_hand())
    a = np.array(DWB_WORDS)
    replace_one = by_score([p_positive(a.sum()) - p_positive(a.sum() - a[i]) for i in range(4)])
    assert order == (3, 0, 2, 1) and replace_one == (3, 0, 1, 2)
    weights = {"words": a, "candidates": [[x] for x in DWB_EDITS]}
    expected = put_in_order(order, weights, [0] * 4)
    assert expected == ((0, 1), (1, 1), (2, 1), (3, 1))  # the first edit raises p(gold): kept all the same
    assert DWB_EDITS[3] < DWB_WORDS[3] and DWB_EDITS[0] > DWB_WORDS[0]
    assert expected not in {put_in_order(o, weights, [0] * 4) for o in (replace_one, (0, 1, 2, 3))}
    result = deepwordbug_attack(QueryEngine(model), space, 1)
    assert (result.status, result.point) == (SUCCESS, expected)
    # TextAttack's: replace-1 scores with [UNK] in their order, an edit kept only when it lowers p(gold)
    score, kept = a.sum(), []
    for i in replace_one:
        trial = score - a[i] + DWB_EDITS[i]
        if leaves_positive(trial):
            break
        if trial < score:
            score, kept = trial, [*kept, i]
    assert (i, kept) == (1, [3])  # "alpha"'s edit raises p(gold): not kept
    textattack = deepwordbug_attack(QueryEngine(model), space, 1, follow="textattack")
    assert (textattack.status, textattack.point) == (SUCCESS, ((1, 1), (3, 1)))


def test_deepwordbug_spends_at_most_its_edit_distance():
    """With 2 edits in all, the paper's search makes the first two edits (one letter each) and can
    afford no third: it fails where 30 edits found an adversary at four."""
    space, model = deepwordbug_problem()
    assert deepwordbug_attack(QueryEngine(model), space, 1).distance == 4
    result = deepwordbug_attack(QueryEngine(model), space, 1, max_edit_distance=2)
    assert result.status == FAILED
    longer = word_space(["alpha", "bravo", "charlie", "delta"], [["alpxa"], ["bravo!!"], ["chbrlie"], ["dekta"]])
    assert deepwordbug_attack(QueryEngine(model), longer, 1, max_edit_distance=4).status == FAILED


def test_deepwordbugs_transformations_are_the_papers_substitution_and_textattacks_four_edits():
    assert DeepWordBug().space(SpaceSpec(), DeepWordBugOptions()).sources == ("char-substitute",)
    assert DeepWordBug().space(SpaceSpec(), DeepWordBugOptions(follow="textattack")).sources == ("deepwordbug",)
    for seed in range(20):
        word = "wonderful"
        (swap,) = CharacterEdit("swap", seed).neighbours(word)
        i = next(k for k in range(len(word)) if swap[k] != word[k])
        assert swap == word[:i] + word[i + 1] + word[i] + word[i + 2:]
        (substituted,) = CharacterEdit("substitute", seed).neighbours(word)
        changed = [k for k in range(len(word)) if substituted[k] != word[k]]
        assert len(substituted) == len(word) and len(changed) == 1 and substituted[changed[0]] in string.ascii_lowercase
        (deleted,) = CharacterEdit("delete", seed).neighbours(word)
        assert any(deleted == word[:k] + word[k + 1:] for k in range(len(word)))
        (inserted,) = CharacterEdit("insert", seed).neighbours(word)
        assert any(inserted[:k] + inserted[k + 1:] == word and inserted[k] in string.ascii_lowercase
                   for k in range(len(inserted)))
        assert CharacterEdit("substitute", seed).neighbours("FILM")[0].isupper()  # a letter of the same case


LABELS = ["a", "b", "c"]
TF_WORDS = {"x0": [-0.9, 1.1, 0.8], "x1": [0.7, -0.8, 0.3], "x2": [1.5, 0.6, 0.0],
            "y0": [0.8, 0.7, 0.5], "z0": [1.2, 1.5, 0.7], "y1": [-0.2, -0.2, -0.8], "z1": [0.1, 1.5, -0.2],
            "y2": [1.2, 1.4, 1.2], "z2": [1.2, -1.0, 0.0]}


def three_labels() -> FunctionClassifier:
    """A real three-label model: the logits are the sum of the words' vectors (unknown words: 0)."""

    def logits(batch):
        return np.array([np.sum([TF_WORDS.get(w, [0.0] * 3) for w in tokenize(text).words] or [[0.0] * 3], axis=0)
                         for text in batch])

    return FunctionClassifier(logits, LABELS, output="logits", name="three-labels")


def softmax(v) -> np.ndarray:
    e = np.exp(np.asarray(v) - np.max(v))
    return e / e.sum()


def test_textfooler_visits_words_by_eq_2_importance_with_the_label_change_term():
    """Deleting x1 or x2 changes the label: eq. 2 adds the new label's rise, which puts x1 before
    x2 though x2's deletion lowers p(gold) more; the first word visited then flips with its
    candidate of lowest p(gold)."""
    words = ["x0", "x1", "x2"]
    vectors = np.array([TF_WORDS[w] for w in words])
    base = softmax(vectors.sum(axis=0))
    importance, drop = [], []
    for i in range(3):
        without = softmax(vectors.sum(axis=0) - vectors[i])
        drop.append(base[0] - without[0])
        new = int(np.argmax(without))
        importance.append(drop[-1] + (without[new] - base[new] if new != 0 else 0.0))
    assert by_score(importance) == (1, 2, 0) and by_score(drop) == (2, 1, 0)
    space = word_space(words, [["y0", "z0"], ["y1", "z1"], ["y2", "z2"]])
    result = textfooler_attack(QueryEngine(three_labels()), space, 0, pos_check=False, similarity_check=False)
    assert (result.status, result.point) == (SUCCESS, ((1, 2),))
    trial = softmax(vectors.sum(axis=0) - vectors[1] + TF_WORDS["z1"])
    assert trial[0] - trial[1:].max() <= MARGIN_TOLERANCE  # z1 flips
    by_drop = softmax(vectors.sum(axis=0) - vectors[2] + TF_WORDS["y2"])
    assert by_drop[0] - by_drop[1:].max() <= MARGIN_TOLERANCE  # by the drop alone, x2 first: y2 flips, another adversary


@pytest.fixture(scope="module")
def encoder():
    return sentence_engine()


def test_textfooler_keeps_the_part_of_speech_and_takes_the_most_similar_flip_above_0_7(encoder):
    """Every candidate of "good" leaves the label; "quickly" is another part of speech, "awful"
    (the lowest p(gold)) is under the similarity threshold, and of "terrible" and "bad" the paper
    takes the more similar, not the lower p(gold)."""
    item = "the movie was good"
    candidates = ("awful", "quickly", "terrible", "bad")
    model = weighted_model({"movie": 0.1, "good": 0.6, "awful": -3.0, "quickly": -2.5, "terrible": -1.0, "bad": -0.8})
    texts = [f"the movie was {c}" for c in candidates]
    similarity = dict(zip(candidates, cosine(encoder, texts, [item] * len(texts))))
    assert similarity["awful"] < 0.7 <= similarity["terrible"] < similarity["bad"], similarity
    space = Space(item, (Position("word", 3, ("good", *candidates)),))

    def found(**checks):
        result = textfooler_attack(QueryEngine(model), space, 1, encoder=encoder, **checks)
        assert result.status == SUCCESS
        return space.positions[0].candidates[result.point[0][1]]

    assert found() == "bad"  # POS and similarity: the most similar flip left
    assert found(pos_check=False, similarity_check=False) == "awful"  # the lowest p(gold)
    assert found(similarity_check=False) == "awful"  # "awful" is an adjective too
    assert found(pos_check=False) == "bad"  # "quickly" is under the threshold as well
    only_adverb = Space(item, (Position("word", 3, ("good", "quickly")),))
    assert textfooler_attack(QueryEngine(model), only_adverb, 1, similarity_check=False).status == FAILED
