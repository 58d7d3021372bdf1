"""Prompted language models over HTTP (`openai:BASE_URL#MODEL`, `models/llm/endpoint.py`), against
real servers serving the packaged SmolLM2 GGUF on 127.0.0.1 (`endpoint_servers.py`): llama.cpp's
own server (xllamacpp, of the `test` extra; `top_logprobs` scoring, no echo) behind a
fault-injecting proxy that returns 429s with Retry-After, 500s, slow answers and dropped
connections; and, opt-in, llama-cpp-python's server (echo scoring) when $ROBUSTCOUNT_LLAMA_PYTHON
names an interpreter that has it (`make llama-server`)."""

import io
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

from robustcount.attacks.result import run_attack
from robustcount.cli import main
from robustcount.data import DataSpec
from robustcount.errors import AnswerUnscored, RobustcountError, RobustcountWarning
from robustcount.models.engine import QueryEngine
from robustcount.models.llm.classifier import (SMOLLM2_PROMPT, SMOLLM2_VERBALIZER, LMRuntime, load_prompted_lm,
                                              prompted_lm)
from robustcount.models.llm.echo import answer_tokens
from robustcount.models.llm.endpoint import Endpoint, RequestSettings, SpendLimits, load_endpoint_lm, served_keywords
from robustcount.models.llm.ledger import LEDGER
from robustcount.models.llm.loading import load_causal_lm, smollm2_gguf
from robustcount.models.llm.prompting import PromptSpec
from robustcount.models.llm.response_cache import request_key
from robustcount.models.llm.transport import Retries, retry_after_seconds
from robustcount.models.zoo import is_language_model, load_model
from robustcount.proofs.records import run_problems
from robustcount.runs.files import timings_path
from robustcount.runs.progress import Progress
from robustcount.spaces.build import build_space
from robustcount.status import ENDPOINT, REQUEST_LIMIT, UNDECIDED
from tests.endpoint_servers import (
    LLAMA_PYTHON_VARIABLE,
    FaultyProxy,
    llama_python,
    start_llama_server,
)

TEXTS = ["a gripping, beautifully acted film", "a dull and lifeless mess", "not bad at all", "boring"]
TOLERANCE = 0.08
"""The most a label probability of the served model (llama.cpp computing on the Q4_1 weights, its
activations quantised to 8 bits in the dot products) may differ from the local path's (the same
weights dequantised to float32 by transformers, computed in float32): docs/models.md measures it."""
FAST = Retries(attempts=6, base=0.05, cap=1.0, timeout=10.0)
"""Retries for the tests: short waits, and a timeout well above an answer's second or so on a loaded machine."""
PLAIN_PROMPT = "Review: {text}\nPositive or negative?\nAnswer:"
"""A completions prompt without SmolLM2's chat turn: its answers are ' Negative' and ' Positive', so
the verbaliser's 'Negative' and 'Positive' are never its first token."""


def _stop(process):
    process.kill()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def one_proxy(llama_server):
    found = FaultyProxy(llama_server)
    yield found
    found.close()


@pytest.fixture
def proxy(one_proxy):
    """The one proxy in front of the server (one URL, so that cached answers are found again),
    counting from zero and injecting no fault until a test sets its plan."""
    one_proxy.reset()
    return one_proxy


def served(proxy, cache, calibration="none", **requests):
    """smollm2's default prompt and verbaliser over the chat API of the server behind `proxy`,
    its requests sent as `requests` (`RequestSettings`' fields) say."""
    return load_endpoint_lm(f"openai:{proxy.url}#smollm2", PromptSpec(SMOLLM2_PROMPT, SMOLLM2_VERBALIZER, calibration),
                            requests=RequestSettings(cache=cache, **requests))


