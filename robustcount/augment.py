"""Perturbed copies of texts from Python: a space or an attack in, texts out.

    from robustcount.augment import augment
    copies = augment(["a gorgeous, witty film"], copies=3, radius=2)          # uniform points of the synonym space
    copies = augment(texts, method="zeroe", attackers=("keyboard",))           # Zéroe attacks
    copies = augment(texts, labels=labels, method="textfooler", model="./my-checkpoint")  # adversarial examples

Each `Copy` holds the perturbed `example` (its `input` is the text, its label the original's, its
id `ORIGINAL~how`) and the index of the text it comes from (`origin`). The same copies as
`harden --augment` trains on and the `augment` command writes, declared once as a `CopiesSpec`
(`training/copies.py`; `copies_spec` builds one from keywords, `augment(texts, spec)` takes one).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from robustcount.data import Example
from robustcount.errors import RobustcountError
from robustcount.spaces.build import SpaceSpec
from robustcount.training.augment import Copy, attack_methods
from robustcount.training.copies import AttackCopies, CopiesSpec, make_copies

METHODS = ("space", "zeroe")
"""The methods that need no model; every attack recipe is one too (`attack_methods()`)."""

__all__ = ["CopiesSpec", "Copy", "augment", "METHODS", "attack_methods"]


def copies_spec(method: str = "space", space: SpaceSpec | Sequence[str] = SpaceSpec(), **options) -> CopiesSpec:
    """The `CopiesSpec` of `method` in `space` (a SpaceSpec, or source names) with the method's
    own `options` (space: radius, copies; zeroe: attackers, levels, copies; an attack: model)."""
    space = space if isinstance(space, SpaceSpec) else SpaceSpec(tuple(space))
    return CopiesSpec(method, options, space)


def augment(texts: Sequence[str], spec: CopiesSpec | None = None, *, labels: Sequence[str] | None = None,
            ids: Sequence[str] | None = None, seed: int = 0, run_file: str | Path | None = None,
            progress: bool = False, **options) -> list[Copy]:
    """Copies of `texts` as `spec` says, or its fields given as keywords (`copies_spec`):
    `copies` points of each one's `space` within `radius` substitutions, drawn exactly uniformly
    without the original (`method` space, the default); `copies` Zéroe attacks by `attackers` at
    `levels` (zeroe); or the adversarial examples the attack recipe `method` finds against `model`
    (anything `--model` takes), which needs each text's gold label in `labels` (its run kept in
    `run_file` when given, and continued there). Deterministic for `seed`; `ids` name the texts
    (default: their positions)."""
    spec = copies_spec(**options) if spec is None else spec
    if labels is not None and len(labels) != len(texts):
        raise RobustcountError(f"{len(labels)} labels for {len(texts)} texts")
    if ids is not None and len(ids) != len(texts):
        raise RobustcountError(f"{len(ids)} ids for {len(texts)} texts")
    examples = [Example(str(ids[i]) if ids is not None else str(i), text, labels[i] if labels is not None else "")
                for i, text in enumerate(texts)]
    if isinstance(spec.settings, AttackCopies) and (spec.settings.model is None or labels is None):
        raise RobustcountError(f"the {spec.method} attack needs a model and each text's label")
    return make_copies(spec, examples, seed=seed, run_file=None if run_file is None else Path(run_file),
                       data={"spec": "robustcount.augment", "examples": len(examples)}, progress=progress)
