"""Carrying a word's capitalisation over to its replacement."""


def match_case(original: str, replacement: str) -> str:
    """`replacement` in the case pattern of `original`: ALL CAPS, Title or as given."""
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement
