"""The text helpers' shortcuts give exactly what the plain per-character loops gave.

Cleaning, escaping and folding run on every reply; their fast paths (printable ASCII
passed over in C, a translation table for ASCII text, letter-digit splits only inside
words holding both) must not change one character of any answer.
"""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.text import cap_user_text, cut_at_word, cut_tail, escape_markdown, fold_key

_BLANKED = frozenset({"Cc", "Cs", "Co", "Cn", "Zl", "Zp"})


def reference_cap(text: str, limit: int) -> tuple[str, bool]:
    raw_cap = limit * 8
    truncated = len(text) > raw_cap
    kept = []
    for char in unicodedata.normalize("NFKC", text[:raw_cap]):
        category = unicodedata.category(char)
        if category == "Cf":
            continue
        kept.append(" " if category in _BLANKED else char)
    cleaned = " ".join("".join(kept).split())
    if len(cleaned) > limit:
        truncated = True
        cut = cleaned[:limit]
        space = cut.rfind(" ")
        if space >= limit // 2:
            cut = cut[:space]
        cleaned = cut.strip()
    return cleaned, truncated


def reference_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "\\*_`~|>#[]()-+!<:" else ch for ch in text)


def reference_fold(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = re.sub(r"[^0-9a-z.+]+", " ", folded)
    folded = re.sub(r"(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])", " ", folded)
    return " ".join(part.strip(".") for part in folded.split() if part.strip("."))


#: Printable ASCII with the characters each helper treats specially, and others that
#: normalise, vanish, blank or case-fold (fullwidth, zero-width, controls, separators).
tricky = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.sampled_from(
            "\x00\x07\t\n\r\x7f\u00a0\u00df\u0130\u017f\u200b\u200d\u2028\u2029"
            "\ufeff\ue000\uff27\uff2c\uff2d\uff15\u2160\u00b2\ud7ff\U0001f600"
        ),
        st.characters(),
    ),
    max_size=300,
)


@settings(max_examples=400, deadline=None)
@given(tricky, st.integers(min_value=1, max_value=200))
def test_cleaning_is_the_per_character_loop(text, limit):
    assert cap_user_text(text, limit) == reference_cap(text, limit)


@settings(max_examples=400, deadline=None)
@given(tricky)
def test_escaping_is_the_per_character_loop(text):
    assert escape_markdown(text) == reference_escape(text)


@settings(max_examples=400, deadline=None)
@given(tricky)
def test_folding_is_the_whole_text_patterns(text):
    assert fold_key(text) == reference_fold(text)


def test_folding_examples():
    assert fold_key("GLM-5.1") == fold_key("glm 5.1") == fold_key("glm5.1") == "glm 5.1"
    assert fold_key("Qwen3.5-397B-A17B") == "qwen 3.5 397 b a 17 b"
    assert fold_key("ＧＬＭ５ ..x.. +1") == "glm 5 x +1"


@pytest.mark.parametrize(
    ("text", "limit", "cut"),
    [
        ("short", 10, "short"),
        ("two words", 5, "two"),  # the cut falls in "words": none of it
        ("two words", 3, "two"),  # the cut falls on the space: the word is whole
        ("two words", 4, "two "),
        ("hf_" + "a" * 30, 20, ""),  # one token longer than the limit: nothing of it
        ("key hf_" + "a" * 30, 20, "key"),
    ],
)
def test_cut_at_word_never_keeps_a_piece_of_a_word(text, limit, cut):
    assert cut_at_word(text, limit) == cut


@pytest.mark.parametrize(
    ("text", "limit", "tail"),
    [
        ("one\ntwo\nthree", 20, "one\ntwo\nthree"),  # short enough: whole
        ("one\ntwo\nthree", 8, "three"),  # from the first line that starts inside
        ("one\ntwo\nthree", 9, "two\nthree"),  # the window starts a line: all of it
        ("x\n" + "word " * 10 + "end", 12, "word end"),  # one long line: from a word
        ("x\n" + "word " * 10 + "end\n", 12, "word end\n"),  # its break only at the end
        ("key hf_" + "a" * 30, 20, ""),  # no word starts inside: nothing of the key
        ("abc", 0, ""),
    ],
)
def test_cut_tail_keeps_whole_lines_else_whole_words(text, limit, tail):
    assert cut_tail(text, limit) == tail


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab \n", max_size=60), st.integers(min_value=0, max_value=70))
def test_cut_tail_is_a_suffix_that_starts_at_a_line_or_a_word(text, limit):
    tail = cut_tail(text, limit)
    assert tail == text or (text.endswith(tail) and len(tail) <= max(limit, 0))
    if tail and tail != text:
        before = text[len(text) - len(tail) - 1]
        assert before.isspace() or tail[0].isspace()
        if "\n" in text[-limit:][:-1]:  # a line starts inside the window: from a line
            assert before == "\n"
