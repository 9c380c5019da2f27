"""/search: answered at once when quick, after "thinking…" when slow, paged by its invoker
only, across restarts."""

from __future__ import annotations

import copy

from tests.bot.helpers import (
    EPHEMERAL,
    IMPATIENT,
    PATIENT,
    Gate,
    bot_factory,
    buttons,
    demo_kb,
    embed_of,
    make_config,
)
from tests.discord_standin import DEFAULT_IDS


def by_label(message):
    return {b["label"]: b for b in buttons(message)}


def test_a_quick_search_is_answered_at_once_then_pages_for_its_invoker_only(discord_standin):
    kb = demo_kb()
    first, second = kb.search("nccl"), kb.search("nccl", page=2)
    assert first.meta["pages"] >= 2, "the demo wiki has several pages of nccl hits"

    async def scenario(standin):
        record = await standin.slash("search", query="nccl")
        page_one = copy.deepcopy(record.original)  # the stand-in edits its dict in place
        ids = {label: b["custom_id"] for label, b in by_label(page_one).items()}
        turn = await standin.press(page_one, ids["Next"])
        page_two = copy.deepcopy(standin.messages[int(page_one["id"])])
        other = await standin.press(page_two, ids["Previous"], user_id=DEFAULT_IDS.newbie)
        after_refusal = copy.deepcopy(standin.messages[int(page_one["id"])])
        return record, page_one, turn, page_two, other, after_refusal

    factory = bot_factory(make_config(discord=PATIENT))
    record, page_one, turn, page_two, other, after_refusal = discord_standin.run(factory, scenario)
    assert [r.route for r in record.requests] == ["interaction_callback"], "one request"
    assert record.response.callback_type == 4, "answered in the first response, no thinking"
    assert not record.response.message.get("flags", 0) & EPHEMERAL, "public"
    assert embed_of(page_one)["title"] == first.title
    assert [f["name"] for f in embed_of(page_one)["fields"]] == [f.name for f in first.fields]
    labels = by_label(page_one)
    assert labels["Previous"]["disabled"] and not labels["Next"].get("disabled")
    assert f"Page 1/{first.meta['pages']}" in labels

    assert [r.route for r in turn.requests] == ["interaction_callback"]
    assert turn.response.callback_type == 7, "the page turn updates its message at once"
    assert [f["name"] for f in embed_of(page_two)["fields"]] == [f.name for f in second.fields]
    assert not by_label(page_two)["Previous"].get("disabled")

    refusal = other.response.message
    assert other.response.callback_type == 4 and refusal["flags"] & EPHEMERAL
    assert "Only the person who searched" in embed_of(refusal)["description"]
    assert embed_of(after_refusal) == embed_of(page_two), "the refused press changed nothing"


def test_a_slow_search_and_page_turn_are_acknowledged_first(discord_standin, monkeypatch):
    kb = demo_kb()
    first, second = kb.search("nccl"), kb.search("nccl", page=2)
    gates = [Gate(), Gate()]
    search = kb.search

    def held_search(*args, **kwargs):  # the search, then the page turn: each one held
        return gates[0 if kwargs.get("page", 1) == 1 else 1].hold(search)(*args, **kwargs)

    monkeypatch.setattr(kb, "search", held_search)

    async def scenario(standin):
        try:
            record = await standin.slash("search", query="nccl")  # returns at the deferral
            gates[0].open()
            answer = await record.answer()
            page_one = copy.deepcopy(answer.shown)
            turn = await standin.press(page_one, by_label(page_one)["Next"]["custom_id"])
            gates[1].open()
            turned = await turn.answer()
            return record, answer, turn, turned, page_one, copy.deepcopy(turned.shown)
        finally:
            for gate in gates:
                gate.open()

    factory = bot_factory(make_config(discord=IMPATIENT))
    record, answer, turn, turned, page_one, page_two = discord_standin.run(factory, scenario)
    assert record.response.callback_type == 5, "thinking… while the search runs"
    assert not record.response.json.get("data", {}).get("flags", 0) & EPHEMERAL, "public"
    assert (answer.route, answer.method, answer.path.rsplit("/", 1)[-1]) == (
        "webhook_message",
        "PATCH",
        "@original",
    ), "the answer replaces the thinking message"
    assert embed_of(page_one)["title"] == first.title
    assert turn.response.callback_type == 6, "the slow page turn acknowledges, then edits"
    assert (turned.route, turned.method) == ("webhook_message", "PATCH")
    assert [f["name"] for f in embed_of(page_two)["fields"]] == [f.name for f in second.fields]


