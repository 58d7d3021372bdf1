"""The batch probe: whether a model's answer for an input depends on the other inputs of its batch
(padding bugs break that, and then no proof about the model holds), decided once per engine at
its first request (`decide_batching`).

The probe runs inputs of very different lengths (PROBE_TEXTS, as pairs after the request's
premise when it holds pairs, and up to four of the request's own inputs of at most
PROBE_CHARACTERS characters, so that it never runs a long text three times) alone and in
mixed-length batches, in both orders. When a probability (an embedding coordinate, for a sentence
encoder) moves by more than BATCH_TOLERANCE, the engine says so in one warning line and from then
on evaluates one input at a time, so that every answer is the one the input gets alone. When the
model fails on some of those inputs, each is run alone and the probe compares those it answers:
a model that refuses the probe texts is probed with the request's own inputs (its shortest, when
none is short); an input of a request that fails alone raises its error, as the request would;
a model that answers none of them raises its own error, with no warning first (outside a request,
the inputs like a run's examples that it fails on are left to fail as their examples do); a limit
reached during the probe (`LimitReached`: a served model's request that kept failing) is raised
as it is, unless it is one input's (`of_input`: a served model that did not say an answer's
probability for it), which the probe treats as a failure of that input, and the next request probes again; when
fewer than two inputs are answered, the model is evaluated one input at a time, with a warning. The probe's model calls are counted in the engine's totals and in its `probe`
counters, never in an example's counters nor against its budget, so that an example's record does
not depend on whether it came first; its time is the example's like any other.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from robustcount.errors import LimitReached, RobustcountWarning
from robustcount.models.accounting import input_characters
from robustcount.models.base import MaskQuery
from robustcount.text import Input

PROBE_TEXTS = (
    "good",
    "a bad start, then a warm and moving film",
    "the story takes its time and a few scenes drag, but the two leads are good together and the quiet ending "
    "earns every one of its tears",
    "it opens with a long, dull wedding and a dozen characters we never get to know, and for most of its two hours "
    "the film seems unsure whether it wants to be a farce, a family drama or a thriller; the cast does what it can "
    "with thin material, the score is bad where it should be quiet, and by the time the plot finally moves, "
    "nobody in the audience still cares who took the money",
)
"""Texts of very different lengths (1 to 76 words) that the batch probe runs alone and together."""
PROBE_CHARACTERS = 1_000
"""The longest of a request's own inputs the probe runs (about 200 words): the probe texts span
the lengths, and a longer input would cost the probe three runs of it."""
BATCH_TOLERANCE = 1e-5
"""The most a probability (or an embedding coordinate) may move between batch compositions for the
engine to batch a model; beyond it, the model is evaluated one input at a time. The built-in models
move by at most 1.04e-6 in float32 (see `goal.MARGIN_TOLERANCE`, which is kept well above twice
this)."""
BATCH_INVARIANT = "batch-invariant: checked"
ONE_AT_A_TIME = "evaluated one text at a time"
"""The two answers of `QueryEngine.batching` (the second with its reason in parentheses)."""


def is_batching(value) -> bool:
    """Whether `value` is what `QueryEngine.batching` records: BATCH_INVARIANT, or ONE_AT_A_TIME
    with its reason."""
    return value == BATCH_INVARIANT or isinstance(value, str) and value.startswith(ONE_AT_A_TIME)


def decide_batching(name: str, inputs: list, run: Callable[[list], np.ndarray], batch_size: int,
                    request: bool) -> str:
    """How the engine evaluates the model `name`, given `run` (the model on a batch, checked and
    counted as the probe's) and the inputs at hand (`request`: those of the request about to run,
    else inputs like them): BATCH_INVARIANT or ONE_AT_A_TIME with its reason (module docstring)."""
    if batch_size == 1:
        return f"{ONE_AT_A_TIME} (batch size 1)"
    own = _spread([item for item in inputs if input_characters(item) <= PROBE_CHARACTERS])
    try:
        difference = _batch_difference(list(dict.fromkeys(_probe_inputs(inputs) + own)), run, batch_size)
    except Exception as error:  # a model that takes other inputs, or fails on some: probe with those it answers
        if isinstance(error, LimitReached) and not error.of_input:  # no verdict: the next request probes
            raise
        difference = _refused_difference(inputs, own, run, batch_size, request)
        if difference is None:
            warnings.warn(f"{name} refuses the batch probe's texts, so whether its answers depend on their batch "
                          "is unknown: evaluating one input at a time", RobustcountWarning, stacklevel=3)
            return f"{ONE_AT_A_TIME} (the model refuses the probe texts)"
    if difference <= BATCH_TOLERANCE:
        return BATCH_INVARIANT
    warnings.warn(f"{name}: answers depend on the other inputs of their batch (they moved by up to "
                  f"{difference:.3g} between batches, above the tolerance {BATCH_TOLERANCE:g}): evaluating one "
                  "input at a time", RobustcountWarning, stacklevel=3)
    return f"{ONE_AT_A_TIME} (answers depend on their batch)"


def _refused_difference(inputs: list, own: list, run: Callable[[list], np.ndarray], batch_size: int,
                        request: bool) -> float | None:
    """The probe of a model that fails on some of the probe's inputs (a model of other inputs, or
    one that fails on some texts): the probe texts and `own` (else the shortest input at hand),
    each alone, then those it answered in batches. An input of a request that fails alone raises
    its error (the request would); a model that answers none of them raises the first input's
    error, its own. None when fewer than two were answered, or when batches fail outside a request."""
    own = own or sorted(inputs, key=input_characters)[:1]
    answered, rows, failures = [], [], []
    for probe in dict.fromkeys(_probe_inputs(inputs) + own):
        try:
            rows.append(run([probe]))
            answered.append(probe)
        except Exception as error:
            if isinstance(error, LimitReached) and not error.of_input:
                raise
            if probe in own:
                if request:
                    raise
                failures.append(error)
    if failures and not answered:
        raise failures[0]
    if len(answered) < 2:
        return None
    try:
        return _batched_difference(answered, np.concatenate(rows), run, batch_size)
    except Exception:
        if request:
            raise
        return None


def _batch_difference(probes: list, run: Callable[[list], np.ndarray], batch_size: int) -> float:
    """The largest difference between a probe's answer alone and in batches of the probes."""
    alone = np.concatenate([run([probe]) for probe in probes])
    return _batched_difference(probes, alone, run, batch_size)


