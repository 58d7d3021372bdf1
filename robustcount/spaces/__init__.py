"""Perturbation spaces (DESIGN section 1) and the sources of their candidates."""

from robustcount.spaces.build import Filters, SpaceBuilder, SpaceSpec, build_space, make_source
from robustcount.spaces.perturbers import PERTURBERS, Perturber, get_perturber
from robustcount.spaces.space import Point, Position, Space
from robustcount.spaces.synonyms import NeighbourTable, VectorNeighbours, WordNetSynonyms, WordVectors

__all__ = [
    "Filters",
    "PERTURBERS",
    "NeighbourTable",
    "Perturber",
    "Point",
    "Position",
    "Space",
    "SpaceBuilder",
    "SpaceSpec",
    "VectorNeighbours",
    "WordNetSynonyms",
    "WordVectors",
    "build_space",
    "get_perturber",
    "make_source",
]