def test_the_pager_survives_a_restart_and_turning_back_does_not_search_again(
    discord_standin, monkeypatch
):
    kb = demo_kb()
    searches = []
    search = kb.search

    def counting_search(*args, **kwargs):
        searches.append(kwargs.get("page", 1))
        return search(*args, **kwargs)

    monkeypatch.setattr(kb, "search", counting_search)

    async def before(standin):
        record = await standin.slash("search", query="nccl")
        await record.answer()
        ids = {label: b["custom_id"] for label, b in by_label(record.original).items()}
        await (await standin.press(record.original, ids["Next"])).answer()
        page_two = copy.deepcopy(record.original)
        back = await standin.press(record.original, by_label(page_two)["Previous"]["custom_id"])
        await back.answer()
        return copy.deepcopy(record.original), page_two

    page_one, page_two = discord_standin.run(bot_factory(kb=kb), before)
    assert searches == [1, 2], "page 1 again came from memory, not from a second search"
    assert {"Previous", "Next", "Delete"} <= set(by_label(page_one)), "public: deletable"

    async def after_restart(standin):  # a new bot process; the message is still on Discord
        standin.messages[int(page_two["id"])] = copy.deepcopy(page_two)
        turn = await standin.press(page_two, by_label(page_two)["Previous"]["custom_id"])
        await turn.answer()
        return turn, standin.messages[int(page_two["id"])]

    turn, restored = discord_standin.run(bot_factory(kb=kb), after_restart)
    assert turn.response.callback_type in (6, 7), "acknowledged as a change of its message"
    assert embed_of(restored)["fields"] == embed_of(page_one)["fields"]
    assert by_label(restored)["Previous"]["disabled"], "back on page 1"
    assert "Delete" in by_label(restored)


def test_a_private_search_has_no_delete_button(discord_standin):
    async def scenario(standin):
        record = await standin.slash("search", query="nccl", private=True)
        await record.answer()
        return record

    record = discord_standin.run(bot_factory(), scenario)
    assert record.response.json["data"]["flags"] & EPHEMERAL, "private: true"
    assert {"Previous", "Next"} <= set(by_label(record.original))
    assert "Delete" not in by_label(record.original)


def test_search_with_a_section_and_nothing_found(discord_standin):
    async def scenario(standin):
        sections = await standin.autocomplete("search", "section", "trou", query="x")
        scoped = await standin.slash("search", query="nccl", section="troubleshooting")
        scoped_answer = await scoped.answer()
        nothing = await standin.slash("search", query="zzqxv wvvq")
        return sections.choices, scoped_answer.shown, nothing, (await nothing.answer()).shown

    choices, scoped, nothing, answer = discord_standin.run(bot_factory(), scenario)
    assert [c["value"] for c in choices] == ["troubleshooting"]
    assert "troubleshooting" in embed_of(scoped)["description"]
    assert answer["flags"] & EPHEMERAL, "nothing found is said to the asker only"
    assert "Nothing found" in embed_of(answer)["title"]
    assert ("webhook_message", "DELETE") not in [(r.route, r.method) for r in nothing.requests]


def test_a_slow_public_search_that_finds_nothing_answers_privately(discord_standin, monkeypatch):
    kb = demo_kb()
    gate = Gate()
    monkeypatch.setattr(kb, "search", gate.hold(kb.search))

    async def scenario(standin):
        try:
            nothing = await standin.slash("search", query="zzqxv wvvq")
        finally:
            gate.open()
        await nothing.wait_for(lambda r: r.route == "followup", what="the private answer")
        return nothing

    nothing = discord_standin.run(bot_factory(make_config(discord=IMPATIENT)), scenario)
    assert nothing.response.callback_type == 5, "a public thinking… first"
    # A public "thinking…" cannot become private: it is deleted, the answer sent ephemerally.
    methods = [(r.route, r.method) for r in nothing.requests]
    assert ("webhook_message", "DELETE") in methods
    answer = nothing.followup_messages[-1]
    assert answer["flags"] & EPHEMERAL
    assert "Nothing found" in embed_of(answer)["title"]


PASTED = (
    "Hi, my server stops right after loading the weights:\n"
    "RuntimeError: NCCL error: Failed to CUDA calloc 10485760 bytes\n"
    "vllm serve with tensor parallel 8. What is wrong?"
)


