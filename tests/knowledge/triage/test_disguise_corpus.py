"""No secret of the disguised-log corpus shows in any output.

The corpus (``disguise_corpus``) is every token kind x every disguise x every line
context (log prefixes that change per line, colour codes, none) x LF and CRLF. Each
case is checked through ``redact`` and ``redact_fields``; the logs of one disguise and
context, all kinds together, through the triage's text, ``--json`` and embed; and per
disguise and line ending, through the desk: the stored ticket, ``tickets show`` and
``tickets show --json``, the reply and the forum post with its attachments. The forum
post through the Discord stand-in is in ``tests/bot/test_support_disguises.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from bot.cli import main as wikibot
from bot.render import embed
from knowledge.answers.triage import triage_reply
from knowledge.cli.console import render_text
from knowledge.intake.desk import IntakeSettings, SupportDesk
from knowledge.intake.sqlite import SqliteTicketStore
from knowledge.intake.store import RateLimit
from knowledge.service import KnowledgeBase
from knowledge.triage import triage
from knowledge.triage.redact import redact, redact_fields
from tests.knowledge.triage.disguise_corpus import (
    CONTEXTS,
    DISGUISES,
    KINDS,
    NEWLINES,
    Case,
    case,
    leaks,
)
from tests.support import DEMO


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)


def leaked(outputs: dict[str, str], cases: list[Case]) -> list[str]:
    return [f"{c.id} in {name}" for c in cases for name, text in outputs.items() if leaks(text, c)]


def combined(disguise: str, context: str, newline: str) -> tuple[str, list[Case]]:
    """One log with a case of every kind in it."""
    cases = [case(kind, disguise, context, newline) for kind in KINDS]
    return NEWLINES[newline].join(c.log for c in cases), cases


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> KnowledgeBase:
    base = KnowledgeBase.open(DEMO, tmp_path_factory.mktemp("corpus-kb"))
    yield base
    base.close()


@pytest.mark.parametrize("disguise", DISGUISES)
def test_no_case_of_the_corpus_leaks_through_redaction(disguise):
    found = []
    for kind in KINDS:
        for context in CONTEXTS:
            for newline in NEWLINES:
                c = case(kind, disguise, context, newline)
                text = redact(c.log, "log").text
                assert text.count("\n") == c.log.count("\n"), f"{c.id}: the lines moved"
                fields = redact_fields({"log": c.log, "nested": [c.log]})[0]
                found += leaked({"redact": text, "fields": "\n".join(strings(fields))}, [c])
                # redacting what was redacted changes nothing more
                assert redact(text, "log").text == text, c.id
    assert not found


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("disguise", DISGUISES)
def test_no_case_of_the_corpus_leaks_through_the_triage(kb, disguise, context):
    for newline in NEWLINES:
        log, cases = combined(disguise, context, newline)
        request = {"text": "the server dies at start, log attached", "log": log}
        result = triage(kb.triage_context, request)
        reply = triage_reply(result, kb.triage_context.templates)
        outputs = {
            "text": render_text(reply),
            "json": "\n".join(strings(result.to_json())),
            "embed": "\n".join(strings(embed(reply).to_dict())),
        }
        assert not leaked(outputs, cases)


@pytest.mark.parametrize("newline", NEWLINES)
@pytest.mark.parametrize("disguise", DISGUISES)
def test_no_case_of_the_corpus_leaks_from_the_filed_ticket(kb, tmp_path, capsys, disguise, newline):
    context = list(CONTEXTS)[list(DISGUISES).index(disguise) % len(CONTEXTS)]
    log, cases = combined(disguise, context, newline)
    store = SqliteTicketStore.in_folder(tmp_path)
    try:
        desk = SupportDesk(kb.triage_context, store, settings=IntakeSettings(rate=RateLimit(0, 1)))
        draft = desk.new_draft("discord:1").draft
        answers = {"text": "dies at start", "actual": "it dies", "log": log}
        desk.save(draft.id, "discord:1", answers)
        _, result = desk.check(draft.id, "discord:1")
        reply = triage_reply(result, kb.triage_context.templates)
        ticket = desk.file(draft.id, "discord:1", post=True).ticket
        post = desk.ticket_post(ticket)
    finally:
        store.close()
    outputs = {
        "stored": "\n".join(strings(ticket.to_json())),
        "post title": post.title,
        "post content": post.content,
        "post reply": render_text(post.reply),
        "post embed": "\n".join(strings(embed(post.reply).to_dict())),
        **{f"attachment {name}": text for name, text in post.attachments},
        "reply": render_text(reply),
        "reply embed": "\n".join(strings(embed(reply).to_dict())),
    }
    assert wikibot(["tickets", "show", "--data", str(tmp_path), str(ticket.id)]) == 0
    outputs["tickets show"] = capsys.readouterr().out
    assert wikibot(["tickets", "show", "--json", "--data", str(tmp_path), str(ticket.id)]) == 0
    outputs["tickets show --json"] = "\n".join(strings(json.loads(capsys.readouterr().out)))
    assert not leaked(outputs, cases)