@pytest.fixture(scope="module")
def clean(one_proxy, tmp_path_factory):
    """TEXTS' probabilities as the server answers them with no fault (uncalibrated), the cache
    that holds them and the model."""
    cache = tmp_path_factory.mktemp("clean") / "cache.sqlite"
    one_proxy.reset()
    model = served(one_proxy, cache, calibration="none")
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
    with pytest.raises(RobustcountError, match="scoring 'echo': use top_logprobs, or echo with the completions API"):
        load_endpoint_lm("openai:http://127.0.0.1:9/v1#m", PromptSpec("{text}", "a=x,b=y"), scoring="echo",
                         requests=RequestSettings(cache=tmp_path / "cache.sqlite"))
    assert served_keywords({"api": "completions", "concurrency": 2, "max_cost": 1.0}) == {
        "api": "completions", "requests": RequestSettings(concurrency=2), "limits": SpendLimits(max_cost=1.0)}
    with pytest.raises(RobustcountError, match="unknown served-model option"):
        served_keywords({"concurency": 2})


def test_the_progress_line_adds_up_the_served_models_ledger():
    shown = io.StringIO()
    bar = Progress("estimate", 3, 0, stream=shown, interval=0)
    for requests in (5, 7):
        bar.count_ledger({"requests": requests, "answered": requests, "cache_hits": 2, "prompt_tokens": 100,
                          "completion_tokens": requests, "cost": 0.01})
        bar.update(1)
    assert shown.getvalue().splitlines()[-1].endswith("served model: 12 requests, 4 from the cache, cost 0.0200")


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


def test_served_smollm2_agrees_with_the_local_smollm2(clean):
    # smollm2's four answers are each one token, so the local path's whole-answer scores are the
    # first-token log-probabilities that top_logprobs lists: the same quantity, computed twice
    probabilities, _, model = clean
    assert model.served == {"api": "chat", "scoring": "top_logprobs", "top_logprobs": 100}
    theirs = load_prompted_lm("smollm2", calibration="none", device="cpu").predict_proba(TEXTS)
    assert np.abs(probabilities - theirs).max() <= TOLERANCE, np.abs(probabilities - theirs).max()
    clear = np.abs(theirs[:, 0] - theirs[:, 1]) > 2 * TOLERANCE  # the label holds where the margin exceeds the gap
    assert clear.sum() >= 2 and np.array_equal(probabilities.argmax(axis=1)[clear], theirs.argmax(axis=1)[clear])


def test_a_server_without_echo_is_scored_from_top_logprobs_and_the_mode_is_its_identity(clean, proxy, tmp_path):
    # llama.cpp's server ignores `echo`: the completions API falls back to top_logprobs
    chat_turn = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n" \
                "<|im_start|>user\n" + SMOLLM2_PROMPT + "<|im_end|>\n<|im_start|>assistant\n"
    model = load_endpoint_lm(f"openai:{proxy.url}#smollm2", PromptSpec(chat_turn, SMOLLM2_VERBALIZER),
                             api="completions", requests=RequestSettings(cache=tmp_path / "cache.sqlite"))
    assert model.served == {"api": "completions", "scoring": "top_logprobs", "top_logprobs": 100}
    assert model.digest() != clean[2].digest()
    assert np.array_equal(model.predict_proba(TEXTS), clean[0])  # the chat template written out: the same tokens
    with pytest.raises(RobustcountError, match="cannot score an answer from its completions' echoed log-probabilities"):
        load_endpoint_lm(f"openai:{proxy.url}#smollm2", PromptSpec(chat_turn, SMOLLM2_VERBALIZER),
                         api="completions", scoring="echo", requests=RequestSettings(cache=tmp_path / "cache.sqlite"))


