"""`feltd phh replay`: replay PHH hand histories through the feltd engine.

Each hand of each ``.phh``/``.phhs`` file (directories are searched recursively) is played through
our engine with the cards it names. Per hand it prints our finishing stacks, or the action our
engine refused and why, or where our stacks differ from the file's ``finishing_stacks``. The exit
status is 1 if any hand was refused, could not be read (said on stderr), or disagrees; 0 otherwise.
"""

from __future__ import annotations

import argparse

HELP = "Replay PHH hand histories through the feltd engine."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of `feltd phh replay`; heavy imports belong in ``run`` so `--help` stays fast."""
    parser.add_argument("paths", nargs="+", metavar="FILES_OR_DIRS", help=".phh/.phhs files or directories")
    parser.add_argument("--quiet", action="store_true", help="print only the hands that fail and the summary")


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from engine.history.phh import PhhError, loads_phh, loads_phhs
    from engine.history.replay import replay
    from server.cli.files import InputFileError, read_text

    files: list[Path] = []
    for name in args.paths:
        path = Path(name)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in (".phh", ".phhs") and p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise InputFileError(f"{name}: no such file or directory")

    hands = agreed = failed = 0
    for path in files:
        try:
            text = read_text(path)
            loaded = loads_phhs(text, str(path)) if path.suffix == ".phhs" else [loads_phh(text, str(path))]
        except (InputFileError, PhhError) as exc:
            failed += 1
            # On stderr: a file we could not read is an input error, not a replay result.
            print(f"feltd phh replay: UNREADABLE {exc}", file=sys.stderr)
            continue
        for phh in loaded:
            hands += 1
            result = replay(phh)
            if result.error is not None:
                failed += 1
                print(f"{result.label}: NOT REPLAYABLE {result.error}")
            elif result.refused is not None:
                failed += 1
                refused = result.refused
                print(f"{result.label}: REFUSED action {refused.index} {refused.action!r}: {refused.reason}")
            elif not result.agrees:
                failed += 1
                print(
                    f"{result.label}: DISAGREES ours {list(result.finishing_stacks or ())}"
                    f" file {list(result.expected or ())}"
                )
            else:
                agreed += 1
                if not args.quiet:
                    print(f"{result.label}: {list(result.finishing_stacks or ())}")
    print(f"{hands} hands in {len(files)} files: {agreed} agree, {failed} refused or disagree")
    return 1 if failed else 0
