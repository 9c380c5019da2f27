"""Entry point of the process that writes a full build of the search index.

:func:`knowledge.search.index._write_in_child` starts it with the parent's interpreter as
``python -P -m knowledge.search.child --fd N GEN_DIR``, where ``N`` is this end of a
socket pair and ``GEN_DIR`` the empty generation directory to fill. Nothing of
the calling program is imported here (a multiprocessing "spawn" child would
re-import the caller's ``__main__``), so scripts that build a big index need no
``if __name__ == "__main__":`` guard. The messages both ways are described at
:func:`knowledge.search.index._child_build`, which does the work.
"""

from __future__ import annotations

import argparse
import logging
from multiprocessing.connection import Connection

from knowledge.search.index import _child_build

__all__ = ["main"]

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    """Build one generation as told over ``--fd``; 0 once the commit is reported, else 1."""
    parser = argparse.ArgumentParser(
        prog="python -m knowledge.search.child",
        description="Write a full index build sent by knowledge.search.index (internal).",
    )
    parser.add_argument(
        "--fd", type=int, required=True, help="inherited socket connected to the parent"
    )
    parser.add_argument("gen_dir", help="empty generation directory to fill")
    args = parser.parse_args(argv)
    return _child_build(Connection(args.fd), args.gen_dir)


if __name__ == "__main__":
    raise SystemExit(main())
