"""Metrics: a Prometheus scrape of the bot's endpoint, and /wiki stats, through the stand-in."""

from __future__ import annotations

import asyncio
import dataclasses
import re

import httpx
import pytest

from bot.config import MetricsConfig
from knowledge.service import KnowledgeBase, demo_wiki_dir
from tests.bot.helpers import EPHEMERAL, LINK_BASE, embed_of
from tests.bot.test_support import button_id, factory, through_step_1, through_step_2
from tests.discord_standin import DEFAULT_IDS

QUERY = "nccl zebrafish-private-words"


@pytest.fixture
def data(tmp_path):
    """A data folder with the demo wiki's index (the tickets land here too)."""
    folder = tmp_path / "data"
    KnowledgeBase.open(demo_wiki_dir(), folder, link_base=LINK_BASE).close()
    return folder


def _with_metrics(make):
    def wrapped(**kwargs):
        bot = make(**kwargs)
        # Port 0: any free port on loopback (the config itself refuses 0).
        bot.config = dataclasses.replace(bot.config, metrics=MetricsConfig(port=0))
        return bot

    return wrapped


async def _scrape(bot) -> str:
    host, port = bot.metrics.address
    assert host == "127.0.0.1", "loopback by default"
    async with httpx.AsyncClient() as client:
        response = await client.get(f"http://{host}:{port}/metrics")
    assert response.status_code == 200
    return response.text


def _value(text: str, sample: str) -> float:
    match = re.search(rf"^{re.escape(sample)} (\S+)$", text, re.M)
    assert match, f"{sample} not in the scrape"
    return float(match.group(1))


def test_a_scrape_counts_commands_requests_tickets_the_wiki_and_memory(discord_standin, data):
    async def scenario(ds):
        bot = ds.client
        await ds.slash("search", query=QUERY)
        await ds.slash("acronym", term="DCP")
        await ds.slash("wiki reindex", user_id=DEFAULT_IDS.alice)  # refused: not an admin
        # One request answered by the wiki, one filed.
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        solved = await ds.press(check, button_id(check, "This solved it"))
        await solved.answer()
        _, _, saved = await through_step_1(ds, model="glm")
        _, check = await through_step_2(ds, saved)
        await ds.press(check, button_id(check, "File the ticket"))
        post = await ds.wait_for_request(lambda r: r.route == "create_thread")
        thread_id = int(post.response["id"])
        await ds.user_message("more details", author_id=DEFAULT_IDS.alice, channel_id=thread_id)
        await ds.user_message("try TP4", author_id=DEFAULT_IDS.mod, channel_id=thread_id)
        await ds.user_message("a second reply", author_id=DEFAULT_IDS.mod, channel_id=thread_id)
        await ds.settle()
        await asyncio.sleep(0.1)
        return await _scrape(bot)

    text = discord_standin.run(_with_metrics(factory(data)), scenario)
    assert _value(text, 'wikibot_commands_total{command="search",outcome="ok"}') == 1
    assert _value(text, 'wikibot_commands_total{command="acronym",outcome="ok"}') == 1
    assert _value(text, 'wikibot_commands_total{command="wiki reindex",outcome="refused"}') == 1
    assert _value(text, 'wikibot_command_seconds_count{command="search"}') == 1
    assert 'wikibot_command_seconds_bucket{command="search",le="0.5"}' in text
    assert _value(text, 'wikibot_support_requests{outcome="deflected"}') == 1
    assert _value(text, 'wikibot_support_requests{outcome="filed"}') == 1
    assert _value(text, 'wikibot_tickets{status="open"}') == 1
    # The asker's own message does not count; the helper's first does, once.
    assert _value(text, "wikibot_ticket_first_reply_seconds_count") == 1
    assert _value(text, "wikibot_wiki_pages") > 10
    assert _value(text, "wikibot_wiki_generation") == 1
    assert _value(text, "wikibot_wiki_age_seconds") >= 0
    assert _value(text, "wikibot_index_build_seconds") >= 0
    assert re.search(r'^wikibot_wiki_info\{revision="\w+"\} 1\.0$', text, re.M)
    assert _value(text, "process_resident_memory_bytes") > 10e6
    # No user text in any label or value.
    assert "zebrafish" not in text and "more details" not in text and "GLM-5 dies" not in text


def test_wiki_stats_shows_the_same_figures_to_admins_only(discord_standin, data):
    async def scenario(ds):
        await ds.slash("search", query=QUERY)
        refused = await ds.slash("wiki stats", user_id=DEFAULT_IDS.alice)
        shown = await ds.slash("wiki stats", user_id=DEFAULT_IDS.mod)
        return refused.response.message, shown.response.message

    refused, shown = discord_standin.run(factory(data), scenario)
    assert refused["flags"] & EPHEMERAL and "Manage Server" in embed_of(refused)["description"]
    assert shown["flags"] & EPHEMERAL
    embed = embed_of(shown)
    assert embed["title"] == "Bot figures"
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    commands = fields["Commands (count by outcome, mean time)"]
    assert "`/search`: ok 1" in commands and "`/wiki stats`: refused 1" in commands
    assert "0 answered by the wiki, 0 filed" in fields["Support requests"]
    assert "pages at revision" in fields["Wiki"] and "MB resident" in fields["Memory"]
    assert fields["Errors"] == "none yet"


def test_a_metrics_port_already_taken_is_logged_and_the_bot_serves_anyway(caplog):
    import socket

    from bot.metrics import BotMetrics

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        metrics = BotMetrics(bot=None)
        with caplog.at_level("ERROR", logger="bot.metrics"):
            metrics.start("127.0.0.1", taken.getsockname()[1])
        metrics.stop()
    finally:
        taken.close()
    assert metrics.address is None
    assert "cannot listen on 127.0.0.1" in caplog.text
