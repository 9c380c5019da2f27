"""Keep a :class:`~knowledge.service.KnowledgeBase` on the live generation of a source.

:class:`Follower` owns the store, the HTTP client and the settings; the bot
keeps one for its lifetime (one shared ``httpx`` client) and calls
:meth:`Follower.follow` from a worker thread: fetch, and when a new generation
went live, point the knowledge base at it, update the index incrementally (only
pages whose content changed are parsed and indexed again) and work out what to
announce. Everything here is synchronous and never touches Discord.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import httpx

from knowledge.answers import Links
from knowledge.answers._format import link
from knowledge.paths import data_root
from knowledge.reply import Field, Reply
from knowledge.search import BuildStats
from knowledge.templates import Templates, load_templates
from knowledge.text import inline_code
from knowledge.wiki import Page, Wiki, load_wiki

from .changes import Snapshot, WikiChanges, announcement
from .extract import Caps
from .fetch import CheckFailed, FetchOutcome, fetch_once
from .http import HttpSettings, WikiHttp
from .spec import DEFAULT_API_URL, Source
from .store import Generation, SourceState, Store

__all__ = ["FollowResult", "Follower", "SourceSettings", "fetched_wiki", "source_data_dir"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SourceSettings:
    source: Source
    api_url: str = DEFAULT_API_URL
    caps: Caps = field(default_factory=Caps)
    #: Timeouts and retries; None: the defaults for ``api_url``.
    http: HttpSettings | None = None


@dataclass(frozen=True, slots=True)
class FollowResult:
    outcome: FetchOutcome
    #: The index update, when a new generation went live.
    built: BuildStats | None = None
    changes: WikiChanges = field(default_factory=WikiChanges)
    #: The announcement to post, or None when nothing a user would notice changed.
    announcement: Reply | None = None


class Follower:
    def __init__(
        self,
        settings: SourceSettings,
        data_dir: Path,
        *,
        token: str | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        templates: Templates | None = None,
    ) -> None:
        self.settings = settings
        self.store = Store(data_dir)
        http = settings.http or HttpSettings(api_url=settings.api_url)
        if token is None:
            token = os.environ.get("GITHUB_TOKEN", "").strip() or None
        self.http = WikiHttp(http, token=token, transport=transport, sleep=sleep)
        self.t = templates or load_templates("source.yaml")

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Follower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- generations -----------------------------------------------------------

    def live(self) -> Generation | None:
        """The live generation if it was fetched from this follower's source."""
        live = self.store.live()
        if live is None or live.source != self.settings.source.text:
            return None
        return live

    def fetch(self, check: Callable[[Path], None] | None = None) -> FetchOutcome:
        """One check of the source (raises on failure; the live generation stays)."""
        s = self.settings
        return fetch_once(self.store, s.source, self.http, s.caps, check=check)

    def ensure(self) -> Generation:
        """The live generation, fetching it first if there is none yet (a fresh machine)."""
        live = self.live()
        if live is not None:
            return live
        return self.fetch().live

    # --- following ---------------------------------------------------------------

    def follow(self, kb, *, force: bool = False, progress=None) -> FollowResult:
        """Fetch; on a new generation, switch ``kb`` to it and update its index.

        ``kb`` is a :class:`~knowledge.service.KnowledgeBase` serving this source.
        With ``force`` the index is rebuilt in full even when nothing was fetched.
        """
        old = kb.state
        checked: dict[str, Page] = {}

        def check(tree: Path) -> None:
            checked.update(_check_tree(tree, old.wiki.pages).pages)

        outcome = self.fetch(check=check)
        if not outcome.changed:
            built = kb.reload(force=True, progress=progress) if force else None
            return FollowResult(outcome, built)
        before = Snapshot.of(old.wiki, old.glossary, old.catalogue)
        kb.wiki_dir = outcome.live.path
        kb.links = Links.of(outcome.live.link_base or kb.link_base)
        # The pages the check parsed are not parsed again.
        built = kb.reload(force=force, progress=progress, parsed=checked)
        new = kb.state
        changes = WikiChanges.between(before, Snapshot.of(new.wiki, new.glossary, new.catalogue))
        reply = announcement(
            changes,
            self.t,
            partial(link, kb.t, kb.links),
            commit=outcome.live.commit,
            commit_url=outcome.live.commit_url,
        )
        log.info(
            "wiki now at %s: %s",
            outcome.live.commit[:12] or outcome.live.id[:13],
            changes.summary(),
        )
        return FollowResult(outcome, built, changes, reply)

    # --- status --------------------------------------------------------------------

    def state(self) -> SourceState:
        return self.store.state()

    def status_fields(self) -> tuple[Field, ...]:
        """Fields /wiki status adds: source, commit (linked), fetched, last checked, last error."""
        t = self.t
        live = self.live()
        state = self.store.state()
        if live is not None and live.commit:
            url = live.commit_url
            short = live.commit[:12]
            commit = f"[`{short}`]({url})" if url else inline_code(short)
        elif live is not None:
            commit = inline_code(live.id[:13])
        else:
            commit = t("status.never")
        fields = [
            Field(t("status.source"), inline_code(self.settings.source.text), False),
            Field(t("status.commit"), commit, True),
            Field(t("status.fetched_at"), _when(t, live.fetched_at if live else 0.0), True),
            Field(t("status.checked_at"), _when(t, state.checked_at), True),
        ]
        if state.last_error and state.source == self.settings.source.text:
            fields.append(Field(t("status.last_error"), state.last_error[:1000], False))
        return tuple(fields)

    def status(self, reply: Reply) -> Reply:
        """``reply`` (the knowledge base's status) with the source's fields added."""
        from dataclasses import replace

        return replace(
            reply,
            fields=(*reply.fields, *self.status_fields()),
            meta={**reply.meta, "source": self.settings.source.text, **self._status_meta()},
        )

    def _status_meta(self) -> dict[str, object]:
        live = self.live()
        state = self.store.state()
        return {
            "commit": live.commit if live else None,
            "fetched_at": live.fetched_at if live else None,
            "checked_at": state.checked_at or None,
            "last_error": state.last_error,
        }


def source_data_dir(source: Source) -> Path:
    """The default data folder of a fetched wiki, one per source, under
    :func:`~knowledge.paths.data_root` (as ``default_data_dir`` is for a local folder)."""
    name = f"{source.owner}-{source.repo}" if source.is_github else "url"
    digest = hashlib.sha256(source.text.encode()).hexdigest()[:10]
    return data_root() / f"{name}-{digest}"


def fetched_wiki(data_dir: Path) -> Generation | None:
    """The live fetched generation in ``data_dir``, if a fetch ever succeeded there."""
    return Store(data_dir).live()


def _check_tree(tree: Path, cache: Mapping[str, Page]) -> Wiki:
    """The tree's wiki; refuse one with no readable page (parses only pages that changed)."""
    wiki = load_wiki(tree, cache=cache)
    if not wiki.pages:
        raise CheckFailed("the fetched wiki has no page the bot can read")
    return wiki


def _when(t: Templates, stamp: float) -> str:
    if not stamp:
        return t("status.never")
    return t("status.ago", stamp=int(stamp))
