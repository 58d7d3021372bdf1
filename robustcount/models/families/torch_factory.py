"""The `py-torch` family: a user's torch classifier, built by a `py:module:function` factory,
with the weights `harden` trained for it.

The training protocol (docs/hardening/your-model.md): the factory returns a `TorchClassifier`
(`robustcount.models`: a module, its tokenizer, its labels); the module's parameters that require
gradients are what training changes; the loss on a batch is the classifier's own
`loss(texts, targets)` when it defines one, else the cross-entropy of the module's logits; what is
saved is the module's whole `state_dict` (safetensors), so that a reload is exact whatever the
factory initialises. A model directory of the family records the factory and loads it again, so
the factory's module must be importable where the directory is used.
"""

from __future__ import annotations

from dataclasses import field

from robustcount.errors import RobustcountError
from robustcount.models.families import Family
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.zoo import load_model
from robustcount.options import option, options_dataclass


def trainable(classifier, factory: str) -> TorchClassifier:
    """`classifier`, which the `py:` `factory` returned, checked to be a TorchClassifier (one that can train)."""
    if not isinstance(classifier, TorchClassifier):
        raise RobustcountError(f"{factory} returned a {type(classifier).__name__}: harden trains a TorchClassifier "
                               "(a torch module with its tokenizer) or a scikit-learn estimator")
    return classifier


@options_dataclass
class FactoryOptions:
    """What a py-torch card records: the factory that builds the module."""

    factory: str = field(default="", metadata=option("the py:module:function factory"))


class TorchFactory(Family):
    name = "py-torch"
    description = "a py: factory's torch classifier with trained weights"
    card_options = FactoryOptions

    def rebuild(self, tensors, options, labels, name, **settings) -> TorchClassifier:
        classifier = trainable(load_model(options["factory"]), options["factory"])
        if list(classifier.labels) != list(labels):
            raise RobustcountError(f"{name}: {options['factory']} now has labels {classifier.labels}, the model "
                                   f"was trained with {labels}")
        try:
            classifier.module.load_state_dict(tensors)
        except RuntimeError as err:
            raise RobustcountError(f"{name}: the weights do not fit {options['factory']}'s module: "
                                   f"{str(err).splitlines()[0]}") from None
        classifier.module.eval()
        classifier.name = name
        return classifier
