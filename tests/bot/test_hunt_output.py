"""Hostile input against what the bot sends Discord, end to end through the stand-in.

Each test drives the real bot through discord.py against the loopback stand-in (its
OpenAPI check on) with input a user (or the wiki) could give, and asserts on the JSON
that reached Discord: nothing Discord would refuse, nothing that pings, no user text
rendered as Markdown in the bot's voice, no escape shown as a stray backslash.
"""

from __future__ import annotations

import re

import pytest

from knowledge.text import escape_markdown
from tests.bot import test_support
from tests.bot.helpers import bot_factory, embed_of
from tests.bot.test_support import STEP1, button_id, factory, through_step_2
from tests.discord_standin import DEFAULT_IDS

# The data folders of test_support: the demo wiki's index built once, copied per test.
base_data = test_support.base_data
data = test_support.data

#: A masked link, an unbalanced code fence, emphasis and mentions in one line.
HOSTILE = (
    f"[free nitro](https://evil.example/x) ``` **bold _it ~~gone ||hidden @everyone"
    f" <@&{DEFAULT_IDS.role_moderator}> <@{DEFAULT_IDS.mod}>"
)
#: An inline code span of a reply: what Discord shows between single backticks.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def code_spans(text: str) -> list[str]:
    return _CODE_SPAN.findall(text)


def assert_no_backslash_in_code(text: str) -> None:
    """Inside a code span Discord shows a backslash as it is: an escape there is a stray
    ``\\`` in front of the user's or the wiki's own characters."""
    for span in code_spans(text):
        assert "\\" not in span, f"a backslash shows inside the code span `{span}` of {text!r}"


# --- /ticket list: a ticket's title is the asker's own first line ---------------------------


def test_ticket_list_shows_a_hostile_title_as_text_not_as_a_link_or_a_fence(discord_standin, data):
    async def scenario(ds):
        opened = await ds.slash("support")
        submitted = await ds.submit_modal(opened, {**STEP1, "text": HOSTILE})
        saved = (await submitted.answer()).shown
        _, check = await through_step_2(ds, saved)
        await (await ds.press(check, button_id(check, "File the ticket"))).answer()
        await ds.wait_for_request(lambda r: r.route == "create_thread")
        listed = await ds.slash("ticket list", user_id=DEFAULT_IDS.mod)
        return (await listed.answer()).shown

    listed = discord_standin.run(factory(data), scenario)
    text = embed_of(listed)["description"]
    assert "#1" in text and "free nitro" in text, text
    assert "[free nitro](https://evil.example/x)" not in text, "a link in the bot's voice"
    assert "```" not in text, "an unclosed fence turns every later ticket into code"
    assert "**bold" not in text and "||hidden" not in text
    pings = [p for message in discord_standin.last.pings for p in message.pings]
    assert pings == [f"<@{DEFAULT_IDS.alice}>"], "only the asker, on the post"


# --- /support model: whitespace is no model ------------------------------------------------


def test_support_with_a_blank_model_opens_the_form(discord_standin, data):
    async def scenario(ds):
        return (await ds.slash("support", model="   ")).response

    response = discord_standin.run(factory(data), scenario)
    assert response.callback_type == 9, f"a blank model answered {response.json}"


# --- code spans: what is shown between backticks is shown as it is -------------------------


def test_echoed_queries_in_code_spans_show_no_backslashes(discord_standin):
    async def scenario(ds):
        sent = []
        for command, options in (
            ("runbook", {"model": "no-such_model"}),
            ("acronym", {"term": "FP8-KV_x"}),
            ("search", {"query": "zzqx_foo-bar"}),
            ("search", {"query": "nccl", "section": "no-such_section"}),
        ):
            record = await ds.slash(command, **options)
            sent.append(embed_of((await record.answer()).shown))
        return sent

    for embed in discord_standin.run(bot_factory(), scenario):
        shown = embed["title"] + "\n" + (embed.get("description") or "")
        assert code_spans(shown), f"the query is echoed in a code span: {shown!r}"
        assert_no_backslash_in_code(shown)
        typed = ("no-such_model", "FP8-KV_x", "zzqx_foo-bar", "no-such_section")
        assert any(q in shown for q in typed), shown


def test_a_pasted_error_quotes_the_wiki_error_without_backslashes(discord_standin):
    error = "NCCL error: unhandled system error"

    async def scenario(ds):
        record = await ds.slash(
            "search", query=f"my server stops with {error} while ncclCommInitRank runs"
        )
        return embed_of((await record.answer()).shown)

    embed = discord_standin.run(bot_factory(), scenario)
    first = embed["fields"][0]["value"]
    assert f"`{error}`" in first, first
    for field in embed["fields"]:
        assert_no_backslash_in_code(field["value"])


# --- /search with nothing to search: a sentence from the templates, not an internal code -----


def test_a_search_of_only_punctuation_says_what_to_type(discord_standin):
    from knowledge.search import PROBLEM_EMPTY, PROBLEM_NO_WORDS

    async def scenario(ds):
        record = await ds.slash("search", query="!!! ??? ... --")
        return (await record.answer()).shown

    message = discord_standin.run(bot_factory(), scenario)
    embed = embed_of(message)
    assert message["flags"] & 64, "only the asker sees it"
    assert embed["description"] not in (PROBLEM_EMPTY, PROBLEM_NO_WORDS), embed
    assert "word" in embed["description"]


# --- /runbook: a model the wiki lacks gets no other family's launch command ----------------


def test_runbook_for_a_model_sharing_only_a_number_with_a_family_is_not_found(discord_standin):
    """``llama-4`` shares the 4 of DeepSeek-V4 and nothing else: answering with that
    family's runbook puts a wrong launch command in front of the channel."""

    async def scenario(ds):
        sent = []
        for model in ("llama-4", "phi-4"):
            sent.append((await ds.slash("runbook", model=model)).response.message)
        return sent

    for message in discord_standin.run(bot_factory(), scenario):
        assert message["flags"] & 64, "not found is private"
        embed = embed_of(message)
        assert embed["title"].startswith("No runbook family matches"), embed["title"]
        assert "docker run" not in embed.get("description", "")


def test_a_search_title_shows_the_query_as_typed_not_formatted(discord_standin):
    """Discord renders Markdown in an embed's title: the words of a public search must
    not turn bold, hidden or struck through there."""

    async def scenario(ds):
        record = await ds.slash("search", query="nccl **p2p** ||hang|| ~~x~~")
        return embed_of((await record.answer()).shown)

    embed = discord_standin.run(bot_factory(), scenario)
    title = embed["title"]
    assert "p2p" in title and embed.get("fields"), embed
    for marker in ("**", "||", "~~"):
        assert marker not in title.replace("\\" + marker[0], ""), title


# --- a cut never leaves a code span open in front of what follows --------------------------


def unclosed_code_span(text: str) -> str | None:
    """The text from a code span's opening backticks when nothing closes them, else None
    (as Discord reads it: a backslash escapes a backtick outside code only)."""
    i, n = 0, len(text)
    while i < n:
        if text[i] == "\\" and i + 1 < n:
            i += 2
            continue
        if text[i] != "`":
            i += 1
            continue
        run = len(text[i:]) - len(text[i:].lstrip("`"))
        close = re.compile(rf"(?<!`)`{{{run}}}(?!`)").search(text, i + run)
        if close is None:
            return text[i:]
        i = close.end()
    return None


