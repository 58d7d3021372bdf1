"""Scoring a served model's answers from its completions' echoed log-probabilities (`echo`
mode): one completions request per prompt and answer, the prompt followed by the answer with
`echo` and `logprobs`; the echoed tokens that spell the answer (found by their text: token offsets
are not reliable across servers, llama.cpp's count its special tokens as nothing) sum to
log p(answer | prompt), every token of a multi-token answer counted, as the local path scores it.

A server whose answer holds no such log-probabilities, whose tokens do not split where the answer
starts, or whose echo is not each token's given the ones before it (`check_echo`) cannot score
this way: it is refused in one line (`CannotScore`), never guessed at.
"""

from __future__ import annotations

import math

from robustcount.errors import RobustcountError

ECHO_TOLERANCE = 0.01
"""The most a token's echoed log-probability may differ from the one its generation had (`check_echo`)."""
CANNOT_SCORE = "cannot score an answer from its completions' echoed log-probabilities ({detail})"


class CannotScore(RobustcountError):
    """A server that cannot score answers in one mode (the message says why), refused in one line."""


def echo_body(model: str, prompt: str, answer: str) -> dict:
    """The completions request that echoes `answer`'s log-probabilities after `prompt`."""
    return {"model": model, "prompt": prompt + answer, "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}


def check_echo(lm) -> None:
    """Refuse (`CannotScore`) a server whose echoed log-probabilities are not each token's given
    the tokens before it (llama-cpp-python's server, for a prompt that does not begin with its BOS
    token, gives each token the log-probability of the next position's; llama.cpp's own server
    ignores `echo`): a content-free prompt's greedy next token, echoed after it, must get the
    log-probability its generation had (within ECHO_TOLERANCE), for the first two of the
    content-free prompts of `lm` (an `EndpointLM`; each alone, then followed by each answer)
    whose next token can be echoed apart from them."""
    checked = 0
    bare = lm.content_free_prompts()
    for prompt in bare + [prompt + answer for prompt in bare for answer in lm.verbalizer.flat()]:
        body = {"model": lm.endpoint.model, "prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": 1}
        choice = (lm.request("/completions", body).get("choices") or [{}])[0]
        text, values = choice.get("text"), (choice.get("logprobs") or {}).get("token_logprobs")
        if not isinstance(text, str) or not text or not values or not isinstance(values[0], (int, float)):
            continue
        try:
            echoed = lm.request("/completions", echo_body(lm.endpoint.model, prompt, text),
                                lambda found: answer_log_likelihood(found, prompt, text))
        except CannotScore:  # its tokens join the prompt's end: not a token to check with
            continue
        if abs(echoed - values[0]) > ECHO_TOLERANCE:
            raise CannotScore(CANNOT_SCORE.format(
                detail=f"its echo gives {text!r} after the prompt a log-probability of {echoed:.3f} where its "
                       f"generation gave {values[0]:.3f}: not each token's given the ones before it; a prompt "
                       "that begins with the model's BOS token may fix it"))
        checked += 1
        if checked == 2:
            return
    raise CannotScore(CANNOT_SCORE.format(
        detail="no content-free prompt's next token, echoed after it, could be checked against its generation"))


def answer_log_likelihood(answer: dict, prompt: str, said: str) -> float:
    """The sum of the log-probabilities of the echoed tokens that spell `said` after `prompt`,
    refused in one line when the server's answer cannot say it (see `answer_tokens`)."""
    choices = answer.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    logprobs, text = choice.get("logprobs"), choice.get("text")
    tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values) \
            or not isinstance(text, str) or not all(isinstance(token, str) for token in tokens):
        raise CannotScore(CANNOT_SCORE.format(detail="no echoed tokens with token_logprobs"))
    if not text.startswith(prompt + said):
        raise CannotScore(CANNOT_SCORE.format(detail="its echo is not the prompt it was sent"))
    found = answer_tokens(tokens, said, text[len(prompt) + len(said):])
    if found is None:
        raise CannotScore(CANNOT_SCORE.format(
            detail=f"no echoed tokens spell the answer {said!r} alone: its tokenizer joins it to the prompt"))
    picked = [values[i] for i in found]
    if not all(isinstance(value, (int, float)) and math.isfinite(value) for value in picked):
        raise CannotScore(CANNOT_SCORE.format(detail="an answer token has no log-probability"))
    return float(sum(picked))


def answer_tokens(tokens: list[str], said: str, generated: str) -> range | None:
    """The places of the echoed `tokens` that spell `said`, the answer, each token non-empty and
    none shared with the prompt, followed either by the tokens of the `generated` text or by
    nothing (servers differ in whether the echo lists what they generated: llama.cpp's does or
    does not, by prompt); None when no such places exist, or when both readings fit and differ."""
    ends = []
    if not generated:
        end = len(tokens)
        while end and not tokens[end - 1]:  # an end of text generated, spelled as nothing
            end -= 1
        ends.append(end)
    else:
        ends += [end for end in (_spelled_from(tokens, len(tokens), generated), len(tokens)) if end is not None]
    readings = {range(start, end) for end in ends if (start := _spelled_from(tokens, end, said)) is not None}
    return readings.pop() if len(readings) == 1 else None


def _spelled_from(tokens: list[str], end: int, text: str) -> int | None:
    """The place from which the non-empty tokens up to `end` spell exactly `text`, or None."""
    start, spelled = end, ""
    while len(spelled) < len(text) and start > 0 and tokens[start - 1]:
        start -= 1
        spelled = tokens[start] + spelled
    return start if spelled == text else None