def test_an_answer_not_among_the_listed_tokens_leaves_its_example_undecided(proxy, tmp_path, recwarn):
    model = load_endpoint_lm(f"openai:{proxy.url}#smollm2", PromptSpec(PLAIN_PROMPT, SMOLLM2_VERBALIZER),
                             api="completions", requests=RequestSettings(cache=tmp_path / "cache.sqlite"))
    result = run_attack("check", lambda engine, space, gold: pytest.fail("the attack ran"), QueryEngine(model),
                        build_space("a slow and tiresome film", ["truncate"]), 0)
    assert result.status == UNDECIDED and result.limit == ENDPOINT
    assert "answer 'Negative' is not among the 100 most likely first tokens" in result.reason
    with pytest.raises(RobustcountError, match="gives 'Negative' twice: its first token cannot tell the labels apart"):
        load_endpoint_lm(f"openai:{proxy.url}#smollm2", PromptSpec(SMOLLM2_PROMPT,
                                                                   "negative=Negative,positive=Negative"),
                         requests=RequestSettings(cache=tmp_path / "cache.sqlite"))


def test_asking_for_as_many_first_tokens_as_the_server_lists_leaves_fewer_answers_unscored(clean, proxy, tmp_path):
    # demo:test 12 and 19: an answer beyond the 20 most likely first tokens, within the 100 llama.cpp lists
    texts = [example.input for example in DataSpec("demo:test", first=20).load(0)]
    unlisted, listed = [texts[12], texts[19]], texts[:2]
    probed = clean[2]
    twenty = load_endpoint_lm(f"openai:{proxy.url}#smollm2", PromptSpec(SMOLLM2_PROMPT, SMOLLM2_VERBALIZER, "none"),
                              top_logprobs=20, requests=RequestSettings(cache=tmp_path / "cache.sqlite"))
    assert probed.served["top_logprobs"] == 100 and twenty.served["top_logprobs"] == 20
    assert probed.digest() != twenty.digest()  # the first tokens asked for are part of the identity
    for text in unlisted:
        with pytest.raises(AnswerUnscored, match="is not among the 20 most likely first tokens"):
            twenty.predict_proba([text])
    assert probed.predict_proba(unlisted).shape == (2, 2)
    # the log-probabilities of the listed tokens do not depend on how many are listed
    assert np.array_equal(probed.predict_proba(listed), twenty.predict_proba(listed))


def test_a_server_that_lists_fewer_first_tokens_than_probed_is_asked_twenty(proxy, tmp_path, capsys):
    def capped(answer, request):  # a server that lists at most 50, whatever it is asked
        del answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"][50:]
        return answer

    proxy.alter = capped
    model = served(proxy, tmp_path / "cache.sqlite")
    assert model.served["top_logprobs"] == 20
    assert [body.get("top_logprobs") for _, body in proxy.bodies[:6]] == [100] * 3 + [20] * 3
    assert main(["attack", "--model", "smollm2", "--top-logprobs", "5", "--data", "demo:test"]) == 1
    assert "--top-logprobs applies to a served model" in capsys.readouterr().err


def test_injected_faults_change_no_answer_and_retry_after_is_honoured(clean, proxy, tmp_path):
    # one request at a time, so that none waits at the server behind others long enough to time out
    faulty = served(proxy, tmp_path / "faulty.sqlite", calibration="none", retries=FAST, concurrency=1)
    waits = []
    faulty.transport._sleep = waits.append  # the waits asked for, recorded instead of slept
    plan = {0: "429", 1: "500", 2: "drop", 3: "slow", 5: "429", 6: "500", 7: "500", 9: "drop"}
    proxy.reset(plan.get, retry_after="0.25", slow_seconds=12.0)
    assert np.array_equal(faulty.predict_proba(TEXTS), clean[0])
    assert proxy.faults == {"429": 2, "500": 3, "drop": 2, "slow": 1}
    assert faulty.transport.retried >= 8 and waits.count(0.25) == 2  # more when the loaded server is slow
    # and at load: the 3 content-free prompts of the check, then 6 prompts thrice in the determinism probe
    assert faulty.ledger.requests == faulty.ledger.answered == len(TEXTS) + 3 + 18


