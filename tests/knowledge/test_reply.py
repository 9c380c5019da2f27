"""The one reply model: Discord's embed limits applied in one place."""

from __future__ import annotations

from knowledge.reply import LIMITS, Field, Reply


def test_fitted_reply_respects_every_limit():
    huge = Reply(
        "search",
        "t" * 400,
        "d" * 9000,
        fields=tuple(Field("n" * 300, "v" * 2000) for _ in range(40)),
        footer="f" * 3000,
    ).fitted()
    assert len(huge.title) <= LIMITS.title
    assert len(huge.text) <= LIMITS.description
    assert len(huge.fields) <= LIMITS.fields
    assert all(len(f.name) <= 256 and len(f.value) <= 1024 for f in huge.fields)
    assert len(huge.footer) <= LIMITS.footer
    assert huge.total_length() <= LIMITS.total
