"""The wiki fetched from its source (GitHub or an https tarball) and followed.

- :mod:`.spec`: ``github:OWNER/REPO@REF`` or ``https://.../x.tar.gz``.
- :mod:`.http`: the httpx client, GitHub's API, rate limits, retries, capped downloads.
- :mod:`.extract`: safe, streaming extraction of the tarball within caps.
- :mod:`.store`: generation folders and the atomically swapped ``live`` pointer.
- :mod:`.fetch`: one check of the source, end to end.
- :mod:`.changes`: what users would notice between two generations, and the announcement.
- :mod:`.follow`: a knowledge base kept on the live generation.

Nothing here imports discord.
"""

from .changes import Snapshot, WikiChanges, announcement
from .extract import ArchiveError, Caps, Extracted, extract_tarball
from .fetch import CheckFailed, FetchOutcome, fetch_once
from .follow import Follower, FollowResult, SourceSettings
from .http import FetchError, HttpSettings, NotFound, RateLimited, TooLarge, WikiHttp
from .spec import DEFAULT_API_URL, Source, SourceError, check_api_url, parse_source
from .store import FETCHED_DIR, Generation, SourceState, Store, StoreBusy

__all__ = [
    "DEFAULT_API_URL",
    "FETCHED_DIR",
    "ArchiveError",
    "Caps",
    "CheckFailed",
    "Extracted",
    "FetchError",
    "FetchOutcome",
    "FollowResult",
    "Follower",
    "Generation",
    "HttpSettings",
    "NotFound",
    "RateLimited",
    "Snapshot",
    "Source",
    "SourceError",
    "SourceSettings",
    "SourceState",
    "Store",
    "StoreBusy",
    "TooLarge",
    "WikiChanges",
    "WikiHttp",
    "announcement",
    "check_api_url",
    "extract_tarball",
    "fetch_once",
    "parse_source",
]
