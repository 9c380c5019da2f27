"""Page-level ranking of long, pasted help requests (knowledge.search.pages)."""

from __future__ import annotations

import shutil

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.search.pages import (
    PAGE_PRIORS,
    PageRanker,
    error_lines,
    page_kind,
    request_terms,
)
from knowledge.wiki import Catalogue, load_wiki
from tests.knowledge.search.helpers import demo_ranker
from tests.support import DEMO

WIKI, CATALOGUE, RANKER = demo_ranker()


def paths(ranking) -> list[str]:
    return [hit.path for hit in ranking.hits]


def test_an_error_line_finds_its_troubleshooting_entry_among_chatter():
    question = (
        "Hi all, I have been trying for two days to get my new box going and I read a lot "
        "of pages already. The server loads the weights and then it just dies, any idea "
        "what I am doing wrong? I tried a few things from the forums without luck."
    )
    ranking = RANKER.rank(question, ["NCCL error: Failed to CUDA calloc 10485760 bytes"])
    assert paths(ranking)[0] == "troubleshooting/common-issues.md"
    top = ranking.hits[0]
    assert top.anchor == "nccl-cannot-allocate-its-buffers"
    assert ("error_quote", "NCCL error: Failed to CUDA calloc 10485760 bytes") in top.why
    assert ranking.confidence == "high"


def test_error_lines_match_despite_other_numbers_and_paths():
    line = "[rank3]: /opt/venv/lib/nccl.py:88 NCCL error: Failed to CUDA calloc 2097152 bytes"
    ranking = RANKER.rank("startup fails", [line])
    assert ranking.hits[0].anchor == "nccl-cannot-allocate-its-buffers"


def test_a_named_family_brings_its_hub_and_current_page():
    family = next(f for f in CATALOGUE.families if f.group == "main" and f.hub)
    ranking = RANKER.rank(f"How do I launch {family.name} on four cards with the right image?")
    assert ranking.family == family.name
    assert {family.hub, family.current_page} & set(paths(ranking)[:2])


def test_each_page_appears_once():
    ranking = RANKER.rank("NCCL P2P topology nvidia-smi topo graph file tuning", limit=10)
    assert len(paths(ranking)) == len(set(paths(ranking)))


def test_a_model_the_wiki_never_names_is_not_answered_with_confidence():
    ranking = RANKER.rank(
        "Does anyone run acme/Zephyrine-70B-Instruct on two cards? The server will not start."
    )
    assert "acme/zephyrine-70b-instruct" in ranking.unknown
    assert ranking.confidence == "low"


def test_a_version_of_a_family_the_wiki_never_names_is_a_newer_model():
    ranking = RANKER.rank("Does GLM-9.7 run with the same image as the current runbook?")
    assert "glm-9.7" in ranking.unknown
    assert ranking.confidence == "low"
    known = RANKER.rank("Does GLM-5 run with the same image as the current runbook?")
    assert known.unknown == () and known.confidence != "low"


def test_file_paths_are_not_model_names():
    ranking = RANKER.rank("it crashes in csrc/attention/fmha_runner-v2.cuh with sm_120 on load")
    assert ranking.unknown == ()


def test_a_word_in_common_is_no_answer():
    ranking = RANKER.rank("how long should sourdough bread proof overnight in a cold kitchen")
    assert ranking.hits == () and ranking.confidence == "none"


def test_error_lines_are_found_once_first_and_last_kept():
    lines = ["INFO ok", "ValueError: bad", "ValueError: bad", "plain"]
    lines += [f"RuntimeError: step {i} failed" for i in range(30)]
    found = error_lines(lines, limit=6)
    assert found[0] == "ValueError: bad" and found.count("ValueError: bad") == 1
    assert found[-1] == "RuntimeError: step 29 failed" and len(found) == 6


def test_nothing_to_rank_says_none():
    assert RANKER.rank("the and of to").confidence == "none"
    assert RANKER.rank("").hits == ()


def test_identifiers_and_error_lines_weigh_more_than_words():
    terms = request_terms("please check NCCL_P2P_LEVEL and --max-num-seqs", ["OutOfMemoryError"])
    assert terms["nccl_p2p_level"] > terms["check"]
    assert terms["max-num-seqs"] > terms["check"]
    assert terms["outofmemoryerror"] > terms["nccl_p2p_level"]
    assert "please" not in terms and "and" not in terms


def test_an_acronym_in_the_plural_is_the_acronym():
    terms = request_terms("the server OOMs on long prompts and two GPUs drop")
    assert {"oom", "gpu"} <= set(terms)
    assert not {"oo", "ms", "gp", "us"} & set(terms)


def test_hostile_sizes_are_capped():
    ranking = RANKER.rank("nccl " * 200_000, ["x" * 100_000] * 500)
    assert len(ranking.hits) <= 5


