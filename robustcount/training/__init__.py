"""Adversarial training (`harden`): a model of any hardenable family trained on perturbed copies of
its training data, written as a model directory that `--model DIR` loads. Each family's own
training loop is in its module, `models/families/`."""

from robustcount.training.certified import CertifiedTraining
from robustcount.training.copies import TrainingCopies
from robustcount.training.harden import AUGMENTS, Sitting, harden
from robustcount.training.spec import FamilyTraining, HardenSpec, ModelTraining

__all__ = ["AUGMENTS", "CertifiedTraining", "FamilyTraining", "HardenSpec", "ModelTraining", "Sitting",
           "TrainingCopies", "harden"]