def test_a_request_that_keeps_failing_ends_its_example_undecided(clean, proxy, recwarn):
    model = served(proxy, clean[1], calibration="none", retries=FAST)
    model.transport._sleep = lambda seconds: None
    proxy.reset(lambda number: "500")
    result = run_attack("check", lambda engine, space, gold: pytest.fail("the attack ran"), QueryEngine(model),
                        build_space("a slow and tiresome film", ["truncate"]), 0)
    assert result.status == UNDECIDED and result.limit == ENDPOINT
    assert "failed after 6 attempts (last: HTTP 500)" in result.reason
    assert proxy.arrived == 6, proxy.arrived  # the probe's first text alone (one request), 6 attempts
    said = [str(w.message) for w in recwarn.list if issubclass(w.category, RobustcountWarning)]
    assert not said, said  # no verdict on batches from a failing server: the next request probes again


def test_a_batch_with_an_unscored_answer_still_asks_every_prompt_of_it(proxy, tmp_path):
    # which requests a failing batch sends must not depend on which finished first, so that a resumed run asks
    # what an uninterrupted run asks (before, the prompts not yet begun were cancelled at the first failure)
    model = served(proxy, tmp_path / "cache.sqlite", concurrency=1)
    texts = [example.input for example in DataSpec("demo:test", first=8).load(0)][2:]

    def unlisted(answer, request):  # no 'Positive' or 'positive' listed for the first text
        if texts[0] in request["messages"][0]["content"]:
            entries = answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            entries[:] = [entry for entry in entries if entry["token"].lower() != "positive"]
        return answer

    proxy.reset()
    proxy.alter = unlisted
    with pytest.raises(AnswerUnscored):
        model.predict_proba(texts)
    assert proxy.forwarded == len(texts) == 6


def test_a_rerun_with_the_cache_sends_no_request(clean, proxy):
    again = served(proxy, clean[1], calibration="none")
    assert np.array_equal(again.predict_proba(TEXTS), clean[0]) and again.digest() == clean[2].digest()
    assert proxy.arrived == 0 and again.transport.sent == 0 and again.ledger.requests == 0
    assert again.ledger.cache_hits == len(TEXTS) + 3  # the texts and the 3 content-free prompts of the probe


def test_the_cli_runs_a_served_model_and_writes_no_api_key(clean, proxy, tmp_path):
    out = tmp_path / "run.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": "sk-robustcount-test-secret", "ROBUSTCOUNT_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "robustcount", "attack", "--data", "demo:test", "--first", "1",
                           "--model", f"openai:{proxy.url}#smollm2", "--prompt", SMOLLM2_PROMPT,
                           "--verbalizer", SMOLLM2_VERBALIZER, "--source", "truncate", "--budget", "1",
                           "--output", str(out)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert f"openai:{proxy.url}#smollm2" in out.read_text()
    model = records_of(out)[0]["models"][0]
    assert model["calibration"] == "auto" and model["top_logprobs"] is None
    assert model["served"]["calibration"]["method"] == "content-free"  # smollm2's default, the local one's
    written = out.read_text() + done.stdout + done.stderr + "".join(
        path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file() and path != out
        and path.suffix in (".json", ".jsonl", ".log", ".html", ".md"))
    assert "sk-robustcount-test-secret" not in written
    assert (tmp_path / "cache" / "endpoint-responses.sqlite").is_file()


def served_args(proxy, cache, *args) -> list[str]:
    """A command line for smollm2's prompt over the chat API through `proxy`, calibrated, answers kept in `cache`."""
    return [*args, "--model", f"openai:{proxy.url}#smollm2", "--prompt", SMOLLM2_PROMPT, "--verbalizer",
            SMOLLM2_VERBALIZER, "--calibration", "content-free", "--data", "demo:test", "--seed", "0",
            "--cache", str(cache)]


def records_of(path) -> tuple[dict, list[dict]]:
    header, *records = [json.loads(line) for line in path.read_text().splitlines()]
    return header, records


