"""Where the wiki comes from: ``github:OWNER/REPO[@REF]`` or an ``https://`` URL of a ``.tar.gz``.

A GitHub source is followed through the REST API (``api_url``, GitHub's own by
default, GitHub Enterprise's ``https://HOST/api/v3`` or a loopback server in
tests): the ref is resolved to a commit, then that commit's tarball is
downloaded. A URL source is downloaded as it is, with ``If-None-Match`` so an
unchanged archive costs a 304.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

__all__ = ["DEFAULT_API_URL", "Source", "SourceError", "check_api_url", "parse_source"]

DEFAULT_API_URL = "https://api.github.com"

# GitHub's rules: owner 1-39 of [A-Za-z0-9-], repository 1-100 of [A-Za-z0-9._-].
_GITHUB = re.compile(
    r"github:(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/(?P<repo>[A-Za-z0-9._-]{1,100})"
    r"(?:@(?P<ref>[^\s@]{1,200}))?"
)
# A ref may hold slashes (feature/x) but no part git refuses to name.
_BAD_REF = re.compile(r"(^[/.-]|\.\.|//|[\x00-\x20~^:?*\[\\]|@\{|/$|\.lock$|\.$)")


class SourceError(ValueError):
    """A source that cannot be used; the message says what is wrong with it."""


@dataclass(frozen=True, slots=True)
class Source:
    #: ``github`` or ``url``.
    kind: str
    #: The text as written in the config (never holds credentials).
    text: str
    owner: str = ""
    repo: str = ""
    #: Branch, tag or commit; empty for the repository's default branch.
    ref: str = ""
    #: The tarball URL of a ``url`` source.
    url: str = ""

    @property
    def is_github(self) -> bool:
        return self.kind == "github"

    def commit_path(self) -> str:
        """API path answering the ref's commit (``HEAD`` for the default branch)."""
        return f"/repos/{self.owner}/{self.repo}/commits/{quote(self.ref or 'HEAD', safe='')}"

    def tarball_path(self, commit: str) -> str:
        return f"/repos/{self.owner}/{self.repo}/tarball/{commit}"

    def web_base(self, api_url: str) -> str:
        """The repository's web address (``https://github.com/OWNER/REPO``), for links."""
        base = api_url.rstrip("/")
        parts = urlsplit(base)
        if parts.netloc == "api.github.com":
            host = "https://github.com"
        elif parts.path.endswith("/api/v3"):
            host = base[: -len("/api/v3")]
        else:
            host = base
        return f"{host}/{self.owner}/{self.repo}"

    def commit_url(self, api_url: str, commit: str) -> str | None:
        return f"{self.web_base(api_url)}/commit/{commit}" if self.is_github else None

    def page_base(self, api_url: str, commit: str) -> str | None:
        """Where page links point: the pages as they are at ``commit``."""
        return f"{self.web_base(api_url)}/blob/{commit}/" if self.is_github else None


def parse_source(text: str) -> Source:
    """``github:OWNER/REPO@REF`` or ``https://.../x.tar.gz``; :class:`SourceError` otherwise."""
    if not isinstance(text, str):
        raise SourceError(f"must be text such as github:OWNER/REPO@REF, got {text!r}")
    text = text.strip()
    if text.startswith("github:"):
        m = _GITHUB.fullmatch(text)
        if m is None:
            raise SourceError(f"not github:OWNER/REPO or github:OWNER/REPO@REF: {text!r}")
        ref = m["ref"] or ""
        if ref and _BAD_REF.search(ref):
            raise SourceError(f"not a branch, tag or commit name: {ref!r}")
        if m["repo"] in (".", ".."):
            raise SourceError(f"not a repository name: {m['repo']!r}")
        return Source("github", text, owner=m["owner"], repo=m["repo"], ref=ref)
    parts = urlsplit(text)
    if parts.hostname and (
        parts.scheme == "https" or (parts.scheme, _loopback(parts.hostname)) == ("http", True)
    ):
        if parts.username or parts.password:
            raise SourceError("the URL must not hold a user name or password")
        if not parts.path.endswith((".tar.gz", ".tgz")):
            raise SourceError(f"the URL must name a .tar.gz archive: {text!r}")
        return Source("url", text, url=text)
    if parts.scheme == "http":
        raise SourceError("plain http:// is refused (except on loopback); use https://")
    raise SourceError(
        f"expected github:OWNER/REPO[@REF] or an https:// URL of a .tar.gz, got {text!r}"
    )


def check_api_url(text: str) -> str:
    """An API base URL: https, or http on a loopback address (tests, local mirrors)."""
    parts = urlsplit(text.strip())
    if not parts.hostname or not (
        parts.scheme == "https" or (parts.scheme == "http" and _loopback(parts.hostname))
    ):
        raise SourceError(f"the API URL must be https:// (http:// only on loopback): {text!r}")
    if parts.username or parts.password:
        raise SourceError("the API URL must not hold a user name or password")
    return text.strip().rstrip("/")


def _loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1")
