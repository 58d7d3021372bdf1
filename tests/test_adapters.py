import numpy as np
import pytest
import torch

from robustcount.errors import RobustcountError
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.sklearn_adapter import SklearnClassifier
from robustcount.models.transformers_adapter import load_transformers
from robustcount.models.zoo import load_model


def test_function_adapter_accepts_probabilities_logits_and_labels():
    proba = FunctionClassifier(lambda b: [[0.25, 0.75]] * len(b), ["neg", "pos"])
    assert proba.predict_proba(["x", "y"]).tolist() == [[0.25, 0.75]] * 2
    logits = FunctionClassifier(lambda b: [[0.0, np.log(3.0)]] * len(b), ["neg", "pos"], output="logits")
    assert np.allclose(logits.predict_proba(["x"]), [[0.25, 0.75]])
    labels = FunctionClassifier(lambda b: ["pos" if "good" in t else 0 for t in b], ["neg", "pos"],
                                output="label")
    assert labels.predict_proba(["good", "bad"]).tolist() == [[0, 1], [1, 0]]


def test_function_adapter_rejects_unknown_labels_and_kinds():
    with pytest.raises(RobustcountError, match="unknown label"):
        FunctionClassifier(lambda b: ["maybe"] * len(b), ["neg", "pos"], output="label").predict_proba(["x"])
    with pytest.raises(RobustcountError, match="output kind"):
        FunctionClassifier(lambda b: b, ["neg", "pos"], output="scores")


def test_sklearn_adapter_on_a_real_pipeline(tfidf_rt):
    probs = tfidf_rt.predict_proba(["a wonderful, moving film", "a dull and lifeless mess"])
    assert tfidf_rt.labels == ("negative", "positive")
    assert probs.argmax(axis=1).tolist() == [1, 0]


def test_sklearn_adapter_refuses_unfitted_estimators():
    from sklearn.linear_model import LogisticRegression

    with pytest.raises(RobustcountError, match="not fitted"):
        SklearnClassifier(LogisticRegression())


def test_torch_adapter_on_a_real_module(bow_rt):
    probs = bow_rt.predict_proba(["a wonderful, moving film", "a dull and lifeless mess"])
    assert probs.shape == (2, 2)
    assert probs.argmax(axis=1).tolist() == [1, 0]
    assert bow_rt.predict_proba([]).shape == (0, 2)


def test_torch_adapter_batches_give_the_same_answers(bow_rt):
    texts = ["good", "a bad film", "an uneven but charming story with a great cast", ""]
    together = bow_rt.predict_proba(texts)
    alone = np.concatenate([bow_rt.predict_proba([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-6)


def test_digest_changes_with_the_weights(bow_rt):
    before = bow_rt.digest()
    assert before == bow_rt.digest()
    saved = bow_rt.module.out.bias.detach().clone()
    with torch.no_grad():
        bow_rt.module.out.bias[0] += 1.0
    try:
        assert bow_rt.digest() != before
    finally:
        with torch.no_grad():
            bow_rt.module.out.bias.copy_(saved)
    assert bow_rt.digest() == before


@pytest.fixture(scope="module")
def tiny_bert_dir(tmp_path_factory):
    """A small, randomly initialised BERT classifier saved as safetensors with MiniLM's tokenizer."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from robustcount.models.minilm import encoder_path

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


def test_transformers_adapter_loads_a_local_directory_with_pairs(tiny_bert_dir):
    model = load_transformers(str(tiny_bert_dir), device="cpu")
    assert model.labels == ("entailment", "neutral", "contradiction")
    probs = model.predict_proba([("A man sleeps.", "A person rests."), ("It rains.", "It is dry.")])
    assert probs.shape == (2, 3)
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert (tiny_bert_dir / "model.safetensors").exists()


def test_transformers_adapter_reports_a_missing_model_in_one_line(tmp_path):
    with pytest.raises(RobustcountError, match="cannot load transformers") as err:
        load_transformers(str(tmp_path), device="cpu")
    assert "\n" not in str(err.value)


def test_pair_offsets_cover_only_the_hypothesis(tiny_bert_dir):
    model = load_transformers(str(tiny_bert_dir), device="cpu")
    encoding = model.encoder([("premise words", "hypothesis here")])
    spans = [o for o in encoding.offsets[0] if o is not None]
    assert spans and all(0 <= s < e <= len("hypothesis here") for s, e in spans)


def test_mixed_batches_of_texts_and_pairs_are_refused(tiny_bert_dir):
    model = load_transformers(str(tiny_bert_dir), device="cpu")
    with pytest.raises(RobustcountError, match="mixes"):
        model.predict_proba(["text", ("premise", "hypothesis")])


def test_half_precision_on_cpu_is_refused(tiny_bert_dir):
    with pytest.raises(RobustcountError, match="needs a CUDA GPU"):
        load_transformers(str(tiny_bert_dir), device="cpu", dtype="float16")


def test_unknown_model_names_are_refused():
    with pytest.raises(RobustcountError, match="unknown model"):
        load_model("no-such-model")


def test_python_factories_load_user_models():
    model = load_model("py:tests.factories:keyword_model")
    assert model.predict_proba(["good"]).argmax() == 1
    with pytest.raises(RobustcountError, match="returned a str, not a Classifier"):
        load_model("py:tests.factories:not_a_model")


class MemoryLimited(torch.nn.Module):
    """The bow-rt module on a device that holds at most `capacity` inputs at once."""

    def __init__(self, inner, capacity):
        super().__init__()
        self.inner, self.capacity = inner, capacity

    def forward(self, input_ids):
        if input_ids.shape[0] > self.capacity:
            raise torch.OutOfMemoryError("simulated: batch too large for the device")
        return self.inner(input_ids)

    def get_input_embeddings(self):
        return self.inner.embedding


def test_batches_shrink_to_fit_device_memory(bow_rt):
    from robustcount.models.torch_adapter import TorchClassifier

    limited = TorchClassifier(MemoryLimited(bow_rt.module, 5), bow_rt.encoder, bow_rt.labels, device="cpu",
                              batch_size=64)
    texts = [f"a {'good ' * (i % 4)}film" for i in range(23)]
    assert np.allclose(limited.predict_proba(texts), bow_rt.predict_proba(texts), atol=1e-6)
    assert limited.batch_size == 4
    with pytest.raises(RobustcountError, match="out of device memory"):
        TorchClassifier(MemoryLimited(bow_rt.module, 0), bow_rt.encoder, bow_rt.labels, device="cpu",
                        batch_size=2).predict_proba(["a film"])


def test_a_built_in_model_loads_once_whatever_names_its_device():
    import torch

    from robustcount.models.zoo import load_model

    resolved = "cuda" if torch.cuda.is_available() else "cpu"
    assert load_model("bow-rt", device="auto") is load_model("bow-rt", device=resolved)
