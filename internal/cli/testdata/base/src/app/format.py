"""Formatting helpers."""


def shout(text):
    """Return text upper-cased with an exclamation mark; None means empty."""
    return text.upper() + "!"


def first_word(text):
    return text.split()[0]
