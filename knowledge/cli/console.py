"""The console: the slash-command syntax of ``wikibot console`` and ``wikibot ask``.

``dispatch(kb, "/runbook qwen")`` returns the same :class:`Reply` the Discord
command would; ``render_text`` prints it for a terminal; ``run_console`` is the
interactive prompt.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from knowledge import answers
from knowledge.reply import Reply
from knowledge.service import KnowledgeBase
from knowledge.templates import Templates, load_templates
from knowledge.text import escape_markdown

if TYPE_CHECKING:
    from knowledge.llm import LlmSettings

__all__ = ["COMMANDS", "dispatch", "render_text", "run_console"]

log = logging.getLogger(__name__)

_UNESCAPE = re.compile(r"\\([\\*_`~|>#\[\]()\-+!<:])")
_BOLD = re.compile(r"(?<!\\)\*\*(.+?)(?<!\\)\*\*", re.DOTALL)
_OPTION = re.compile(r"^(in|page):(\S+)$", re.IGNORECASE)
_QUIT = frozenset({"quit", "exit", "q"})
#: Bare words (no slash) that ask for help rather than search for themselves.
_HELP = frozenset({"help", "?"})
_HISTORY_LINES = 1000
_TITLE_RULE = 72
_PAGES_SHOWN = 5


def _runbook(kb: KnowledgeBase, arg: str) -> Reply:
    words = arg.split()
    if len(words) > 1 and words[-1].casefold() in ("versions", "launch"):
        action = words[-1].casefold()
        reply = kb.runbook(" ".join(words[:-1]))
        key = reply.meta.get("family")
        if reply.kind == "runbook" and key:
            return kb.versions(key) if action == "versions" else kb.launch(key)
        return reply
    return kb.runbook(arg)


def _search(kb: KnowledgeBase, arg: str) -> Reply:
    words, category, page = [], None, 1
    for word in arg.split():
        option = _OPTION.match(word)
        if option and option.group(1).casefold() == "in":
            category = option.group(2)
        elif option and option.group(2).isdigit():
            page = int(option.group(2))
        else:
            words.append(word)
    return kb.search(" ".join(words), category=category, page=page)


def _triage(kb: KnowledgeBase, arg: str) -> Reply:
    from knowledge.answers.triage import triage_reply  # only /triage loads the engine
    from knowledge.triage.engine import triage

    context = kb.triage_context
    return triage_reply(triage(context, {"text": arg}), context.templates)


COMMANDS: dict[str, Callable[[KnowledgeBase, str], Reply]] = {
    "runbook": _runbook,
    "acronym": lambda kb, arg: kb.acronym(arg),
    "search": _search,
    "explain": lambda kb, arg: kb.explain(arg),
    "status": lambda kb, arg: kb.status(),
    "triage": _triage,
    "help": lambda kb, arg: answers.help_reply(kb.t, console=True),
    # Answers in words: off here; dispatch(..., llm=settings) answers it (knowledge.cli.ask_llm).
    "ask": lambda kb, arg: _ask(kb, arg, None),
}


def _ask(kb: KnowledgeBase, arg: str, llm: LlmSettings | None) -> Reply:
    from knowledge.cli.ask_llm import ask_reply  # only /ask loads the model client

    return ask_reply(kb, arg, llm)


def dispatch(kb: KnowledgeBase, line: str, llm: LlmSettings | None = None) -> Reply:
    """Run one console line such as ``/acronym DCP`` and return its reply.

    A line without a leading slash is a search (a pasted question works too). ``llm``:
    the model server ``/ask`` answers with (None: ``/ask`` says it is off).
    """
    line = line.strip()
    commands = ", ".join(f"/{c}" for c in COMMANDS)
    if not line.lstrip("/").strip():
        return Reply(
            "not_found",
            kb.t("cli.empty_title"),
            kb.t("cli.empty", commands=commands),
            ephemeral=True,
        )
    if line.casefold() in _HELP:  # like bare `exit` and `quit`
        return COMMANDS["help"](kb, "")
    if not line.startswith("/"):
        return _search(kb, line)
    name, _, arg = line.lstrip("/").partition(" ")
    if name.casefold() == "ask":
        return _ask(kb, arg.strip(), llm)
    handler = COMMANDS.get(name.casefold())
    if handler is None:
        return Reply(
            "error",
            kb.t("common.unknown_command_title"),
            kb.t("common.unknown_command", name=escape_markdown(name[:40]), commands=commands),
            ephemeral=True,
        )
    return handler(kb, arg.strip())


def render_text(reply: Reply, t: Templates | None = None) -> str:
    """A reply as plain terminal text (escapes removed, links kept)."""
    t = t or load_templates()
    reply = reply.fitted()
    title = _plain(reply.title)
    out = [title, "=" * min(len(title), _TITLE_RULE)]
    if reply.text:
        out.append(_plain(reply.text))
    for field in reply.fields:
        out.append("")
        out.append(_plain(field.name))
        out.append("  " + _plain(field.value).replace("\n", "\n  "))
    if reply.pages:
        out.append("")
        out.append(t("cli.pages", refs=", ".join(p.ref for p in reply.pages[:_PAGES_SHOWN])))
    if reply.footer:
        out.append("")
        out.append(_plain(reply.footer))
    for attached in reply.files:
        out.append("")
        out.append(t("cli.attachment", name=attached.name))
        out.append(attached.text.rstrip("\n"))
    return "\n".join(out)


def _command_name(line: str) -> str:
    """The command a console line runs, for the log: never the words the user typed."""
    if not line.startswith("/"):
        return "/search"
    words = line[1:].split(maxsplit=1)
    name = words[0].casefold() if words else ""
    return f"/{name}" if name in COMMANDS or name == "support" else "an unknown command"


def _plain(text: str) -> str:
    """Markdown escapes and bold markers removed; code spans and links kept."""
    return _UNESCAPE.sub(r"\1", _BOLD.sub(r"\1", text))


def run_console(kb: KnowledgeBase, history: str, llm: LlmSettings | None = None) -> None:
    """Read commands from the prompt until ``/quit`` or end of input; ``history`` is kept."""
    t = kb.t
    state = kb.state
    print(
        t(
            "cli.console_banner",
            root=state.wiki.root,
            pages=len(state.wiki.pages),
            revision=state.wiki.revision,
        )
    )
    try:
        import readline
    except ImportError:  # not on every platform; the prompt works without it
        readline = None
    if readline is not None:
        with contextlib.suppress(OSError):
            readline.read_history_file(history)
    try:
        while True:
            try:
                line = input(t.raw("cli.prompt"))
            except EOFError:
                print()
                break
            except KeyboardInterrupt:  # Ctrl-C drops the line typed, as a shell does
                print()
                continue
            line = line.strip()
            if not line:
                continue
            if line.lstrip("/").casefold() in _QUIT:
                break
            try:
                if line.lstrip("/").split()[0].casefold() == "support":
                    from knowledge.cli.tickets import store_problem, support_flow
                    from knowledge.intake.store import StoreTooNew, StoreUnavailable

                    try:  # asks item by item
                        support_flow(kb, render=lambda reply: render_text(reply, t))
                    except (StoreUnavailable, StoreTooNew) as exc:  # one line, the console lives
                        print(store_problem(exc))
                    continue
                print(render_text(dispatch(kb, line, llm), t))
            except KeyboardInterrupt:  # Ctrl-C during a command stops that command only
                print()
                print(t("cli.interrupted"))
            except Exception:  # keep the console alive whatever one command does
                # The command's name only: its arguments are what the user typed.
                log.exception("command failed: %s", _command_name(line))
                print(t("cli.command_failed"))
            print()
    finally:
        if readline is not None:
            with contextlib.suppress(OSError):
                readline.set_history_length(_HISTORY_LINES)
                readline.write_history_file(history)
