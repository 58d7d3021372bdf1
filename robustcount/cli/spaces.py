"""Commands `perturb`, `space` and `source-quality`."""

from __future__ import annotations

import json

import click

from robustcount.attacks.zeroe_protocol import zeroe_attack
from robustcount.cli.common import command_line_text, space_from, space_options
from robustcount.cli.group import cli
from robustcount.data import load_data
from robustcount.goal import MAX_RADIUS
from robustcount.runs.tables import format_table
from robustcount.spaces.build import english_stop_words, make_source
from robustcount.spaces.perturbers import get_perturber
from robustcount.spaces.quality import frequent_words, measure_source, read_lexicon, vader_polarity


@cli.command()
@click.argument("text")
@click.option("--attack", required=True,
              help="One of the ten Zéroe perturbers (see `robustcount space --help`), natural:PATH (your misspelling "
                   "table) or table:PATH (your neighbour table).")
@click.option("--level", default="mid", show_default=True, help="low (0.2), mid (0.5), high (0.8) or a number in [0, 1].")
@click.option("--seed", type=int, default=0, show_default=True)
def perturb(text, attack, level, seed):
    """Print TEXT attacked by one Zéroe perturber under the paper's random protocol."""
    click.echo(zeroe_attack(command_line_text(text), get_perturber(attack), level, seed))


@cli.command()
@click.argument("text")
@space_options
@click.option("--radius", type=click.IntRange(min=0, max=MAX_RADIUS), default=1, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the seeded sources (shuffles).")
@click.option("--json", "as_json", is_flag=True, help="Print the space as JSON.")
def space(text, radius, seed, as_json, **options):
    """Print each position's candidates and |Omega_r| for TEXT."""
    built = space_from(options).builder(seed)(command_line_text(text))
    if as_json:
        click.echo(json.dumps({
            "text": text, "radius": radius, "size": str(built.count(radius)), "digest": built.digest(),
            "definition": built.definition,
            "positions": [{"kind": p.kind, "index": p.index, "candidates": list(p.candidates),
                           "sources": list(p.sources)} for p in built.positions],
        }, ensure_ascii=False, indent=2))
        return
    click.echo(built.describe(radius))


BUILT_IN_WORD_SOURCES = ("synonyms", "wordnet", "glove-raw")


@cli.command("source-quality")
@click.option("--source", "sources", multiple=True,
              help="Word source to measure, repeatable: synonyms, wordnet, glove-raw, vectors:PATH[,VOCAB], "
                   f"table:PATH or a Zéroe word perturber (default: {', '.join(BUILT_IN_WORD_SOURCES)}).")
@click.option("--data", "data_spec", default="demo:test", show_default=True,
              help="Texts whose words are measured: demo:train, demo:test or a .csv/.tsv/.jsonl file.")
@click.option("--text-column", default="text", show_default=True)
@click.option("--encoding", default="utf-8", show_default=True)
@click.option("--texts", type=click.IntRange(min=1), default=600, show_default=True,
              help="Read the first this many texts.")
@click.option("--words", type=click.IntRange(min=1), default=1500, show_default=True,
              help="Measure this many of their most frequent non-stop words.")
@click.option("--lexicon", default="vader", show_default=True,
              help="Sentiment lexicon of the polarity measure: vader, or a `word<TAB>score` file.")
@click.option("--pairs", type=click.IntRange(min=0), default=8, show_default=True,
              help="Pairs to show per source (a seeded sample, and polarity flips).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample of pairs.")
@click.option("--json", "as_json", is_flag=True, help="Print the measures as JSON.")
def source_quality(sources, data_spec, text_column, encoding, texts, words, lexicon, pairs, seed, as_json):
    """Measure how meaning-preserving word sources are: neighbours per word and coverage of the data's
    vocabulary, polarity flips against a sentiment lexicon, WordNet antonym pairs, fragments."""
    chosen = list(sources) or list(BUILT_IN_WORD_SOURCES)
    resolved = []
    for spec in chosen:
        found = make_source(spec, seed)
        if len(found) != 1 or found[0].kind != "word":
            raise click.UsageError(f"{spec} is not one word source (measure one of {', '.join(BUILT_IN_WORD_SOURCES)}, "
                                   "vectors:PATH, table:PATH or a Zéroe word perturber at a time)")
        resolved.append((spec, found[0]))
    polarity = vader_polarity() if lexicon == "vader" else read_lexicon(lexicon)
    examples = load_data(data_spec, text_column=text_column, label_column=None, encoding=encoding)[:texts]
    vocabulary = frequent_words([e.input if isinstance(e.input, str) else e.input[1] for e in examples], words,
                                set(english_stop_words()))
    measures = [measure_source(source, vocabulary, polarity, name=spec, sample_size=pairs, seed=seed)
                for spec, source in resolved]
    if as_json:
        click.echo(json.dumps({"data": data_spec, "texts": len(examples), "words": len(vocabulary),
                               "lexicon": lexicon, "seed": seed, "sources": [m.as_dict() for m in measures]},
                              indent=2, ensure_ascii=False))
        return
    click.echo(f"{len(vocabulary)} most frequent non-stop words of the first {len(examples)} texts of {data_spec}; "
               f"polarity from {lexicon}")
    click.echo(format_table(
        ["source", "covered", "coverage", "neighbours/word", "lexicon pairs", "flips", "flip share",
         "antonym pairs", "fragments"],
        [(m.source, m.covered, m.coverage, m.neighbours_per_word, m.lexicon_pairs, m.polarity_flips, m.flip_share,
          m.antonym_pairs, m.fragments) for m in measures]))
    for m in measures:
        if m.sample:
            click.echo(f"\n{m.source}, sample: " + ", ".join(f"{a} -> {b}" for a, b in m.sample))
        if m.flip_examples:
            click.echo(f"{m.source}, polarity flips: " + ", ".join(f"{a} -> {b}" for a, b in m.flip_examples))