def test_max_requests_stops_examples_undecided_and_a_resume_with_a_higher_limit_runs_them(proxy, tmp_path, capsys):
    args = served_args(proxy, tmp_path / "cache.sqlite", "attack", "--first", "3", "--source", "truncate",
                       "--radius", "1", "--budget", "30", "--price-per-1k-tokens", "0.15,0.6", "--concurrency", "2")
    stopped, whole = tmp_path / "stopped.jsonl", tmp_path / "whole.jsonl"
    assert main(args + ["--max-requests", "10", "--output", str(stopped)]) == 0
    said = capsys.readouterr().out
    header, records = records_of(stopped)
    assert [r["limit"] for r in records].count(REQUEST_LIMIT) >= 2, [r.get("reason") for r in records]
    ledger = re.search(r"served model: (\d+) requests sent \((\d+) answered\), \d+ answers from the cache, (\d+) "
                       r"prompt \+ (\d+) completion tokens, cost ([0-9.]+)", said)
    assert ledger, said
    sent, answered, prompt_tokens, completion_tokens = map(int, ledger.groups()[:4])
    cost = float(ledger[5])
    assert sent == answered == proxy.forwarded  # all the server received: the probes at load too
    timings = [json.loads(line) for line in timings_path(stopped).read_text().splitlines()]
    assert sum(t[LEDGER]["requests"] for t in timings if t["record"] == "chunk") == 10  # the examples': the limit
    assert [t[LEDGER]["requests"] for t in timings if t["record"] == "session"] == [sent - 10]
    assert completion_tokens == sent and prompt_tokens > sent * 40  # each prompt about 50 tokens
    assert cost == round((prompt_tokens * 0.15 + completion_tokens * 0.6) / 1000, 4)
    model = header["models"][0]
    assert model["served"] == {"api": "chat", "scoring": "top_logprobs", "top_logprobs": 100, "deterministic": True,
                               "calibration": {"method": "content-free", "inputs": ["N/A", "", "[MASK]"],
                                               "mean": model["served"]["calibration"]["mean"]}}
    assert model["max_requests"] == 10 and not {"cache", "concurrency", "price_per_1k_tokens", "timeout"} & set(model)
    assert main(args + ["--max-requests", "1000", "--output", str(stopped), "--resume"]) == 0
    with sqlite3.connect(tmp_path / "cache.sqlite") as connection:
        held = {key for (key,) in connection.execute("SELECT key FROM answers")}
    before = len(proxy.bodies)
    assert main(args + ["--max-requests", "1000", "--output", str(whole)]) == 0
    sent = [request_key(proxy.url, "smollm2", {"path": path.removeprefix("/v1"), "body": body})
            for path, body in proxy.bodies[before:]]
    assert not held & set(sent)  # nothing the cache held was asked again
    assert re.search(rf"served model: {len(sent)} requests sent \({len(sent)} answered\), [1-9]\d* answers from the cache",
                     capsys.readouterr().out)
    assert stopped.read_bytes() == whole.read_bytes()
    assert REQUEST_LIMIT not in {r.get("limit") for r in records_of(whole)[1]}


def test_a_limit_on_an_examples_own_input_stops_certify_cleanly_and_a_resume_runs_it(proxy, tmp_path, capsys):
    # the first example's clean input is answered by the header's batch probe, and its first point takes the one
    # request; demo:test 3's clean input, not among the probe's inputs, is refused the next
    args = served_args(proxy, tmp_path / "cache.sqlite", "certify", "--first", "5", "--source", "truncate",
                       "--radius", "1")
    stopped, whole = tmp_path / "stopped.jsonl", tmp_path / "whole.jsonl"
    assert main(args + ["--max-requests", "1", "--output", str(stopped)]) == 0
    assert "0 misclassified (not certified), 0 with an empty space (nothing to certify, not certified), 5 undecided" \
        in capsys.readouterr().out
    header, records = records_of(stopped)
    refused = [r for r in records if r["correct"] is None]
    assert [r["index"] for r in refused] == [3] and refused[0]["limit"] == REQUEST_LIMIT and not refused[0]["proofs"]
    assert "--max-requests" in refused[0]["reason"]
    assert not run_problems(header, records)  # a record verify reads
    assert main(args + ["--max-requests", "1000", "--output", str(stopped), "--resume"]) == 0
    assert main(args + ["--max-requests", "1000", "--output", str(whole)]) == 0
    assert stopped.read_bytes() == whole.read_bytes()
    assert all(r["correct"] is not None for r in records_of(whole)[1])