def test_page_kinds_come_from_structure():
    statuses = CATALOGUE.statuses()
    kinds = {path: page_kind(page, statuses.get(path)) for path, page in WIKI.pages.items()}
    assert kinds["troubleshooting/common-issues.md"] == "troubleshooting"
    for path, status in statuses.items():
        if status in ("hub", "current"):
            assert kinds[path] == status
    assert set(kinds.values()) <= set(PAGE_PRIORS)
    assert PAGE_PRIORS["troubleshooting"] > PAGE_PRIORS["dated"]
    assert PAGE_PRIORS["current"] > PAGE_PRIORS["historical"]


def test_a_dated_note_ranks_below_the_entry_it_repeats(tmp_path):
    root = tmp_path / "wiki"
    (root / "troubleshooting").mkdir(parents=True)
    (root / "daily").mkdir()
    entry = (
        "# Problems\n\n## Kernel Image Missing\n\n**Error**: `no kernel image is available`\n\n"
        "**Cause**: the wheel lacks sm_120 kernels.\n\n**Fix**: use an image built for sm_120.\n"
    )
    (root / "troubleshooting" / "problems.md").write_text(entry)
    (root / "daily" / "2026-01-02.md").write_text(
        "# Day notes 2026-01-02\n\n## Kernel image missing again\n\n"
        "Saw no kernel image is available today on sm_120, rebuilt the wheel for sm_120.\n"
    )
    wiki = load_wiki(root)
    ranker = PageRanker.build(wiki)
    ranking = ranker.rank("vLLM dies: no kernel image is available for sm_120, rebuilt the wheel")
    assert paths(ranking)[:2] == ["troubleshooting/problems.md", "daily/2026-01-02.md"]


def _write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_an_unlisted_older_version_of_a_series_ranks_as_historical(tmp_path):
    entry = "## Scheduler hangs\n\nThe froblet scheduler hangs when `froblet_wait` is unset.\n"
    _write(
        tmp_path,
        {
            "README.md": "# Wiki\n\n## Start Here\n\n| Model family | Start here | Focus |\n"
            "|---|---|---|\n| Widget | [Widget Hub](models/widget.md) | Two cards. |\n",
            "models/widget.md": "# Widget Hub\n\n## Version Map\n\n| Page | Status |\n|---|---|\n"
            "| [Widget v3](widget_v3.md) | Current |\n| [Widget v1](widget_v1.md) | Historical |\n",
            "models/widget_v1.md": "# Widget v1\n\nFirst recipe.\n",
            "models/widget_v2.md": f"# Widget v2\n\n{entry}",  # in no version map
            "models/widget_v3.md": "# Widget v3\n\nThe recipe to follow.\n",
            "models/widget_v4.md": "# Widget v4\n\nNext recipe, not yet in the map.\n",
            "optimization/queues.md": f"# Queues\n\n{entry}",
        },
    )
    wiki = load_wiki(tmp_path)
    catalogue = Catalogue.from_wiki(wiki)
    ranker = PageRanker.build(wiki, catalogue.statuses(), catalogue=catalogue)
    assert ranker.kinds["models/widget_v2.md"] == "historical"
    assert ranker.kinds["models/widget_v4.md"] == "reference"  # newer than current: not old
    ranking = ranker.rank("the froblet scheduler hangs, froblet_wait unset")
    assert paths(ranking)[:2] == ["optimization/queues.md", "models/widget_v2.md"]


def test_a_word_only_one_family_starts_with_names_that_family():
    legacy = next(f for f in CATALOGUE.families if f.name.casefold().startswith("minimax"))
    ranking = RANKER.rank("How do I serve MiniMax with SGLang on four cards, and which image?")
    assert ranking.family == legacy.name
    assert legacy.current_page in paths(ranking)[:2]


def test_a_makers_word_with_another_line_of_versions_names_no_family():
    family = next(f for f in CATALOGUE.families if f.hub and f.hub.endswith("deepseek-v4-flash.md"))
    assert RANKER.rank("DeepSeek V4 hangs after loading on two cards").family == family.name
    assert RANKER.rank("DeepSeek-R1 hangs after loading on two cards").family is None
    # the same line, another generation: another model of the maker
    assert RANKER.rank("DeepSeek V3.2 hangs after loading on two cards").family is None
    assert RANKER.rank("DeepSeek-V4.1 hangs after loading on two cards").family == family.name


