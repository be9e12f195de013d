"""The files a command reads and writes, checked so that a mistake costs one line and no work.

Inputs are read as UTF-8 text, and a file that is not says so with its name. Outputs are checked
before the work starts: a command never overwrites a file that exists, never writes into a
folder that already holds files, and never starts work whose result it could not save.
"""

from __future__ import annotations

import os
from pathlib import Path


class InputFileError(ValueError):
    """An input file that cannot be read as text: missing, a folder, unreadable, or not UTF-8."""


class OutputPathError(ValueError):
    """An output path that exists already or cannot be made."""


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file; ``InputFileError`` naming the file and the reason otherwise."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise InputFileError(f"{path}: {error.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputFileError(
            f"{path}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}); "
            "save it as UTF-8"
        ) from None


def check_new_file(path: str | Path) -> Path:
    """``path`` if a new file can be written there: it does not exist and its folder is writable."""
    target = Path(path)
    if target.exists() or target.is_symlink():
        raise OutputPathError(f"{path}: exists already; feltd does not overwrite, choose a new name")
    _check_folder_of(target, path)
    return target


def check_output_dir(path: str | Path) -> Path:
    """``path`` if files can be written into it: an empty folder, or a new one whose parent is a
    writable folder. Makes nothing (``make_output_dir`` does, once the work is sure to start)."""
    target = Path(path)
    if target.exists():
        if not target.is_dir():
            raise OutputPathError(f"{path}: exists and is not a folder")
        if any(target.iterdir()):
            raise OutputPathError(
                f"{path}: exists and is not empty; feltd does not overwrite, choose a new one"
            )
        if not os.access(target, os.W_OK | os.X_OK):
            raise OutputPathError(f"{path}: is not writable")
        return target
    _check_folder_of(target, path)
    return target


def make_output_dir(target: Path) -> None:
    """Make the folder ``check_output_dir`` accepted (it may exist, empty)."""
    try:
        target.mkdir(exist_ok=True)
    except OSError as error:
        raise OutputPathError(f"{target}: cannot be made ({error.strerror})") from None


def _check_folder_of(target: Path, shown: str | Path) -> None:
    folder = target.absolute().parent
    if not folder.is_dir():
        raise OutputPathError(f"{shown}: cannot be made, its folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(f"{shown}: cannot be made, its folder {str(folder)!r} is not writable")