def test_a_certify_run_of_a_served_model_verifies(proxy, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROBUSTCOUNT_CACHE", str(tmp_path / "cache"))  # verify's model asks through the default cache
    out = tmp_path / "certify.jsonl"
    args = served_args(proxy, tmp_path / "cache.sqlite", "certify", "--first", "2", "--source", "truncate", "--radius", "1")
    assert main([*args, "--output", str(out)]) == 0
    assert {"api", "served", "max_requests", "max_cost"} <= set(records_of(out)[0]["models"][0])
    capsys.readouterr()
    assert main(["verify", str(out), "--model", f"openai:{proxy.url}#smollm2"]) == 0
    assert "certificates hold" in capsys.readouterr().out


def test_answers_that_move_between_identical_requests_refuse_certificates(proxy, tmp_path, capsys):
    noise = random.Random(0)

    def jitter(answer, request):  # a server whose answers move with the requests beside them
        for entry in answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"]:
            entry["logprob"] += noise.uniform(-0.05, 0.05)
        return answer

    proxy.alter = jitter
    args = served_args(proxy, tmp_path / "cache.sqlite", "--first", "1", "--source", "truncate", "--radius", "1")
    assert main(["certify", *args]) == 1
    assert "its answers to identical requests move beyond the margin tolerance" in capsys.readouterr().err
    out = tmp_path / "attack.jsonl"
    assert main(["attack", *args, "--budget", "5", "--output", str(out)]) == 0
    assert "move between identical requests beyond the margin tolerance" in capsys.readouterr().out
    assert records_of(out)[0]["models"][0]["served"]["deterministic"] is False


def test_an_example_whose_own_input_the_server_cannot_score_ends_undecided(proxy, tmp_path, capsys):
    text = DataSpec("demo:test", first=1).load(0)[0].input

    def unlisted(answer, request):  # no 'Positive' or 'positive' among the listed tokens for the example's text
        if text in json.dumps(request, ensure_ascii=False):
            entries = answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            entries[:] = [entry for entry in entries if entry["token"].lower() != "positive"]
        return answer

    proxy.alter = unlisted
    out = tmp_path / "estimate.jsonl"
    assert main(served_args(proxy, tmp_path / "cache.sqlite", "estimate", "--first", "1", "--eps", "0.3",
                            "--delta", "0.3", "--output", str(out))) == 0
    record = records_of(out)[1][0]
    assert record["limit"] == ENDPOINT and record["correct"] is None and record["estimate"] is None
    assert "answer 'Positive' is not among the 98 most likely first tokens" in record["reason"]


def fault_plan(number: int) -> str | None:
    """About 10% 429s, 5% 500s, 2% answers slower than the timeout and 1% dropped connections, drawn per request."""
    draw = random.Random(number).random()
    return "429" if draw < 0.10 else "500" if draw < 0.15 else "slow" if draw < 0.17 else "drop" if draw < 0.18 else None


def test_a_killed_estimate_resumes_under_faults_to_the_file_of_an_uninterrupted_run(proxy, tmp_path):
    args = served_args(proxy, tmp_path / "clean.sqlite", "estimate", "--first", "2", "--eps", "0.25", "--delta", "0.25",
                       "--timeout", "10")  # well above a real answer on a loaded machine; the injected slow ones pass it
    reference, run, cache = tmp_path / "reference.jsonl", tmp_path / "run.jsonl", tmp_path / "faulty.sqlite"
    assert main(args + ["--output", str(reference)]) == 0
    assert any(record["estimate"] and record["estimate"]["samples"] for record in records_of(reference)[1])
    proxy.reset(fault_plan, retry_after="0.1", slow_seconds=12.0)
    faulty = [*args[:-1], str(cache), "--output", str(run)]
    process = subprocess.Popen([sys.executable, "-m", "robustcount", *faulty], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        while process.poll() is None and not (run.is_file() and len(run.read_text().splitlines()) >= 2):
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    with sqlite3.connect(cache) as connection:
        held = {key for (key,) in connection.execute("SELECT key FROM answers")}
    before = len(proxy.bodies)
    assert main(faulty + ["--resume"]) == 0
    resent = [request_key(proxy.url, "smollm2", {"path": path.removeprefix("/v1"), "body": body})
              for path, body in proxy.bodies[before:]]
    assert resent and not held & set(resent)  # nothing the cache held was asked again
    assert sum(proxy.faults.values()) > 0
    assert run.read_bytes() == reference.read_bytes()


# The opt-in tier: llama-cpp-python's server, which echoes log-probabilities (`make llama-server`
# builds it from source in about 5.5 minutes, so the default tests do without it).

ECHO_PROMPT = "<|im_start|>user\nReview: {text}\nPositive or negative?<|im_end|>\n<|im_start|>assistant\n"
"""A short prompt in SmolLM2's chat turn, written out (it begins with the model's BOS token,
<|im_start|>, without which llama-cpp-python's echo is off by one)."""
ECHO_VERBALIZER = "negative=Negative,positive=Positive"


@pytest.fixture(scope="module")
def echo_proxy(tmp_path_factory):
    """A proxy to llama-cpp-python's server serving SmolLM2, when $ROBUSTCOUNT_LLAMA_PYTHON has it."""
    python = llama_python()
    if python is None:
        pytest.skip(f"llama-cpp-python[server] is neither installed here nor in ${LLAMA_PYTHON_VARIABLE} "
                    "(`make llama-server` builds it)")
    process, port = start_llama_server(python, str(smollm2_gguf()), tmp_path_factory.mktemp("llama") / "server.log")
    found = FaultyProxy(port)
    yield found
    found.close()
    _stop(process)


def test_echo_scoring_agrees_with_the_local_path(echo_proxy, tmp_path):
    asked = PromptSpec(ECHO_PROMPT, ECHO_VERBALIZER, "content-free")
    model = load_endpoint_lm(f"openai:{echo_proxy.url}#smollm2", asked, api="completions",
                             requests=RequestSettings(cache=tmp_path / "cache.sqlite"))
    assert model.served == {"api": "completions", "scoring": "echo"}
    lm, tokenizer = load_causal_lm(smollm2_gguf())
    local = prompted_lm(lm, tokenizer, "smollm2-plain", PromptSpec(ECHO_PROMPT, ECHO_VERBALIZER, model.calibration),
                        chat=False, runtime=LMRuntime("cpu"))
    gap = np.abs(model.predict_proba(TEXTS) - local.predict_proba(TEXTS)).max()
    assert gap <= TOLERANCE, gap


def test_a_server_whose_echo_is_off_by_one_is_refused_echo_scoring(echo_proxy, tmp_path):
    # llama-cpp-python's echo for a prompt that does not begin with the BOS token
    with pytest.raises(RobustcountError, match="cannot score an answer.*not each token's given the ones before"):
        load_endpoint_lm(f"openai:{echo_proxy.url}#smollm2",
                         PromptSpec("Review: {text}\nPositive or negative?\nAnswer:", ECHO_VERBALIZER),
                         api="completions", scoring="echo", requests=RequestSettings(cache=tmp_path / "cache.sqlite"))
