"""Refuse to run with this project's packages taken from two different places, or
owned by another installed distribution too.

The project installs three generic top-level packages, ``bot``, ``knowledge``
and ``templates`` (and ``wikibot``, for ``python -m wikibot``). The ``wikibot``
command is safe from look-alikes: a console script puts its own folder, not the
working directory, first on ``sys.path``. ``python -m bot`` does put the working
directory first, so started from, say, a web project with its own ``templates/``
package, the bot would read that project's files as its wording.
:func:`check_install` notices when the packages do not sit side by side and stops
with one line saying which one came from where; ``python -P -m bot`` (or ``wikibot``) avoids it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

__all__ = [
    "DISTRIBUTION",
    "PACKAGES",
    "check_install",
    "foreign_owners",
    "misplaced_packages",
    "package_version",
]

#: The top-level packages this project installs; they must come from one folder.
PACKAGES = ("bot", "knowledge", "templates", "wikibot")
#: The distribution that installs them (pyproject.toml's ``project.name``).
DISTRIBUTION = "rtx6k-wikibot"


def package_version() -> str:
    """The installed version (``wikibot --version``), or a note when run from a folder."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed: run from a source folder)"


def _normal(name: str) -> str:
    return name.replace("_", "-").replace(".", "-").casefold()


def foreign_owners() -> dict[str, list[str]]:
    """Packages of :data:`PACKAGES` that another installed distribution also installs,
    with those distributions' names (top_level.txt, else the first folder of each file
    in RECORD)."""
    found: dict[str, list[str]] = {}
    for dist in importlib.metadata.distributions():
        top = dist.read_text("top_level.txt")
        if top is not None:
            tops = set(top.split())
        else:
            record = dist.read_text("RECORD") or ""
            tops = {line.split("/", 1)[0] for line in record.splitlines() if "/" in line}
        clashes = [name for name in PACKAGES if name in tops]
        if not clashes:
            continue
        owner = dist.metadata["Name"] or "?"
        if _normal(owner) == DISTRIBUTION:
            continue
        for name in clashes:
            found.setdefault(name, []).append(f"{owner} {dist.version}")
    return found


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


def check_install(*, owners: bool = False) -> None:
    """Raise ``SystemExit`` naming any package that is not beside ``bot``, and with
    ``owners`` any that another installed distribution owns too.

    The message is written here, not in ``templates/``: the wording files are
    exactly what may have come from the wrong place.
    """
    clashes = foreign_owners() if owners else {}
    if clashes:
        which = "; ".join(f"{name!r} also by {', '.join(d)}" for name, d in clashes.items())
        raise SystemExit(
            f"wikibot: packages of {DISTRIBUTION} are installed by other distributions too"
            f" ({which}), so their files may be mixed. Install the bot in its own virtual"
            " environment (python -m venv) or run the Docker image."
        )
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