def test_a_word_a_front_page_family_shares_with_legacy_ones_names_the_front_page_one(tmp_path):
    _write(
        tmp_path,
        {
            "README.md": "# Wiki\n\n## Start Here\n\n| Model family | Start here | Focus |\n"
            "|---|---|---|\n| Widget Pro | [Widget Pro Hub](models/widget-pro.md) | Two cards. |\n"
            "| Legacy models | [Legacy](models/legacy.md) | Older models. |\n",
            "models/widget-pro.md": "# Widget Pro Hub\n\n## Version Map\n\n| Page | Status |\n"
            "|---|---|\n| [Widget Pro v3](widget-pro_v3.md) | Current |\n",
            "models/widget-pro_v3.md": "# Widget Pro v3\n\nThe recipe to follow.\n",
            "models/legacy.md": "# Legacy\n\n## Legacy Models\n\n| Model | Page | Notes |\n"
            "|---|---|---|\n| Widget Mini | [Widget Mini](widget-mini.md) | Old. |\n",
            "models/widget-mini.md": "# Widget Mini\n\nAn older recipe.\n",
        },
    )
    wiki = load_wiki(tmp_path)
    catalogue = Catalogue.from_wiki(wiki)
    ranker = PageRanker.build(wiki, catalogue.statuses(), catalogue=catalogue)
    assert {f.name for f in catalogue.families} >= {"Widget Pro", "Widget Mini"}
    ranking = ranker.rank("How do I run the new Widget on two cards with the recipe?")
    assert ranking.family == "Widget Pro"
    assert ranker.rank("how do I run widget-3 on two cards?").family == "Widget Pro"
    # the ordinary word, not written as a name and with no version, names no family
    assert ranker.rank("which widget on the page runs the recipe on two cards?").family is None


def test_a_model_named_only_in_a_diary_is_one_the_wiki_has_no_page_for(tmp_path):
    _write(
        tmp_path,
        {
            "daily/2026-01-02.md": "# Day notes 2026-01-02\n\n## Tried things\n\n"
            "Someone loaded acme/Zephyrine-70B on two cards; the server starts slowly.\n",
            "guides/serving.md": "# Serving\n\n## Two cards\n\nThe server starts slowly on two "
            "cards the first time: kernels compile once.\n",
        },
    )
    ranker = PageRanker.build(load_wiki(tmp_path))
    ranking = ranker.rank("acme/Zephyrine-70B on two cards: the server starts slowly, why?")
    assert "acme/zephyrine-70b" in ranking.unknown
    assert ranking.confidence == "low"


def test_a_family_name_extended_by_unknown_words_is_another_model():
    family = next(f for f in CATALOGUE.families if f.hub and f.hub.endswith("deepseek-v4-flash.md"))
    ranking = RANKER.rank("DeepSeek-V4-Flash-Vision-Exp is out: is there a recipe to run it?")
    assert "deepseek-v4-flash-vision-exp" in ranking.unknown
    assert ranking.family == family.name and ranking.confidence == "low"
    known = RANKER.rank("DeepSeek-V4-Flash-NVFP4 with MTP: is there a recipe to run it?")
    assert known.unknown == () and known.confidence != "low"


_ERROR_WORDS = ["Error", "OOM", "can't", "Timed Out", "timeout", "NOT SUPPORTED", "killed", "x"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_ERROR_WORDS),
            st.text(alphabet=st.characters(max_codepoint=0x17F), max_size=12),
            st.sampled_from(["İ", "ſ", "K", "ﬀ", "ERRſR"]),  # case folds that change length
        ),
        max_size=8,
    ).map(" ".join)
)
def test_the_ascii_fast_path_finds_exactly_the_lines_the_pattern_finds(line):
    from knowledge.search.pages import _ERRORISH_RE, _is_errorish

    assert _is_errorish(line) == bool(_ERRORISH_RE.search(line))


def _same_ranker(a: PageRanker, b: PageRanker) -> None:
    for name in ("sections", "pages"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.numbers == y.numbers and x.idf == y.idf, name
        for array in ("bounds", "ids", "weights", "idfs"):
            assert getattr(x, array).tolist() == getattr(y, array).tolist(), (name, array)
        assert [(d.path, d.anchor, d.length, d.tf) for d in x.docs] == [
            (d.path, d.anchor, d.length, d.tf) for d in y.docs
        ]
    assert a.quotes == b.quotes and a.quote_postings == b.quote_postings
    assert a.line_postings == b.line_postings and a.kinds == b.kinds
    assert a.vocabulary == b.vocabulary and a.named_versions == b.named_versions
    assert a.section_pages.tolist() == b.section_pages.tolist()
    x, y = a.verbatim, b.verbatim
    for array in ("hashes", "lines", "sizes"):
        assert getattr(x, array).tolist() == getattr(y, array).tolist(), ("verbatim", array)
    assert [x.ref(n) for n in range(len(x.sizes))] == [y.ref(n) for n in range(len(y.sizes))]


def test_a_ranker_built_from_an_earlier_one_reads_only_the_pages_that_changed(tmp_path):
    wiki_dir = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki_dir)
    _, _, before = demo_ranker(wiki_dir)
    edited = next(p for p in sorted(before.page_parts) if p.startswith("troubleshooting/"))
    gone = next(p for p in sorted(before.page_parts) if p.startswith("models/"))
    with (wiki_dir / edited).open("a", encoding="utf-8") as out:
        out.write("\n## Quux fails\n\n**Error:** `zorblax quux frobnicated twice`\n")
    (wiki_dir / gone).unlink()
    (wiki_dir / "notes").mkdir(exist_ok=True)
    (wiki_dir / "notes" / "new-page.md").write_text("# A new page\n\nAbout zorblax.\n")

    _, _, after = demo_ranker(wiki_dir, previous=before)
    _, _, fresh = demo_ranker(wiki_dir)
    _same_ranker(after, fresh)
    question = "my server says zorblax quux frobnicated twice when it starts, what now?"
    assert after.rank(question) == fresh.rank(question)
    assert paths(after.rank(question))[0] == edited
    # The documents and quotes of a page still the same are the earlier ranker's (the
    # named versions may be derived again: removing a model page changed the families).
    for path, parts in after.page_parts.items():
        earlier = before.page_parts.get(path)
        if path in (edited, "notes/new-page.md"):
            assert earlier is None or parts.sections is not earlier.sections, path
        else:
            assert parts.sections is earlier.sections and parts.quotes is earlier.quotes, path
            assert parts.page is earlier.page, path
    assert gone not in after.page_parts
    # The kept parts hold no shingle hashes of their own (the index holds them once);
    # a later ranker takes those of the pages still the same from the earlier index.
    assert all(not parts.lines.hashes for parts in after.page_parts.values())
    assert after.page_parts[edited].lines is not before.page_parts[edited].lines
    assert after.page_parts[edited].lines.sizes


