"""Self-tests of the Discord stand-in, driven through discord.py with a throwaway bot.

The bot below exists only to exercise the stand-in: each command is the smallest
thing that makes discord.py send one kind of request. Every test runs the real
discord.py client against the loopback stand-in (``discord_standin`` fixture).
"""

from __future__ import annotations

import asyncio
import io
import logging
from typing import Any

import discord
import pytest
from discord import app_commands

from tests.discord_standin import (
    DEFAULT_IDS,
    ChannelSpec,
    NonLoopbackRequest,
    Standin,
    StandinFailure,
    StandinTimeout,
    run_bot,
)
from tests.discord_standin.limits import (
    FormErrors,
    check_autocomplete,
    check_commands,
    check_message,
    check_modal,
)
from tests.discord_standin.mentions import (
    CHANNEL_DEFAULT_PARSE,
    INTERACTION_DEFAULT_PARSE,
    compute_pings,
)
from tests.discord_standin.payloads import RoleSpec, role_json
from tests.discord_standin.server import FOREIGN_GUILD_ID

GUILD = discord.Object(DEFAULT_IDS.guild)


class Confirm(discord.ui.View):
    """A short-lived view: pressing Confirm disables the button and edits the message."""

    def __init__(self) -> None:
        super().__init__(timeout=30)

    @discord.ui.button(
        label="Confirm", custom_id="throwaway:confirm", style=discord.ButtonStyle.green
    )
    async def confirm(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        button.disabled = True
        await interaction.response.edit_message(
            content=f"Confirmed by {interaction.user.name}", view=self
        )

    @discord.ui.button(label="Later", custom_id="throwaway:later")
    async def later(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await interaction.response.defer()  # type 6 on a component: no visible reply yet
        await interaction.edit_original_response(content="Decided later")

    @discord.ui.select(
        custom_id="throwaway:colour",
        options=[discord.SelectOption(label=c, value=c) for c in ("red", "green", "blue")],
        max_values=2,
    )
    async def colour(self, interaction: discord.Interaction, select: discord.ui.Select) -> None:
        await interaction.response.edit_message(content=f"Picked {', '.join(select.values)}")


class Report(discord.ui.Modal, title="Report a problem"):
    summary: discord.ui.Label = discord.ui.Label(
        text="Summary", component=discord.ui.TextInput(custom_id="summary", max_length=100)
    )
    details: discord.ui.Label = discord.ui.Label(
        text="Details",
        component=discord.ui.TextInput(
            custom_id="details", style=discord.TextStyle.long, required=False
        ),
    )

    async def on_submit(self, interaction: discord.Interaction) -> None:
        summary = self.summary.component.value  # type: ignore[attr-defined]
        details = self.details.component.value  # type: ignore[attr-defined]
        await interaction.response.send_message(
            f"Filed: {summary} ({len(details)} chars of details)", ephemeral=True
        )


def make_bot(
    *,
    http_trace: Any = None,
    connector: Any = None,
    safe_mentions: bool = True,
    scope: str = "guild",
) -> discord.Client:
    """The throwaway bot. ``safe_mentions=False`` forgets ``AllowedMentions.none()``;
    ``scope="global"`` syncs the commands globally instead of to the guild."""
    client = discord.Client(
        intents=discord.Intents.default(),
        http_trace=http_trace,
        connector=connector,
        allowed_mentions=discord.AllowedMentions.none() if safe_mentions else None,
    )
    tree = app_commands.CommandTree(client)

    @tree.command(description="Answer at once")
    async def ping(interaction: discord.Interaction, text: str = "pong") -> None:
        await interaction.response.send_message(text)

    @tree.command(description="Say who you are and which roles you have")
    async def whoami(interaction: discord.Interaction) -> None:
        assert isinstance(interaction.user, discord.Member)
        roles = sorted(r.name for r in interaction.user.roles if not r.is_default())
        await interaction.response.send_message(
            f"{interaction.user.name}: {', '.join(roles) or 'no roles'}", ephemeral=True
        )

    @tree.command(description="Defer, then send the result and edit it")
    async def slow(interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        await asyncio.sleep(0)
        await interaction.followup.send("working result")
        await interaction.edit_original_response(content="final result")

    wiki = app_commands.Group(name="wiki", description="Wiki tools")
    pages = app_commands.Group(name="pages", description="Page tools", parent=wiki)

    @pages.command(name="find", description="Find a page")
    @app_commands.describe(query="Words to look for", limit="How many pages")
    async def find(
        interaction: discord.Interaction,
        query: str,
        limit: app_commands.Range[int, 1, 10] = 3,
    ) -> None:
        await interaction.response.send_message(f"{query} x{limit}")

    @find.autocomplete("query")
    async def find_query(
        interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return [
            app_commands.Choice(name=f"{current} page {i}", value=f"{current}-{i}")
            for i in range(3)
        ]

    tree.add_command(wiki)

    @tree.command(description="Autocomplete that offers too many choices")
    async def many(interaction: discord.Interaction, item: str) -> None:
        await interaction.response.send_message(item)

    @many.autocomplete("item")
    async def many_item(
        interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name=f"item {i}", value=str(i)) for i in range(26)]

    @tree.command(description="Ask for a confirmation button")
    async def ask(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("Sure?", view=Confirm())

    @tree.context_menu(name="Quote")
    async def quote(interaction: discord.Interaction, message: discord.Message) -> None:
        await interaction.response.send_message(
            f"{message.author.name} said: {message.content}", ephemeral=True
        )

    @tree.command(description="Open the report form")
    async def report(interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(Report())

    @tree.command(description="Send an embed with a title that is too long")
    async def bigembed(interaction: discord.Interaction) -> None:
        await interaction.response.send_message(embed=discord.Embed(title="x" * 300))

    @tree.command(description="Try to answer twice")
    async def twice(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("first")
        try:  # a second responder for the same interaction, as two handlers would be
            await discord.InteractionResponse(interaction).send_message("second")
        except discord.HTTPException as exc:
            await interaction.followup.send(f"second refused with {exc.code}")

    @tree.command(description="Answer only after a pause")
    async def sleepy(interaction: discord.Interaction) -> None:
        await asyncio.sleep(0.2)
        await interaction.response.send_message("late")

    @tree.command(description="Use a route the stand-in does not serve")
    async def roles(interaction: discord.Interaction) -> None:
        await interaction.response.defer()
        assert interaction.guild is not None
        await interaction.guild.fetch_roles()

    @tree.command(description="Echo text here and in the channel")
    async def echo(interaction: discord.Interaction, text: str) -> None:
        await interaction.response.send_message(text)
        assert isinstance(interaction.channel, discord.TextChannel)
        await interaction.channel.send(text)

    @tree.command(description="Open a help thread in the forum")
    async def helpme(interaction: discord.Interaction, title: str) -> None:
        assert interaction.guild is not None
        forum = interaction.guild.get_channel(DEFAULT_IDS.forum)
        assert isinstance(forum, discord.ForumChannel)
        await interaction.response.defer(ephemeral=True, thinking=True)
        tag = forum.get_tag(DEFAULT_IDS.tag_open)
        assert tag is not None
        created = await forum.create_thread(
            name=title, content=f"Question: {title}", applied_tags=[tag]
        )
        await interaction.followup.send(f"Opened {created.thread.mention}", ephemeral=True)

    @tree.command(description="Count the lines of an uploaded log")
    async def lines(interaction: discord.Interaction, log: discord.Attachment) -> None:
        data = await log.read()
        await interaction.response.send_message(f"{log.filename}: {len(data.splitlines())} lines")

    @tree.command(description="Say where it was used: which server, or a DM")
    @app_commands.allowed_installs(guilds=True, users=True)
    @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
    async def whereami(interaction: discord.Interaction) -> None:
        where = f"guild {interaction.guild_id}" if interaction.guild_id else "a DM"
        member = isinstance(interaction.user, discord.Member)
        await interaction.response.send_message(f"{where}, member={member}", ephemeral=True)

    @tree.command(description="Never answers")
    async def silent(interaction: discord.Interaction) -> None:
        return None

    @tree.command(description="Attach a file, then post and edit a status message")
    async def upload(interaction: discord.Interaction) -> None:
        report = discord.File(io.BytesIO(b"line one\nline two\n"), filename="report.txt")
        await interaction.response.send_message("report attached", file=report)
        assert isinstance(interaction.channel, discord.TextChannel)
        status = await interaction.channel.send("status: working")
        await status.edit(content="status: done")

    @tree.command(description="Follow up after a pause")
    async def later(interaction: discord.Interaction) -> None:
        await interaction.response.defer()
        await asyncio.sleep(0.2)
        await interaction.followup.send("too late")

    @client.event
    async def on_message(message: discord.Message) -> None:
        if message.author == client.user:
            return
        if client.user in message.mentions:
            await message.reply(f"hello {message.author.name}")

    async def setup_hook() -> None:
        if scope == "global":
            await tree.sync()
            return
        tree.copy_global_to(guild=GUILD)
        await tree.sync(guild=GUILD)

    client.setup_hook = setup_hook  # type: ignore[method-assign]
    return client


# ---------------------------------------------------------------------------- start-up


def test_startup_serves_guild_and_stores_synced_schema(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        assert [r.route for r in ds.requests[:3]] == [
            "get_me",
            "application_info",
            "guild_commands",
        ]
        guild = ds.client.get_guild(DEFAULT_IDS.guild)
        assert guild is not None
        assert isinstance(guild.get_channel(DEFAULT_IDS.forum), discord.ForumChannel)
        assert isinstance(guild.get_channel(DEFAULT_IDS.general), discord.TextChannel)
        assert {t.name for t in guild.get_channel(DEFAULT_IDS.forum).available_tags} == {
            "open",
            "solved",
        }
        assert ds.client.application_id == DEFAULT_IDS.app
        # Only the guild was synced; every command came back with an id.
        assert ds.commands.get(None) is None
        synced = ds.commands[DEFAULT_IDS.guild]
        assert all(c["id"] and c["guild_id"] == str(DEFAULT_IDS.guild) for c in synced)
        assert ds.synced_command("Quote", kind=3)["type"] == 3
        wiki = ds.synced_command("wiki")
        (pages,) = wiki["options"]
        assert (pages["name"], pages["type"]) == ("pages", 2)
        (find,) = pages["options"]
        assert (find["name"], find["type"]) == ("find", 1)
        query, limit = find["options"]
        assert query == {
            "name": "query",
            "description": "Words to look for",
            "type": 3,
            "required": True,
            "autocomplete": True,
        }
        assert (limit["type"], limit["min_value"], limit["max_value"]) == (4, 1, 10)
        assert limit.get("required", False) is False

    discord_standin.run(make_bot, scenario)


def test_a_command_that_was_never_synced_cannot_be_invoked(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        with pytest.raises(LookupError, match="never registered"):
            await ds.slash("added-later")
        with pytest.raises(ValueError, match="requires option 'text'"):
            await ds.slash("echo")
        with pytest.raises(ValueError, match="no option"):
            await ds.slash("ping", colour="red")

    discord_standin.run(make_bot, scenario)


def test_global_sync_is_stored_and_invocable(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        assert set(ds.commands) == {None}
        assert ds.synced_command("ping", guild=False)["application_id"] == str(DEFAULT_IDS.app)
        rec = await ds.slash("ping")
        assert "guild_id" not in rec.payload["data"]
        assert rec.response.message["content"] == "pong"

    discord_standin.run(lambda **kw: make_bot(scope="global", **kw), scenario)


def test_a_bot_that_never_answers_times_out_clearly(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("silent", wait=False)
        with pytest.raises(StandinTimeout, match="never answered") as timeout:
            await rec.wait_response(timeout=0.1)
        assert "command 'silent'" in str(timeout.value)

    discord_standin.run(make_bot, scenario)


# ---------------------------------------------------------------------------- slash commands


def test_slash_command_answered_immediately(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("ping", text="hello")
        assert rec.response.status == 200
        assert rec.response.callback_type == 4
        assert rec.response.message["content"] == "hello"
        assert rec.original["content"] == "hello"
        assert rec.original["interaction_metadata"]["user"]["id"] == str(DEFAULT_IDS.alice)

    discord_standin.run(make_bot, scenario)


def test_member_roles_come_from_the_user_or_the_override(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        mod = await ds.slash("whoami", user_id=DEFAULT_IDS.mod)
        assert mod.response.message["content"] == "mod: Member, Moderator"
        assert mod.original["flags"] & 64  # ephemeral
        stripped = await ds.slash("whoami", user_id=DEFAULT_IDS.mod, role_ids=[])
        assert stripped.response.message["content"] == "mod: no roles"

    discord_standin.run(make_bot, scenario)


def test_deferred_command_then_followup_and_edit(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("slow")
        assert rec.response.callback_type == 5
        first = await rec.followup()
        assert (first.method, first.route) == ("POST", "followup")
        assert first.json["content"] == "working result"
        # Discord applies the first follow-up after a defer to the loading message.
        assert first.response["id"] == str(rec.original_message_id)
        edit = await rec.followup()
        assert (edit.method, edit.path.endswith("/messages/@original")) == ("PATCH", True)
        assert rec.original["content"] == "final result"
        assert not rec.original["flags"] & 128  # no longer "thinking"
        assert rec.followup_message_ids == []

    discord_standin.run(make_bot, scenario)


def test_answer_is_the_request_that_carries_it_wherever_it_lands(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        at_once = await ds.slash("ping", text="hello")
        answer = await at_once.answer()
        assert answer is at_once.response and answer.callback_type == 4
        assert answer.shown["content"] == "hello" and answer.shown["id"]
        deferred = await ds.slash("slow")
        answer = await deferred.answer()
        assert deferred.response.callback_type == 5 and deferred.response.shown is None
        assert (answer.method, answer.route) == ("POST", "followup"), "the first after it"
        assert answer.shown["content"] == "working result"
        assert answer.shown["id"] == str(deferred.original_message_id)

    discord_standin.run(make_bot, scenario)


def test_subcommand_group_and_autocomplete(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        typed = await ds.autocomplete("wiki pages find", focused="query", value="nccl")
        assert typed.response.callback_type == 8
        assert typed.choices == [{"name": f"nccl page {i}", "value": f"nccl-{i}"} for i in range(3)]
        option = typed.payload["data"]["options"][0]["options"][0]["options"][0]
        assert option == {"name": "query", "type": 3, "value": "nccl", "focused": True}

        ran = await ds.slash("wiki pages find", query="nccl-1", limit=5)
        assert ran.response.message["content"] == "nccl-1 x5"
        with pytest.raises(ValueError, match="above max_value"):
            await ds.slash("wiki pages find", query="x", limit=11)
        with pytest.raises(LookupError, match="needs a subcommand"):
            await ds.slash("wiki pages")

    discord_standin.run(make_bot, scenario)


def test_autocomplete_with_26_choices_is_refused(discord_standin) -> None:
    discord_standin.config.error_loggers = ("discord", "bot")

    async def scenario(ds: Standin) -> None:
        ds.expect_error_log(r"50035")  # discord.py logs the failed autocomplete
        rec = await ds.autocomplete("many", focused="item", value="")
        assert rec.response.status == 400
        assert rec.response.error_code == 50035
        assert "choices" in rec.response.response["errors"]["data"]
        assert rec.choices is None

    discord_standin.run(make_bot, scenario)


# ---------------------------------------------------------------------------- components


def test_button_press_round_trip(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        asked = await ds.slash("ask")
        buttons, selects = asked.original["components"]
        assert [(b["custom_id"], b["label"]) for b in buttons["components"]] == [
            ("throwaway:confirm", "Confirm"),
            ("throwaway:later", "Later"),
        ]
        assert selects["components"][0]["type"] == 3

        pressed = await ds.press(asked.original, "throwaway:confirm", user_id=DEFAULT_IDS.mod)
        assert pressed.type == 3
        assert pressed.response.callback_type == 7
        assert pressed.original_message_id == asked.original_message_id
        assert asked.original["content"] == "Confirmed by mod"
        assert asked.original["components"][0]["components"][0]["disabled"] is True
        with pytest.raises(ValueError, match="disabled"):
            await ds.press(asked.original, "throwaway:confirm")

    discord_standin.run(make_bot, scenario)


def test_component_defer_then_edit_targets_the_components_message(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        asked = await ds.slash("ask")
        pressed = await ds.press(asked.original_message_id, "throwaway:later")
        assert pressed.response.callback_type == 6
        edit = await pressed.followup()
        assert (edit.method, edit.path.endswith("/messages/@original")) == ("PATCH", True)
        assert asked.original["content"] == "Decided later"

    discord_standin.run(make_bot, scenario)


def test_select_menu_round_trip(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        asked = await ds.slash("ask")
        with pytest.raises(ValueError, match="not options"):
            await ds.select(asked.original, "throwaway:colour", ["purple"])
        with pytest.raises(ValueError, match=r"takes 1\.\.2 values"):
            await ds.select(asked.original, "throwaway:colour", ["red", "green", "blue"])
        picked = await ds.select(asked.original, "throwaway:colour", ["red", "blue"])
        assert picked.payload["data"]["values"] == ["red", "blue"]
        assert picked.response.callback_type == 7
        assert asked.original["content"] == "Picked red, blue"

    discord_standin.run(make_bot, scenario)


def test_message_context_menu(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        message = ds.make_message("the GPU fell off the bus", author_id=DEFAULT_IDS.newbie)
        rec = await ds.message_command("Quote", message, user_id=DEFAULT_IDS.alice)
        data = rec.payload["data"]
        assert (data["type"], data["target_id"]) == (3, message["id"])
        assert rec.response.message["content"] == "newbie said: the GPU fell off the bus"
        assert rec.original["type"] == 23

    discord_standin.run(make_bot, scenario)


def test_modal_round_trip(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        opened = await ds.slash("report", user_id=DEFAULT_IDS.newbie)
        assert opened.response.callback_type == 9
        assert opened.modal["title"] == "Report a problem"
        assert [c["type"] for c in opened.modal["components"]] == [18, 18]

        with pytest.raises(ValueError, match=r"takes 0\.\.100 characters"):
            await ds.submit_modal(opened, {"summary": "x" * 101})
        with pytest.raises(ValueError, match="required"):
            await ds.submit_modal(opened, {"details": "only details"})

        submitted = await ds.submit_modal(opened, {"summary": "fans at 100%", "details": "loud"})
        assert submitted.type == 5
        assert submitted.user_id == DEFAULT_IDS.newbie
        label = submitted.payload["data"]["components"][0]
        assert label["component"] == {
            "type": 4,
            "id": label["component"]["id"],
            "custom_id": "summary",
            "value": "fans at 100%",
        }
        assert submitted.response.message["content"] == "Filed: fans at 100% (4 chars of details)"

    discord_standin.run(make_bot, scenario)


# ---------------------------------------------------------------------------- refusals


def test_overlong_embed_title_is_refused_with_50035_and_fails_the_run(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("bigembed")
        assert rec.response.status == 400
        assert rec.response.error_code == 50035
        title_errors = rec.response.response["errors"]["data"]["embeds"]["0"]["title"]
        assert title_errors["_errors"][0]["message"] == "Must be 256 or fewer in length."

    with pytest.raises(StandinFailure) as failure:
        discord_standin.run(make_bot, scenario)
    # The uncaught HTTPException was logged by discord.py; the failure names the field.
    assert "In data.embeds.0.title: Must be 256 or fewer in length." in str(failure.value)


def test_double_response_is_refused_with_40060(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("twice")
        refused = await rec.followup()
        assert refused.json["content"] == "second refused with 40060"
        first, second = rec.callbacks
        assert (first.status, second.status, second.error_code) == (200, 400, 40060)

    discord_standin.run(make_bot, scenario)


def test_late_first_response_is_refused_with_10062(discord_standin) -> None:
    discord_standin.config.response_deadline = 0.05

    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("sleepy")
        assert (rec.response.status, rec.response.error_code) == (404, 10062)

    with pytest.raises(StandinFailure, match="10062"):
        discord_standin.run(make_bot, scenario)


def test_unknown_route_fails_the_run(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("roles")
        assert rec.response.callback_type == 5
        await ds.wait_for_request(lambda r: r.route == "unknown")

    with pytest.raises(StandinFailure) as failure:
        discord_standin.run(make_bot, scenario)
    text = str(failure.value)
    assert f"[unknown-route] GET /api/v10/guilds/{DEFAULT_IDS.guild}/roles" in text
    assert discord_standin.last.requests_to("unknown")[0].status == 404
    assert discord_standin.unreported() == []  # reported once, by run()


def test_non_loopback_hosts_are_refused(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        with pytest.raises(NonLoopbackRequest):
            await ds.client.http.get_from_cdn("https://cdn.discordapp.com/attachments/1/2/x.txt")

    with pytest.raises(StandinFailure, match=r"\[non-loopback\] refused GET https://cdn"):
        discord_standin.run(make_bot, scenario)


def test_a_bot_started_against_a_stand_in_served_elsewhere() -> None:
    """``remote_port``: the bot talks to a stand-in it did not start (a benchmark serves
    it from another process); its error logs still fail the run."""

    async def main() -> tuple[str, str]:
        remote = Standin()
        await remote.start()
        try:
            async with run_bot(make_bot, remote_port=remote.port) as local:
                rec = await remote.slash("ping", text="from afar")
                assert local.requests == []  # nothing is served locally
                answered = rec.response.message["content"]
            with pytest.raises(StandinFailure, match="broke on purpose"):
                async with run_bot(make_bot, remote_port=remote.port):
                    logging.getLogger("discord.client").error("broke on purpose")
            return answered, remote.requests_to("interaction_callback")[0].route
        finally:
            await remote.close()

    assert asyncio.run(main()) == ("from afar", "interaction_callback")


def test_the_connector_guard_refuses_non_loopback_hosts() -> None:
    """``guard="connector"`` (the benchmarks'): no trace config on the client, the same
    refusal of any host but loopback, from its connector; loopback works as ever."""

    async def main() -> str:
        with pytest.raises(StandinFailure, match=r"\[non-loopback\] refused GET https://cdn"):
            async with run_bot(make_bot, guard="connector") as ds:
                assert ds.client.http.http_trace is None
                rec = await ds.slash("ping", text="near")
                answered = rec.response.message["content"]
                with pytest.raises(NonLoopbackRequest):
                    await ds.client.http.get_from_cdn("https://cdn.discordapp.com/a/1/2/x.txt")
                assert ds.requests_to("cdn") == []  # refused before any connection
        return answered

    assert "near" in asyncio.run(main())


@pytest.mark.parametrize(
    ("host", "near"),
    [
        ("127.0.0.1", True),
        ("127.3.4.5", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("127.example.com", False),
        ("127.0.0.1.nip.io", False),
        ("cdn.discordapp.com", False),
        ("10.0.0.1", False),
    ],
)
def test_only_this_machines_addresses_count_as_loopback(host: str, near: bool) -> None:
    """A name that merely starts with "127." is another machine: the guards refuse it."""
    from tests.discord_standin.server import is_loopback

    assert is_loopback(host) is near


def test_bot_factory_must_pass_the_connector_it_is_given() -> None:
    def careless_factory(*, connector: Any) -> discord.Client:
        return discord.Client(intents=discord.Intents.default())

    async def main() -> None:
        async with run_bot(careless_factory, guard="connector"):
            raise AssertionError("never reached")

    with pytest.raises(StandinFailure, match="must pass connector"):
        asyncio.run(main())


def test_bot_factory_must_accept_and_pass_http_trace(discord_standin) -> None:
    def careless_factory(*, http_trace: Any) -> discord.Client:
        return discord.Client(intents=discord.Intents.default())

    async def scenario(ds: Standin) -> None:
        raise AssertionError("never reached")

    with pytest.raises(StandinFailure, match="must pass http_trace"):
        discord_standin.run(careless_factory, scenario)


def test_privileged_intents_not_enabled_are_refused(discord_standin) -> None:
    discord_standin.config.allowed_privileged_intents = 0

    def members_bot(*, http_trace: Any) -> discord.Client:
        intents = discord.Intents.default()
        intents.members = True
        return discord.Client(intents=intents, http_trace=http_trace)

    async def scenario(ds: Standin) -> None:
        raise AssertionError("never reached")

    with pytest.raises(discord.PrivilegedIntentsRequired):
        discord_standin.run(members_bot, scenario)


# ---------------------------------------------------------------------------- mentions


def test_allowed_mentions_are_recorded_and_nothing_pings(discord_standin) -> None:
    text = f"<@{DEFAULT_IDS.mod}> <@&{DEFAULT_IDS.role_moderator}> @everyone look"

    async def scenario(ds: Standin) -> None:
        await ds.slash("echo", text=text)
        await ds.wait_for_request(lambda r: r.route == "channel_message")
        routes = [(m.route, m.allowed_mentions) for m in ds.mentions]
        assert routes == [
            ("interaction_callback", {"parse": []}),
            ("channel_message", {"parse": []}),
        ]
        ds.assert_no_pings()

    discord_standin.run(make_bot, scenario)


def test_default_mentions_would_ping(discord_standin) -> None:
    text = f"<@{DEFAULT_IDS.mod}> <@&{DEFAULT_IDS.role_moderator}> @everyone look"

    async def scenario(ds: Standin) -> None:
        await ds.slash("echo", text=text)
        await ds.wait_for_request(lambda r: r.route == "channel_message")
        reply, post = ds.mentions
        assert reply.allowed_mentions is None and reply.pings == [f"<@{DEFAULT_IDS.mod}>"]
        assert post.pings == [
            f"<@{DEFAULT_IDS.mod}>",
            f"<@&{DEFAULT_IDS.role_moderator}>",
            "@everyone",
        ]
        with pytest.raises(AssertionError, match="would ping"):
            ds.assert_no_pings()

    discord_standin.run(lambda **kw: make_bot(safe_mentions=False, **kw), scenario)


# ---------------------------------------------------------------------------- threads, files


def test_forum_post_creates_a_thread(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("helpme", title="Card not detected")
        done = await rec.followup()
        (created,) = ds.requests_to("create_thread")
        assert created.path == f"/channels/{DEFAULT_IDS.forum}/threads"
        assert created.json["name"] == "Card not detected"
        assert created.json["applied_tags"] == [str(DEFAULT_IDS.tag_open)]
        assert created.message["content"] == "Question: Card not detected"
        thread_id = int(created.response["id"])
        assert ds.threads[thread_id]["parent_id"] == str(DEFAULT_IDS.forum)
        assert ds.channel_messages(thread_id)[0]["content"] == "Question: Card not detected"
        assert done.json["content"] == f"Opened <#{thread_id}>"
        assert ds.client.get_channel(thread_id) is not None  # THREAD_CREATE reached it

    discord_standin.run(make_bot, scenario)


def test_archived_forum_posts_are_listed_apart_newest_archived_first(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        await ds.wait_connected()
        forum = ds.client.get_channel(DEFAULT_IDS.forum)
        assert isinstance(forum, discord.ForumChannel)
        made = [(await forum.create_thread(name=f"post {i}", content="q")).thread for i in range(4)]
        for thread in (made[2], made[0], made[1]):  # archived in this order
            await thread.edit(archived=True)
        http = ds.client.http
        active = await http.get_active_threads(DEFAULT_IDS.guild)
        assert [t["id"] for t in active["threads"]] == [str(made[3].id)]
        page = await http.get_public_archived_threads(forum.id, limit=2)
        assert [t["id"] for t in page["threads"]] == [str(made[1].id), str(made[0].id)]
        assert page["has_more"]
        before = page["threads"][-1]["thread_metadata"]["archive_timestamp"]
        rest = await http.get_public_archived_threads(forum.id, before=before, limit=2)
        assert [t["id"] for t in rest["threads"]] == [str(made[2].id)] and not rest["has_more"]
        walked = [t.id async for t in forum.archived_threads(limit=None)]
        assert walked == [made[1].id, made[0].id, made[2].id]
        with pytest.raises(discord.HTTPException) as refused:
            await http.get_public_archived_threads(forum.id, limit=1)
        assert refused.value.code == 50035

    discord_standin.run(make_bot, scenario)


def test_files_go_multipart_and_channel_messages_can_be_edited(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("upload")
        (sent,) = rec.response.files
        assert (sent.field, sent.filename, sent.data) == (
            "files[0]",
            "report.txt",
            b"line one\nline two\n",
        )
        assert rec.response.message["content"] == "report attached"  # payload_json
        (attachment,) = rec.original["attachments"]
        assert attachment["filename"] == "report.txt"
        assert attachment["url"].startswith(f"http://127.0.0.1:{ds.port}/")
        edit = await ds.wait_for_request(lambda r: r.route == "message" and r.method == "PATCH")
        assert edit.json["content"] == "status: done"
        (posted,) = ds.requests_to("channel_message")
        assert ds.messages[int(posted.response["id"])]["content"] == "status: done"

    discord_standin.run(make_bot, scenario)


def test_followup_after_the_token_expired_is_refused(discord_standin) -> None:
    discord_standin.config.token_lifetime = 0.05

    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("later")
        late = await rec.wait_for(lambda r: r.route == "followup")
        assert (late.status, late.error_code) == (401, 50027)

    with pytest.raises(StandinFailure, match="50027"):
        discord_standin.run(make_bot, scenario)


def test_user_message_reaches_on_message_and_the_reply_does_not_ping(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        quiet = await ds.user_message("no mention here", author_id=DEFAULT_IDS.newbie)
        event = ds.gateway_sent[-1]
        assert (event["t"], event["d"]["id"], event["d"]["content"]) == (
            "MESSAGE_CREATE",
            quiet["id"],
            "",  # no message content intent: Discord blanks it
        )
        asked = await ds.user_message(f"<@{DEFAULT_IDS.bot}> hi", author_id=DEFAULT_IDS.newbie)
        reply = await ds.wait_for_request(lambda r: r.route == "channel_message")
        assert reply.json["content"] == "hello newbie"
        assert str(reply.json["message_reference"]["message_id"]) == asked["id"]
        assert ds.pings == []  # AllowedMentions.none(): the reply does not ping its author

    discord_standin.run(make_bot, scenario)


def test_attachment_option_is_served_from_loopback(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        log = ds.attachment("vllm.log", b"INFO start\nINFO ready\nERROR oops\n")
        rec = await ds.slash("lines", log=log)
        assert rec.response.message["content"] == "vllm.log: 3 lines"
        assert any(r.route == "cdn" for r in ds.requests)

    discord_standin.run(make_bot, scenario)


# ---------------------------------------------------------------------------- limits, offline


def _errors(check: Any, payload: Any, **kwargs: Any) -> list[str]:
    errors = FormErrors()
    check(errors, payload, **kwargs)
    return errors.flat()


def _button(custom_id: str, label: str = "Go") -> dict[str, Any]:
    return {"type": 2, "style": 1, "custom_id": custom_id, "label": label}


def _embed(**fields: Any) -> dict[str, Any]:
    return {"embeds": [fields]}


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"content": "x" * 2001}, "content: Must be 2000 or fewer in length."),
        ({"embeds": [{}] * 11}, "embeds: Must be 10 or fewer in length."),
        (_embed(title="x" * 257), "embeds.0.title: Must be 256 or fewer"),
        (_embed(description="x" * 4097), "embeds.0.description: Must be 4096 or fewer"),
        (
            _embed(fields=[{"name": "n", "value": "v"}] * 26),
            "embeds.0.fields: Must be 25 or fewer",
        ),
        (
            _embed(fields=[{"name": "n" * 257, "value": "v"}]),
            "embeds.0.fields.0.name: Must be between 1 and 256",
        ),
        (
            _embed(fields=[{"name": "n", "value": "v" * 1025}]),
            "embeds.0.fields.0.value: Must be between 1 and 1024",
        ),
        (_embed(footer={"text": "x" * 2049}), "embeds.0.footer.text: Must be 2048 or fewer"),
        (_embed(author={"name": "x" * 257}), "embeds.0.author.name: Must be 256 or fewer"),
        (
            {"embeds": [{"description": "x" * 4000}, {"description": "x" * 2001}]},
            "embeds: Embed size exceeds maximum size of 6000",
        ),
        (
            {"components": [{"type": 1, "components": [_button("a")]}] * 6},
            "components: Must be 5 or fewer",
        ),
        (
            {"components": [{"type": 1, "components": [_button(str(i)) for i in range(6)]}]},
            "components.0.components: Must be 5 or fewer",
        ),
        (
            {"components": [{"type": 1, "components": [_button("x" * 101)]}]},
            "components.0.components.0.custom_id: Must be between 1 and 100",
        ),
        (
            {"components": [{"type": 1, "components": [_button("a", label="x" * 81)]}]},
            "components.0.components.0.label: Must be 80 or fewer",
        ),
        (
            {
                "components": [
                    {
                        "type": 1,
                        "components": [
                            {
                                "type": 3,
                                "custom_id": "s",
                                "options": [{"label": str(i), "value": str(i)} for i in range(26)],
                            }
                        ],
                    }
                ]
            },
            "components.0.components.0.options: Must be 25 or fewer",
        ),
        (
            {"allowed_mentions": {"parse": ["users"], "users": ["1"]}},
            "allowed_mentions.users: parse",
        ),
    ],
)
def test_message_limits(payload: dict[str, Any], expected: str) -> None:
    assert any(e.startswith(expected) for e in _errors(check_message, payload)), _errors(
        check_message, payload
    )


def test_messages_within_limits_pass() -> None:
    fine = {
        "content": "x" * 2000,
        "embeds": [
            {
                "title": "t" * 256,
                "description": "d" * 4096,
                "fields": [{"name": "n", "value": "v" * 20}] * 25,
                "footer": {"text": "f" * 100},
            }
        ],
        "components": [{"type": 1, "components": [_button(f"b{i}") for i in range(5)]}],
        "allowed_mentions": {"parse": []},
    }
    assert _errors(check_message, fine) == []


def _text_input(**fields: Any) -> dict[str, Any]:
    return {"type": 4, "custom_id": "t", "style": 1, **fields}


@pytest.mark.parametrize(
    ("modal", "expected"),
    [
        ({"title": "x" * 46}, "title: Must be between 1 and 45"),
        (
            {"components": [{"type": 18, "label": "x" * 46, "component": _text_input()}]},
            "components.0.label: Must be between 1 and 45",
        ),
        (
            {
                "components": [
                    {"type": 18, "label": "L", "component": _text_input(value="v" * 4001)}
                ]
            },
            "components.0.component.value: Must be 4000 or fewer",
        ),
        (
            {
                "components": [
                    {"type": 18, "label": "L", "component": _text_input(placeholder="p" * 101)}
                ]
            },
            "components.0.component.placeholder: Must be 100 or fewer",
        ),
        (
            {"components": [{"type": 1, "components": [_text_input(label="x" * 46)]}]},
            "components.0.components.0.label: Must be between 1 and 45",
        ),
        (
            {"components": [{"type": 18, "label": "L", "component": _text_input()}] * 6},
            "components: Must be 5 or fewer",
        ),
    ],
)
def test_modal_limits(modal: dict[str, Any], expected: str) -> None:
    base = {
        "title": "Fine",
        "custom_id": "m",
        "components": [{"type": 18, "label": "L", "component": _text_input()}],
    }
    errors = _errors(check_modal, {**base, **modal})
    assert any(e.startswith(expected) for e in errors), errors
    assert _errors(check_modal, base) == []


@pytest.mark.parametrize(
    ("choices", "expected"),
    [
        ([{"name": str(i), "value": str(i)} for i in range(26)], "choices: Must be 25 or fewer"),
        ([{"name": "", "value": "v"}], "choices.0.name: This field is required"),
        ([{"name": "n" * 101, "value": "v"}], "choices.0.name: Must be between 1 and 100"),
        ([{"name": "n", "value": "v" * 101}], "choices.0.value: Must be 100 or fewer"),
    ],
)
def test_autocomplete_limits(choices: list[dict[str, Any]], expected: str) -> None:
    errors = _errors(check_autocomplete, {"choices": choices})
    assert any(e.startswith(expected) for e in errors), errors
    assert _errors(check_autocomplete, {"choices": [{"name": "n" * 100, "value": 3}] * 25}) == []


def test_command_schema_limits() -> None:
    errors = _errors(
        check_commands,
        [
            {"name": "Bad Name", "description": "d", "type": 1},
            {"name": "ok", "description": "d" * 101, "type": 1},
            {"name": "ctx", "description": "not allowed", "type": 3},
            {
                "name": "order",
                "description": "d",
                "options": [
                    {"name": "a", "description": "d", "type": 3},
                    {"name": "b", "description": "d", "type": 3, "required": True},
                ],
            },
        ],
    )
    assert any(e.startswith("0.name: Command name is invalid") for e in errors), errors
    assert any(e.startswith("1.description: Must be between 1 and 100") for e in errors)
    assert any(e.startswith("2.description: Context menu") for e in errors)
    assert any(e.startswith("3.options.1.required: Required options") for e in errors)


def test_ping_rules() -> None:
    text = "<@1> <@!2> <@&3> @everyone @here"
    assert compute_pings(text, {"parse": []}, CHANNEL_DEFAULT_PARSE) == []
    assert compute_pings(text, None, INTERACTION_DEFAULT_PARSE) == ["<@1>", "<@2>"]
    assert compute_pings(text, None, CHANNEL_DEFAULT_PARSE) == [
        "<@1>",
        "<@2>",
        "<@&3>",
        "@everyone",
        "@here",
    ]
    assert compute_pings(text, {"parse": [], "users": ["2"], "roles": [3]}, ()) == [
        "<@2>",
        "<@&3>",
    ]
    assert compute_pings("hi", {"parse": [], "replied_user": True}, (), replied_user_id=7) == [
        "reply to <@7>"
    ]


# ---------------------------------------------------------------------------- OpenAPI spec


def test_a_body_the_spec_refuses_fails_the_run_naming_route_and_schema_path(
    discord_standin,
) -> None:
    async def scenario(ds: Standin) -> None:
        route = discord.http.Route(
            "POST", "/channels/{channel_id}/messages", channel_id=DEFAULT_IDS.general
        )
        # Within every limit the stand-in checks, but a colour is an integer for Discord.
        body = {"content": "hi", "embeds": [{"title": "x", "color": "red"}]}
        await ds.client.http.request(route, json=body)

    with pytest.raises(StandinFailure) as failure:
        discord_standin.run(make_bot, scenario)
    text = str(failure.value)
    assert "[spec] POST /channels/{channel_id}/messages: the request body" in text
    assert "at $.embeds[0].color (schema path " in text
    assert "properties/color" in text and "'red' is not of type" in text


def test_every_request_of_a_flow_reaches_a_spec_operation_and_matches_it(discord_standin) -> None:
    async def scenario(ds: Standin) -> list[Any]:
        await ds.slash("slow")
        rec = await ds.slash("ask")
        await ds.press(rec.original, "throwaway:confirm")
        await ds.autocomplete("wiki pages find", focused="query", value="nc")
        return [r for r in ds.requests if r.route != "cdn"]

    requests = discord_standin.run(make_bot, scenario)
    assert {r.operation for r in requests} >= {
        "GET /users/@me",
        "PUT /applications/{application_id}/guilds/{guild_id}/commands",
        "POST /interactions/{interaction_id}/{interaction_token}/callback",
    }
    assert all(r.operation and r.spec_mismatch is None for r in requests)


def test_spec_lookup_and_response_checks() -> None:
    from tests.discord_standin.openapi import find_operation

    original = find_operation("PATCH", "/webhooks/1/abc/messages/@original")
    assert original is not None and original.template.endswith("/messages/@original")
    by_id = find_operation("PATCH", "/webhooks/1/abc/messages/42")
    assert by_id is not None and by_id.template.endswith("/messages/{message_id}")
    assert find_operation("GET", "/no/such/route") is None
    sync = find_operation("PUT", "/applications/1/guilds/2/commands")
    assert sync is not None
    command = {
        "id": "1",
        "application_id": "2",
        "version": "3",
        "default_member_permissions": None,
        "type": 1,
        "name": "x",
        "description": "y",
        "integration_types": [0],
    }
    assert sync.check_response(200, [command]) is None
    # Discord echoes integration_types as an array; null is not Discord's shape.
    mismatch = sync.check_response(200, [{**command, "integration_types": None}])
    assert mismatch is not None and mismatch.body_path == "$[0].integration_types"
    # Snowflakes: Discord takes integers in requests, but always answers strings.
    assert sync.check_request([{"name": "x", "description": "y", "type": 1}]) is None
    assert sync.check_response(200, [{**command, "id": 1}]) is not None


# ---------------------------------------------------------------------------- Discord's truth


def test_a_deferral_carries_no_message_and_commands_echo_discord_defaults(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        rec = await ds.slash("slow")
        assert rec.response.callback_type == 5
        assert "resource" not in rec.response.response  # no message for a deferral
        assert rec.response.response["interaction"]["response_message_loading"] is True
        await rec.followup()
        await rec.followup()
        ping = ds.synced_command("ping")
        assert ping["integration_types"] == [0] and ping["contexts"] is None
        assert ds.synced_command("whereami")["integration_types"] == [0, 1]
        # Without the presences intent GUILD_CREATE carries the bot alone.
        (create,) = [e["d"] for e in ds.gateway_sent if e.get("t") == "GUILD_CREATE"]
        assert [m["user"]["id"] for m in create["members"]] == [str(DEFAULT_IDS.bot)]

    discord_standin.run(make_bot, scenario)


def test_commands_may_use_8000_characters_in_all() -> None:
    choices = [{"name": f"{i:02d}" + "n" * 98, "value": f"{i:02d}" + "v" * 98} for i in range(25)]

    def command(options: int) -> dict[str, Any]:
        return {
            "name": "big",
            "description": "d",
            "options": [
                {"name": f"o{i}", "description": "d", "type": 3, "choices": choices}
                for i in range(options)
            ],
        }

    assert _errors(check_commands, [command(1)]) == []  # about 5,000 characters
    (error,) = _errors(check_commands, [command(2)])  # about 10,000
    assert "at most 8000" in error


def test_the_three_seconds_run_from_when_the_interaction_was_created(discord_standin) -> None:
    discord_standin.config.response_deadline = 0.05

    async def scenario(ds: Standin) -> None:
        ping = ds.synced_command("ping")
        data = {"id": ping["id"], "name": "ping", "type": 1, "options": []}
        payload = ds.interaction_payload(2, data)
        await asyncio.sleep(0.1)  # delivered late: the bot answers at once, yet too late
        rec = await ds.inject(payload)
        assert (rec.response.status, rec.response.error_code) == (404, 10062)

    with pytest.raises(StandinFailure, match="10062"):
        discord_standin.run(make_bot, scenario)


def test_rate_limit_headers_and_a_bucket_the_bot_waits_for(discord_standin) -> None:
    discord_standin.config.route_limits["POST channel_message"] = (2, 0.2)

    async def scenario(ds: Standin) -> list[Any]:
        for text in ("one", "two", "three"):
            await ds.slash("echo", text=text)
        await ds.wait_until(lambda: len(ds.requests_to("channel_message")) == 3 or None)
        return ds.requests_to("channel_message")

    sent = discord_standin.run(make_bot, scenario)
    assert [r.status for r in sent] == [200, 200, 200], "discord.py waited, Discord never said 429"
    headers = sent[1].response_headers
    assert headers["X-RateLimit-Limit"] == "2" and headers["X-RateLimit-Remaining"] == "0"
    assert float(headers["X-RateLimit-Reset-After"]) <= 0.2 and headers["X-RateLimit-Bucket"]


@pytest.mark.parametrize("is_global", [False, True])
def test_a_429_is_retried_after_retry_after(discord_standin, is_global: bool) -> None:
    async def scenario(ds: Standin) -> list[Any]:
        ds.rate_limit_next("channel_message", retry_after=0.01, is_global=is_global)
        await ds.slash("echo", text="hello")
        await ds.wait_until(lambda: len(ds.requests_to("channel_message")) == 2 or None)
        return ds.requests_to("channel_message")

    limited, retried = discord_standin.run(make_bot, scenario)
    assert (limited.status, retried.status) == (429, 200)
    assert limited.response["retry_after"] == 0.01 and limited.response["global"] is is_global
    assert limited.response_headers["Via"] and limited.response_headers["Retry-After"] == "1"
    assert limited.response_headers.get("X-RateLimit-Global") == ("true" if is_global else None)
    assert retried.json == limited.json


def test_reconnect_op_7_resumes_the_session(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        session = ds.session_id
        await ds.request_reconnect()
        await ds.wait_resumed()
        rec = await ds.slash("ping", text="still here")
        assert rec.response.message["content"] == "still here"
        ops = [m["op"] for m in ds.gateway_received if m["op"] in (2, 6)]
        assert ops == [2, 6], "identified once, then resumed"
        (resume,) = [m["d"] for m in ds.gateway_received if m["op"] == 6]
        assert resume["session_id"] == session and resume["seq"] >= 2
        assert any(e.get("t") == "RESUMED" for e in ds.gateway_sent)

    discord_standin.run(make_bot, scenario)


def test_events_missed_while_disconnected_are_replayed_on_resume(discord_standin) -> None:
    helpers = 910000000000000250

    async def scenario(ds: Standin) -> None:
        role = role_json(RoleSpec(helpers, "Helpers", 0, 4))
        missed = [("GUILD_ROLE_CREATE", {"guild_id": str(DEFAULT_IDS.guild), "role": role})]
        await ds.drop_connection(missed=missed)
        await ds.wait_resumed()
        guild = ds.client.get_guild(DEFAULT_IDS.guild)
        await ds.wait_until(lambda: guild.get_role(helpers), what="the replayed role")
        assert guild.get_role(helpers).name == "Helpers"
        assert [m["op"] for m in ds.gateway_received if m["op"] in (2, 6)] == [2, 6]

    discord_standin.run(make_bot, scenario)


def test_dms_and_user_installs_follow_contexts_and_integration_types(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        dm = await ds.slash("ping", text="in a DM", context=1)
        assert "guild_id" not in dm.payload and "member" not in dm.payload
        assert dm.payload["channel"]["type"] == 1
        assert dm.response.message["content"] == "in a DM"
        assert "guild_id" not in dm.response.message
        with pytest.raises(LookupError, match="installed to the user"):
            await ds.slash("ping", context=0, install=1)  # ping is a guild install only
        elsewhere = await ds.slash("whereami", install=1)
        assert elsewhere.payload["authorizing_integration_owners"] == {"1": str(DEFAULT_IDS.alice)}
        assert elsewhere.response.message["content"] == f"guild {FOREIGN_GUILD_ID}, member=True"
        friends = await ds.slash("whereami", context=2, install=1)
        assert friends.response.message["content"] == "a DM, member=False"

    discord_standin.run(lambda **kw: make_bot(scope="global", **kw), scenario)


def test_guild_commands_are_not_offered_in_dms(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        with pytest.raises(LookupError):
            await ds.slash("ping", context=1)

    discord_standin.run(make_bot, scenario)


def test_missing_permissions_are_refused_with_50013(discord_standin) -> None:
    locked = 910000000000000399
    send = 1 << 11
    discord_standin.config.guild.channels.append(
        ChannelSpec(locked, "read-only", 0, 9, overwrites=((DEFAULT_IDS.role_bot, 0, 0, send),))
    )

    async def scenario(ds: Standin) -> None:
        ds.expect_error_log("50013")  # the command's channel.send raised Forbidden
        rec = await ds.slash("echo", text="hi", channel_id=locked)
        assert rec.response.status == 200, "answering an interaction needs no permission"
        refused = await ds.wait_for_request(lambda r: r.route == "channel_message")
        assert (refused.status, refused.response["code"]) == (403, 50013)
        assert int(rec.payload["app_permissions"]) & send == 0

    discord_standin.run(make_bot, scenario)


# ---------------------------------------------------------------------------- forum rules


def _forum_with(ds_config: Any, **changes: Any) -> None:
    import dataclasses

    guild = ds_config.guild
    guild.channels[:] = [
        dataclasses.replace(c, **changes) if c.id == DEFAULT_IDS.forum else c
        for c in guild.channels
    ]


def test_a_forum_requiring_tags_refuses_a_post_without_one_with_40067(discord_standin) -> None:
    _forum_with(discord_standin.config, flags=1 << 4)  # "Require tags"

    async def scenario(ds: Standin) -> None:
        await ds.wait_connected()
        forum = ds.client.get_channel(DEFAULT_IDS.forum)
        assert isinstance(forum, discord.ForumChannel) and forum.flags.require_tag
        with pytest.raises(discord.HTTPException) as refused:
            await forum.create_thread(name="no tag", content="q")
        assert (refused.value.status, refused.value.code) == (400, 40067)
        tag = forum.get_tag(DEFAULT_IDS.tag_open)
        made = await forum.create_thread(name="tagged", content="q", applied_tags=[tag])
        assert made.thread.applied_tags == [tag]

    discord_standin.run(make_bot, scenario)


def test_an_archived_thread_takes_no_edit_but_unarchiving_it_50083(discord_standin) -> None:
    async def scenario(ds: Standin) -> None:
        await ds.wait_connected()
        forum = ds.client.get_channel(DEFAULT_IDS.forum)
        thread = (await forum.create_thread(name="post", content="q")).thread
        thread = await thread.edit(archived=True)
        for change in ({"name": "renamed"}, {"archived": True, "locked": True}):
            with pytest.raises(discord.HTTPException) as refused:
                await thread.edit(**change)
            assert (refused.value.status, refused.value.code) == (400, 50083), change
        tag = forum.get_tag(DEFAULT_IDS.tag_solved)
        thread = await thread.edit(archived=False, applied_tags=[tag])  # unarchive and edit
        assert not thread.archived and thread.applied_tags == [tag]

    discord_standin.run(make_bot, scenario)


def test_thread_edits_need_manage_threads_except_what_the_owner_may_do(discord_standin) -> None:
    manage_threads = 1 << 34
    _forum_with(discord_standin.config, overwrites=((DEFAULT_IDS.role_bot, 0, 0, manage_threads),))

    async def scenario(ds: Standin) -> None:
        await ds.wait_connected()
        forum = ds.client.get_channel(DEFAULT_IDS.forum)
        own = (await forum.create_thread(name="mine", content="q")).thread
        own = await own.edit(name="still mine", archived=True)  # the owner may archive
        own = await own.edit(archived=False)  # and unarchive (not locked)
        with pytest.raises(discord.Forbidden) as refused:
            await own.edit(locked=True)
        assert refused.value.code == 50013
        other = ds.ids.next()  # a post someone else made, archived
        meta = {**ds.threads[own.id]["thread_metadata"], "archived": False}
        ds.threads[other] = {
            **ds.threads[own.id],
            "id": str(other),
            "owner_id": "42",
            "thread_metadata": meta,
        }
        for change in ({"name": "renamed by the bot"}, {"archived": True}):
            with pytest.raises(discord.Forbidden):
                await ds.client.http.edit_channel(other, **change)
        meta["archived"] = True
        await ds.client.http.edit_channel(other, archived=False)  # unarchiving: allowed

    discord_standin.run(make_bot, scenario)


# ---------------------------------------------------------------------------- network delay


def test_a_round_trip_delay_slows_each_leg_and_counts_against_the_deadline(
    discord_standin,
) -> None:
    """With 0.1 s each way, an interaction reaches the bot 0.1 s after Discord made it
    and its answer reaches Discord 0.1 s after it left: at least 0.2 s in all (a lower
    bound only: a loaded machine is slower, never faster). A deadline shorter than the
    two legs refuses even an answer sent at once (10062)."""
    discord_standin.config.round_trip_delay = 0.1

    async def scenario(ds: Standin) -> tuple[float, Any]:
        await ds.wait_connected()
        loop = asyncio.get_running_loop()
        started = loop.time()
        await ds.slash("ping")
        took = loop.time() - started
        ds.config.response_deadline = 0.15
        ds.expect_error_log("10062")  # the toy bot's command logs the refusal
        late = await ds.slash("ping", wait=False)
        await late.wait_response(timeout=5)
        return took, late

    took, late = discord_standin.run(make_bot, scenario)
    assert took >= 0.2, took
    assert late.response.error_code == 10062


def test_the_delay_can_be_set_for_a_whole_run_from_the_environment(monkeypatch) -> None:
    from tests.discord_standin import fixtures

    monkeypatch.setenv("STANDIN_DELAY", "0.08")
    runner = next(fixtures.discord_standin.__wrapped__())
    assert runner.config.round_trip_delay == 0.08


# ---------------------------------------------------------------------------- rate limits


def test_messages_are_limited_per_channel_as_discord_does(discord_standin) -> None:
    """Five messages per channel in five seconds: a sixth in the same channel waits for
    the window (discord.py reads the headers), another channel has a bucket of its own."""
    assert discord_standin.config.route_limits["POST channel_message"] == (5, 5.0)
    discord_standin.config.route_limits["POST channel_message"] = (5, 0.5)

    async def scenario(ds: Standin) -> list[Any]:
        await ds.wait_connected()
        general = ds.client.get_channel(DEFAULT_IDS.general)
        other = ds.client.get_channel(DEFAULT_IDS.bot_log)
        for i in range(5):
            await general.send(f"general {i}")
        await other.send("other 0")  # a bucket of its own: not held
        await general.send("general 5")  # waits for the window's end
        return ds.requests_to("channel_message")

    sent = discord_standin.run(make_bot, scenario)
    assert [r.status for r in sent] == [200] * 7, "discord.py waited: no 429"
    remaining = [r.response_headers["X-RateLimit-Remaining"] for r in sent]
    assert remaining == ["4", "3", "2", "1", "0", "4", "4"]
    assert sent[-1].at - sent[4].at >= 0.4, "the sixth waited for the window"


def test_the_global_limit_spans_routes_and_spares_interaction_answers(discord_standin) -> None:
    discord_standin.config.global_limit = (3, 0.3)

    async def scenario(ds: Standin) -> list[Any]:
        await ds.wait_connected()
        for _ in range(4):  # answers to interactions: outside the global limit
            await ds.slash("ping")
        http = ds.client.http
        for channel in (DEFAULT_IDS.general, DEFAULT_IDS.bot_log, DEFAULT_IDS.forum):
            await http.get_channel(channel)  # three routes' worth of the global budget
        await http.get_channel(DEFAULT_IDS.general)  # the fourth: global 429, then retried
        return ds.requests

    requests = discord_standin.run(make_bot, scenario)
    callbacks = [r for r in requests if r.route == "interaction_callback"]
    assert [r.status for r in callbacks] == [200] * 4
    reads = [r for r in requests if r.route == "channel" and r.method == "GET"]
    limited = [r for r in reads if r.status == 429]
    assert limited and all(r.response["global"] is True for r in limited)
    assert limited[0].response_headers.get("X-RateLimit-Global") == "true"
    assert [r.status for r in reads].count(200) == 4, "discord.py retried after retry_after"
