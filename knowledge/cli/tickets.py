"""``wikibot tickets``: file, list and show support tickets; the console's ``/support``.

    wikibot tickets file [--wiki DIR] [--data DIR] REQUEST.yaml   # prints the new id
    wikibot tickets list [--data DIR] [--json] [--status S] [--family F]
    wikibot tickets show [--data DIR] [--json] ID
    wikibot tickets export [--data DIR] [--format md|json] [--output FILE] ID
    wikibot tickets answers [--data DIR] [--json] [--not-in-wiki]

The request file holds the same fields as ``wikibot triage`` (or the labels of the
wiki's question template). Tickets live in ``tickets.sqlite3`` in the data folder,
the same store the Discord bot uses; tickets filed here are not posted to Discord.
Without ``--wiki`` and ``--data``, ``wikibot`` (``bot.cli``) takes both from the bot's
config file (``--config``), so the bot and the command line share wiki and store.
Only redacted text is ever stored or printed.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowledge.cli.options import add_wiki_options, open_knowledge
from knowledge.cli.triage import read_request
from knowledge.paths import default_data_dir, demo_wiki_dir
from knowledge.templates import load_templates

if TYPE_CHECKING:
    from knowledge.intake.desk import SupportDesk
    from knowledge.intake.records import Ticket
    from knowledge.intake.sqlite import SqliteTicketStore
    from knowledge.service import KnowledgeBase

# The intake and triage packages are imported by the functions that use them, so
# the other ``wikibot`` commands (``ask`` above all) do not load them.

__all__ = ["add_tickets_command", "local_user", "open_desk", "store_problem", "support_flow"]


def local_user() -> str:
    try:
        return f"local:{getpass.getuser()}"
    except (KeyError, OSError):
        return "local:unknown"


def _data_dir(args: argparse.Namespace) -> Path:
    if args.data is not None:
        return args.data
    return default_data_dir(args.wiki if args.wiki is not None else demo_wiki_dir())


def _store(args: argparse.Namespace) -> SqliteTicketStore:
    from knowledge.intake.sqlite import SqliteTicketStore

    return SqliteTicketStore.in_folder(_data_dir(args))


def open_desk(kb: KnowledgeBase) -> SupportDesk:
    """A desk over ``kb``'s wiki and the ticket store in its data folder."""
    from knowledge.intake.desk import SupportDesk
    from knowledge.intake.sqlite import SqliteTicketStore

    return SupportDesk(kb.triage_context, SqliteTicketStore.in_folder(kb.data_dir))


def _fail(message: str, code: int = 2) -> int:
    print(f"wikibot tickets: {message}", file=sys.stderr)
    return code


def store_problem(exc: Exception) -> str:
    """One line for a store that cannot be opened or used: the file, the folder and the
    problem, worded in ``templates/intake.yaml``."""
    from knowledge.intake.store import StoreTooNew, StoreUnavailable

    t = load_templates("intake.yaml")
    if isinstance(exc, StoreUnavailable):
        path = Path(exc.path)
        return t(f"errors.store.{exc.problem}", path=path, folder=path.parent, reason=exc.reason)
    if isinstance(exc, StoreTooNew):
        return t("errors.store_newer", path=exc.path, found=exc.found, known=exc.known)
    return str(exc)


def _store_failed(exc: Exception) -> int:
    """:func:`store_problem` said on standard error; exit code 2."""
    return _fail(store_problem(exc))


