"""Solved tickets whose marked answer no wiki section holds: pages worth writing, said by
the people who answer. ``wikibot gaps`` prints them and ``/wiki gaps`` shows them, both
from the ticket store of the data folder (when there is one)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knowledge.intake.similar import SolvedAnswer
    from knowledge.wiki import Wiki

__all__ = ["solved_not_in_wiki"]


def solved_not_in_wiki(data_dir: Path, wiki: Wiki) -> list[tuple[SolvedAnswer, str, float]]:
    """The answers marked on solved tickets (the bot's ticket store in ``data_dir``) that
    no section of ``wiki`` is near, each with the nearest section and its cosine; []
    without a store, or when it cannot be opened (``wikibot tickets`` says why)."""
    from knowledge.intake.similar import not_in_wiki
    from knowledge.intake.sqlite import FILE_NAME, SqliteTicketStore
    from knowledge.intake.store import StoreError

    if not (data_dir / FILE_NAME).is_file():
        return []
    try:
        store = SqliteTicketStore.in_folder(data_dir)
    except (StoreError, OSError):
        return []
    try:
        answers = store.solved_answers()
    finally:
        store.close()
    return not_in_wiki(answers, wiki) if answers else []
