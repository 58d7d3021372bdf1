"""Prompted language models over HTTP (`openai:BASE_URL#MODEL`, `models/llm/endpoint.py`), against
a real server: llama.cpp's OpenAI-compatible server (llama-cpp-python) serving the packaged
SmolLM2 GGUF on 127.0.0.1, behind a fault-injecting proxy (`endpoint_servers.py`) that returns
429s with Retry-After, 500s, slow answers and dropped connections."""

import os
import subprocess
import sys

import numpy as np
import pytest

from robustcount.attacks.result import run_attack
from robustcount.errors import RobustcountError, RobustcountWarning
from robustcount.models.engine import QueryEngine
from robustcount.models.llm.classifier import prompted_lm
from robustcount.models.llm.endpoint import Endpoint, answer_tokens, load_endpoint_lm
from robustcount.models.llm.loading import load_causal_lm, smollm2_gguf
from robustcount.models.llm.transport import Retries, retry_after_seconds
from robustcount.models.zoo import is_language_model, load_model
from robustcount.spaces.build import build_space
from robustcount.status import ENDPOINT, UNDECIDED
from tests.endpoint_servers import (
    LLAMA_PYTHON_VARIABLE,
    REQUIRE_VARIABLE,
    FaultyProxy,
    llama_python,
    start_llama_server,
)

PROMPT = "<|im_start|>user\nReview: {text}\nPositive or negative?<|im_end|>\n<|im_start|>assistant\n"
"""A short prompt in SmolLM2's chat turn, written out (completions take plain text; it begins with
the model's BOS token, <|im_start|>, without which llama-cpp-python's echo is off by one)."""
VERBALIZER = "negative=Negative,positive=Positive"
TEXTS = ["a gripping, beautifully acted film", "a dull and lifeless mess", "not bad at all", "boring"]
TOLERANCE = 0.05
"""The most a label probability of the served model (llama.cpp computing on the Q4_1 weights, its
activations quantised to 8 bits in the dot products) may differ from the local path's (the same
weights dequantised to float32 by transformers, computed in float32); 0.038 measured (docs/models.md)."""
FAST = Retries(attempts=6, base=0.05, cap=1.0, timeout=10.0)
"""Retries for the tests: short waits, and a timeout well above an answer's second or so on a loaded machine."""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The port of llama.cpp's server serving the packaged SmolLM2 on 127.0.0.1."""
    python = llama_python()
    if python is None:
        missing = f"llama-cpp-python[server] is neither installed here nor in ${LLAMA_PYTHON_VARIABLE} " \
                  "(`make llama-server` builds it)"
        if os.environ.get(REQUIRE_VARIABLE) == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    process, port = start_llama_server(python, str(smollm2_gguf()), tmp_path_factory.mktemp("llama") / "server.log")
    yield port
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def one_proxy(server):
    found = FaultyProxy(server)
    yield found
    found.close()


@pytest.fixture
def proxy(one_proxy):
    """The one proxy in front of the server (one URL, so that cached answers are found again),
    counting from zero and injecting no fault until a test sets its plan."""
    one_proxy.reset()
    return one_proxy


def served(proxy, cache, **options):
    return load_endpoint_lm(f"openai:{proxy.url}#smollm2", prompt=PROMPT, verbalizer=VERBALIZER, cache=cache,
                            **options)


@pytest.fixture(scope="module")
def clean(one_proxy, tmp_path_factory):
    """TEXTS' probabilities as the server answers them with no fault, the cache that holds them
    and the model."""
    cache = tmp_path_factory.mktemp("clean") / "cache.sqlite"
    one_proxy.reset()
    model = served(one_proxy, cache, calibration="content-free")
    return model.predict_proba(TEXTS), cache, model


def test_endpoint_specs_and_options_are_checked_in_one_line(tmp_path):
    assert Endpoint.parse("openai:http://127.0.0.1:8080/v1/#smollm2") == Endpoint("http://127.0.0.1:8080/v1", "smollm2")
    assert is_language_model("openai:http://127.0.0.1:8080/v1#smollm2")
    for bad in ("openai:http://127.0.0.1:8080/v1", "openai:ftp://host/v1#m", "openai:#m"):
        with pytest.raises(RobustcountError, match="expected openai:BASE_URL#MODEL"):
            Endpoint.parse(bad)
    with pytest.raises(RobustcountError, match="no credentials"):
        Endpoint.parse("openai:http://user:secret@127.0.0.1/v1#m")
    with pytest.raises(RobustcountError, match="needs --prompt and --verbalizer"):
        load_model("openai:http://127.0.0.1:9/v1#m")


