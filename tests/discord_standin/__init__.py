"""A stand-in for Discord on 127.0.0.1, to test the bot end to end through discord.py.

The bot under test runs its real discord.py 2.7.1 code (REST over aiohttp, the
gateway websocket, app command trees, views, modals) against an aiohttp server
in the test process. The stand-in serves the start-up sequence and one guild,
stores the synced command schema, injects interactions as a user would, checks
every reply against Discord's limits and answers errors exactly as Discord does
(400 code 50035 with a field path, 40060, 10062, ...), and records every request
so tests assert on the JSON the bot sent. Facts behind it:
Discord's API documentation and the OpenAPI description vendored in
``tests/discord_standin/spec/``.

Writing a test
==============

The ``discord_standin`` fixture (registered in ``tests/conftest.py``) yields a
:class:`StandinRunner`. Tests are plain synchronous functions; the async part is
a ``scenario`` coroutine that ``run`` executes in a fresh event loop, with the
stand-in and the bot started inside that loop::

    def test_ping_answers(discord_standin):
        async def scenario(ds):                      # ds: Standin, bot connected and ready
            rec = await ds.slash("ping", text="hi")  # returns once the bot's callback came
            assert rec.response.callback_type == 4   # 4 message, 5 defer, 7 update, 8, 9 ...
            assert rec.response.message["content"] == "hi"

        discord_standin.run(make_bot, scenario)

``make_bot`` is the *bot factory*: ``make_bot(*, http_trace) -> discord.Client``
(or a coroutine returning one). **The bot must accept ``http_trace`` and pass it
to ``discord.Client(..., http_trace=http_trace)``**: it is the aiohttp
``TraceConfig`` that refuses any host but loopback (the run fails if the client
does not carry it). Other client settings are the bot's own (intents,
``allowed_mentions``, ...). For the real bot, something like
``lambda **kw: create_bot(config, **kw)``. The runner forces
``guild_ready_timeout`` (0.05 s) and ``chunk_guilds_at_startup=False`` onto the
client's connection state so start-up takes tens of milliseconds, then calls
``client.start(token)`` and waits until ready (``setup_hook`` and any
``tree.sync`` have run by then). Sync to ``DEFAULT_IDS.guild``.

What fails a run (``StandinFailure``, an ``AssertionError``, with a readable report):

- any ERROR record from the loggers in ``config.error_loggers`` (default
  ``("discord", "bot")``): an exception inside a command is only logged by
  discord.py, so this is how it surfaces. Allow an expected one with
  ``ds.expect_error_log(regex)`` (the run then fails if it never comes);
- any request to a route the stand-in does not know (answered 404 and recorded
  as ``route == "unknown"``), or to a host that is not loopback;
- any request body that Discord's OpenAPI description (vendored, pinned, in
  ``spec/``; see ``openapi.py``) refuses, named by operation, body path and
  schema path (``[spec] POST /channels/{channel_id}/messages: ... at
  $.embeds[0].color (schema path ...)``), unless the stand-in itself refused it
  with 400; and any success response of the stand-in that does not match the
  spec's response schema (``[spec-response]``). ``config.check_spec`` turns both off;
- ``client.start()`` dying, and helpers timing out (``StandinTimeout``) when the
  bot never sends what they wait for.
Waiting helpers fail fast as soon as such a problem turns up. Problems raised by
``run`` count as reported; the fixture fails at teardown only for any left over.

Measured here: start-up about 55 ms (50 of them discord.py's ``guild_ready_timeout``),
an interaction round trip about 2 ms, settle and shutdown about 20 ms.

Start-up knobs live in ``discord_standin.config`` (:class:`StandinConfig`), read
at each ``run``: ``response_deadline`` (3.0 s), ``token_lifetime`` (900 s),
``wait_timeout`` (5 s), ``error_loggers``, ``allowed_privileged_intents``,
``guild`` (a :class:`~.payloads.GuildSpec`), ``default_user_id``,
``default_channel_id``. Without the fixture: ``async with run_bot(factory, config)
as ds: ...`` does the same inside your own event loop.

The guild (``DEFAULT_IDS``, see ``payloads.default_guild``)
============================================================

Guild ``DEFAULT_IDS.guild`` with a "support" category (type 4), text channels
``general`` (the default channel) and ``bot-log``, a forum ``help`` (type 15,
tags ``tag_open``/``tag_solved``) and an announcement channel. Roles: @everyone,
``role_member``, ``role_moderator`` (manage messages/threads), the bot's managed
role. Members: the bot (``DEFAULT_IDS.bot`` == application id), ``alice``
(Member, the default user), ``mod`` (Moderator + Member), ``newbie`` (no roles),
``owner`` (owns the guild). Any other user id works too (a member is made up).

Driving the bot (methods of :class:`Standin`; all return an :class:`InteractionRecord`
once the bot's first callback arrived, or at once with ``wait=False``)
==========================================================================

Every helper takes ``user_id=`` (default alice), ``role_ids=`` (override the
member's roles) and, where it makes sense, ``channel_id=``. Payloads carry every
key discord.py requires (``attachment_size_limit``, ``member.permissions``, ...).

- ``await ds.slash("wiki pages find", query="nccl", limit=3)`` - a chat input
  command; the path names subcommand groups/subcommands. Options are typed from
  the **synced schema**: an unsynced command raises ``LookupError`` (as Discord
  would not offer it), a missing required option, an unknown option, a value
  outside choices / min / max raise ``ValueError``. ``options={...}`` for names
  that are not identifiers. User/channel/role options take ids and fill
  ``resolved``; attachment options take ``ds.attachment("x.log", b"...")`` (its
  URL is served on loopback, so ``Attachment.read()`` works).
- ``await ds.autocomplete("wiki pages find", focused="query", value="nc", **others)``
  - interaction type 4 with ``"focused": true``; ``rec.choices`` is the answer.
- ``await ds.message_command("Quote", ds.make_message("text", author_id=...))``
  - message context menu with ``target_id`` and ``resolved.messages``;
  ``ds.user_command("Name", target_user_id)`` for user context menus.
- ``await ds.press(message_or_id, "custom_id")`` - a button on a message the bot
  sent (its *current* version; a missing or disabled button raises);
  ``await ds.select(message, "custom_id", ["value", ...])`` for select menus.
- ``await ds.submit_modal(opened_rec, {"custom_id": "typed text", ...})`` - submit
  the modal the bot opened in answer to ``opened_rec`` (type 5, components
  mirrored with ``value`` filled; ``discord.ui.Label`` is type 18). Lengths and
  required inputs are checked as the client would. Default user: the opener.
- ``rec = await ds.slash("x", wait=False)`` returns at once; then
  ``await rec.wait_response(timeout=0.2)`` (a bot that never answers fails with a
  ``StandinTimeout`` saying so, instead of waiting ``response_deadline + 1`` s).
- ``await ds.user_message("text", channel_id=...)`` dispatches MESSAGE_CREATE;
  ``await ds.dispatch("EVENT_NAME", data)`` sends any gateway event;
  ``ds.inject(ds.interaction_payload(kind, data, ...))`` for hand-made interactions.

Discord as the bot meets it
===========================

- **Contexts and installs.** ``slash``, ``autocomplete`` take ``context=`` (0 the
  guild, 1 the user's DM with the bot, 2 a DM between users) and ``install=`` (0
  installed to the guild, 1 to the user; in context 0 that is a guild the bot is
  not in, ``FOREIGN_GUILD_ID``). Outside a guild the payload has ``user``, no
  ``guild_id``, no ``member``. A command Discord would not offer there (a guild
  command, or ``contexts`` / ``integration_types`` leaving it out) raises
  ``LookupError``. Buttons pressed on such answers arrive from the same context.
- **Rate limits.** Every answer carries ``X-RateLimit-Limit/Remaining/Reset/
  Reset-After/Bucket`` per route and channel (or guild, interaction), from
  ``config.rate_limit`` (50 per second); going over is a 429.
  ``ds.rate_limit_next("channel_message", retry_after=0.05, is_global=False)``
  answers the next such request 429 with ``retry_after``, ``Retry-After``, ``Via``
  (and ``X-RateLimit-Global`` when global). ``RecordedRequest.response_headers``.
- **Gateway.** ``await ds.request_reconnect()`` sends op 7; the bot RESUMEs its
  session (``ds.session_id``), missed events are replayed, then RESUMED;
  ``await ds.wait_resumed()``. ``await ds.drop_connection(missed=[(event, data)])``
  closes the socket (4000) with events happening meanwhile, replayed on RESUME.
  An unknown session gets op 9. GUILD_CREATE carries
  only the bot as member unless the bot asked for the presences intent.
- **Joining.** ``config.joined = False``: the bot is not in the guild (READY lists
  none; guild routes answer 403 50001) until ``await ds.join_guild()``.
- **Permissions.** ``ChannelSpec.overwrites`` (``(id, 0 role / 1 member, allow,
  deny)``) are applied as Discord does; posting without Send Messages (or creating
  a thread without the permission) is 403 code 50013.
- **Clock.** The 3 seconds run from ``interaction_payload()`` (the interaction's
  creation), not from its delivery.
- **REST for checks.** ``GET /users/@me/guilds``, ``/guilds/{id}``,
  ``/guilds/{id}/channels``, ``/guilds/{id}/members/{user}``.

Reading back what the bot sent
==============================

``InteractionRecord`` (``rec``):

- ``rec.response`` - the first callback (:class:`RecordedRequest`): ``.status``,
  ``.json`` (body; multipart ``payload_json`` is decoded, files in ``.files``),
  ``.callback_type``, ``.message`` (the ``data`` message), ``.response`` (what
  the stand-in answered), ``.error_code`` (50035, 40060, 10062 ...);
  ``rec.callbacks`` lists all callbacks (a second one is refused with 40060).
- ``await rec.followup()`` - the next follow-up ``POST /webhooks/{app}/{token}``
  or edit ``PATCH .../messages/@original|{id}``; each call returns the next one.
  After a defer, Discord applies the first follow-up to the loading message, and
  so does the stand-in. ``await rec.wait_for(predicate)`` for anything else.
- ``await rec.answer()`` - the request that carries the bot's answer, wherever it
  lands: the first callback with a message (type 4, or 7 updating the pressed
  message), else the first follow-up or edit after a deferral (5 or 6). Its
  ``.shown`` is the message as the stand-in holds it afterwards. For tests that only
  care about the answer, not whether it came at once or after "thinking…".
- ``rec.original`` - current JSON of the original response message (after edits;
  for a component interaction, the message the component is on);
  ``rec.followup_messages``, ``rec.modal`` (type 9 data), ``rec.choices``,
  ``rec.payload`` (the INTERACTION_CREATE sent), ``rec.requests`` (all of them).

``Standin`` (``ds``): ``ds.requests`` (every request, in order), ``ds.requests_to(
"create_thread")``, ``await ds.wait_for_request(predicate)``, ``ds.commands``
(synced schemas by guild id, ``None`` for global) and ``ds.synced_command(name)``,
``ds.messages`` (id -> current message JSON), ``ds.channel_messages(id)``,
``ds.threads`` (forum posts: the starter message id is the thread id; those with
``thread_metadata.archived`` are left out of GUILD_CREATE and the active list and
served by ``archived_threads``, newest archived first, with ``before``/``limit``;
archived private threads the bot is in by ``joined_archived_threads``, newest id first),
``ds.mentions`` (every message-bearing request's ``allowed_mentions``, ``None``
when the bot sent none, and the ``pings`` Discord would send), ``ds.pings``,
``ds.assert_no_pings()``, ``ds.log_records`` (WARNING+), ``ds.gateway_received``,
``ds.identify``, ``ds.client`` (the bot). After a run, ``discord_standin.last``
is the same object, also when ``run`` raised.

Route names in ``RecordedRequest.route``: get_me, application_info, gateway,
gateway_bot, global_commands, guild_commands, my_guilds, guild, guild_channels,
guild_member, active_threads, archived_threads, joined_archived_threads,
interaction_callback, followup,
webhook_message, channel, channel_message, message, create_thread, typing,
reaction, cdn, unknown. To serve a new route, add it in ``Standin._add_routes``.

Limits enforced (``limits.py``; 400 code 50035 with Discord's error tree, which
discord.py prints as ``In data.embeds.0.title: Must be 256 or fewer in length.``):
content 2000; 10 embeds; title 256, description 4096, 25 fields (name 256, value
1024), footer 2048, author 256, 6000 in all; 5 action rows of 5 buttons,
custom_id 100, button label 80, 25 select options; autocomplete 25 choices, name
1-100, value 100; modal title 45, 1-5 components, text input value 4000, label
45, placeholder 100; command names/descriptions/options at sync; empty messages
(50006); a second response (40060); a first response later than
``response_deadline`` after INTERACTION_CREATE (404, 10062); follow-ups after
``token_lifetime`` (401, 50027); a modal answering a modal submit.
"""

from .payloads import DEFAULT_IDS, ChannelSpec, GuildSpec, MemberSpec, RoleSpec, default_guild
from .records import (
    InteractionRecord,
    MentionRecord,
    NonLoopbackRequest,
    RecordedRequest,
    StandinFailure,
    StandinTimeout,
)
from .runner import StandinRunner, run_bot
from .server import Standin, StandinConfig

__all__ = [
    "DEFAULT_IDS",
    "ChannelSpec",
    "GuildSpec",
    "InteractionRecord",
    "MemberSpec",
    "MentionRecord",
    "NonLoopbackRequest",
    "RecordedRequest",
    "RoleSpec",
    "Standin",
    "StandinConfig",
    "StandinFailure",
    "StandinRunner",
    "StandinTimeout",
    "default_guild",
    "run_bot",
]
