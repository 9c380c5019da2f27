"""``wikibot doctor``: the deployment checklist, run against the stand-in over REST."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from bot.cli import main
from bot.doctor import ChannelNeed, command_differences, run_checks
from knowledge.service import KnowledgeBase, demo_wiki_dir
from tests.discord_standin import DEFAULT_IDS, ChannelSpec
from tests.github_standin import github_standin, tarball, tree_files

MISSING_GUILD = 910000000000000777


def _config(tmp_path: Path, guilds: list[int], *, index: bool = True, extra: str = "") -> Path:
    data = tmp_path / "data"
    if index:
        KnowledgeBase.open(demo_wiki_dir(), data).close()
    path = tmp_path / "config.yaml"
    path.write_text(
        f"discord:\n  guild_ids: {guilds}\nwiki:\n  path: {demo_wiki_dir()}\n"
        f"  data_dir: {data}\n{extra}",
        encoding="utf-8",
    )
    return path


def _sync(tmp_path: Path) -> None:
    synced = tmp_path / "sync"
    synced.mkdir()
    assert main(["sync", "--config", str(_config(synced, [DEFAULT_IDS.guild], index=False))]) == 0


def test_doctor_passes_when_everything_is_in_place(threaded_standin, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DISCORD_TOKEN", threaded_standin.config.token)
    _sync(tmp_path)
    config = _config(tmp_path, [DEFAULT_IDS.guild])
    capsys.readouterr()
    assert main(["doctor", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "[FAIL]" not in out and out.rstrip().endswith("checks passed.")
    assert "logged in as WikiBot" in out and "the app is in Stand-in Guild" in out
    assert "as the code declares them" in out and "Search index: up to date" in out
    assert [r.method for r in threaded_standin.requests_to("guild_commands")] == ["PUT", "GET"]


def test_doctor_names_a_server_the_app_is_not_in_with_the_fix(
    threaded_standin,
    tmp_path,
    monkeypatch,
    capsys,
):
    monkeypatch.setenv("DISCORD_TOKEN", threaded_standin.config.token)
    _sync(tmp_path)
    config = _config(tmp_path, [DEFAULT_IDS.guild, MISSING_GUILD])
    capsys.readouterr()
    assert main(["doctor", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    print(out)  # the transcript, for the record
    failures = [line for line in out.splitlines() if line.startswith("[FAIL]")]
    assert failures == [
        f"[FAIL] Server {MISSING_GUILD}: the app is not in this server (403 Missing Access)"
    ]
    fix = out.splitlines()[out.splitlines().index(failures[0]) + 1]
    assert f"client_id={DEFAULT_IDS.app}" in fix and "scope=bot+applications.commands" in fix
    assert out.rstrip().endswith("1 of 8 checks failed.")


def test_doctor_finds_unsynced_commands_a_refused_token_and_a_missing_index(
    threaded_standin,
    tmp_path,
    monkeypatch,
    capsys,
):
    monkeypatch.setenv("DISCORD_TOKEN", threaded_standin.config.token)
    config = _config(tmp_path, [DEFAULT_IDS.guild], index=False)
    assert main(["doctor", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    (commands,) = [line for line in out.splitlines() if "Commands in server" in line]
    assert commands.startswith("[FAIL] Commands in server Stand-in Guild: out of date:")
    assert "/acronym missing" in commands and "/wiki missing" in commands
    assert "fix: Run `wikibot sync --config" in out
    assert "[FAIL] Search index: none yet" in out and "wikibot index --wiki" in out
    monkeypatch.setenv("DISCORD_TOKEN", "wrong.token.value")
    assert main(["doctor", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] Token: Discord refused the token" in out and "wrong.token.value" not in out


def test_doctor_checks_the_bots_permissions_in_a_needed_channel(threaded_standin, tmp_path):
    import asyncio

    send = 1 << 11
    locked = 910000000000000398
    threaded_standin.guild.channels.append(
        ChannelSpec(locked, "help-desk", 0, 9, overwrites=((DEFAULT_IDS.role_bot, 0, 0, send),))
    )
    needs = [
        ChannelNeed(locked, send | (1 << 14), "the help forum"),
        ChannelNeed(DEFAULT_IDS.general, send | (1 << 14), "answers"),
    ]
    config = _config(tmp_path, [DEFAULT_IDS.guild], index=False)
    checks = asyncio.run(run_checks(config, threaded_standin.config.token, extra_needs=needs))
    by_text = {c.text: c for c in checks}
    # Without Send Messages, Discord drops Embed Links (and Attach Files) too.
    missing = by_text[
        "Channel #help-desk (the help forum): the bot lacks Send Messages, Embed Links"
    ]
    assert missing.ok is False
    assert "allow Send Messages, Embed Links for the bot's role WikiBot" in missing.fix
    assert by_text["Channel #general (answers): the bot has every permission it needs"].ok


def test_command_differences_name_what_changed():
    mine = {"name": "runbook", "type": 1, "description": "Runbook", "options": []}
    theirs = {**mine, "id": "1", "version": "2", "integration_types": [0], "contexts": None}
    assert command_differences([mine], [theirs]) == []
    changed = {**theirs, "description": "Old text"}
    old = {"name": "legacy", "type": 1, "description": "x"}
    assert command_differences([mine], [changed, old]) == [
        "/legacy no longer in the code",
        "/runbook differs (description)",
    ]
    assert command_differences([mine], []) == ["/runbook missing"]


def test_doctor_checks_the_help_forum_of_the_support_intake(threaded_standin, tmp_path):
    import asyncio

    extra = f"support:\n  forum_channel_id: {DEFAULT_IDS.forum}\n"
    config = _config(tmp_path, [DEFAULT_IDS.guild], index=False, extra=extra)
    checks = asyncio.run(run_checks(config, threaded_standin.config.token))
    forum, listing = [c for c in checks if c.text.startswith("Channel #")]
    assert forum.text == (
        "Channel #help (the help forum, support.forum_channel_id):"
        " the bot has every permission it needs"
    )
    assert forum.ok and listing.ok
    [listed] = threaded_standin.requests_to("archived_threads")
    assert listed.path == f"/channels/{DEFAULT_IDS.forum}/threads/archived/public"


def test_doctor_shows_the_wiki_source_its_commit_and_its_last_error(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    data = tmp_path / "data"
    config = tmp_path / "config.yaml"
    with github_standin() as gh:
        config.write_text(
            f"discord:\n  guild_ids: []\nwiki:\n  source: github:owner/wiki\n"
            f"  api_url: {gh.url}\n  data_dir: {data}\n",
            encoding="utf-8",
        )
        fetch = f"wikibot wiki fetch --source github:owner/wiki --api-url {gh.url} --data {data}"
        assert main(["doctor", "--config", str(config)]) == 1
        out = capsys.readouterr().out
        assert "wiki github:owner/wiki)" in out
        assert f"[FAIL] Wiki source: nothing fetched yet from github:owner/wiki into {data}" in out
        assert f"fix: Run `{fetch}`, or start the bot" in out
        assert "Wiki folder" not in out

        files = tree_files(demo_wiki_dir())
        sha = gh.publish("owner", "wiki", "main", tarball(files))
        assert main(["wiki", "fetch", *fetch.split()[3:]]) == 0
        capsys.readouterr()
        assert main(["doctor", "--config", str(config)]) == 1  # no DISCORD_TOKEN
        lines = capsys.readouterr().out.splitlines()
        (source,) = [line for line in lines if "Wiki source:" in line]
        assert source.startswith("[ok]") and f"github:owner/wiki at commit {sha[:12]}," in source
        (folder,) = [line for line in lines if "Wiki folder:" in line]
        assert folder.startswith("[ok]") and f"in {data}" in folder and sha in folder
        assert any(line.startswith("[FAIL] Search index: none yet") for line in lines)
        fix = f"       fix: Run `wikibot index --data {data}`, or /wiki reindex;"
        assert any(line.startswith(fix) for line in lines)

        gh.publish("owner", "wiki", "main", tarball({**files, "../evil.md": b"# x\n"}, prefix=""))
        assert main(["wiki", "fetch", *fetch.split()[3:]]) == 1
        capsys.readouterr()
        assert main(["doctor", "--config", str(config)]) == 1
        lines = capsys.readouterr().out.splitlines()
        sources = [line for line in lines if "Wiki source:" in line]
        assert f"github:owner/wiki at commit {sha[:12]}," in sources[0], "the live one is kept"
        assert sources[1].startswith("[FAIL] Wiki source: the last check, ")
        assert "failed: member name with '..'" in sources[1]


def test_doctor_fails_on_a_data_folder_it_cannot_write(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    config = _config(tmp_path, [DEFAULT_IDS.guild], index=False)
    (tmp_path / "data").write_text("a file where the folder should be", encoding="utf-8")
    assert main(["doctor", "--config", str(config)]) == 1
    lines = capsys.readouterr().out.splitlines()
    (data,) = [line for line in lines if "Data folder:" in line]
    assert data.startswith(f"[FAIL] Data folder: cannot write in {tmp_path / 'data'} (")
    fix = lines[lines.index(data) + 1]
    assert "make it writable for this user, or set wiki.data_dir in" in fix and str(config) in fix

    (tmp_path / "data").unlink()
    assert main(["doctor", "--config", str(config)]) == 1  # still no token
    out = capsys.readouterr().out
    assert f"[ok]   Data folder: {tmp_path / 'data'} can be written" in out
    # What the support intake keeps of an uploaded log is named with the folder.
    assert "uploaded logs: files up to 8.0 MB are read, a log's last 200,000 characters" in out


def test_doctor_names_read_message_history_in_the_help_forum(threaded_standin, tmp_path):
    import asyncio

    history = 1 << 16  # a retried filing looks for its post among the forum's posts
    threaded_standin.guild.channels[:] = [
        dataclasses.replace(c, overwrites=((DEFAULT_IDS.role_bot, 0, 0, history),))
        if c.id == DEFAULT_IDS.forum
        else c
        for c in threaded_standin.guild.channels
    ]
    extra = f"support:\n  forum_channel_id: {DEFAULT_IDS.forum}\n"
    config = _config(tmp_path, [DEFAULT_IDS.guild], index=False, extra=extra)
    checks = asyncio.run(run_checks(config, threaded_standin.config.token))
    (forum,) = [c for c in checks if c.text.startswith("Channel #")]
    assert forum.ok is False
    assert forum.text.endswith("the bot lacks Read Message History")


def _staff_channel(standin, allow: int, deny: int = 0) -> None:
    """The stand-in's staff channel (private tickets) with the bot's role allowed
    ``allow`` and denied ``deny`` there."""
    standin.guild.channels[:] = [
        dataclasses.replace(c, overwrites=((DEFAULT_IDS.role_bot, 0, allow, deny),))
        if c.id == DEFAULT_IDS.bot_log
        else c
        for c in standin.guild.channels
    ]


PRIVATE_THREADS = 1 << 36
HISTORY = 1 << 16


def test_doctor_says_what_a_private_ticket_channel_without_read_message_history_breaks(
    threaded_standin, tmp_path
):
    """A retried private filing lists the staff channel's archived private threads and
    reads their messages: without Read Message History it cannot find the thread an
    interrupted attempt made. The doctor names the permission and says what breaks."""
    import asyncio

    _staff_channel(threaded_standin, PRIVATE_THREADS, HISTORY)
    extra = f"support:\n  private_channel_id: {DEFAULT_IDS.bot_log}\n"
    config = _config(tmp_path, [DEFAULT_IDS.guild], index=False, extra=extra)
    checks = asyncio.run(run_checks(config, threaded_standin.config.token))
    (staff,) = [c for c in checks if "support.private_channel_id" in c.text]
    assert staff.ok is False
    assert staff.text == (
        "Channel #bot-log (private tickets, support.private_channel_id):"
        " the bot lacks Read Message History"
    )
    assert "allow Read Message History for the bot's role WikiBot." in staff.fix
    assert "Without them: a private ticket whose post a restart or an error interrupted" in (
        staff.fix
    )
    assert "retry fails and is tried again" in staff.fix
    assert "Create Private Threads" not in staff.fix, "only what is missing is explained"

    _staff_channel(threaded_standin, PRIVATE_THREADS)
    checks = asyncio.run(run_checks(config, threaded_standin.config.token))
    private = [c for c in checks if "support.private_channel_id" in c.text]
    assert [c.ok for c in private] == [True, True]
    assert private[1].text.endswith(
        "a retried filing can list its threads to find a post made before"
    )
    assert threaded_standin.requests_to("joined_archived_threads")[-1].status == 200
    assert threaded_standin.requests_to("active_threads")


def test_doctor_lists_the_threads_a_retry_reads_and_says_when_discord_refuses(
    threaded_standin, tmp_path
):
    """The permissions look right, but Discord refuses the listing a retried filing
    reads (here the forum's archived posts): the doctor tried it, so it says so."""
    import asyncio

    from tests.discord_standin.faults import fail

    fail(threaded_standin, "archived_threads", status=403, code=50001, message="Missing Access")
    extra = f"support:\n  forum_channel_id: {DEFAULT_IDS.forum}\n"
    config = _config(tmp_path, [DEFAULT_IDS.guild], index=False, extra=extra)
    checks = asyncio.run(run_checks(config, threaded_standin.config.token))
    forum = [c for c in checks if c.text.startswith("Channel #help")]
    assert [c.ok for c in forum] == [True, False]
    assert forum[1].text == (
        "Channel #help (the help forum, support.forum_channel_id): Discord refused the thread"
        " listing a retried filing reads (403 Missing Access)"
    )
    assert "its retry fails and is tried again and the ticket stays pending" in forum[1].fix


def test_every_permission_a_ticket_channel_needs_is_named_and_worded():
    """The bits the doctor checks and the permissions it explains are the same ones."""
    import discord

    from bot.doctor import (
        HELP_FORUM_NEEDS,
        HELP_FORUM_PERMISSIONS,
        PRIVATE_TICKET_NEEDS,
        PRIVATE_TICKET_PERMISSIONS,
    )
    from knowledge.templates import load_templates

    t = load_templates("bot.yaml")
    for bits, names, head in (
        (HELP_FORUM_PERMISSIONS, HELP_FORUM_NEEDS, "doctor.without_forum."),
        (PRIVATE_TICKET_PERMISSIONS, PRIVATE_TICKET_NEEDS, "doctor.without_private."),
    ):
        assert discord.Permissions(**dict.fromkeys(names, True)).value == bits
        assert all(t(head + name) for name in names)


# --- first-run papercuts ---------------------------------------------------------------


def test_without_a_config_file_the_fix_says_how_to_make_one(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    missing = tmp_path / "config.yaml"
    assert main(["doctor", "--config", str(missing)]) == 1
    out = capsys.readouterr().out
    assert "key named above" not in out
    assert f"fix: Copy config.example.yaml to {missing} and edit it" in out


def test_the_examples_placeholder_ids_are_refused(tmp_path, monkeypatch, capsys):
    import re

    import yaml

    from bot.doctor import PLACEHOLDER_IDS
    from tests.support import ROOT

    example = (ROOT / "config.example.yaml").read_text("utf-8")
    # Every id in the example (set or commented out) is one the doctor knows as a placeholder.
    assert set(map(int, re.findall(r"\b\d{17,20}\b", example))) == PLACEHOLDER_IDS
    (placeholder,) = yaml.safe_load(example)["discord"]["guild_ids"]
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    extra = (
        f"support:\n  forum_channel_id: {placeholder}\n  private_channel_id: {placeholder}\n"
        f"  helper_role_id: {placeholder}\n"
    )
    config = _config(tmp_path, [placeholder, DEFAULT_IDS.guild], extra=extra)
    assert main(["doctor", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "placeholder of config.example.yaml" in line]
    assert len(lines) == 4 and all(line.startswith("[FAIL]") for line in lines)
    assert f"discord.guild_ids holds {placeholder}" in lines[0]
    assert f"support.forum_channel_id holds {placeholder}" in lines[1]
    assert f"support.private_channel_id holds {placeholder}" in lines[2]
    assert f"support.helper_role_id holds {placeholder}" in lines[3]


def test_without_a_token_the_checks_that_need_one_are_listed_as_skipped(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    extra = f"support:\n  forum_channel_id: {DEFAULT_IDS.forum}\n"
    config = _config(tmp_path, [DEFAULT_IDS.guild, MISSING_GUILD], extra=extra)
    assert main(["doctor", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    skipped = [line for line in out.splitlines() if line.startswith("[skip]")]
    assert skipped == [
        f"[skip] Server {DEFAULT_IDS.guild}: not checked without a token",
        f"[skip] Server {MISSING_GUILD}: not checked without a token",
        "[skip] Commands: not checked without a token",
        "[skip] Channel permissions: not checked without a token",
    ]
    assert out.rstrip().endswith("1 of 5 checks failed."), "skipped checks are not counted"


def test_the_page_count_is_the_indexs_and_a_page_under_images_is_read(
    tmp_path, monkeypatch, capsys
):
    """A guide kept in images/ was dropped by a folder skip list the doctor did not share:
    the doctor counted it, the index did not, and nothing said why."""
    import shutil

    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    (wiki / "images").mkdir(exist_ok=True)
    (wiki / "images" / "guide.md").write_text("# A deployment guide\n\nSteps.\n", "utf-8")
    (wiki / ".github").mkdir()
    (wiki / ".github" / "PULL_REQUEST_TEMPLATE.md").write_text("# Template\n", "utf-8")
    data = tmp_path / "data"
    kb = KnowledgeBase.open(wiki, data)
    indexed = len(kb.wiki.pages)
    assert "images/guide.md" in kb.wiki.pages
    kb.close()
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    config = tmp_path / "config.yaml"
    config.write_text(f"wiki:\n  path: {wiki}\n  data_dir: {data}\n", encoding="utf-8")
    main(["doctor", "--config", str(config)])
    out = capsys.readouterr().out
    assert f"Wiki folder: {indexed} pages in {wiki}" in out


def test_doctor_checks_that_a_forum_requiring_tags_gets_one_on_every_post(
    threaded_standin, tmp_path
):
    import asyncio

    from tests.discord_standin.payloads import ForumTagSpec

    tags = (ForumTagSpec(DEFAULT_IDS.tag_open + 50, "needs help"),)
    threaded_standin.guild.channels[:] = [
        dataclasses.replace(c, flags=1 << 4, available_tags=tags)
        if c.id == DEFAULT_IDS.forum
        else c
        for c in threaded_standin.guild.channels
    ]
    results = {}
    for name, default in (("none", ""), ("typo", "needs hepl"), ("set", "needs help")):
        extra = f"support:\n  forum_channel_id: {DEFAULT_IDS.forum}\n"
        if default:
            extra += f"  default_tag: {default}\n"
        folder = tmp_path / name
        folder.mkdir()
        config = _config(folder, [DEFAULT_IDS.guild], index=False, extra=extra)
        checks = asyncio.run(run_checks(config, threaded_standin.config.token))
        (results[name],) = [c for c in checks if c.text.startswith("Help forum tags")]
    assert results["none"].ok is False and "Require tags" in results["none"].text
    assert "support.default_tag" in results["none"].fix and "needs help" in results["none"].fix
    assert results["typo"].ok is False and "needs hepl" in results["typo"].text
    assert results["set"].ok and "needs help" in results["set"].text


def test_doctor_checks_that_the_helpers_ping_would_notify(threaded_standin, tmp_path):
    import asyncio

    role = next(r for r in threaded_standin.guild.roles if r.id == DEFAULT_IDS.role_member)
    results = {}
    for name, role_id, mentionable in (
        ("muted", role.id, False),
        ("ok", role.id, True),
        ("unknown", 910000000000000999, True),
    ):
        threaded_standin.guild.roles[:] = [
            dataclasses.replace(r, mentionable=mentionable) if r.id == role.id else r
            for r in threaded_standin.guild.roles
        ]
        extra = f"support:\n  forum_channel_id: {DEFAULT_IDS.forum}\n  helper_role_id: {role_id}\n"
        folder = tmp_path / name
        folder.mkdir()
        config = _config(folder, [DEFAULT_IDS.guild], index=False, extra=extra)
        checks = asyncio.run(run_checks(config, threaded_standin.config.token))
        (results[name],) = [c for c in checks if c.text.startswith("Helper ping")]
    assert results["muted"].ok is False and "not mentionable" in results["muted"].text
    assert "Mention All Roles" in results["muted"].fix
    assert results["ok"].ok and role.name in results["ok"].text
    assert results["unknown"].ok is False and "not a role" in results["unknown"].text
