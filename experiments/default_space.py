"""How the experiments' pages name the synonym spaces they ran in, and what the earlier default gave.

Every page built on the default source says which space it is (`SYNONYMS`); where a figure moved
when the default was rebuilt (issue 27), the page puts the earlier figure beside the new one
(`before_after`), labelled `EARLIER`. The earlier figures are those of git `main`'s pages at
f43eafe, the last made in the earlier default space (and, for cnn-rt, with its earlier weights).
"""

from __future__ import annotations

from robustcount.runs.tables import format_table

SYNONYMS = ("the default `synonyms` table: the pairs of Jia et al.'s counter-fitted neighbour table that Open "
            "English WordNet or PPDB 2.0 supports in the same inflection, nearest first (8,973 words, 15,385 "
            "pairs; 2.1 neighbours per covered word among the demo's 1,500 most frequent content words, 792 of "
            "which it covers)")
EARLIER = ("the earlier, wider default space (robustcount's earlier `synonyms` table: nearest neighbours in GloVe "
           "6B 50d counter-fitted to WordNet and sentiment polarity, 24,987 words, 108,416 pairs)")
TEXTFOOLER = ("TextFooler runs in that same `synonyms` space (with its paper setting's other rules), not in its own: "
              "the paper's space, the top 50 counter-fitted word-vector neighbours at cosine >= 0.7, needs "
              "counter-fitted vectors, which do not ship offline (`textfooler_space(..., vectors=PATH)` builds it)")
EARLIER_CNN = ("cnn-rt was also retrained since (the batch-invariance fix; demo:test accuracy 0.7144 now), so its "
               "earlier figures come from its earlier weights too")


def before_after(headers: list[str], rows: list[list], table=format_table) -> list[str]:
    """Page lines: a small table (`table` formats it) of each moved figure, `earlier -> now`, the
    earlier in the earlier default space."""
    return [f"Before and after (`earlier -> now`; earlier: {EARLIER}):", "", table(headers, rows), ""]
