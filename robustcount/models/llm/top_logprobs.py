"""Scoring a served model's answers from the `top_logprobs` of its first answer token
(`top_logprobs` mode), over the completions or the chat completions API: one request per prompt,
`max_tokens` 1 at temperature 0, asking for the k most likely first tokens with their
log-probabilities: k as the user gives it (`--top-logprobs`), else PROBED_K when the server lists
that many for each content-free prompt (llama.cpp's does; vLLM's past its --max-logprobs), else
TOP_K, the most OpenAI's API gives (`endpoint.choose_top_k`); the k used is part of the model's
identity. An answer's log-likelihood is the log-probability of the listed token whose text is
exactly the answer: the answers must be told apart by their first token, so each must be one
token as the server spells it (an answer of several tokens is never listed; the local path would
score its every token, this mode cannot). An answer not among the listed tokens has a probability
the server did not say: its example ends undecided (`AnswerUnscored`, the limit `endpoint`),
never with a guess.
"""

from __future__ import annotations

import math

from robustcount.errors import AnswerUnscored
from robustcount.models.llm.echo import CannotScore

TOP_K = 20
"""First tokens asked for when the server does not list PROBED_K (the most OpenAI's API gives)."""
PROBED_K = 100
"""First tokens asked for when the server lists that many (fewer answers left unscored)."""
CANNOT_SCORE = "cannot score an answer from the top_logprobs of its first token ({detail})"


def top_body(api: str, model: str, prompt: str, k: int = TOP_K) -> dict:
    """The request (of `api`, `chat` or `completions`) for the `k` most likely first tokens after `prompt`."""
    if api == "chat":
        return {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 1,
                "temperature": 0, "logprobs": True, "top_logprobs": k}
    return {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": k}


def top_entries(answer: dict) -> list[tuple[str, float]]:
    """(token text, log-probability) of each first token the server listed, most likely first:
    from `logprobs.content[0].top_logprobs` (chat completions, and llama.cpp's completions) or
    `logprobs.top_logprobs[0]` (OpenAI's completions); `CannotScore` when there are none."""
    choices = answer.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    logprobs = choice.get("logprobs") if isinstance(choice.get("logprobs"), dict) else {}
    content, legacy = logprobs.get("content"), logprobs.get("top_logprobs")
    if isinstance(content, list) and content and isinstance(content[0], dict) \
            and isinstance(content[0].get("top_logprobs"), list):
        listed = [(entry.get("token"), entry.get("logprob")) for entry in content[0]["top_logprobs"]
                  if isinstance(entry, dict)]
    elif isinstance(legacy, list) and legacy and isinstance(legacy[0], dict):
        listed = list(legacy[0].items())
    else:
        raise CannotScore(CANNOT_SCORE.format(detail="its answer lists no top_logprobs"))
    found = [(token, float(value)) for token, value in listed
             if isinstance(token, str) and isinstance(value, (int, float)) and not math.isnan(value)]
    if len(found) < 2 or len(found) != len(listed):
        raise CannotScore(CANNOT_SCORE.format(detail="its top_logprobs are not tokens with log-probabilities"))
    return sorted(found, key=lambda entry: -entry[1])


def first_token_log_likelihoods(entries: list[tuple[str, float]], answers: list[str]) -> list[float]:
    """Each answer's log-probability among `entries` (`top_entries`); `AnswerUnscored` when an
    answer is not listed, or listed twice (two tokens spelled alike: which one it is, is unknown)."""
    values = []
    for answer in answers:
        listed = [value for token, value in entries if token == answer]
        if len(listed) != 1:
            why = "not among" if not listed else "twice among"
            raise AnswerUnscored(f"the served model's answer {answer!r} is {why} the {len(entries)} most likely first "
                                 "tokens it listed: its probability is unknown (an answer of several tokens never is)")
        values.append(listed[0])
    return values


def check_answers(answers: list[str]) -> None:
    """Refuse answers that their first tokens cannot tell apart (the same text twice)."""
    repeated = sorted({answer for answer in answers if answers.count(answer) > 1})
    if repeated:
        raise CannotScore(CANNOT_SCORE.format(detail=f"the verbaliser gives {repeated[0]!r} twice: its first token "
                                                     "cannot tell the labels apart"))
