"""The space a run searched, named wherever its figures are shown, so that runs in different spaces
are not read as comparable: the sources and filters of the header's space definition, and the
coverage its records measured (`spaces.coverage`: the words of each text, those the space may
change, its gap positions and |Omega_r| at the radius the command used).

A record written before coverage was recorded has none; a run none of whose records has any
names no space in its report, which reads as it always did."""

from __future__ import annotations

from pathlib import Path
from statistics import median_low

from robustcount.spaces.coverage import COVERAGE


def space_summary(header: dict, records: list[dict]) -> dict | None:
    """The run's space: its sources and filters (the header's definition) and its coverage over
    the records that carry one (None for a run without a space)."""
    definition = header.get("space")
    if definition is None:
        return None
    found = [record[COVERAGE] for record in records if COVERAGE in record]
    words = sum(c["words"] for c in found)
    radii = sorted({c["radius"] for c in found}, key=lambda r: -1 if r is None else r)
    return {"sources": [_source(s) for s in definition["sources"]], "filters": _filters(definition["filters"]),
            "texts": len(found), "changeable_share": sum(c["changeable_words"] for c in found) / words
            if words else None, "gap_positions": sum(c["gap_positions"] for c in found),
            "radii": radii, "median_size": median_low(int(c["size"]) for c in found) if found else None}


def space_line(space: dict | None) -> str:
    """The space in one line (empty for a run without a space or without coverage)."""
    if not space or not space["texts"]:
        return ""
    filters = f"; {', '.join(space['filters'])}" if space["filters"] else ""
    share = "no words" if space["changeable_share"] is None else f"{space['changeable_share']:.0%} of words"
    gaps = f" and {space['gap_positions']} gaps" if space["gap_positions"] else ""
    radii = space["radii"]
    omega = "|Omega|" if radii == [None] else f"|Omega_{radii[0]}|" if len(radii) == 1 else "|Omega_r|"
    at = f", r from {radii[0]} to {radii[-1]}" if len(radii) > 1 else ""
    return (f"space: {' + '.join(space['sources'])}{filters}; {share}{gaps} changeable, median {omega} = "
            f"{_count(space['median_size'])}{at} (over {space['texts']} texts)")


def _source(definition: dict) -> str:
    """A source by name, with the file it reads (by its name) or its other settings."""
    settings = [Path(v).name if isinstance(v, str) else f"{k}={v}" for k, v in definition.items()
                if k not in ("source", "sha256") and v is not None]
    return definition["source"] + (f" ({', '.join(settings)})" if settings else "")


def _filters(filters: dict) -> list[str]:
    """The filters that narrow the space, in words (none: every word of every source)."""
    said = []
    if filters.get("stop_words"):
        said.append("stop words left alone")
    if filters.get("min_length"):
        said.append(f"words under {filters['min_length']} letters left alone")
    if filters.get("skip_positions"):
        said.append(f"words {', '.join(map(str, filters['skip_positions']))} left alone")
    if filters.get("max_candidates") is not None:
        n = filters["max_candidates"]
        said.append(f"at most {n} candidate{'s' if n > 1 else ''} per position")
    if filters.get("same_pos"):
        said.append("same part of speech")
    return said


def _count(n: int) -> str:
    """A count as read: exact up to a million, else in scientific notation."""
    return f"{n:,}" if n < 1_000_000 else f"{n:.2e}"
