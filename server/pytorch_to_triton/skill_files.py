"""Locate the skill files (SKILL.md, references/) in a checkout or in an installed wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def skill_root() -> Path:
    """Directory holding SKILL.md and references/ (the checkout root, or the wheel's bundled copy)."""
    checkout = _PACKAGE.parent.parent  # server/pytorch_to_triton -> repo root
    if (checkout / "SKILL.md").is_file() and (checkout / "references").is_dir():
        return checkout
    bundled = _PACKAGE / "skill_data"
    if (bundled / "SKILL.md").is_file():
        return bundled
    raise FileNotFoundError(
        "SKILL.md not found next to the package or in pytorch_to_triton/skill_data; reinstall the package"
    )


def references_dir() -> Path:
    """The references/ directory of the skill."""
    return skill_root() / "references"
