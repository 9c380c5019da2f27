"""Refuse to run with this project's packages taken from two different places.

The project installs three generic top-level packages, ``bot``, ``knowledge``
and ``templates``. The ``wikibot`` command is safe from look-alikes: a console
script puts its own folder, not the working directory, first on ``sys.path``.
``python -m bot`` does put the working directory first, so started from, say, a
web project with its own ``templates/`` package, the bot would read that
project's files as its wording. :func:`check_install` notices when the three
packages do not sit side by side and stops with one line saying which one came
from where; ``python -P -m bot`` (or ``wikibot``) avoids it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["PACKAGES", "check_install", "misplaced_packages"]

#: The top-level packages this project installs; they must come from one folder.
PACKAGES = ("bot", "knowledge", "templates")


def _home(name: str) -> Path | None:
    """The folder holding package ``name`` as Python would import it (None: not found)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve().parent


def misplaced_packages() -> dict[str, Path | None]:
    """Packages of :data:`PACKAGES` not imported from the folder holding this ``bot``."""
    home = Path(__file__).resolve().parent.parent
    found = {name: _home(name) for name in PACKAGES}
    return {name: where for name, where in found.items() if where != home}


def check_install() -> None:
    """Raise ``SystemExit`` naming any package that is not beside ``bot``.

    The message is written here, not in ``templates/``: the wording files are
    exactly what may have come from the wrong place.
    """
    misplaced = misplaced_packages()
    if not misplaced:
        return
    home = Path(__file__).resolve().parent.parent
    where = ", ".join(
        f"{name!r} from {path / name if path else 'nowhere'}" for name, path in misplaced.items()
    )
    raise SystemExit(
        f"wikibot: {where}, not from {home} like 'bot'; another folder on sys.path"
        " (the working directory with `python -m`) holds a package of the same name."
        " Run `wikibot` or `python -P -m bot` instead."
    )