def test_a_pasted_question_at_hand_is_answered_on_the_event_loop(discord_standin, monkeypatch):
    """A pasted question is bounded work in memory once the page ranker is built and the
    pages to show are read: the bot answers it on its loop, not through a knowledge
    thread (where the contest for the interpreter lock costs more than the work). When a
    page to show is still on disk, and for a words search, a thread does the work. The
    same answer either way."""
    kb = demo_kb()
    threaded: list[str] = []

    async def scenario(standin):
        bot = standin.client
        await bot.get_cog("SupportCog").desk()  # its start-up work, which builds the ranker
        assert kb.state.built_ranker is not None
        real = bot.in_thread

        async def spy(func, /, *args, **kwargs):
            if getattr(func, "__name__", "") == "search":
                threaded.append(str(args[0]))
            return await real(func, *args, **kwargs)

        monkeypatch.setattr(bot, "in_thread", spy)
        warm = await standin.slash("search", query=PASTED)
        on_loop = list(threaded)
        with monkeypatch.context() as patch:
            patch.setattr("knowledge.answers._search.sections_in_memory", lambda page: False)
            on_disk = await standin.slash("search", query=PASTED)
        pasted_in_thread = list(threaded)
        threaded.clear()
        words = await standin.slash("search", query="nccl calloc")
        return warm, on_loop, on_disk, pasted_in_thread, words, list(threaded)

    factory = bot_factory(make_config(discord=PATIENT), kb=kb)
    warm, on_loop, on_disk, pasted_in_thread, words, after = discord_standin.run(
        factory, scenario
    )
    assert on_loop == [], "at hand: no thread"
    assert pasted_in_thread == [PASTED], "a page to show on disk: the thread searched"
    assert after == ["nccl calloc"], "a words search reads the index: a thread"
    expected = kb.search(PASTED)
    for record in (warm, on_disk):
        assert record.response.callback_type == 4
        shown = embed_of(record.response.message)
        assert shown["title"] == expected.title
        assert [f["name"] for f in shown["fields"]] == [f.name for f in expected.fields]
    assert embed_of(words.response.message)["title"] == kb.search("nccl calloc").title


def test_a_page_turn_failing_on_the_bots_side_keeps_the_results_and_their_pager(
    discord_standin, monkeypatch
):
    """The index failing as a page is turned: the failure is said to the presser alone,
    and the public results stay with their buttons to try again (they were replaced by
    the failure, and the pager lost)."""
    from knowledge.search.index import SearchIndex

    async def scenario(standin):
        record = await standin.slash("search", query="nccl")
        page_one = copy.deepcopy(record.original)
        ids = {label: b["custom_id"] for label, b in by_label(page_one).items()}
        standin.client.kb.state.index.clear_cache()
        monkeypatch.setattr(SearchIndex, "_rank_once", lambda *a, **k: 1 / 0)
        turn = await standin.press(page_one, ids["Next"])
        after = copy.deepcopy(standin.messages[int(page_one["id"])])
        return page_one, turn, after

    factory = bot_factory(make_config(discord=PATIENT))
    page_one, turn, after = discord_standin.run(factory, scenario)
    said = turn.response.message
    assert turn.response.callback_type == 4 and said["flags"] & EPHEMERAL
    assert "not because of your words" in embed_of(said)["description"]
    assert embed_of(after) == embed_of(page_one) and by_label(after) == by_label(page_one)


def test_a_slow_page_turn_failing_on_the_bots_side_keeps_the_results_and_their_pager(
    discord_standin, monkeypatch
):
    """The same failure after the press was acknowledged without a word (a deferred
    update, the work outlasting the patience): said to the presser alone in a follow-up
    message, never by editing the public results, which keep their pager."""
    from knowledge.search.index import SearchIndex

    gate = Gate()

    def failing(*args, **kwargs):
        raise ZeroDivisionError

    async def scenario(standin):
        try:
            record = await standin.slash("search", query="nccl")
            await record.answer(timeout=30)
            page_one = copy.deepcopy(record.original)
            ids = {label: b["custom_id"] for label, b in by_label(page_one).items()}
            standin.client.kb.state.index.clear_cache()
            monkeypatch.setattr(SearchIndex, "_rank_once", gate.hold(failing))
            turn = await standin.press(page_one, ids["Next"])  # returns at the deferral
            gate.open()
            said = await turn.followup(timeout=30)
            after = copy.deepcopy(standin.messages[int(page_one["id"])])
            return page_one, turn, said, after
        finally:
            gate.open()

    factory = bot_factory(make_config(discord=IMPATIENT))
    page_one, turn, said, after = discord_standin.run(factory, scenario)
    assert turn.response.callback_type == 6, "the press acknowledged while the work went on"
    assert said.method == "POST" and said.json["flags"] & EPHEMERAL
    assert "not because of your words" in embed_of(said.json)["description"]
    assert [r.method for r in turn.requests if r.route != "interaction_callback"] == ["POST"]
    assert embed_of(after) == embed_of(page_one) and by_label(after) == by_label(page_one)
