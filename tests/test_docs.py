"""The docs a clone carries: the README's links resolve inside the repository, and the rule book
the tests are named after is there, with every rule id the tests cite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

RULE_IDS = (
    [f"REG-{n}" for n in range(1, 8)]
    + ["SEAT-1", "SEAT-2", "BTN-1", "BTN-2", "BTN-3", "MOVE-1", "BAL-1", "BRK-1", "BRK-2", "HFH-1"]
    + ["ELIM-1", "ELIM-2", "END-1", "LVL-1", "BRK-T1", "CLK-1", "CLK-2", "CLK-3", "CLK-4"]
    + ["BET-1", "BET-2", "BET-3", "BET-4", "PEN-1", "DEAL-1", "DEAL-2", "DEAL-3", "DEAL-4"]
    + ["CRASH-1", "CANCEL-1"]
)
# A markdown link's target, and a path in backquotes that names something in the repository.
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PATH = re.compile(
    r"`((?:docs|examples|tests|engine|server|protocol|client|\.ci)/[^`\s]*|Dockerfile|docker-compose\.yml)`"
)

# A test named after a rule: test_btn_3_..., test_brk_t1_...
_RULE_TEST = re.compile(
    r"def test_(reg|seat|btn|move|bal|brk_t|brk|hfh|elim|end|lvl|clk|bet|pen|deal|crash|cancel)_?(\d+)_"
)


def _documents(repo_root: Path) -> list[Path]:
    return [repo_root / "README.md", *sorted((repo_root / "docs").glob("*.md"))]


def test_docs_link_only_to_files_in_the_repository(repo_root: Path) -> None:
    broken = []
    for document in _documents(repo_root):
        text = document.read_text(encoding="utf-8")
        for target in _LINK.findall(text):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            path = (document.parent / target.split("#", 1)[0]).resolve()
            if not path.exists() or repo_root not in path.parents:
                broken.append(f"{document.name}: ({target})")
        for name in _PATH.findall(text):
            if not (repo_root / name).exists():
                broken.append(f"{document.name}: `{name}`")
        if "../" in text:
            broken.append(f"{document.name}: refers outside the repository with ../")
    assert not broken, f"links that do not resolve in a clone: {broken}"


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_the_rule_book_defines_every_rule(rule_id: str, repo_root: Path) -> None:
    text = (repo_root / "docs" / "rules.md").read_text(encoding="utf-8")
    assert f"**{rule_id} " in text, f"docs/rules.md has no entry for {rule_id}"


def test_every_rule_a_test_is_named_after_is_in_the_rule_book(repo_root: Path) -> None:
    defined = {rule_id.replace("-", "").lower() for rule_id in RULE_IDS}
    cited = set()
    for test_file in (repo_root / "tests").glob("test_*.py"):
        for prefix, number in _RULE_TEST.findall(test_file.read_text(encoding="utf-8")):
            cited.add(prefix.replace("_", "") + number)
    assert cited, "no test is named after a rule"
    missing = sorted(cited - defined)
    assert not missing, f"tests cite rules docs/rules.md does not define: {missing}"
