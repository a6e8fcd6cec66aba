"""Locate the skill files (SKILL.md, references/) in an installed wheel or in a checkout.

The canonical files live at the repository root (SKILL.md, references/*.md), where Claude Code's plugin
loader and people read them. A wheel carries a copy as package data in ``pytorch_to_triton/skill_data/``:
pyproject.toml maps the package ``pytorch_to_triton.skill_data`` onto the repository root and ships only
``SKILL.md`` and ``references/*.md`` from it, so there is no second copy to keep in sync in the tree.
An editable install or a plain checkout has no ``skill_data/`` directory and falls back to the root.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
BUNDLED_DIR = "skill_data"


def _is_skill_dir(path: Path) -> bool:
    return (path / "SKILL.md").is_file() and (path / "references").is_dir()


def skill_root() -> Path:
    """Directory holding SKILL.md and references/ (the wheel's bundled copy, else the checkout root)."""
    bundled = _PACKAGE / BUNDLED_DIR
    if _is_skill_dir(bundled):
        return bundled
    checkout = _PACKAGE.parent.parent  # server/pytorch_to_triton -> repo root
    if _is_skill_dir(checkout) and (checkout / "pyproject.toml").is_file():
        return checkout
    raise FileNotFoundError(
        f"SKILL.md not found in {bundled} nor in a checkout at {checkout}; reinstall the package"
    )


def references_dir() -> Path:
    """The references/ directory of the skill."""
    return skill_root() / "references"


def skill_files() -> list[tuple[str, Path]]:
    """Every file of the skill as (path relative to the skill directory, absolute source path)."""
    root = skill_root()
    files = [("SKILL.md", root / "SKILL.md")]
    files += [(f"references/{p.name}", p) for p in sorted((root / "references").glob("*.md")) if p.is_file()]
    return files