def _term_rows(count: int) -> str:
    rows = "".join(
        f"| GRB{i} | The grabber stage number {i} of the widget pipeline | - |\n"
        for i in range(count)
    )
    return "| Term | Meaning | Notes |\n|---|---|---|\n" + rows


def _link_rows(count: int) -> str:
    rows = "".join(
        f"| [Day {i}](day-{i}.md) | Grabber stage hangs, widget pipeline stalls again |\n"
        for i in range(count)
    )
    return "| Page | Highlights |\n|---|---|\n" + rows


def test_a_table_of_terms_or_of_links_is_no_answer_to_a_problem(tmp_path):
    fix = (
        "# Pipeline Problems\n\n## Grabber stage hangs\n\nThe widget pipeline stalls when the "
        "grabber stage waits on its queue. Restart the grabber with a larger queue.\n"
    )
    _write(
        tmp_path,
        {
            "terms.md": "# Terms\n\n## Terms\n\n" + _term_rows(25),
            "days/README.md": "# Notes\n\n## Pages\n\n" + _link_rows(12),
            "pipeline.md": fix,
        },
    )
    wiki = load_wiki(tmp_path)
    kinds = {path: page_kind(page, None) for path, page in wiki.pages.items()}
    assert kinds == {"terms.md": "glossary", "days/README.md": "index", "pipeline.md": "reference"}
    ranking = PageRanker.build(wiki).rank(
        "The grabber stage hangs and the widget pipeline stalls, what does GRB3 mean here?"
    )
    assert paths(ranking)[0] == "pipeline.md"
    # Fewer rows than a glossary or an index holds: a page like any other.
    _write(tmp_path, {"terms.md": "# Terms\n\n## Terms\n\n" + _term_rows(5)})
    _write(tmp_path, {"days/README.md": "# Notes\n\n## Pages\n\n" + _link_rows(3)})
    wiki = load_wiki(tmp_path)
    assert {page_kind(page, None) for page in wiki.pages.values()} == {"reference"}


def test_noise_and_generic_error_words_are_never_evidence():
    from knowledge.search.pages import is_generic_error_word, is_noise

    for term in ("2.28.9", "865", "00", "mi", "cu", "mib", "ffsfsss", "aaaa"):
        assert is_noise(term), term
    for term in ("nccl", "cublas", "sm_120", "fp8", "glm-5.2", "deepgemm", "successes"):
        assert not is_noise(term), term
    for term in ("runtimeerror", "valueerror", "failed", "device", "available"):
        assert is_generic_error_word(term), term
    for term in ("frobnicate_kernel", "nccl", "illegal", "outofmemoryerror", "enginedeaderror"):
        assert not is_generic_error_word(term), term


def test_an_error_line_is_matched_by_its_op_name_not_by_its_generic_words(tmp_path):
    _write(
        tmp_path,
        {
            "generic.md": "# Startup Errors\n\n## Device errors\n\nA RuntimeError saying the "
            "device is not available, or that a step failed with an error, has many causes.\n",
            "kernels.md": "# Kernels\n\n## Frobnicate kernel\n\nThe frobnicate_kernel op is "
            "built for sm_120 only from release 3; older wheels lack it. Rebuild the wheel.\n",
            "fans.md": "# Fans\n\n## Fan curves\n\nSet the fan curve before a long run.\n",
            "power.md": "# Power\n\n## Limits\n\nA power limit of 450 W keeps cards cool.\n",
        },
    )
    ranker = PageRanker.build(load_wiki(tmp_path))
    line = "RuntimeError: frobnicate_kernel failed: device not available (error 865, 2.28.9)"
    ranking = ranker.rank("startup dies at once, ffsfsss", [line])
    assert paths(ranking)[0] == "kernels.md"
    shown = {
        word
        for hit in ranking.hits
        for code, words in hit.why
        if code == "terms"
        for word in words.split(", ")
    }
    assert "frobnicate_kernel" in shown
    assert not shown & {
        "runtimeerror",
        "failed",
        "device",
        "available",
        "error",
        "865",
        "2.28.9",
        "ffsfsss",
    }


