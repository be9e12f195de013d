"""How a ``feltd`` command ends: its exit status, and the one line a known error becomes.

Every command runs under ``main``, which hands whatever it raises to ``explain``. A known error
(bad input, a database that cannot be used, a file that cannot be read or written, Ctrl-C, a
closed pipe) becomes one line on stderr and an exit status; anything else is a bug in feltd and
keeps its traceback. ``FELTD_TRACEBACK=1`` shows the traceback of known errors too.

Bad input means our own typed ``ValueError`` subclasses (every module's "what was wrong, what was
expected" errors: ``ConfigError``, ``LedgerError``, ``DatabaseUrlError``...) and ``CommandError``.
A plain ``ValueError`` from the standard library is not recognised: it would be our bug.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

OK = 0
FAILED = 1  # a check found a problem (a ledger check, a replay), or the work could not finish
BAD_INPUT = 2  # a flag, a file or a value that can never work; argparse uses 2 as well
UNAVAILABLE = 3  # the database cannot be used: not there, refused us, or not in a usable state
INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it
BROKEN_PIPE = 141  # the reader went away (`| head`): 128 + SIGPIPE, as a shell reports it

STATUS_HELP = (
    f"exit status: {OK} done, {FAILED} failed (a check found a problem, or the work could not "
    f"finish), {BAD_INPUT} bad input, "
    f"{UNAVAILABLE} database unusable, {INTERRUPTED} interrupted (Ctrl-C), "
    f"{BROKEN_PIPE} output pipe closed"
)

# Packages whose ValueError subclasses are typed "bad input" errors.
_OUR_PACKAGES = frozenset({"engine", "protocol", "server", "client"})


class CommandError(Exception):
    """A command refuses to run as asked; ``str()`` is the one line to print."""

    def __init__(self, message: str, status: int = BAD_INPUT) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a known error becomes: ``line`` for stderr (None: say nothing) and the exit status."""

    line: str | None
    status: int


def explain(error: BaseException) -> Outcome | None:
    """The outcome of a known error, or None for an error that is a bug (let it show a traceback)."""
    if isinstance(error, KeyboardInterrupt):
        return Outcome("interrupted", INTERRUPTED)
    if isinstance(error, BrokenPipeError):
        return Outcome(None, BROKEN_PIPE)
    if isinstance(error, CommandError):
        return Outcome(str(error), error.status)
    from server.store.errors import StoreError

    if isinstance(error, StoreError):
        return Outcome(_one_line(error), UNAVAILABLE)
    asyncpg = sys.modules.get("asyncpg")  # only loaded by commands that use the database
    if asyncpg is not None and isinstance(error, asyncpg.PostgresError | asyncpg.InterfaceError):
        return Outcome(f"PostgreSQL: {_one_line(error)}", UNAVAILABLE)
    if isinstance(error, UnicodeDecodeError):
        return Outcome(f"not UTF-8 text: {error.reason} at byte {error.start}", BAD_INPUT)
    if isinstance(error, ValueError) and type(error).__module__.split(".")[0] in _OUR_PACKAGES:
        return Outcome(_one_line(error), BAD_INPUT)
    if isinstance(error, TimeoutError):
        return Outcome("timed out waiting for the database or the network", UNAVAILABLE)
    if isinstance(error, OSError):
        # A named file is the user's input or output; else the system failed the work (disk full...).
        return Outcome(_os_line(error), BAD_INPUT if error.filename else FAILED)
    return None


def _os_line(error: OSError) -> str:
    reason = error.strerror or _one_line(error)
    if error.filename is None:
        return reason
    if error.filename2 is not None:
        return f"{error.filename} -> {error.filename2}: {reason}"
    return f"{error.filename}: {reason}"


def _one_line(error: BaseException) -> str:
    """The error's message on one line: a multi-line message is joined, not cut."""
    text = " ".join(part.strip() for part in str(error).splitlines() if part.strip())
    return text or type(error).__name__
