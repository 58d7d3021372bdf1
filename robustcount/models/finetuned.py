"""`minilm-rt-ft`: all-MiniLM-L6-v2 fine-tuned end to end as a sequence classifier on demo:train.

The package ships only LoRA adapters (and the classifier they were trained with) as safetensors,
about 1.5 MB; at load they are applied to the packaged encoder with peft and merged into its
weights, giving a plain BertForSequenceClassification that runs through the transformers adapter
like any user checkpoint (`experiments/train_minilm_rt_ft.py` trains them).
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from safetensors.torch import load_file

from robustcount.data import DEMO_LABELS
from robustcount.errors import RobustcountError
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.minilm import encoder_path
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.transformers_adapter import key_mismatch, load_whole, transformers_classifier

ASSETS = Path(__file__).parent / "assets"
ADAPTER_WEIGHTS = ASSETS / "minilm_rt_ft_adapter.safetensors"
ADAPTER_CONFIG = ASSETS / "minilm_rt_ft_adapter.json"
ADAPTER_CARD = ASSETS / "minilm_rt_ft_card.json"
NAME = "minilm-rt-ft"
LORA = {"r": 8, "lora_alpha": 16, "lora_dropout": 0.1, "target_modules": ["query", "key", "value", "dense"]}
"""The LoRA adapters: every attention and feed-forward projection and the pooler."""
LORA_CONFIG_KEYS = ("task_type", "r", "lora_alpha", "lora_dropout", "target_modules", "modules_to_save", "bias")
"""The fields of a saved adapter configuration that rebuild it."""


def base_classifier():
    """The packaged encoder as a BertForSequenceClassification over the demo labels (a new,
    seeded-by-the-caller classifier), and its fast tokenizer, loaded offline and otherwise whole."""
    from transformers import AutoModelForSequenceClassification

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    labels = {"num_labels": len(DEMO_LABELS), "id2label": dict(enumerate(DEMO_LABELS)),
              "label2id": {label: i for i, label in enumerate(DEMO_LABELS)}}
    return load_whole(str(encoder_path()), AutoModelForSequenceClassification, new_modules=("classifier",),
                      local_files_only=True, model_options={"use_safetensors": True, **labels})


def with_adapters(model, config: dict):
    """`model` with fresh LoRA adapters as `config` (a saved adapter configuration) describes."""
    from peft import LoraConfig, get_peft_model

    with warnings.catch_warnings():  # peft asks transformers a deprecated question; nothing for users to do
        warnings.simplefilter("ignore", FutureWarning)
        return get_peft_model(model, LoraConfig(**{k: v for k, v in config.items() if k in LORA_CONFIG_KEYS}))


def fine_tuned_classifier(adapters: dict | None = None, config: dict | None = None):
    """The base classifier with LoRA `adapters` (tensors) of `config` merged in (default: the
    packaged ones), and its tokenizer."""
    from peft import get_peft_model_state_dict, set_peft_model_state_dict

    if adapters is None:
        if not ADAPTER_WEIGHTS.exists():
            raise RobustcountError(f"the {NAME} adapters are missing ({ADAPTER_WEIGHTS}); "
                                   "run experiments/train_minilm_rt_ft.py")
        adapters, config = load_file(ADAPTER_WEIGHTS), json.loads(ADAPTER_CONFIG.read_text())
    model, tokenizer = base_classifier()
    peft_model = with_adapters(model, config)
    wanted = get_peft_model_state_dict(peft_model)
    mismatch = key_mismatch(wanted.keys() - adapters.keys(), adapters.keys() - wanted.keys(),
                            {key: (adapters[key].shape, wanted[key].shape) for key in wanted.keys() & adapters.keys()
                             if adapters[key].shape != wanted[key].shape})
    if mismatch is not None:
        raise RobustcountError(f"the {NAME} adapters do not fit the encoder: {mismatch}")
    set_peft_model_state_dict(peft_model, adapters)
    return peft_model.merge_and_unload().eval(), tokenizer


def load_minilm_rt_ft(device: str = "auto", dtype: str = "float32", batch_size: int = DEFAULT_BATCH_SIZE, *,
                      adapters: dict | None = None, config: dict | None = None, name: str = NAME) -> TorchClassifier:
    """`minilm-rt-ft` (or, with `adapters` and `config`, another fine-tuning of the same encoder)
    as a classifier, through the transformers adapter."""
    model, tokenizer = fine_tuned_classifier(adapters, config)
    return transformers_classifier(model, tokenizer, name, device=device, dtype=dtype, batch_size=batch_size)
