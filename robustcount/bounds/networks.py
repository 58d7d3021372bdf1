"""Which bounded layers each supported network is (`bounds_for`): the word CNN (cnn-rt, the
word-cnn family) an embedding, its convolutions, ReLU, the max over time and its output layer
(`convolution.ConvolutionBounds`); the word LSTM (lstm-rt, the word-lstm family) an embedding, a
bidirectional LSTM, the max over time and its output layer (`lstm.LSTMBounds`). A new network
whose forward pass is these layers is one more line here. Any other module is refused in one
line: attention, layer norm and the rest are not bounded. Every interval is widened for the
model's rounding (`intervals`); the final layer's also for `TorchClassifier` casting logits to
float32 before its softmax.
"""

from __future__ import annotations

from robustcount.bounds.convolution import ConvolutionBounds
from robustcount.bounds.intervals import Rounding
from robustcount.bounds.lstm import LSTMBounds
from robustcount.errors import RobustcountError
from robustcount.models.families.word_networks import GloveWords, WordCNN, WordLSTM
from robustcount.models.torch_adapter import TorchClassifier

SUPPORTED = "the word-cnn and word-lstm families (cnn-rt, lstm-rt)"


def bounds_for(classifier) -> ConvolutionBounds | LSTMBounds:
    """The bounds of `classifier`'s network, or a one-line refusal saying what is supported."""
    module = getattr(classifier, "module", None)
    if not isinstance(classifier, TorchClassifier) or not isinstance(module, (WordCNN, WordLSTM)):
        raise RobustcountError(f"bounds support {SUPPORTED}; {getattr(classifier, 'name', classifier)!r} is "
                               f"a {type(module if module is not None else classifier).__name__} "
                               "(attention, layer norm and other layers are not bounded)")
    if not isinstance(classifier.tokenizer, GloveWords):
        raise RobustcountError(f"bounds support {SUPPORTED} with their GloVe word tokenizer")
    if module.training:
        raise RobustcountError("bounds: the network is in training mode (dropout on)")
    rounding = Rounding.of(classifier.dtype, classifier.device)
    if isinstance(module, WordCNN):
        return ConvolutionBounds(module.embedding, module.convolutions, module.out, rounding)
    return LSTMBounds(module.embedding, module.lstm, module.out, rounding)
