"""The bot with ``wiki.source``: first fetch on a fresh machine, following, announcing,
``/wiki status`` and ``/wiki reindex``, end to end through the Discord stand-in and a
loopback imitation of GitHub's API."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.client import WikiBot
from bot.config import BotConfig, parse_config
from knowledge.service import demo_wiki_dir
from tests.bot.helpers import embed_of
from tests.discord_standin import DEFAULT_IDS
from tests.github_standin import github_standin, tarball, tree_files
from tests.source_edits import invisible_edit, visible_edits

TICK = 0.05
WAIT = 120.0  # a hang guard, not a speed limit: reindexing takes seconds on a busy machine


@pytest.fixture
def gh(monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    with github_standin() as standin:
        yield standin


def source_config(tmp_path: Path, gh, **wiki) -> BotConfig:
    data = {
        "discord": {
            "guild_ids": [DEFAULT_IDS.guild],
            "admin_role_ids": [DEFAULT_IDS.role_moderator],
        },
        "wiki": {
            "source": "github:owner/wiki",
            "api_url": gh.url,
            "data_dir": str(tmp_path / "data"),
            "announce_channel": DEFAULT_IDS.announcements,
            **wiki,
        },
        "cooldown": {"rate": 100, "per": 1},
    }
    return parse_config(data, name="test-config")


def factory(config: BotConfig, **kwargs):
    def make(**standin_kwargs) -> WikiBot:
        return WikiBot(config, **kwargs, **standin_kwargs)

    return make


def announcements(standin) -> list[dict]:
    return standin.channel_messages(DEFAULT_IDS.announcements)


def test_a_fresh_machine_fetches_follows_and_announces(discord_standin, tmp_path, gh):
    discord_standin.config.startup_timeout = WAIT
    files = tree_files(demo_wiki_dir())
    first = gh.publish("owner", "wiki", "main", tarball(files))
    visible = visible_edits(files)

    async def scenario(standin):
        bot = standin.client
        kb = bot.kb
        assert kb.wiki.root == (tmp_path / "data" / "fetched" / f"c-{first}").resolve()
        status = await standin.slash("wiki status")
        # A commit users would notice: one announcement.
        second = gh.publish("owner", "wiki", "main", tarball(visible))
        await standin.wait_until(
            lambda: announcements(standin) or None, what="the announcement", timeout=WAIT, poll=0.02
        )
        runbook = await standin.slash("runbook", model="qwen3")
        # A commit nobody would notice: followed, not announced.
        third = gh.publish("owner", "wiki", "main", tarball(invisible_edit(visible)))
        live = tmp_path / "data" / "fetched" / f"c-{third}"
        await standin.wait_until(
            lambda: kb.wiki.root == live.resolve() or None,
            what="the third commit",
            timeout=WAIT,
            poll=0.02,
        )
        checks = gh.count("/commits/")
        await standin.wait_until(
            lambda: gh.count("/commits/") >= checks + 2 or None,
            what="two more checks",
            timeout=WAIT,
            poll=0.02,
        )
        return status, second, runbook, announcements(standin), standin.mentions

    status, second, runbook, posted, mentions = discord_standin.run(
        factory(source_config(tmp_path, gh), refresh_interval=TICK), scenario
    )
    fields = {f["name"]: f["value"] for f in embed_of(status.response.message)["fields"]}
    assert fields["Source"] == "`github:owner/wiki`"
    assert fields["Commit"] == f"[`{first[:12]}`]({gh.url}/owner/wiki/commit/{first})"
    assert fields["Fetched"].startswith("<t:") and fields["Last checked"].startswith("<t:")
    assert "Last error" not in fields

    (message,) = posted
    embed = embed_of(message)
    assert embed["title"] == "The wiki changed"
    assert embed.get("url") == f"{gh.url}/owner/wiki/commit/{second}"
    names = [f["name"] for f in embed["fields"]]
    assert names == ["Runbooks", "New runbook families", "New glossary terms", "New known errors"]
    assert f"{gh.url}/owner/wiki/blob/{second}/models/qwen3_v3.md" in embed["fields"][0]["value"]
    (mention,) = [m for m in mentions if m.route == "channel_message"]
    assert mention.allowed_mentions is not None and mention.pings == []

    answer = embed_of(runbook.response.message)
    assert "orchard-v4-cu130-20261101" in str(answer), "answers follow the new commit"


def test_wiki_reindex_fetches_first_and_status_shows_the_last_error(discord_standin, tmp_path, gh):
    from tests.github_standin import Fault

    discord_standin.config.startup_timeout = WAIT
    files = tree_files(demo_wiki_dir())
    first = gh.publish("owner", "wiki", "main", tarball(files))

    async def scenario(standin):
        second = gh.publish("owner", "wiki", "main", tarball(visible_edits(files)))
        reindex = await standin.slash("wiki reindex", user_id=DEFAULT_IDS.owner)
        await reindex.wait_for(
            lambda r: r.method == "PATCH" and (r.json or {}).get("embeds"),
            what="the result",
            timeout=WAIT,
        )
        gh.fault("commits", *[Fault(500)] * 4)
        failed = await standin.slash("wiki reindex", user_id=DEFAULT_IDS.owner)
        await failed.wait_for(
            lambda r: r.method == "PATCH" and (r.json or {}).get("embeds"),
            what="the result",
            timeout=WAIT,
        )
        status = await standin.slash("wiki status")
        return second, reindex.original, failed.original, status, announcements(standin)

    second, done, failed, status, posted = discord_standin.run(
        factory(source_config(tmp_path, gh), refresh_interval=0), scenario
    )
    assert f"Fetched the new commit `{second[:12]}`" in embed_of(done)["description"]
    assert len(posted) == 1, "the reindex announced the change it fetched"
    assert "Fetching from the source failed" in embed_of(failed)["description"]
    assert "server error (500)" in embed_of(failed)["description"]
    fields = {f["name"]: f["value"] for f in embed_of(status.response.message)["fields"]}
    assert "server error (500)" in fields["Last error"]
    assert second[:12] in fields["Commit"] and first[:12] not in fields["Commit"]
