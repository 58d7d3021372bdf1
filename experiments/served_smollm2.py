"""SmolLM2 served over HTTP against the local `smollm2`: agreement and what an estimate costs.

Starts llama.cpp's own server (the xllamacpp wheel of the `test` extra) serving the packaged
SmolLM2 GGUF on 127.0.0.1 in a process of its own, then
1. `agreement`: the label probabilities of the first N demo:test texts, served
   (`openai:...#smollm2`, smollm2's prompt and verbaliser over the chat API, top_logprobs scoring,
   uncalibrated; as many first tokens as the server lists, or `--top-logprobs N`) and local (`load_prompted_lm("smollm2", calibration="none")`): the largest
   difference, the labels that differ, the texts whose answers the server did not list;
2. `estimate`: `robustcount estimate --eps 0.05 --delta 0.05` on the first N demo:test examples
   against the server (its default calibration, content-free; a fresh response cache; `--top-logprobs N`
   when given): each example's requests
   (its model calls: with an empty cache each is one request), their median over the examples
   where no sampled point was adversarial, and the run's ledger.

    python experiments/served_smollm2.py agreement --first 20
    python experiments/served_smollm2.py estimate --first 50
    python experiments/served_smollm2.py estimate --first 20 --top-logprobs 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robustcount.data import DataSpec  # noqa: E402
from robustcount.errors import LimitReached  # noqa: E402
from robustcount.models.llm.classifier import SMOLLM2_PROMPT, SMOLLM2_VERBALIZER, load_prompted_lm  # noqa: E402
from robustcount.models.llm.endpoint import RequestSettings, load_endpoint_lm  # noqa: E402
from robustcount.models.llm.prompting import PromptSpec  # noqa: E402
from robustcount.models.llm.loading import smollm2_gguf  # noqa: E402
from tests.endpoint_servers import start_xllamacpp_server  # noqa: E402


def agreement(url: str, first: int, folder: Path, top_logprobs: int | None) -> None:
    texts = [example.input for example in DataSpec("demo:test", first=first).load(0)]
    served = load_endpoint_lm(f"openai:{url}#smollm2", PromptSpec(SMOLLM2_PROMPT, SMOLLM2_VERBALIZER, "none"),
                              top_logprobs=top_logprobs, requests=RequestSettings(cache=folder / "agreement.sqlite"))
    local = load_prompted_lm("smollm2", calibration="none", device="cpu")
    rows, unlisted = [], []
    for index, text in enumerate(texts):
        try:
            rows.append((served.predict_proba([text])[0], local.predict_proba([text])[0]))
        except LimitReached:
            unlisted.append(index)
    theirs, ours = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    gap = np.abs(theirs - ours).max(axis=1)
    print(f"{len(texts)} texts: {len(unlisted)} (indices {unlisted}) with an answer the server did not list among "
          f"its top {served.top_k}; on the "
          f"{len(rows)} others the largest difference of a label probability is {gap.max():.4f} "
          f"(median {np.median(gap):.4f}); labels differ on {int((theirs.argmax(1) != ours.argmax(1)).sum())} "
          f"(local margins there: {np.abs(ours[:, 0] - ours[:, 1])[theirs.argmax(1) != ours.argmax(1)].round(3)})")
    print(f"served model: {served.served}, determinism probe: {served.determinism:.2g}, "
          f"ledger: {served.ledger.record()}")


def estimate(url: str, first: int, folder: Path, top_logprobs: int | None) -> None:
    out = folder / "estimate.jsonl"
    command = [sys.executable, "-m", "robustcount", "estimate", "--model", f"openai:{url}#smollm2",
               "--prompt", SMOLLM2_PROMPT, "--verbalizer", SMOLLM2_VERBALIZER,
               "--data", "demo:test", "--first", str(first), "--eps", "0.05", "--delta", "0.05", "--seed", "0",
               "--cache", str(folder / "estimate.sqlite"), "--output", str(out)] \
        + (["--top-logprobs", str(top_logprobs)] if top_logprobs else [])
    began = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    print(done.stdout[-3000:], done.stderr[-2000:] if done.returncode else "", sep="\n")
    records = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    estimated = [r for r in records if r.get("estimate")]
    clean = [r for r in estimated if r["estimate"]["robust"] == r["estimate"]["samples"]]
    calls = [r["queries"]["model_calls"] for r in clean]
    print(f"{len(records)} examples in {time.perf_counter() - began:.0f} s: {len(estimated)} estimated, "
          f"{len(clean)} with no adversarial point sampled; their requests per example: median "
          f"{statistics.median(calls) if calls else None}, max {max(calls, default=None)}; samples median "
          f"{statistics.median(r['estimate']['samples'] for r in clean) if clean else None}")
    print("requests per example (all estimated):", sorted(r["queries"]["model_calls"] for r in estimated))
    print("undecided:", [(r["index"], r.get("limit")) for r in records if r.get("limit")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("agreement", "estimate"))
    parser.add_argument("--first", type=int, default=20)
    parser.add_argument("--top-logprobs", type=int, help="first tokens asked for (default: as many as the server lists)")
    parser.add_argument("--cache-prompt", action="store_true", help="let the server reuse a cached prompt prefix")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        process, port = start_xllamacpp_server(str(smollm2_gguf()), Path(folder) / "server.log",
                                               cache_prompt=args.cache_prompt)
        try:
            (agreement if args.what == "agreement" else estimate)(f"http://127.0.0.1:{port}/v1", args.first,
                                                                   Path(folder), args.top_logprobs)
        finally:
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
