"""Adversarial training (`harden`): a model of any hardenable family trained on perturbed copies of
its training data, written as a model directory that `--model DIR` loads. Each family's own
training loop is in its module, `models/families/`."""

from robustcount.training.harden import AUGMENTS, HardenSpec, harden

__all__ = ["AUGMENTS", "HardenSpec", "harden"]
