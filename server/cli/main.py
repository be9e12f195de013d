"""The ``feltd`` command: one argparse tree, each subcommand implemented in its own module.

Implementations are imported only when their command runs, so ``feltd --help`` stays fast and a
command never pays for the dependencies of another.

Errors are handled here, once, for every command (``server.cli.exits``): a usage error or a known
error prints one line, ``feltd COMMAND: what was wrong``, and exits non-zero; a closed output pipe
exits quietly; Ctrl-C prints ``interrupted``. Help texts show every flag's default.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from server.cli.exits import BAD_INPUT, STATUS_HELP, explain


class FeltdParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other error of feltd, and
    whose help shows defaults (its subparsers are FeltdParsers too: argparse makes them so)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        line = message.replace("\n", " ")
        self.exit(BAD_INPUT, f"{self.prog}: {line} (see {self.prog} --help)\n")


class HelpFormatter(argparse.HelpFormatter):
    """Adds ``(default: X)`` to every flag that has a default and does not state it already."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            action.option_strings
            and action.default not in (None, False, argparse.SUPPRESS)
            and "default" not in text
        ):
            text += " (default: %(default)s)"
        return text


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, target: str, help_text: str
) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    parser.set_defaults(_target=target)
    return parser


def _group(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help_text: str
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    inner = parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND", required=True)
    return inner


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("feltd")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = FeltdParser(
        prog="feltd",
        description="feltd: an online multi-table poker tournament server.",
        epilog=f"Money is in integer cents, chips in chips. {STATUS_HELP}.",
    )
    parser.add_argument("--version", action="version", version=f"feltd {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    from server.cli import commands

    commands.register(sub, _command, _group)
    return parser


def _command_name(args: argparse.Namespace) -> str:
    """``feltd admin player`` for the error line: the words the user typed to pick the command."""
    words = ["feltd", args.command]
    for dest in (f"{args.command}_command", "action"):  # a group's command, then its own action
        word = getattr(args, dest, None)
        if isinstance(word, str):
            words.append(word)
    return " ".join(words)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the final flush at exit cannot fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    module_name, _, function_name = args._target.partition(":")
    function = getattr(importlib.import_module(module_name), function_name)
    try:
        code = int(function(args) or 0)
        sys.stdout.flush()  # a reader that went away shows here, not at interpreter exit
    except BaseException as error:
        if isinstance(error, SystemExit):
            raise
        outcome = explain(error)
        if outcome is None or os.environ.get("FELTD_TRACEBACK") == "1":
            raise
        if isinstance(error, BrokenPipeError):
            _silence_stdout()
        if outcome.line is not None:
            # If stderr is gone too, the exit status is all that is left to say it.
            with contextlib.suppress(OSError):
                print(f"{_command_name(args)}: {outcome.line}", file=sys.stderr, flush=True)
        return outcome.status
    return code


if __name__ == "__main__":
    sys.exit(main())
