"""The store's redaction before writing: the same result as redacting every time."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import knowledge.triage.redact as redact_module
from knowledge.intake.scrub import Scrubber
from knowledge.triage.redact import redact_fields

HF = "hf_" + "Zq7" * 12
LOG = "\n".join(f"INFO step {n}: loaded shard {n} of 300" for n in range(300))

texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from([LOG, HF, f"HF_TOKEN={HF}", f"Authorization: Bearer {HF}", "plain words"]),
)
keys = st.sampled_from(["text", "log", "command", "HF_TOKEN", "api_key", "notes", "why"])
values = st.recursive(
    st.one_of(texts, st.integers(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(keys, values, max_size=5), min_size=1, max_size=4))
def test_what_is_written_is_what_redacting_every_time_gives(records):
    scrubber = Scrubber()
    for record in records * 2:  # the second round meets every text again
        assert scrubber.mapping(record) == redact_fields(record)[0]


def test_a_clean_log_is_scanned_once_however_often_it_is_written(monkeypatch):
    scanned = []
    real = redact_module._redact_counts

    def counting(text, *args, **kwargs):
        scanned.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(redact_module, "_redact_counts", counting)
    scrubber = Scrubber()
    draft = {"values": {"log": LOG, "text": "it hangs"}, "notes": []}
    for _ in range(3):
        assert scrubber.mapping(draft) == draft
    assert scanned.count(LOG) == 1


def test_a_text_holding_a_secret_is_redacted_each_time_and_never_remembered():
    scrubber = Scrubber()
    for _ in range(2):
        out = scrubber.text(f"token {HF} here")
        assert HF not in out and "REDACTED" in out
    assert not scrubber.known_clean(f"token {HF} here")


def test_a_remembered_text_under_a_secret_name_is_still_replaced_whole():
    scrubber = Scrubber()
    value = "Zq7Zq7Zq7Zq7Zq7Zq7"  # nothing a pass recognises: clean as plain text
    assert scrubber.text(value) == value
    assert scrubber.known_clean(value)
    out = scrubber.mapping({"values": {"HF_TOKEN": value, "text": value}})
    assert out["values"]["text"] == value
    assert value not in str(out["values"]["HF_TOKEN"])


def test_memory_is_bounded_and_the_oldest_texts_go_first():
    # sizes in round figures, not computed from the module's constants: with its own
    # per-text cost a memo of 1,000 characters holds two texts of 300, not three
    scrubber = Scrubber(kept_chars=1_000)
    for word in ("a" * 300, "b" * 300, "c" * 300):
        scrubber.text(word)
    assert not scrubber.known_clean("a" * 300)
    assert scrubber.known_clean("b" * 300) and scrubber.known_clean("c" * 300)
    scrubber.text("d" * 5_000)  # larger than all it may keep: not kept, nothing evicted
    assert not scrubber.known_clean("d" * 5_000) and scrubber.known_clean("c" * 300)


def test_one_long_text_evicts_as_many_old_ones_as_it_needs():
    scrubber = Scrubber(kept_chars=2_000)
    small = [str(n) * 100 for n in range(8)]  # eight texts of 100 characters
    for text in small:
        scrubber.text(text)
    scrubber.text("z" * 1_500)
    kept = [t for t in [*small, "z" * 1_500] if scrubber.known_clean(t)]
    assert "z" * 1_500 in kept
    assert sum(map(len, kept)) <= 2_000, "the bound holds after the insert, not one step later"
    assert len(kept) <= 4


def test_many_short_texts_are_bounded_by_their_count_too():
    # each remembered text costs its entry's overhead as well as its characters: a memo
    # of 1,000 characters cannot hold fifty texts of one character
    scrubber = Scrubber(kept_chars=1_000)
    words = [chr(ord("A") + n) for n in range(50)]
    scrubber.mapping({"words": words})
    kept = [w for w in words if scrubber.known_clean(w)]
    assert 1 <= len(kept) <= 10
    assert kept == words[-len(kept) :], "the newest are the ones kept"


def test_a_text_read_again_is_kept_over_older_ones():
    scrubber = Scrubber(kept_chars=1_000)
    a, b, c = "a" * 300, "b" * 300, "c" * 300
    scrubber.text(a)
    scrubber.text(b)
    assert scrubber.known_clean(a)  # a is used again: now the newest
    scrubber.text(c)
    assert scrubber.known_clean(a) and scrubber.known_clean(c)
    assert not scrubber.known_clean(b), "the least recently used goes first"
