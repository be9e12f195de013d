"""Regenerate ``engine/evaluator_tables.bin`` from ``engine.evaluator_tables.build_tables()``.

Run from the repository root after changing the key layout or the value encoding:
``.venv/bin/python scripts/build_evaluator_tables.py``. ``tests/test_evaluator.py`` fails
while the shipped file differs from a fresh build.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.evaluator_tables import build_tables, dump_tables


def main() -> int:
    target = Path(__file__).resolve().parent.parent / "engine" / "evaluator_tables.bin"
    data = dump_tables(build_tables())
    target.write_bytes(data)
    print(f"wrote {target} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