def _two_families(tmp_path, extra: dict[str, str] | None = None):
    _write(
        tmp_path,
        {
            "README.md": "# Wiki\n\n## Start Here\n\n| Model family | Start here | Focus |\n"
            "|---|---|---|\n| Widget | [Widget Hub](models/widget.md) | Two cards. |\n"
            "| Gadget | [Gadget Hub](models/gadget.md) | Four cards. |\n",
            "models/widget.md": "# Widget Hub\n\n## Version Map\n\n| Page | Status |\n"
            "|---|---|\n| [Widget v3](widget_v3.md) | Current |\n",
            "models/widget_v3.md": "# Widget v3\n\n## Launch\n\nThe widget recipe on two cards.\n",
            "models/gadget.md": "# Gadget Hub\n\n## Version Map\n\n| Page | Status |\n"
            "|---|---|\n| [Gadget v2](gadget_v2.md) | Current |\n",
            "models/gadget_v2.md": "# Gadget v2\n\n## Zorbel allocator\n\nThe zorbel allocator "
            "overflows its arena with q8 caches; the cublas matmul then fails with status 14. "
            "Shrink the zorbel arena and the q8 caches.\n",
            **(extra or {}),
        },
    )
    wiki = load_wiki(tmp_path)
    catalogue = Catalogue.from_wiki(wiki)
    return PageRanker.build(wiki, catalogue.statuses(), catalogue=catalogue)


def test_another_models_runbook_first_is_no_confident_answer_for_the_model_named(tmp_path):
    ranker = _two_families(tmp_path)
    question = "Widget-v3 on one card: the zorbel allocator overflows its arena with q8 caches"
    ranking = ranker.rank(question, ["cublas matmul failed: status 14"])
    assert ranking.family == "Widget"
    assert paths(ranking)[0] == "models/gadget_v2.md"
    assert ranking.confidence == "low"
    # The same words without a model named: the page answers them.
    plain = ranker.rank(
        "the zorbel allocator overflows its arena with q8 caches",
        ["cublas matmul failed: status 14"],
    )
    assert paths(plain)[0] == "models/gadget_v2.md" and plain.confidence == "medium"


def test_a_family_named_lends_no_confidence_to_a_page_that_is_not_its_own(tmp_path):
    ranker = _two_families(
        tmp_path,
        {
            "guides/queues.md": "# Queues\n\n## Scheduler\n\nThe froblet scheduler hangs when "
            "froblet_wait is unset; set froblet_wait to a positive value.\n",
            "guides/cooling.md": "# Cooling\n\n## Fans\n\nA flat fan curve and a low power "
            "limit keep the cards cool.\n",
            "guides/pools.md": "# Pools\n\n## Velbor\n\nThe velbor pool and the mordrel "
            "queue report their states in a log.\n",
        },
    )
    # The page first holds few of the request's telling words: the family alone does
    # not make it an answer.
    ranking = ranker.rank(
        "Widget-v3: the froblet scheduler hangs, the fan curve is flat and the velbor pool "
        "reports odd states"
    )
    assert ranking.family == "Widget" and paths(ranking)[0].startswith("guides/")
    assert ranking.confidence == "low"
    # A checkpoint of the family named (a repository id the wiki never writes) is that
    # family's model, not one the wiki does not cover.
    ranking = ranker.rank("acme/Widget-v3-NVFP4: the froblet scheduler hangs, froblet_wait unset")
    assert ranking.family == "Widget" and paths(ranking)[0] == "guides/queues.md"
    assert ranking.confidence == "medium"


def test_a_page_no_other_page_links_to_ranks_below_the_linked_page_it_copies(tmp_path):
    guide = (
        "# Grabber Guide\n\n## Grabber stage hangs\n\nThe widget pipeline stalls when the "
        "grabber stage waits on its queue. Restart the grabber with a larger queue.\n"
    )
    # The copy holds the guide and repeats its words: on words alone it comes first.
    copy = "# Grabber stage hangs\n\n## Grabber stage hangs, widget pipeline stalls\n\n" + (
        "The grabber stage hangs and the widget pipeline stalls on its queue. " * 3
    )
    _write(
        tmp_path,
        {
            "README.md": "# Front\n\n## Pages\n\n- [Grabber](guides/grabber.md)\n"
            "- [Other](guides/other.md)\n"
            + "".join(f"- [Topic {i}](topics/topic-{i}.md)\n" for i in range(8)),
            **{
                f"topics/topic-{i}.md": f"# Topic {i}\n\n## Part\n\n[Up](../README.md)\n"
                for i in range(8)
            },
            "guides/grabber.md": guide + "\nSee [other](other.md).\n",
            "guides/other.md": "# Other\n\n## Misc\n\nUnrelated notes on [grabbers](grabber.md).\n",
            "assets/grabber-copy.md": copy,
        },
    )
    question = "The grabber stage hangs and the widget pipeline stalls on its queue, why?"
    ranker = PageRanker.build(load_wiki(tmp_path))
    assert ranker.kinds["assets/grabber-copy.md"] == "unlinked"
    assert ranker.kinds["guides/grabber.md"] == "reference"
    assert paths(ranker.rank(question))[:2] == ["guides/grabber.md", "assets/grabber-copy.md"]
    # Once a page links to the copy, the wiki vouches for it: words decide again.
    other = "# Other\n\n## Misc\n\nSee [the copy](../assets/grabber-copy.md).\n"
    _write(tmp_path, {"guides/other.md": other})
    ranker = PageRanker.build(load_wiki(tmp_path))
    assert ranker.kinds["assets/grabber-copy.md"] == "reference"
    assert paths(ranker.rank(question))[0] == "assets/grabber-copy.md"


