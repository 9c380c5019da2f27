"""Secrets a hostile or careless user hands the bot, followed to where they could leak.

Each test drives one real path end to end (Discord through the loopback stand-in, the
model server through its stand-in, the command line and the stores through
``knowledge/``) and looks for the secret, or a telling piece of it, in what went out:
the model server's request bodies, what another user is shown, the stores on disk.
"""

from __future__ import annotations

from tests.bot.helpers import bot_factory
from tests.bot.test_ask import final, llm_config

#: An OpenAI-style project key (``sk-proj-`` and random base64url).
OPENAI_KEY = "sk-proj-" + "Vb8xR2kq_Lm4T9wZ-c3NdP7fHj6Ys1Ue5Ga0Qo8Ki2Xr4Wt"


def test_an_openai_key_in_an_ask_question_never_reaches_the_model_server(
    discord_standin, llm_standin
):
    """/ask "...my key sk-proj-...": the question is redacted before it is sent; an
    OpenAI-style key is a known format, not left to the public post's entropy mask
    (the model server gets no such mask)."""
    question = f"nccl calloc error when the server starts; my client uses {OPENAI_KEY}"

    async def scenario(standin):
        record = await standin.slash("ask", question=question)
        await record.wait_for(final(record), timeout=30, what="the final edit")
        return [repr(r.json) for r in standin.requests]

    shown = discord_standin.run(bot_factory(llm_config(llm_standin.url)), scenario)
    assert llm_standin.served, "the model server was asked"
    sent = repr([s.body for s in llm_standin.served])
    assert "[REDACTED:openai-key]" in sent
    body = OPENAI_KEY.removeprefix("sk-proj-")
    assert all(body[i : i + 8] not in sent for i in range(len(body) - 8))
    assert not any(body[:16] in text for text in shown)