def test_a_long_fix_command_cut_in_a_snippet_does_not_swallow_the_link(discord_standin, tmp_path):
    """A pasted error's hit shows the wiki's Fix command in a code span, then a link to
    the section. Cut inside the span, the span stayed open and the next backtick (one
    the section's own title holds) closed it: the link showed as raw Markdown."""
    import shutil

    from knowledge.service import KnowledgeBase, demo_wiki_dir
    from tests.bot.helpers import LINK_BASE, make_config

    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    long_line = " ".join(f"--zebra-option-{i} value{i}" for i in range(12))
    (wiki / "troubleshooting" / "common-issues.md").open("a", encoding="utf-8").write(
        "\n### The `zebra_cache` Overflows On Start\n\n"
        "**Error**: `ZebraCacheError: zebra cache overflow detected on rank 0`\n\n"
        "**Cause**: The zebra cache is sized for one card.\n\n"
        "**Fix**:\n\n```bash\n"
        + "\n".join(f"zebra-tool {long_line} --step {k}" for k in range(3))
        + "\n```\n"
    )
    kb = KnowledgeBase.open(wiki, tmp_path / "data", link_base=LINK_BASE)

    async def scenario(ds):
        record = await ds.slash(
            "search",
            query="ZebraCacheError: zebra cache overflow detected on rank 0 when I start"
            " the server with eight cards, what now?",
        )
        return embed_of((await record.answer()).shown)

    try:
        embed = discord_standin.run(bot_factory(make_config(wiki), kb=kb), scenario)
    finally:
        kb.close()
    hit = next(f["value"] for f in embed["fields"] if "zebra" in f["name"].casefold())
    assert "zebra-tool" in hit, "the Fix command is shown"
    assert unclosed_code_span(hit) is None, hit
    assert hit.rstrip().endswith(")"), f"the link to the section is intact: {hit!r}"


# --- the forum post's title: the first line of text, not a code fence -----------------------


@pytest.mark.parametrize(
    ("story", "title"),
    [
        (
            "```text\nRuntimeError: CUDA error: an illegal memory access\n```\nGLM-5 died",
            "RuntimeError: CUDA error: an illegal memory access",
        ),
        # Zero-width spaces alone, then a right-to-left override reversing the name.
        ("\u200b\u200b\n\u202eGLM-5 dies on load\u200b", "GLM-5 dies on load"),
    ],
    ids=["code-fence", "format-characters"],
)
def test_a_posts_title_is_the_first_line_of_visible_text(discord_standin, data, story, title):
    async def scenario(ds):
        opened = await ds.slash("support")
        submitted = await ds.submit_modal(opened, {**STEP1, "text": story})
        saved = (await submitted.answer()).shown
        _, check = await through_step_2(ds, saved)
        await (await ds.press(check, button_id(check, "File the ticket"))).answer()
        return await ds.wait_for_request(lambda r: r.route == "create_thread")

    post = discord_standin.run(factory(data), scenario)
    assert post.json["name"] == title  # plain text
    assert embed_of(post.json["message"])["title"] == escape_markdown(title)  # shown as typed


# --- regression guards: hostile stories in what the bot posts publicly ----------------------


