"""The shell word splitter against ``shlex``, whose splitting it reproduces faster."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.launch.shell import shell_words, split_words

#: Every character the splitter treats specially, and a few it must not.
ALPHABET = " \t\r\n;&|()'\"\\ab-=$#{}<>\x0b\xa0é"


def shlex_words(line: str) -> list[str] | str:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError as exc:
        return f"ValueError: {exc}"


def fast_words(line: str) -> list[str] | str:
    try:
        return shell_words(line)
    except ValueError as exc:
        return f"ValueError: {exc}"


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_shell_words_split_as_shlex_does(line):
    assert fast_words(line) == shlex_words(line)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["docker", "run", "-e", "A=b c", "'x y'", '"\\"q\\""', "&&"])))
def test_commands_made_of_words_split_as_shlex_does(words):
    line = " ".join(words)
    assert fast_words(line) == shlex_words(line)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("a '' b", ["a", "", "b"]),  # an empty quoted word is a word
        ("a&&b;c|(d)", ["a", "&&", "b", ";", "c", "|(", "d", ")"]),
        ('say "a \\" \\$x \\\\ b"', ["say", 'a " \\$x \\ b']),
        ("x\\ y 'it''s'", ["x y", "its"]),
        ('--hf-overrides "{\\"k\\":\\"v\\"}"', ["--hf-overrides", '{"k":"v"}']),
    ],
)
def test_shell_words_examples(line, words):
    assert shell_words(line) == words == shlex_words(line)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("echo 'open", "No closing quotation"),
        ('echo "open', "No closing quotation"),
        ('echo "open\\', "No escaped character"),
        ("echo open\\", "No escaped character"),
    ],
)
def test_broken_quoting_is_split_on_white_space_and_said(line, message):
    problems: list[str] = []
    assert split_words(line, problems) == [w.strip("\"'") for w in line.split()]
    assert problems == [f"malformed quoting ({message}); words split on white space"]
    assert shlex_words(line) == f"ValueError: {message}"
