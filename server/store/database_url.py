"""Database URLs: checked before anything connects, and shown without their password.

A URL is checked by its form only (scheme, port); whether the server answers, the role exists
or the database exists is learnt by connecting (``connection.connect_pool``).
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from server.store.errors import DatabaseUrlError

SCHEMES = ("postgresql", "postgres")
EXPECTED = "postgresql://USER@HOST:PORT/DATABASE"


def check_database_url(url: str) -> None:
    """Raise ``DatabaseUrlError`` unless ``url`` has the form of a PostgreSQL URL."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number is only found when read
    except ValueError as error:
        raise DatabaseUrlError(
            f"{redact(url)!r} is not a PostgreSQL URL ({error}): expected {EXPECTED}"
        ) from None
    if parts.scheme not in SCHEMES:
        raise DatabaseUrlError(f"{redact(url)!r} is not a PostgreSQL URL: expected {EXPECTED}")


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***``, for printing."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url if "@" not in url else "***@" + url.rsplit("@", 1)[1]
    if not password and "password=" not in parts.query:
        return url  # unchanged: urlunsplit would drop the empty host of postgresql:///db
    netloc = parts.netloc
    if password:
        userinfo, _, host = netloc.rpartition("@")
        netloc = f"{userinfo.split(':', 1)[0]}:***@{host}"
    query = parts.query
    if "password=" in query:
        query = urlencode(
            [(key, "***" if key == "password" else value) for key, value in parse_qsl(query)], safe="/*"
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
