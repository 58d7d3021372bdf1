import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.minilm import encoder_path
from robustcount.models.sklearn_adapter import SklearnClassifier
from robustcount.models.transformers_adapter import load_transformers, load_whole
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


def copy_of(directory: Path, tmp_path: Path) -> Path:
    copied = tmp_path / "copy"
    shutil.copytree(directory, copied)
    return copied


def edit_config(directory: Path, **changes) -> None:
    config = json.loads((directory / "config.json").read_text())
    (directory / "config.json").write_text(json.dumps({**config, **changes}))


def remove_tokenizer_files(directory: Path) -> None:
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (directory / name).unlink(missing_ok=True)


def test_the_packaged_encoder_loads_only_whole(tmp_path):
    from transformers import AutoModel

    directory = copy_of(encoder_path(), tmp_path)
    encoder, tokenizer = load_whole(str(directory), AutoModel, local_files_only=True)
    assert len(tokenizer) == encoder.get_input_embeddings().num_embeddings == 30522
    with pytest.raises(RobustcountError, match=r"2 missing \(classifier.bias, classifier.weight\)"):
        load_transformers(str(directory), device="cpu")  # an encoder, not a trained sequence classifier
    remove_tokenizer_files(directory)
    with pytest.raises(RobustcountError, match="its tokenizer files are missing") as err:
        load_whole(str(directory), AutoModel, local_files_only=True)
    assert "\n" not in str(err.value)


def test_a_checkpoint_without_its_tokenizer_files_is_refused_in_one_line(capsys, tmp_path, tiny_bert_dir):
    directory = copy_of(tiny_bert_dir, tmp_path)
    remove_tokenizer_files(directory)  # transformers would read every word as [UNK]
    assert main(["predict", "--model", str(directory), "the worst movie of the year"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "its tokenizer files are missing (it needs one of tokenizer.json" in err


def test_a_tokenizer_with_a_tiny_vocabulary_is_refused(tmp_path, tiny_bert_dir):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    directory = copy_of(tiny_bert_dir, tmp_path)
    remove_tokenizer_files(directory)
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "worst", "movie", "of", "year"]
    backend = Tokenizer(models.WordLevel({word: i for i, word in enumerate(words)}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                            sep_token="[SEP]", mask_token="[MASK]").save_pretrained(directory)
    with pytest.raises(RobustcountError, match="its tokenizer has only 10 tokens"):
        load_transformers(str(directory), device="cpu")


def test_a_tokenizer_larger_than_the_embedding_matrix_is_refused(tmp_path, tiny_bert_dir):
    from transformers import AutoTokenizer

    directory = copy_of(tiny_bert_dir, tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.add_tokens(["brandnewword", "anothernewword"])  # added, but the embeddings never resized
    tokenizer.save_pretrained(directory)
    with pytest.raises(RobustcountError, match="token ids up to 30523, beyond the model's 30522 embeddings"):
        load_transformers(str(directory), device="cpu")


@pytest.mark.parametrize(("changes", "said"), [
    ({"num_hidden_layers": 3}, r"16 missing \(bert.encoder.layer.2."),
    ({"num_hidden_layers": 1}, r"16 unexpected \(bert.encoder.layer.1."),
    ({"id2label": {"0": "yes", "1": "no"}, "label2id": {"yes": 0, "no": 1}},
     r"2 of another shape \(classifier.bias \[3\] not \[2\], classifier.weight \[3, 32\] not \[2, 32\]\)"),
])
def test_weights_that_do_not_match_the_configuration_are_refused(tmp_path, tiny_bert_dir, changes, said):
    directory = copy_of(tiny_bert_dir, tmp_path)
    edit_config(directory, **changes)
    with pytest.raises(RobustcountError, match="its weights do not match its configuration: " + said) as err:
        load_transformers(str(directory), device="cpu")
    assert "\n" not in str(err.value)


def test_label_names_are_distinct_in_every_adapter(tmp_path, bow_rt, tiny_bert_dir):
    from sklearn.linear_model import LogisticRegression

    from robustcount.models.torch_adapter import TorchClassifier

    twins = ("positive", "positive")
    fitted = LogisticRegression().fit([[0.0], [1.0]], ["a", "b"])
    for make in (lambda: FunctionClassifier(lambda b: [[0.5, 0.5]] * len(b), twins),
                 lambda: SklearnClassifier(fitted, labels=twins),
                 lambda: TorchClassifier(bow_rt.module, bow_rt.tokenizer, twins, device="cpu"),
                 lambda: load_model("py:tests.factories:twin_labels_model")):
        with pytest.raises(RobustcountError, match="name 'positive' more than once") as err:
            make()
        assert "\n" not in str(err.value)
    directory = copy_of(tiny_bert_dir, tmp_path)
    edit_config(directory, id2label={"0": "positive", "1": "positive", "2": "negative"},
                label2id={"positive": 1, "negative": 2})
    with pytest.raises(RobustcountError, match="name 'positive' more than once"):
        load_transformers(str(directory), device="cpu")


def test_pair_offsets_cover_only_the_hypothesis(tiny_bert_dir):
    model = load_transformers(str(tiny_bert_dir), device="cpu")
    encoding = model.tokenizer([("premise words", "hypothesis here")])
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

    limited = TorchClassifier(MemoryLimited(bow_rt.module, 5), bow_rt.tokenizer, bow_rt.labels, device="cpu",
                              batch_size=64)
    texts = [f"a {'good ' * (i % 4)}film" for i in range(23)]
    assert np.allclose(limited.predict_proba(texts), bow_rt.predict_proba(texts), atol=1e-6)
    assert limited.batch_size == 4
    with pytest.raises(RobustcountError, match="out of device memory"):
        TorchClassifier(MemoryLimited(bow_rt.module, 0), bow_rt.tokenizer, bow_rt.labels, device="cpu",
                        batch_size=2).predict_proba(["a film"])


def test_a_built_in_model_loads_once_whatever_names_its_device():
    import torch

    from robustcount.models.zoo import load_model

    resolved = "cuda" if torch.cuda.is_available() else "cpu"
    assert load_model("bow-rt", device="auto") is load_model("bow-rt", device=resolved)
