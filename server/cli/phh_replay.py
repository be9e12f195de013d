"""`feltd phh replay`: replay PHH hand histories through the feltd engine.

Each hand of each ``.phh``/``.phhs`` file (directories are searched recursively) is played through
our engine with the cards it names. Per hand it prints our finishing stacks (in the file's own
unit, e.g. dollars and cents) and the replay's notes, or the action our engine refused and why,
or where our stacks differ from the file's ``finishing_stacks``. A hand our rules play differently
from the file's site in a documented case (``ReplayResult.departure``) is printed as DEPARTS with
the rule. The exit status is 1 if any hand was refused, could not be read, or disagrees other
than by such a departure; 0 otherwise. A file that cannot be read is said on stderr.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

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

    hands = agreed = failed = at_stacks = incomplete = noted = departed = 0
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
            notes = "".join(f"\n  note: {note}" for note in result.notes)
            if result.departure is not None:
                departed += 1
                where = "" if result.refused is None else f" at action {result.refused.index}"
                ours = (
                    ""
                    if result.refused is not None
                    else f" ours {_amounts(result.finishing_stacks, result.scale)}"
                )
                theirs = f" file {_amounts(result.expected, result.scale)}"
                print(f"{result.label}: DEPARTS{where} ({result.departure}){ours}{theirs}{notes}")
            elif result.error is not None:
                failed += 1
                print(f"{result.label}: NOT REPLAYABLE {result.error}")
            elif result.refused is not None:
                failed += 1
                refused = result.refused
                what = f"action {refused.index} {refused.action!r}"
                print(f"{result.label}: REFUSED {what}: {refused.reason}{notes}")
            elif not result.agrees:
                failed += 1
                print(
                    f"{result.label}: DISAGREES ours {_amounts(result.finishing_stacks, result.scale)}"
                    f" file {_amounts(result.expected, result.scale)}{notes}"
                )
            else:
                agreed += 1
                at_stacks += result.expected is not None
                incomplete += not result.complete
                noted += bool(result.notes)
                if not args.quiet:
                    print(f"{result.label}: {_amounts(result.finishing_stacks, result.scale)}{notes}")
    print(
        f"{hands} hands in {len(files)} files: {agreed + departed} accepted ({at_stacks} at the file's"
        f" finishing stacks, {incomplete} cut short, {noted} with notes, {departed} departing by a"
        f" documented rule difference), {failed} refused or disagree"
    )
    return 1 if failed else 0


def _amounts(stacks: Sequence[int | None] | None, scale: int) -> str:
    from engine.history.phh import format_amount

    if stacks is None:
        return "-"
    return "[" + ", ".join(format_amount(stack, scale) for stack in stacks) + "]"
