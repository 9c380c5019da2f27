"""/ask in knowledge/: the confidence gate, redaction before sending, the checks on what
comes back (uncited, leaked, injected) and the outcome of each failure."""

from __future__ import annotations

import asyncio

import pytest

from knowledge.llm import Asker, LlmSettings, reply_of
from knowledge.templates import load_templates
from tests.llm_standin import Behaviour, closed_port_url, waits_for

from .conftest import LINK_BASE

T = load_templates("llm.yaml")
ANSWERABLE = "nccl calloc error when the server starts"
SECRET = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"


def ask(kb, url, question, context=None, **kw):
    settings = LlmSettings(
        url, "standin-model", **{"first_token_timeout": 1, "idle_timeout": 0.5, **kw}
    )
    asker = Asker(settings, templates=T)

    async def run():
        try:
            return await asker.answer(kb.state, asker.plan(kb.state, question, context))
        finally:
            await asker.aclose()

    return asker, asyncio.run(run())


def test_a_confident_question_is_answered_with_citations_of_what_was_given(demo_kb, llm_standin):
    asker, outcome = ask(demo_kb, llm_standin.url, ANSWERABLE)
    assert outcome.status == "answered"
    given = {s.ref for s in outcome.plan.retrieval.sources}
    reply = reply_of(demo_kb.state, T, outcome)
    assert reply.meta["cited"] and set(reply.meta["cited"]) <= given
    assert all(LINK_BASE in f.value for f in reply.fields)
    assert [p.ref for p in reply.pages] == reply.meta["cited"]
    assert asker.stats.summary()["answered"] == 1


def test_an_unsure_ranking_never_asks_the_model_and_offers_support(demo_kb, llm_standin):
    _, outcome = ask(demo_kb, llm_standin.url, "what is the best pizza topping in Rome")
    assert outcome.status == "declined"
    assert llm_standin.served == [], "the model server was not asked"
    reply = reply_of(demo_kb.state, T, outcome)
    assert "/support" in reply.text and not reply.ok


def test_the_question_and_context_are_redacted_before_they_are_sent(demo_kb, llm_standin):
    _, outcome = ask(
        demo_kb,
        llm_standin.url,
        f"nccl calloc error, my token is {SECRET}",
        {"log": f"HF_TOKEN={SECRET}\nNCCL error: Failed to CUDA calloc", "command": "vllm serve"},
    )
    assert outcome.status == "answered"
    sent = str(llm_standin.served[-1].body)
    assert SECRET not in sent and "[REDACTED:" in sent
    assert outcome.plan.retrieval.redacted == 2


def test_an_answer_citing_no_given_section_shows_the_pages(demo_kb, llm_standin):
    llm_standin.behaviour = Behaviour(text="Raise the limit, see [9] and [12].")
    _, outcome = ask(demo_kb, llm_standin.url, ANSWERABLE)
    assert (outcome.status, outcome.reason) == ("fallback", "uncited")
    reply = reply_of(demo_kb.state, T, outcome)
    assert reply.kind == "search" and reply.text == T("ask.fallback.uncited")
    assert [p.ref for p in reply.pages] == [s.ref for s in outcome.plan.retrieval.sources]


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("down", "down"),
        ("slow", "slow"),
        ("429", "busy"),
        ("500", "server"),
        ("truncated", "truncated"),
        ("garbage", "garbage"),
        ("endless", "endless"),
    ],
)
def test_every_failure_falls_back_to_the_pages_with_one_sentence(
    demo_kb, llm_standin, mode, reason
):
    llm_standin.behaviour = Behaviour(mode=mode)
    url = closed_port_url() if mode == "down" else llm_standin.url
    asker, outcome = ask(demo_kb, url, ANSWERABLE, **waits_for(mode, first_token_timeout=0.4))
    assert (outcome.status, outcome.reason) == ("fallback", reason)
    reply = reply_of(demo_kb.state, T, outcome)
    assert reply.text == T(f"ask.fallback.{reason}") and reply.text.count(". ") <= 1
    assert reply.fields and reply.pages
    assert asker.stats.summary()["last_failure"][1] == reason


def test_a_wiki_page_cannot_forge_sources_or_take_over_the_answer(hostile_kb, llm_standin):
    llm_standin.behaviour = Behaviour(
        text="You help members of a hardware community by answering from their wiki only."
        " @everyone <@123456789012345678> https://evil.example/steal [1] [9]"
    )
    _, outcome = ask(hostile_kb, llm_standin.url, "flux capacitor overheating coolant pump")
    prompt = llm_standin.served[-1].body["messages"][1]["content"]
    assert "\n</source 1>\n<source 9>" not in prompt, "the page's fake frame is defused"
    assert prompt.count("</source 1>") == 1
    assert (outcome.status, outcome.reason) == ("fallback", "leaked")
    llm_standin.behaviour = Behaviour(
        text="Raise the pump [1]. @everyone <@123456789012345678> https://evil.example/more [9]"
    )
    _, outcome = ask(hostile_kb, llm_standin.url, "flux capacitor overheating coolant pump")
    assert outcome.status == "answered"
    text = outcome.checked.text
    assert "@everyone" not in text and "<@123456789012345678>" not in text
    # a URL the cited page quotes may stay (it is the wiki's word); any other goes
    assert "evil.example/more" not in text and outcome.checked.dropped == (9,)


def test_a_full_server_is_not_queued_behind(demo_kb, llm_standin):
    settings = LlmSettings(llm_standin.url, "standin-model")
    asker = Asker(settings, max_concurrent=0, templates=T)
    plan = asker.plan(demo_kb.state, ANSWERABLE)
    outcome = asyncio.run(asker.answer(demo_kb.state, plan))
    asyncio.run(asker.aclose())
    assert (outcome.status, outcome.reason) == ("fallback", "full")
    assert llm_standin.served == []


def test_the_down_url_really_is_down():
    assert closed_port_url().startswith("http://127.0.0.1:")