def test_the_answer_is_found_by_its_tokens_text_whether_or_not_the_echo_lists_the_generated_token():
    prompt = ["", "user", "\n", "Is", " it", " good", "?", "", "\n", "ass", "istant", "\n"]
    assert answer_tokens(prompt + ["Neg", "ative", " emotions"], "Negative", " emotions") == range(12, 14)
    assert answer_tokens(prompt + ["Neg", "ative"], "Negative", " emotions") == range(12, 14)
    assert answer_tokens(prompt + ["Neg", "ative", ""], "Negative", "") == range(12, 14)  # an end of text
    assert answer_tokens(["Answer", ":", " yes"], "yes", "\n") is None  # the space joins the answer's token
    assert answer_tokens(["x", "a", "a", "a"], "aa", "a") is None  # both readings fit, and differ: refused


def test_retry_after_is_read_as_seconds_or_as_a_date():
    assert retry_after_seconds("2") == 2.0 and retry_after_seconds("0.5") == 0.5
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date gone by: at once


def test_served_smollm2_agrees_with_the_local_path(clean):
    probabilities, _, model = clean
    lm, tokenizer = load_causal_lm(smollm2_gguf())
    local = prompted_lm(lm, tokenizer, "smollm2-plain", prompt=PROMPT, verbalizer=VERBALIZER, chat=False,
                        calibration=model.calibration, device="cpu")
    theirs = local.predict_proba(TEXTS)
    assert np.abs(probabilities - theirs).max() <= TOLERANCE, np.abs(probabilities - theirs).max()
    clear = np.abs(theirs[:, 0] - theirs[:, 1]) > 2 * TOLERANCE  # the label holds where the margin exceeds the gap
    assert clear.sum() >= 2 and np.array_equal(probabilities.argmax(axis=1)[clear], theirs.argmax(axis=1)[clear])


def test_injected_faults_change_no_answer_and_retry_after_is_honoured(clean, proxy, tmp_path):
    # one request at a time, so that none waits at the server behind others long enough to time out
    faulty = served(proxy, tmp_path / "faulty.sqlite", calibration="content-free", retries=FAST, concurrency=1)
    waits = []
    faulty.transport._sleep = waits.append  # the waits asked for, recorded instead of slept
    plan = {1: "429", 3: "500", 4: "drop", 6: "slow", 9: "429", 10: "500", 11: "500", 13: "drop"}
    proxy.reset(plan.get, retry_after="0.25", slow_seconds=12.0)
    assert np.array_equal(faulty.predict_proba(TEXTS), clean[0])
    assert proxy.faults == {"429": 2, "500": 3, "drop": 2, "slow": 1}
    assert faulty.transport.retried >= 8 and waits.count(0.25) == 2  # more when the loaded server is slow


def test_a_request_that_keeps_failing_ends_its_example_undecided(clean, proxy, recwarn):
    model = served(proxy, clean[1], retries=FAST)
    model.transport._sleep = lambda seconds: None
    proxy.reset(lambda number: "500")
    engine = QueryEngine(model)
    result = run_attack("check", lambda engine, space, gold: pytest.fail("the attack ran"), engine,
                        build_space("a slow and tiresome film", ["truncate"]), 0)
    assert result.status == UNDECIDED and result.limit == ENDPOINT
    assert "failed after 6 attempts (last: HTTP 500)" in result.reason
    assert proxy.arrived == 2 * 6, proxy.arrived  # the probe's first text alone (two answers), 6 attempts each
    said = [str(w.message) for w in recwarn.list if issubclass(w.category, RobustcountWarning)]
    assert not said, said  # no verdict on batches from a failing server: the next request probes again


def test_a_rerun_with_the_cache_sends_no_request(clean, proxy):
    again = served(proxy, clean[1], calibration="content-free")
    assert np.array_equal(again.predict_proba(TEXTS), clean[0]) and again.digest() == clean[2].digest()
    assert proxy.arrived == 0 and again.transport.sent == 0 and again.cache.hits > 0
    assert again.calibration.method == "content-free"


def test_the_cli_runs_a_served_model_and_writes_no_api_key(clean, proxy, tmp_path):
    out = tmp_path / "run.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": "sk-robustcount-test-secret", "ROBUSTCOUNT_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "robustcount", "attack", "--data", "demo:test", "--first", "1",
                           "--model", f"openai:{proxy.url}#smollm2", "--prompt", PROMPT, "--verbalizer", VERBALIZER,
                           "--source", "truncate", "--budget", "1", "--output", str(out)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert f"openai:{proxy.url}#smollm2" in out.read_text()
    written = out.read_text() + done.stdout + done.stderr + "".join(
        path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file() and path != out
        and path.suffix in (".json", ".jsonl", ".log", ".html", ".md"))
    assert "sk-robustcount-test-secret" not in written
    assert (tmp_path / "cache" / "endpoint-responses.sqlite").is_file()


def test_a_server_whose_echo_is_off_by_one_is_refused_in_one_line(proxy, tmp_path):
    # llama-cpp-python's echo for a prompt that does not begin with the BOS token
    with pytest.raises(RobustcountError, match="cannot score an answer.*not each token's given the ones before"):
        load_endpoint_lm(f"openai:{proxy.url}#smollm2", prompt="Review: {text}\nPositive or negative?\nAnswer:",
                         verbalizer=VERBALIZER, cache=tmp_path / "cache.sqlite")
