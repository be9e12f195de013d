"""What PostgreSQL ``text`` and ``jsonb`` can hold: UTF-8 without NUL. Python ``str`` can hold more
(NUL, lone surrogates), so values are checked before they reach a batch that would fail whole."""

from __future__ import annotations


def is_storable(text: str) -> bool:
    """Whether ``text`` survives a round trip through a ``text`` or ``jsonb`` column unchanged."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
