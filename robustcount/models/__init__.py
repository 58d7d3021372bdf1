"""The model boundary: the Classifier and SentenceEncoder protocols, adapters, the query engine,
the model families, the model zoo and ModelSpec."""

from robustcount.models.accounting import QueryStats
from robustcount.models.base import (
    Classifier,
    GradientClassifier,
    SentenceEncoder,
    Window,
    characters_window,
    words_window,
)
from robustcount.models.engine import QueryEngine
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.sklearn_adapter import SklearnClassifier
from robustcount.models.spec import ModelSpec
from robustcount.models.torch_adapter import Encoding, TorchClassifier, Tokenizer, hf_tokenizer
from robustcount.models.transformers_adapter import load_transformers
from robustcount.models.zoo import DEFAULT_MODEL, MODELS, load_model

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "Classifier",
    "Window",
    "characters_window",
    "words_window",
    "Encoding",
    "FunctionClassifier",
    "GradientClassifier",
    "ModelSpec",
    "QueryEngine",
    "QueryStats",
    "SentenceEncoder",
    "SklearnClassifier",
    "Tokenizer",
    "TorchClassifier",
    "hf_tokenizer",
    "load_model",
    "load_transformers",
]