def test_a_wiki_whose_links_leave_out_many_pages_has_no_unlinked_pages(tmp_path):
    # Two pages of ten linked: the wiki has no navigation to leave a page out of.
    pages = {
        f"page-{i}.md": f"# Page {i}\n\n## Part\n\nWidget notes number {i}.\n" for i in range(8)
    }
    pages["README.md"] = "# Front\n\n## Pages\n\n[Page 0](page-0.md), [Page 1](page-1.md)\n"
    pages["page-0.md"] += "\nBack to the [front](README.md).\n"
    _write(tmp_path, pages)
    ranker = PageRanker.build(load_wiki(tmp_path))
    assert set(ranker.kinds.values()) == {"reference"}


def test_a_line_saying_the_binary_lacks_the_gpus_architecture_asks_for_the_install_pages(
    tmp_path,
):
    _write(
        tmp_path,
        {
            "engines/widget.md": "# Widget engine\n\n## Installation\n\nInstall the cu13 wheel "
            "or the docker image; a build from source needs the architecture list.\n\n"
            "## Serving\n\nServe a model with the widget engine.\n",
            "guides/context.md": "# Long context\n\n## Rope scaling\n\nYarn rope scaling with "
            "factor 4 extends the context of a widget model; set the rope factor in the "
            "model's config and the max model len to match.\n",
            **{
                f"notes/other-{i}.md": f"# Other {i}\n\n## Part\n\nGrabber {i}.\n" for i in range(6)
            },
        },
    )
    ranker = PageRanker.build(load_wiki(tmp_path))
    question = "Serving a model with yarn rope scaling, factor 4 and a long max model len fails"
    plain = ranker.rank(question, ["RuntimeError: CUDA error: misaligned address"])
    assert paths(plain)[0] == "guides/context.md"
    for line in (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "NVIDIA Widget GPU with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.",
        "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'",
        "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
    ):
        assert error_lines([line]) == [line]  # each is an error line
        ranking = ranker.rank(question, [line])
        assert paths(ranking)[0] == "engines/widget.md", line
        # The words it brings rank pages; they are not the user's, so never shown.
        brought = {"installation", "install", "wheel", "docker", "image", "build", "source"}
        brought -= set(line.casefold().replace(".", " ").split())
        assert not _shown(ranker.rank("The widget engine fails", [line])) & brought


def _shown(ranking) -> set[str]:
    return {
        word
        for hit in ranking.hits
        for code, words in hit.why
        if code == "terms"
        for word in words.split(", ")
    }


def test_a_glossary_meaning_ranks_pages_but_is_never_shown_as_the_users_word():
    ranking = RANKER.rank("With TP the ranks hang right after the weights load")
    assert paths(ranking)
    assert not _shown(ranking) & {"tensor", "parallelism"}
    said = RANKER.rank("With tensor parallelism the ranks hang right after the weights load")
    assert _shown(said) & {"tensor", "parallelism"}


def test_a_family_named_among_other_makers_models_is_not_the_requests_subject(tmp_path):
    ranker = _two_families(
        tmp_path,
        {
            "guides/queues.md": "# Queues\n\n## Scheduler\n\nThe froblet scheduler hangs at "
            "startup when froblet_wait is unset on several cards.\n",
        },
    )
    alone = ranker.rank("Widget-v3 on two cards hangs at startup in the froblet scheduler")
    assert alone.family == "Widget" and paths(alone)[0].startswith("models/widget")
    # The same hang with every model tried, of other makers too: a shared problem.
    several = ranker.rank(
        "Widget-v3, Zappo-7B and acme/Quux-13B-it on two cards all hang at startup in the "
        "froblet scheduler"
    )
    assert paths(several)[0] == "guides/queues.md"
    assert several.confidence == "low"  # models the wiki has no page for


