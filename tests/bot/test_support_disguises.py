"""/support end to end with the disguised-log corpus: nothing secret reaches Discord.

For each disguise, a log holding a secret of every kind in that disguise is uploaded
through the form, the ticket is filed, and every request the bot made (the private
answers, the forum post, its embed and its attachments) is searched for the secrets,
verbatim and pieced back together (see ``tests/knowledge/triage/disguise_corpus.py``).
"""

from __future__ import annotations

import pytest

from tests.bot.test_support import (  # noqa: F401  (fixtures)
    base_data,
    data,
    factory,
    filed_post,
)
from tests.knowledge.triage.disguise_corpus import CONTEXTS, DISGUISES, KINDS, NEWLINES, case, leaks
from tests.knowledge.triage.test_disguise_corpus import strings


@pytest.mark.parametrize("disguise", DISGUISES)
def test_no_disguised_secret_reaches_discord_through_support(discord_standin, data, disguise):  # noqa: F811
    at = list(DISGUISES).index(disguise)
    context = list(CONTEXTS)[at % len(CONTEXTS)]
    newline = list(NEWLINES)[at % len(NEWLINES)]
    cases = [case(kind, disguise, context, newline) for kind in KINDS]
    log = NEWLINES[newline].join(c.log for c in cases)

    async def scenario(ds):
        return await filed_post(ds, log=log.encode())

    thread = discord_standin.run(factory(data), scenario)
    assert thread.files, "the post carries the log's tail"
    sent = {}
    for number, request in enumerate(discord_standin.last.requests):
        sent[f"{number} {request.path}"] = "\n".join(strings(request.json))
        for f in request.files:
            sent[f"{number} {request.path} {f.filename}"] = f.data.decode("utf-8", "replace")
    assert any("[REDACTED:" in text for text in sent.values())
    found = [f"{c.id} in {where}" for c in cases for where, text in sent.items() if leaks(text, c)]
    assert not found