def _positive(text: str) -> int:
    """An argparse type: a whole number from 1 up."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _file(args: argparse.Namespace) -> int:
    from knowledge.intake.desk import IntakeError
    from knowledge.intake.store import StoreTooNew, StoreUnavailable
    from knowledge.triage.request import RequestError, TriageRequest

    try:
        data = read_request(args)
    except RequestError as exc:
        return _fail(str(exc))
    request, _ = TriageRequest.from_mapping(data)
    # The store first: a folder that cannot hold tickets stops here, in one line,
    # before the wiki is loaded or an index built.
    try:
        store = _store(args)
    except (StoreTooNew, StoreUnavailable) as exc:  # no usable data folder or database
        return _store_failed(exc)
    try:
        kb = open_knowledge(args, load_templates())
    except BaseException:
        store.close()
        raise
    from knowledge.intake.desk import SupportDesk

    desk = SupportDesk(kb.triage_context, store)
    try:
        user = local_user()
        draft = desk.new_draft(user).draft
        values = desk.values_from_request(request.texts())
        saved = desk.save(draft.id, user, values)
        for problem in saved.problems:
            print(problem, file=sys.stderr)
        filed = desk.file(draft.id, user, post=False)
    except IntakeError as exc:
        return _fail(str(exc), 1)
    except StoreUnavailable as exc:  # the disk filled up, or another process holds the lock
        return _store_failed(exc)
    finally:
        store.close()
        kb.close()
    print(filed.ticket.id)
    return 0


def _list(args: argparse.Namespace) -> int:
    from knowledge.intake.records import iso
    from knowledge.intake.store import StoreError

    try:
        store = _store(args)
    except StoreError as exc:
        return _store_failed(exc)
    try:
        tickets = store.list_tickets(status=args.status, family=args.family, limit=args.limit)
    except StoreError as exc:
        return _store_failed(exc)
    finally:
        store.close()
    if args.json:
        print(json.dumps([_summary_json(t) for t in tickets], ensure_ascii=False, indent=2))
        return 0
    if not tickets:
        print("no tickets")
        return 0
    for t in tickets:
        print(
            f"#{t.id:<5} {t.status:<7} {t.family or '-':<16} {iso(t.created_at)} "
            f"{t.post_state:<8} {t.title}"
        )
    return 0


def _summary_json(ticket: Ticket) -> dict[str, Any]:
    data = ticket.to_json()
    return {k: data[k] for k in ("id", "status", "title", "family", "created_at", "post")}


def _show(args: argparse.Namespace) -> int:
    from knowledge.intake.store import StoreError

    try:
        store = _store(args)
    except StoreError as exc:
        return _store_failed(exc)
    try:
        ticket = store.get_ticket(args.id)
    except StoreError as exc:
        return _store_failed(exc)
    finally:
        store.close()
    t = load_templates("intake.yaml")
    if ticket is None:
        return _fail(t("errors.unknown_ticket", id=args.id), 1)
    if args.json:
        print(json.dumps(ticket.to_json(), ensure_ascii=False, indent=2))
        return 0
    print(_ticket_text(ticket, t))
    return 0


def _export(args: argparse.Namespace) -> int:
    """The ticket with its thread's messages, redacted (Markdown or JSON). The messages
    come from ``args.fetch_thread`` (set by ``bot.cli`` when a bot token is there)."""
    from knowledge.intake.store import StoreError
    from knowledge.intake.transcript import transcript_json, transcript_markdown

    try:
        store = _store(args)
    except (StoreError, OSError) as exc:
        return _fail(str(exc))
    try:
        ticket = store.get_ticket(args.id)
    finally:
        store.close()
    t = load_templates("intake.yaml")
    if ticket is None:
        return _fail(t("errors.unknown_ticket", id=args.id), 1)
    messages = None
    fetch = getattr(args, "fetch_thread", None)
    if ticket.thread_id and fetch is not None:
        try:
            messages = fetch(ticket.thread_id)
        except Exception as exc:  # the ticket is still worth exporting
            print(f"wikibot tickets: the thread could not be read: {exc}", file=sys.stderr)
    if args.format == "json":
        text = json.dumps(transcript_json(ticket, messages), ensure_ascii=False, indent=2) + "\n"
    else:
        text = transcript_markdown(ticket, messages, t)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


def _answers(args: argparse.Namespace) -> int:
    """The answers kept for solved tickets; ``--not-in-wiki``: only those no section of
    the wiki is near (candidates for a page), each with the nearest section."""
    from knowledge.intake.similar import not_in_wiki
    from knowledge.intake.store import StoreError

    try:
        store = _store(args)
    except (StoreError, OSError) as exc:
        return _fail(str(exc))
    try:
        answers = store.solved_answers()
    finally:
        store.close()
    rows = [(a, "", 0.0) for a in answers]
    if args.not_in_wiki:
        kb = open_knowledge(args, load_templates())
        try:
            rows = not_in_wiki(answers, kb.state.wiki)
        finally:
            kb.close()
    if args.json:
        data = [
            {
                "ticket": a.ticket_id,
                "title": a.title,
                "question": a.question,
                "answer": a.answer,
                "url": a.url or None,
                "nearest_section": ref or None,
                "nearness": round(score, 3) if ref else None,
            }
            for a, ref, score in rows
        ]
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print("no answers")
    for a, ref, score in rows:
        nearest = f"  (nearest: {ref}, {score:.2f})" if ref else ""
        print(f"#{a.ticket_id:<5} {a.title}{nearest}\n       {a.url or '-'}")
    return 0


def _ticket_text(ticket: Ticket, t: Callable[..., str]) -> str:
    from knowledge.intake.records import iso

    out = [
        f"#{ticket.id} {ticket.title}",
        t(
            "ticket.status_line",
            id=ticket.id,
            status=t(f"ticket.statuses.{ticket.status}"),
            family=ticket.family or t("ticket.no_family"),
        ),
        f"{ticket.user}, {iso(ticket.created_at)}",
    ]
    post = {s: f"post.{s}" for s in ("none", "pending", "posted", "failed")}
    out.append(
        t(
            f"ticket.{post[ticket.post_state]}",
            attempts=ticket.post_attempts,
            error=ticket.post_error or "-",
            thread=ticket.thread_id or "-",
        )
    )
    from knowledge.intake.desk import log_cut_line

    for key, value in ticket.values.items():
        out.append("")
        out.append(f"{key}:")
        lines = value.splitlines()
        shown = lines if key != "log" else lines[-20:]
        said = log_cut_line(ticket.triage, t) if key == "log" else ""
        if said:
            out.append("  " + said)
        out.extend("  " + line for line in shown)
    summary = ticket.triage
    for section, rows in (
        (
            "suggestions",
            [f"{s['title']} ({s['page']}): {s['why']}" for s in summary.get("suggestions", [])],
        ),
        ("findings", [f"[{f['severity']}] {f['message']}" for f in summary.get("findings", [])]),
        ("missing", [m["label"] for m in summary.get("missing", [])]),
        ("redactions", [f"{k} in {f}" for k, f, _ in ticket.redactions]),
    ):
        if rows:
            out.append("")
            out.append(t(f"ticket.sections.{section}") + ":")
            out.extend(f"  - {row}" for row in rows)
    if ticket.events:
        out.append("")
        out.extend(f"{iso(e.at)} {e.kind} by {e.actor}" for e in ticket.events)
    return "\n".join(out)


# --------------------------------------------------------------------- the console


def _ask_multiline(ask: Callable[[str], str]) -> str | None:
    lines: list[str] = []
    while True:
        line = ask("... ")
        if line.strip() == "/cancel":
            return None
        if line.strip() == ".":
            return "\n".join(lines)
        lines.append(line)


def support_flow(
    kb: KnowledgeBase,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
    *,
    user: str | None = None,
    render: Callable[[Any], str] | None = None,
) -> Ticket | None:
    """The console's ``/support``: ask item by item, show the check, then file or not.

    ``ask`` reads one line (``input``); EOF or ``/cancel`` stops, keeping the draft.
    Returns the ticket filed, or None.
    """
    from knowledge.intake.desk import IntakeError
    from knowledge.intake.records import iso

    user = user or local_user()
    desk = open_desk(kb)
    t = desk.t
    try:
        desk.expire_drafts()
        draft = desk.resumable(user)
        if draft is not None:
            answer = ask(t("console.resume", when=iso(draft.updated_at))).strip().casefold()
            if answer not in ("", "y", "yes"):
                draft = None
        if draft is None:
            draft = desk.new_draft(user).draft
        say(t("console.intro"))
        while True:
            for spec in desk.form.fields:
                if draft.values.get(spec.key):
                    continue
                say("")
                say(t("console.ask", label=spec.label))
                if spec.description:
                    say(t("console.why", why=spec.description))
                if spec.paragraph:
                    say(t("console.multiline"))
                    value = _ask_multiline(ask)
                else:
                    value = ask("> ")
                    value = None if value.strip() == "/cancel" else value
                if value is None:
                    say(t("console.cancelled", draft=draft.id))
                    return None
                saved = desk.save(draft.id, user, {spec.key: value})
                draft = saved.draft
                for problem in saved.problems:
                    say(problem)
            missing = desk.blocking(draft)
            if missing:
                for line in missing:
                    say(line)
                continue
            say(t("console.checking"))
            # The same answer as the bot's check: a solved ticket like it first, and an
            # unconfident triage noted for `wikibot gaps` where gaps are recorded.
            reply = desk.check_reply(desk.draft(draft.id, user), gaps=kb.gaps)
            say(render(reply) if render else reply.title)
            choice = ask(t("console.choice")).strip().casefold()
            if choice == "solved":
                desk.deflect(draft.id, user)
                say(t("console.deflected"))
                return None
            if choice == "file":
                try:
                    ticket = desk.file(draft.id, user, post=False).ticket
                except IntakeError as exc:
                    say(str(exc))
                    return None
                say(t("console.filed", id=ticket.id, title=ticket.title))
                return ticket
            if choice == "edit":
                draft = desk.save(draft.id, user, {k: "" for k in draft.values}).draft
                continue
            say(t("console.cancelled", draft=draft.id))
            return None
    except EOFError:
        say(t("console.cancelled", draft=draft.id if draft else "-"))
        return None
    finally:
        desk.store.close()


# --------------------------------------------------------------------- parser


def add_tickets_command(sub: argparse._SubParsersAction) -> None:
    """Register ``wikibot tickets file|list|show``."""
    parser = sub.add_parser("tickets", help="file, list and show support tickets")
    inner = parser.add_subparsers(dest="tickets_cmd", metavar="ACTION", required=True)

    file_ = inner.add_parser("file", help="file a ticket from a request file; prints its id")
    add_wiki_options(file_)
    file_.add_argument("request", help="request file (YAML or JSON, fields as for triage)")
    file_.set_defaults(func=_file)

    list_ = inner.add_parser("list", help="list tickets, newest first")
    add_wiki_options(list_)
    list_.add_argument("--json", action="store_true", help="print JSON")
    list_.add_argument("--status", choices=("open", "solved", "closed"))
    list_.add_argument("--family", help="family key")
    list_.add_argument(
        "--limit", type=_positive, default=50, help="at most this many (1 or more; default 50)"
    )
    list_.set_defaults(func=_list)

    show = inner.add_parser("show", help="show one ticket")
    add_wiki_options(show)
    show.add_argument("--json", action="store_true", help="print JSON")
    show.add_argument("id", type=int, help="ticket number")
    show.set_defaults(func=_show)

    answers = inner.add_parser(
        "answers", help="answers marked on solved tickets (--not-in-wiki: page candidates)"
    )
    add_wiki_options(answers)
    answers.add_argument("--json", action="store_true", help="print JSON")
    answers.add_argument(
        "--not-in-wiki", action="store_true", help="only answers no wiki section is near"
    )
    answers.set_defaults(func=_answers)

    export = inner.add_parser(
        "export", help="write a ticket with its thread's messages, redacted (md or json)"
    )
    add_wiki_options(export)
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("--output", type=Path, default=None, help="file (default: stdout)")
    export.add_argument("id", type=int, help="ticket number")
    export.set_defaults(func=_export)