def test_a_runbook_is_a_page_like_any_other_when_the_request_names_no_model(tmp_path):
    ranker = _two_families(
        tmp_path,
        {
            "guides/zorbel.md": "# Zorbel allocator\n\n## Arena overflow\n\nThe zorbel allocator "
            "overflows its arena when q8 caches grow; shrink the zorbel arena.\n",
        },
    )
    question = "The zorbel allocator overflows its arena with q8 caches"
    ranking = ranker.rank(question)
    assert paths(ranking)[:2] == ["guides/zorbel.md", "models/gadget_v2.md"]
    # Named, the model's runbook is the page for it.
    named = ranker.rank(f"Gadget v2: {question}")
    assert named.family == "Gadget" and paths(named)[0] == "models/gadget_v2.md"


def test_the_gpu_drivers_log_envelope_is_no_evidence_that_a_page_covers_a_fault(tmp_path):
    _write(
        tmp_path,
        {
            "faults/bus.md": "# Bus drops\n\n## Fallen off the bus\n\nNVRM logs Xid 79 when a "
            "card has fallen off the bus; NVRM then reports Xid 79 again on every probe. "
            "Check the riser seating first.\n",
            **{
                f"notes/n{i}.md": f"# Note {i}\n\n## Part\n\nWidget {i} grabber.\n"
                for i in range(6)
            },
        },
    )
    ranker = PageRanker.build(load_wiki(tmp_path))
    lines = [
        "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed to reset required",
        "NVRM: Xid (PCI:0000:01:00): 120, GSP kernel exception: store access page fault",
    ]
    # Only the envelope in common: no page is offered with confidence.
    other = ranker.rank("One card keeps crashing under load", lines)
    assert other.confidence in ("low", "none")
    assert not _shown(other) & {"nvrm", "xid"}
    # The message of its own fault: the page covers the request.
    own = ranker.rank(
        "One card has fallen off the bus, what should I check?",
        ["NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus."],
    )
    assert paths(own)[0] == "faults/bus.md" and own.confidence in ("medium", "high")


def test_generic_error_words_a_page_shares_do_not_make_it_cover_a_request(tmp_path):
    # The page shares the request's generic error words and two of its six telling
    # words: read first, but not offered with confidence.
    words = ["zorbel", "velbor", "mordrel", "pipeline", "stalls", "widget"]
    _write(
        tmp_path,
        {
            "guides/grabber.md": "# Grabber\n\n## Startup\n\nThe grabber stage failed: error, "
            "device unavailable, exception raised, fatal abort. Restart the grabber queue.\n",
            **{
                f"notes/n{i}.md": f"# Note {i}\n\n## Part\n\nThe {w} notes.\n"
                for i, w in enumerate(words)
            },
        },
    )
    ranking = PageRanker.build(load_wiki(tmp_path)).rank(
        "grabber queue stalls; zorbel velbor mordrel pipeline",
        ["RuntimeError: grabber failed: device unavailable, fatal error, exception raised, abort"],
    )
    assert paths(ranking)[0] == "guides/grabber.md"
    assert ranking.confidence == "low"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(
                st.sampled_from([*_ERROR_WORDS, "time", "timed", "out", "d", "CAN'T", "OoM"]),
                st.text(alphabet=st.characters(max_codepoint=0x17F), max_size=6),
                st.sampled_from(["\r", "\x0c", "\n", "\x1c", " "]),
            ),
            max_size=8,
        ).map("".join),
        max_size=12,
    )
)
def test_error_lines_of_a_whole_log_are_the_lines_the_pattern_finds(lines):
    # the ASCII lines are searched at once, word by word: the same lines, in order
    from knowledge.search.pages import _ERRORISH_RE

    expected = list(dict.fromkeys(x.strip() for x in lines if _ERRORISH_RE.search(x)))
    limit = len(expected) + 1
    assert error_lines(lines, limit=limit) == expected
    assert error_lines(iter(lines), limit=limit) == expected


def test_the_error_words_are_the_pattern_s():
    from knowledge.search.pages import _ERRORISH_LOWER_RE, _ERRORISH_WORDS

    for word in _ERRORISH_WORDS:
        assert _ERRORISH_LOWER_RE.fullmatch(word), word
    pieces = sorted({w for word in _ERRORISH_WORDS for w in (word, word + "x", "x" + word)})
    for text in [*pieces, "time  out", "timeo ut", "timd out", "tim out"]:
        assert bool(_ERRORISH_LOWER_RE.search(text)) == any(w in text for w in _ERRORISH_WORDS)


def test_generic_error_words_and_their_parts_weigh_nothing_a_word_of_its_own_does():
    terms = request_terms(
        "vLLM raises ValueError: the default value of max_len is wrong",
        ["RuntimeError: CUDA error: device-side assert triggered in frobnicate_kernel"],
    )
    assert not {"valueerror", "runtimeerror", "runtime", "error", "device"} & set(terms)
    assert {"value", "max_len", "cuda", "frobnicate_kernel", "assert"} <= set(terms)


