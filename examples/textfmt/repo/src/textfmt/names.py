"""Formatting of user names for display."""


def display_name(user):
    """Return the user's full name, e.g. "Ada King Lovelace".

    A user is a dict with optional "first", "middle" and "last" keys; names
    are stripped of surrounding spaces and empty parts are left out.
    """
    names = [user.get("first").strip(), user.get("middle").strip(), user.get("last").strip()]
    return " ".join(n for n in names if n)


def initials(user):
    """Return the initials of the user's display name, e.g. "AKL"."""
    return "".join(part[0].upper() for part in display_name(user).split())
