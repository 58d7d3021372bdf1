"""Perturbation spaces (Omega_r(X) of Yang et al. 2022, docs/spaces.md) and the sources of their candidates."""

from robustcount.spaces.build import Filters, SpaceBuilder, SpaceSpec, build_space
from robustcount.spaces.perturbers import PERTURBERS, Perturber, get_perturber
from robustcount.spaces.sources import Source, SourceEntry, make_source, register
from robustcount.spaces.space import Point, Position, Space
from robustcount.spaces.synonyms import NeighbourTable, VectorNeighbours, WordNetSynonyms, WordVectors

__all__ = [
    "Filters",
    "PERTURBERS",
    "NeighbourTable",
    "Perturber",
    "Point",
    "Position",
    "Source",
    "SourceEntry",
    "Space",
    "SpaceBuilder",
    "SpaceSpec",
    "VectorNeighbours",
    "WordNetSynonyms",
    "WordVectors",
    "build_space",
    "get_perturber",
    "make_source",
    "register",
]