def test_a_generic_word_the_asker_writes_alone_still_counts_in_the_question():
    # ``debug``, ``support``, ``device`` say nothing in a logged line (a level, a
    # boilerplate phrase), but in the asker's own words they name the topic.
    terms = request_terms(
        "how do I debug a device hang, and does the glorp backend support it?",
        ["RuntimeError: device-side assert triggered (DEBUG)"],
    )
    assert {"debug", "device", "support", "glorp"} <= set(terms)
    assert terms["debug"] == terms["support"] == 1.0  # plain words, not error terms
    assert not {"runtimeerror", "runtime"} & set(terms)
    assert not set(request_terms("what is a KeyError or a ValueError")) - {"value"}


def test_a_question_about_debugging_finds_the_debugging_section(tmp_path):
    # Without ``debug`` the question is "frobnicator hang", which the install section
    # tells more of: the asker's own word decides.
    _write(
        tmp_path,
        {
            "frob.md": "# Frobnicator\n\n## Install the frobnicator\n\nA frobnicator install "
            "can hang on a slow mirror: the frobnicator hang ends when the mirror answers.\n\n"
            "## Debug the frobnicator\n\nSet FROB_TRACE=1 and read the trace when it stops.\n",
            "fans.md": "# Fans\n\n## Fan curves\n\nSet the fan curve before a long run.\n",
            "power.md": "# Power\n\n## Limits\n\nA power limit of 450 W keeps cards cool.\n",
            "backends.md": "# Backends\n\n## Glorp backend\n\nThe glorp backend runs here.\n",
        },
    )
    ranker = PageRanker.build(load_wiki(tmp_path))
    ranking = ranker.rank("how do I debug a frobnicator hang?")
    assert ranking.hits[0].section_title == "Debug the frobnicator"


def test_a_pasted_exception_class_does_not_pick_the_page_that_names_it_most(tmp_path):
    # /search reads a pasted question whole: ``ValueError`` in its prose once weighed as
    # an identifier, so the page quoting ValueError most led over the backend's own page.
    _write(
        tmp_path,
        {
            "loader.md": "# Loader\n\n## ValueError from the loader\n\nThe loader raises "
            "ValueError when a value in the file is wrong; ValueError names the key. A "
            "ValueError at start means a bad value, not a bad backend.\n",
            "backends.md": "# Backends\n\n## Frobnicate backend\n\nThe frobnicate backend "
            "has no sm_120 kernels; pick the glorp backend on these cards.\n",
            "fans.md": "# Fans\n\n## Fan curves\n\nSet the fan curve before a long run.\n",
            "power.md": "# Power\n\n## Limits\n\nA power limit of 450 W keeps cards cool.\n",
        },
    )
    ranker = PageRanker.build(load_wiki(tmp_path))
    ranking = ranker.rank("ValueError: frobnicate backend rejected on sm_120, which one works?")
    assert paths(ranking)[0] == "backends.md"


def test_a_model_the_wiki_never_names_is_not_the_subject_of_a_line_asking_for_a_build(
    tmp_path,
):
    # CUDA's "no kernel image" is fixed by another wheel, image or build whatever model
    # was being served: with the installation section first, the unknown model does not
    # make the answer "low". Any other line keeps it low: the model may be the subject.
    _write(
        tmp_path,
        {
            "engines/widget.md": "# Widget engine\n\n## Installation\n\nInstall the cu13 wheel "
            "or the docker image on these cards; a build from source needs the architecture "
            "list. Serving on one card works with either.\n\n"
            "## Serving\n\nServe a model with the widget engine.\n",
            **{
                f"notes/other-{i}.md": f"# Other {i}\n\n## Part\n\nGrabber {i}.\n" for i in range(6)
            },
        },
    )
    ranker = PageRanker.build(load_wiki(tmp_path))
    question = "Serving Zorblax-32B with the widget engine on one card: which wheel or image?"
    build = ranker.rank(
        question, ["RuntimeError: CUDA error: no kernel image is available for execution"]
    )
    assert paths(build)[0] == "engines/widget.md"
    assert build.hits[0].section_title == "Installation"
    assert "zorblax-32b" in build.unknown
    assert build.confidence == "medium"
    other = ranker.rank(question, ["RuntimeError: CUDA error: misaligned address"])
    assert paths(other)[0] == "engines/widget.md"
    assert other.confidence == "low"
    # Without a section on installing, building or images first, the model stays the
    # subject: the wiki has nothing to offer for the line.
    bare = tmp_path / "bare"
    _write(
        bare,
        {
            "engines/widget.md": "# Widget engine\n\n## Serving\n\nServe a model with the "
            "widget engine on one card; the wheel and the image serve alike.\n",
            **{
                f"notes/other-{i}.md": f"# Other {i}\n\n## Part\n\nGrabber {i}.\n" for i in range(6)
            },
        },
    )
    served = PageRanker.build(load_wiki(bare)).rank(
        question, ["RuntimeError: CUDA error: no kernel image is available for execution"]
    )
    assert served.hits[0].section_title == "Serving"
    assert served.confidence == "low"