def _batched_difference(probes: list, alone: np.ndarray, run: Callable[[list], np.ndarray], batch_size: int) -> float:
    """The largest difference between the answers `alone` and those of `probes` in engine batches
    (mixed lengths, in either order)."""
    differences = []
    for order in (list(range(len(probes))), list(reversed(range(len(probes))))):
        batched = np.concatenate([run([probes[i] for i in order[start : start + batch_size]])
                                  for start in range(0, len(order), batch_size)])
        differences.append(float(np.abs(alone[order] - batched).max()))
    return max(differences)  # finite: the answers were checked


def _probe_inputs(like: Sequence[Input]) -> list:
    """PROBE_TEXTS as inputs of the kind of `like`'s first: texts, pairs after its premise, or
    mask queries of their first word."""
    if like and isinstance(like[0], MaskQuery):
        return [MaskQuery(text, 0, len(text.split(" ")[0]), like[0].masked) for text in PROBE_TEXTS]
    return [(like[0][0], text) for text in PROBE_TEXTS] if like and isinstance(like[0], tuple) else list(PROBE_TEXTS)


def _spread(inputs: Sequence[Input], most: int = len(PROBE_TEXTS)) -> list:
    """Up to `most` of `inputs` with distinct lengths, from the shortest to the longest (the first
    input of each length)."""
    by_length: dict[int, Input] = {}
    for item in inputs:
        by_length.setdefault(input_characters(item), item)
    lengths = sorted(by_length)
    if not lengths:
        return []
    chosen = sorted({lengths[round(i * (len(lengths) - 1) / max(1, most - 1))] for i in range(most)})
    return [by_length[n] for n in chosen]
