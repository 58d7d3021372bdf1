"""Shared fixtures: small real models, loaded once per session."""

import os
import tempfile

import pytest
import torch
from hypothesis import settings
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from robustcount.models.llm.loading import smollm2_gguf
from robustcount.models.minilm import encoder_path
from robustcount.models.zoo import load_model
from tests.endpoint_servers import REQUIRE_VARIABLE, has_xllamacpp, start_xllamacpp_server

# Timing varies on shared machines: no per-example deadline, so property tests never fail on speed.
settings.register_profile("robustcount", deadline=None)
settings.load_profile("robustcount")

# Weights trained at load go to one fresh folder for the whole session: the parallel workers and
# every process a test starts share it (they inherit the variable), and nothing outside is touched.
os.environ.setdefault("ROBUSTCOUNT_CACHE", tempfile.mkdtemp(prefix="robustcount-test-cache-"))
# Runs without --output go to run files of their own (runs/ by default): here, to one fresh folder.
os.environ.setdefault("ROBUSTCOUNT_RUNS", tempfile.mkdtemp(prefix="robustcount-test-runs-"))


def built_in_model(name: str, **options):
    """A session fixture, named as the built-in model `name` with underscores, that loads it once."""

    @pytest.fixture(scope="session", name=name.replace("-", "_"))
    def load():
        return load_model(name, **options)

    return load


bow_rt = built_in_model("bow-rt", device="cpu")
tfidf_rt = built_in_model("tfidf-rt", device="cpu")
vader = built_in_model("vader")
cnn_rt = built_in_model("cnn-rt", device="cpu")
minilm_rt = built_in_model("minilm-rt", device="cpu")


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory):
    """A small, randomly initialised BERT classifier saved as safetensors with MiniLM's tokenizer."""
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(encoder_path(), local_files_only=True)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, num_labels=3,
                        id2label={0: "entailment", 1: "neutral", 2: "contradiction"},
                        label2id={"entailment": 0, "neutral": 1, "contradiction": 2})
    path = tmp_path_factory.mktemp("tiny-bert")
    BertForSequenceClassification(config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


pytest_plugins = ["pytester"]


def pytest_collection_modifyitems(items):
    """The end-to-end tests (marked slow) first, so that parallel workers (`make test` runs one per
    core) start them together and finish on the quick tests rather than wait on a long one."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """The port of llama.cpp's own server (xllamacpp, of the `test` extra) serving the packaged
    SmolLM2 on 127.0.0.1 (tests/endpoint_servers.py); skipped without xllamacpp, unless
    $ROBUSTCOUNT_REQUIRE_LLAMA_SERVER is 1."""
    if not has_xllamacpp():
        missing = "xllamacpp is not installed (pip install 'robustcount[test]')"
        if os.environ.get(REQUIRE_VARIABLE) == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    process, port = start_xllamacpp_server(str(smollm2_gguf()), tmp_path_factory.mktemp("xllamacpp") / "server.log")
    yield port
    process.kill()
    process.wait(timeout=30)
