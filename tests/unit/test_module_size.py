"""A module of the plugin stays within 400 lines (issue 40): a longer one holds more than one idea and is
split by idea. The rule covers the code that ships, `ltm/` and `components/`; every offender is named
with its line count, so one run lists all there is to split.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400
CHECKED = ("ltm", "components")


def oversized(root: Path, folders: tuple[str, ...] = CHECKED) -> list[str]:
    """`path: N lines` for each Python module under `folders` of `root` longer than `MAX_LINES`."""
    found = []
    for folder in folders:
        for module in sorted((root / folder).rglob("*.py")):
            lines = len(module.read_text(encoding="utf-8").splitlines())
            if lines > MAX_LINES:
                found.append(f"{module.relative_to(root).as_posix()}: {lines} lines")
    return found


def test_no_module_of_the_plugin_is_over_400_lines() -> None:
    offenders = oversized(ROOT)
    assert not offenders, f"over {MAX_LINES} lines (split by idea): " + "; ".join(offenders)


def test_the_check_names_each_module_over_the_limit_and_only_those(tmp_path: Path) -> None:
    (tmp_path / "ltm" / "sub").mkdir(parents=True)
    (tmp_path / "components").mkdir()
    (tmp_path / "ltm" / "at_limit.py").write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    (tmp_path / "ltm" / "sub" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    (tmp_path / "components" / "longer.py").write_text("x = 1\n" * 450, encoding="utf-8")
    (tmp_path / "ltm" / "notes.txt").write_text("x\n" * 900, encoding="utf-8")  # not a module
    assert oversized(tmp_path) == ["ltm/sub/long.py: 401 lines", "components/longer.py: 450 lines"]
