"""The ``feltd`` command: one argparse tree, each subcommand implemented in its own module.

Implementations are imported only when their command runs, so ``feltd --help`` stays fast and a
command never pays for the dependencies of another.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="feltd",
        description="feltd: an online multi-table poker tournament server.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    from server.cli import commands

    commands.register(sub, _command, _group)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    module_name, _, function_name = args._target.partition(":")
    function = getattr(importlib.import_module(module_name), function_name)
    try:
        code = function(args)
    except KeyboardInterrupt:
        return 130
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
