"""Prompted language models over HTTP (`openai:BASE_URL#MODEL`, `models/llm/endpoint.py`), against
a real server: llama.cpp's OpenAI-compatible server (llama-cpp-python) serving the packaged
SmolLM2 GGUF on 127.0.0.1, behind a fault-injecting proxy (`endpoint_servers.py`) that returns
429s with Retry-After, 500s, slow answers and dropped connections."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from robustcount.attacks.result import run_attack
from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.models.llm.classifier import prompted_lm
from robustcount.models.llm.endpoint import Endpoint, load_endpoint_lm
from robustcount.models.llm.loading import load_causal_lm, smollm2_gguf
from robustcount.models.llm.transport import Retries, retry_after_seconds
from robustcount.models.zoo import is_language_model, load_model
from robustcount.spaces.build import build_space
from robustcount.status import ENDPOINT, UNDECIDED
from tests.endpoint_servers import LLAMA_PYTHON_VARIABLE, FaultyProxy, llama_python, start_llama_server

PROMPT = ("<|im_start|>user\nIs this movie review positive or negative? Answer with one word.\n\n"
          "Review: {text}<|im_end|>\n<|im_start|>assistant\n")
"""The packaged smollm2's prompt in SmolLM2's chat turn, written out (completions take plain text)."""
VERBALIZER = "negative=Negative|negative,positive=Positive|positive"
TEXTS = ["a gripping, beautifully acted film", "a dull and lifeless mess", "not bad at all",
         "the plot is thin but the cast is fun", "I would not watch it again", "it was fine",
         "an unforgettable, moving story", "boring"]
TOLERANCE = 0.03
"""The most a label probability of the served model (llama.cpp computing on the Q4_1 weights, its
activations quantised to 8 bits in the dot products) may differ from the local path's (the same
weights dequantised to float32 by transformers)."""
FAST = Retries(attempts=6, base=0.05, cap=1.0, timeout=2.0)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The port of llama.cpp's server serving the packaged SmolLM2 on 127.0.0.1."""
    python = llama_python()
    if python is None:
        pytest.skip(f"llama-cpp-python[server] is not installed here nor in ${LLAMA_PYTHON_VARIABLE} "
                    "(make setup builds it)")
    process, port = start_llama_server(python, str(smollm2_gguf()), tmp_path_factory.mktemp("llama") / "server.log")
    yield port
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture
def proxy(server):
    """A proxy in front of the server that injects no fault until a test sets its plan."""
    found = FaultyProxy(server)
    yield found
    found.close()


def served(proxy, cache, **options):
    return load_endpoint_lm(f"openai:{proxy.url}#smollm2", prompt=PROMPT, verbalizer=VERBALIZER, cache=cache,
                            **options)


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


def test_retry_after_is_read_as_seconds_or_as_a_date():
    assert retry_after_seconds("2") == 2.0 and retry_after_seconds("0.5") == 0.5
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date gone by: at once


def test_served_smollm2_agrees_with_the_local_path(proxy, tmp_path):
    remote = served(proxy, tmp_path / "cache.sqlite")
    lm, tokenizer = load_causal_lm(smollm2_gguf())
    local = prompted_lm(lm, tokenizer, "smollm2-plain", prompt=PROMPT, verbalizer=VERBALIZER, chat=False,
                        device="cpu")
    ours, theirs = remote.predict_proba(TEXTS), local.predict_proba(TEXTS)
    assert np.abs(ours - theirs).max() <= TOLERANCE, np.abs(ours - theirs).max()
    assert list(ours.argmax(axis=1)) == list(theirs.argmax(axis=1))
    assert list(ours.argmax(axis=1)) == [1, 0, 1, 1, 0, 1, 1, 0]


def test_injected_faults_change_no_answer_and_retry_after_is_honoured(proxy, tmp_path):
    clean = served(proxy, tmp_path / "clean.sqlite").predict_proba(TEXTS)
    waits = []
    plan = {1: "429", 3: "500", 4: "drop", 6: "slow", 9: "429", 10: "500", 11: "500", 15: "drop"}
    proxy.plan, proxy.retry_after = plan.get, "0.25"
    faulty = served(proxy, tmp_path / "faulty.sqlite", retries=FAST)
    faulty.transport._sleep = waits.append  # the waits asked for, recorded instead of slept
    assert np.array_equal(faulty.predict_proba(TEXTS), clean)
    assert proxy.faults == {"429": 2, "500": 3, "drop": 2, "slow": 1}
    assert faulty.transport.retried >= 7 and waits.count(0.25) >= 1


def test_a_request_that_keeps_failing_ends_its_example_undecided(proxy, tmp_path):
    model = served(proxy, tmp_path / "cache.sqlite", retries=FAST)
    model.transport._sleep = lambda seconds: None
    proxy.plan = lambda number: "500"
    result = run_attack("check", lambda engine, space, gold: pytest.fail("the attack ran"), QueryEngine(model),
                        build_space("a dull and lifeless mess", ["truncate"]), 0)
    assert result.status == UNDECIDED and result.limit == ENDPOINT
    assert "failed after 6 attempts (last: HTTP 500)" in result.reason


def test_a_rerun_with_the_cache_sends_no_request(proxy, tmp_path):
    first = served(proxy, tmp_path / "cache.sqlite", calibration="content-free")
    answers = first.predict_proba(TEXTS)
    sent = proxy.forwarded
    again = served(proxy, tmp_path / "cache.sqlite", calibration="content-free")
    assert np.array_equal(again.predict_proba(TEXTS), answers) and again.digest() == first.digest()
    assert proxy.forwarded == sent and again.transport.sent == 0 and again.cache.hits > 0
    assert first.calibration.method == "content-free"


def test_the_cli_runs_a_served_model_and_writes_no_api_key(proxy, tmp_path):
    out = tmp_path / "run.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": "sk-robustcount-test-secret", "ROBUSTCOUNT_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "robustcount", "attack", "--data", "demo:test", "--limit", "2",
                           "--model", f"openai:{proxy.url}#smollm2", "--prompt", PROMPT, "--verbalizer", VERBALIZER,
                           "--source", "truncate", "--out", str(out)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    header = json.loads(out.read_text().splitlines()[0])
    assert f"openai:{proxy.url}#smollm2" in json.dumps(header)
    written = out.read_text() + done.stdout + done.stderr + "".join(
        path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file() and path != out
        and path.suffix in (".json", ".jsonl", ".log", ".html", ".md"))
    assert "sk-robustcount-test-secret" not in written
    assert (tmp_path / "cache" / "endpoint-responses.sqlite").is_file()


def test_a_server_that_cannot_score_is_refused_in_one_line(server, tmp_path):
    # the same server scoring through its chat completions path: no echo there, so no answer scored
    proxy = FaultyProxy(server)
    try:
        with pytest.raises(RobustcountError, match="cannot score an answer"):
            load_endpoint_lm(f"openai:{proxy.url}/chat#smollm2", prompt=PROMPT, verbalizer=VERBALIZER,
                             cache=tmp_path / "c.sqlite")
    finally:
        proxy.close()