def rendered_markup(text: str) -> list[str]:
    """The Markdown of :data:`HOSTILE` that Discord would render in ``text``: its masked
    link, fence, emphasis and spoiler unescaped, or a heading or quote at a line's start."""
    found = []
    if re.search(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\(https?://evil", text):
        found.append("masked link")
    found += [m for m in (" ``` ", " **bold", " _it", " ~~gone", " ||hidden") if m in text]
    found += [line for line in text.splitlines() if re.match(r"(?:#{1,3}|>{1,3}) ", line)]
    return found


def test_a_hostile_story_is_posted_as_text_and_pings_only_its_asker(discord_standin, data):
    story = f"# {HOSTILE}\n> quoted {HOSTILE}\n{HOSTILE}"

    async def scenario(ds):
        opened = await ds.slash("support")
        submitted = await ds.submit_modal(
            opened, {"text": story, "actual": HOSTILE, "expected": "> " + HOSTILE, "image": "x"}
        )
        saved = (await submitted.answer()).shown
        _, check = await through_step_2(ds, saved, layout=HOSTILE[:100])
        await (await ds.press(check, button_id(check, "File the ticket"))).answer()
        return check, await ds.wait_for_request(lambda r: r.route == "create_thread")

    check, post = discord_standin.run(factory(data), scenario)
    message = post.json["message"]
    assert "free nitro" in message["content"], "the story is in the post"
    assert not rendered_markup(message["content"]), rendered_markup(message["content"])
    embed = embed_of(message)
    for field in embed["fields"]:
        assert not rendered_markup(field["value"]), field
    assert 1 <= len(post.json["name"]) <= 100
    for field in embed_of(check)["fields"]:
        assert not rendered_markup(field["value"]), field
    pings = [p for m in discord_standin.last.pings for p in m.pings]
    assert pings == [f"<@{DEFAULT_IDS.alice}>"], pings


def test_the_nudge_under_a_hostile_forum_post_pings_no_one(discord_standin, data):
    async def scenario(ds):
        thread_id = await test_support._forum_post(ds, f"my GLM-5 server hangs {HOSTILE}")
        return await ds.wait_for_request(
            lambda r: r.route == "channel_message" and r.path == f"/channels/{thread_id}/messages"
        )

    nudge = discord_standin.run(factory(data, nudge=True), scenario)
    sent = repr(nudge.json)
    assert nudge.json["allowed_mentions"]["parse"] == []
    assert "evil.example" not in sent, "nothing of the post is echoed"
    discord_standin.last.assert_no_pings()


# --- a page link stays a link whatever the page's file name holds --------------------------


def test_a_page_whose_file_name_has_spaces_is_still_linked(discord_standin, tmp_path):
    """A masked link's URL ends at its first space: ``[t](https://x/Odd Notes.md)`` shows
    as raw Markdown. The wiki's file names are its own; a future one may hold spaces."""
    import shutil

    from knowledge.service import KnowledgeBase, demo_wiki_dir
    from tests.bot.helpers import LINK_BASE, make_config

    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    (wiki / "notes" / "Odd Notes (v2).md").write_text(
        "# Odd Notes\n\n## Quokka Tuning\n\nThe quokkaflag setting needs care.\n",
        encoding="utf-8",
    )
    kb = KnowledgeBase.open(wiki, tmp_path / "data", link_base=LINK_BASE)

    async def scenario(ds):
        record = await ds.slash("search", query="quokkaflag")
        return embed_of((await record.answer()).shown)

    try:
        embed = discord_standin.run(bot_factory(make_config(wiki), kb=kb), scenario)
    finally:
        kb.close()
    value = embed["fields"][0]["value"]
    link = re.search(r"\[Quokka Tuning\]\(([^)]*)\)", value)
    assert link is not None, value
    assert not re.search(r"[\s()]", link.group(1)), f"the URL breaks the link: {link.group(1)!r}"
    assert "Odd%20Notes%20%28v2%29.md" in link.group(1)


def test_an_echo_full_of_backticks_stays_one_code_span(discord_standin):
    """Inside a ``\\`\\` … \\`\\``` span, two backticks in a row close it: the echo of
    three typed backticks ended the span early and left the rest unclosed."""

    async def scenario(ds):
        record = await ds.slash("runbook", model="a```b")
        return embed_of(record.response.message)["title"]

    title = discord_standin.run(bot_factory(), scenario)
    assert title.startswith("No runbook family matches `` ") and title.endswith(" ``"), title
    inner = title[len("No runbook family matches `` ") : -len(" ``")]
    assert "``" not in inner, f"the span closes early: {title!r}"
    assert inner.replace("\u200b", "") == "a```b", "shown as typed"


def test_a_blank_section_searches_everywhere_and_a_folder_may_end_in_a_slash(discord_standin):
    async def scenario(ds):
        sent = []
        for section in ("   ", "Models/"):
            record = await ds.slash("search", query="nccl", section=section)
            sent.append((await record.answer()).shown)
        return sent

    blank, folder = discord_standin.run(bot_factory(), scenario)
    assert embed_of(blank)["title"] == "Search: nccl", embed_of(blank)
    assert not blank["flags"] & 64, "found: public, as without a section"
    assert "Only in: models" in embed_of(folder)["description"], embed_of(folder)
