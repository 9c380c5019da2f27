"""Starting this package's own worker processes (the index build, the page parse helper).

Each is a fresh interpreter running ``python -P -m knowledge.<module>``, never a fork
(the bot has threads), and must import the very copy of ``knowledge`` that this
process runs, from whatever working directory and however this one found it.
"""

from __future__ import annotations

import os
import site
from pathlib import Path

__all__ = ["package_env"]


def package_env() -> dict[str, str]:
    """This process's environment, with the folder holding this package on PYTHONPATH.

    So a worker imports the very copy of ``knowledge`` that this process runs (an
    install, an editable install, a checkout on ``sys.path``). A site-packages folder
    is left out: the worker finds it anyway, and on PYTHONPATH it would come before
    the standard library.
    """
    env = dict(os.environ)
    root = Path(__file__).resolve().parents[1]
    sites = [*getattr(site, "getsitepackages", list)(), site.getusersitepackages()]
    if all(Path(folder).resolve() != root for folder in sites if folder):
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(root), env.get("PYTHONPATH"))))
    return env
