"""Where a space's changes reach a word model: one token column per position, one token id per
candidate, and the boxes of token ids that bounds take.

The word networks read one token id per word (the shared GloVe vocabulary's `GloveWords`), so a
point of a space is the clean input's ids with each changed word's column replaced by its
candidate's id. `token_slots` derives this from the model's own tokenizer, one single change at a
time, and refuses a space whose changes do not act so (a candidate of several words, a gap whose
change the model sees, two positions on one column). Combinations of changes then act column by
column: the word rule splits a text at its separators, and a change replaces a word by a word,
never a separator (a separator between two words is never a lone joiner such as "-", which the
word rule would have read as part of one word). A space whose changes do not act so raises
`Unboundable` (branch and bound then enumerates it, `branch.prove_with_bounds`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from robustcount.errors import RobustcountError
from robustcount.spaces.space import Space


class Unboundable(RobustcountError):
    """A space whose changes do not act on the model column by column (a candidate that changes
    the number of tokens, a change that reaches several tokens, two positions on one token): bounds
    cannot take its boxes, though the model supports bounds."""


@dataclass(frozen=True)
class TokenSlots:
    """The clean input's token ids (`ids`, one column per token), the column each position writes
    to (`column[p]`, None when none of its changes reaches the model), the token id of each of
    its candidates (`candidate_ids[p][c]`, c = 0 the original; empty without a column), and every
    column's ids as one table (`universe[t, c]`: candidate c of the position at column t, padded
    with the clean id; a column no position writes to holds its clean id throughout)."""

    ids: torch.Tensor
    column: tuple[int | None, ...]
    candidate_ids: tuple[tuple[int, ...], ...]
    universe: torch.Tensor


@dataclass(frozen=True)
class SlotBox:
    """A box of token-id sequences: column t holds `universe[t, c]` for one c with `allowed[t, c]`
    (c = 0 the clean id), and at most `cap` of the `free` columns (whose allowed ids include the
    clean one) hold another id than the clean one."""

    universe: torch.Tensor
    allowed: torch.Tensor
    free: torch.Tensor
    cap: int

    @property
    def ids(self) -> torch.Tensor:
        """The clean input's ids."""
        return self.universe[:, 0]


def token_slots(tokenizer, space: Space) -> TokenSlots:
    """The columns and candidate ids of `space` for a model reading `tokenizer(batch).inputs["input_ids"]`
    (see the module docstring; `Unboundable` when its changes do not act column by column); one
    tokenizer call per candidate, no model call."""
    ids = _ids(tokenizer, space.item)
    columns, candidate_ids, owner = [], [], {}
    for p, position in enumerate(space.positions):
        encodings = [ids] + [_ids(tokenizer, space.apply(((p, c),))) for c in range(1, len(position.candidates))]
        differing = set()
        for candidate, changed in zip(position.candidates, encodings):
            if changed.shape != ids.shape:
                raise Unboundable(f"bounds: candidate {candidate!r} of {position.kind} {position.index} "
                                       "changes the number of tokens the model reads")
            differing.update(torch.nonzero(changed != ids).flatten().tolist())
        if len(differing) > 1:
            raise Unboundable(f"bounds: the changes of {position.kind} {position.index} reach more than "
                                   "one token of the model")
        column = differing.pop() if differing else None
        if column is not None:
            if column in owner:
                raise Unboundable(f"bounds: positions {owner[column]} and {p} of the space change one token")
            owner[column] = p
        columns.append(column)
        candidate_ids.append(tuple(int(e[column]) for e in encodings) if column is not None else ())
    universe = ids[:, None].repeat(1, max([len(c) for c in candidate_ids] + [1]))
    for column, found in zip(columns, candidate_ids):
        if column is not None:
            universe[column, : len(found)] = torch.tensor(found)
    return TokenSlots(ids, tuple(columns), tuple(candidate_ids), universe)


def _ids(tokenizer, item) -> torch.Tensor:
    inputs = tokenizer([item]).inputs
    if set(inputs) != {"input_ids"}:
        raise RobustcountError(f"bounds: the model reads {sorted(inputs)}, not token ids alone")
    return inputs["input_ids"][0]
