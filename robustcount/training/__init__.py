"""Training robustcount's model families, and hardening them: adversarial training on perturbed
copies of the training data (`harden`), written as a model directory that `--model DIR` loads."""

from robustcount.training.harden import AUGMENTS, HardenSpec, harden

__all__ = ["AUGMENTS", "HardenSpec", "harden"]
