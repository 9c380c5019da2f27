"""Each layer of redaction on its own, and the limits that the audit changed one at a time.

A test here names the kind the layer reports and checks that every piece of the
secret is gone, so that removing one layer fails its test even where another layer
(the forum post's :func:`mask_credentials`, another pass) would still hide the secret.
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.intake.desk import IntakeSettings, SupportDesk
from knowledge.intake.sqlite import SqliteTicketStore
from knowledge.intake.store import RateLimit
from knowledge.service import KnowledgeBase
from knowledge.triage import redact as redact_module
from knowledge.triage.redact import (
    looks_like_credential,
    mask_credentials,
    redact,
    redact_fields,
)
from tests.support import DEMO, SAMPLE_LOGS, SNAPSHOT

RNG = random.Random(21)
ALNUM = string.ascii_letters + string.digits


def rand(size: int, alphabet: str = ALNUM) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(size))


HF_BODY = rand(34)
HF = "hf_" + HF_BODY
AWS = "AKIA" + rand(16, string.ascii_uppercase + string.digits)
OPAQUE = rand(32)


def kinds(text: str) -> list[tuple[str, int]]:
    return [(r.kind, r.count) for r in redact(text, "log").redactions]


def assert_gone(out: str, *pieces: str) -> None:
    for piece in pieces:
        for i in range(0, max(1, len(piece) - 5)):
            assert piece[i : i + 6] not in out, f"{piece[i : i + 6]!r} of the secret is left"


# --------------------------------------------------------------- tokens broken over lines

PREFIXES = {
    "vllm": [
        "INFO 12-01 10:00:00 [api_server.py:123] ",
        "INFO 12-01 10:00:01 [api_server.py:124] ",
    ],
    "pid": [
        "(APIServer pid=1) INFO 12-01 10:00:00 [utils.py:9] ",
        "(EngineCore_DP0 pid=310) WARNING 12-01 10:00:02 [core.py:77] ",
    ],
    "python": [
        "2026-12-01 10:00:00,123 - vllm.entrypoints - INFO - ",
        "2026-12-01 10:00:00,124 - vllm.entrypoints - ERROR - ",
    ],
    "iso-rank": ["2026-12-01T10:00:00.123Z [rank0]: ", "2026-12-01T10:00:00.456+01:00 [rank3]: "],
    "colour": [
        "\x1b[32mINFO\x1b[0m 12-01 10:00:00 \x1b[2m[x.py:1]\x1b[0m ",
        "\x1b[31mERROR\x1b[0m 12-01 10:00:03 \x1b[2m[x.py:2]\x1b[0m ",
    ],
    "different": ["INFO 12-01 10:00:00 [a.py:1] ", "2026-12-01 10:00:00,124 - vllm - WARNING - "],
    # Docker Compose's service name and bar, the same on every line, then the service's own
    "compose": [
        "vllm-1  | INFO 12-01 10:00:00 [api_server.py:123] ",
        "vllm-1  | (APIServer pid=1) WARNING 12-01 10:00:02 [core.py:77] ",
    ],
    "compose-bare": ["vllm-1  | ", "vllm-1  | "],
    "compose-timestamps": [
        "vllm_1   | 2026-12-01T10:00:00.123456789Z ",
        "vllm_1   | 2026-12-01T10:00:00.223456789Z [rank0]: ",
    ],
    "compose-colour": [
        "\x1b[36mvllm-1  | \x1b[0m\x1b[32mINFO\x1b[0m 12-01 10:00:00 ",
        "\x1b[36mvllm-1  | \x1b[0m\x1b[31mERROR\x1b[0m 12-01 10:00:03 ",
    ],
}


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("style", PREFIXES)
def test_a_token_broken_over_lines_that_each_start_with_a_log_prefix_is_found(style, newline):
    first, second = PREFIXES[style]
    log = (
        f"{first}Loading model{newline}{first}token {HF[:15]}{newline}{second}{HF[15:]}"
        f"{newline}{second}Loading weights took 4.1 GB"
    )
    result = redact(log, "log")
    assert [(r.kind, r.count) for r in result.redactions] == [("hf-token", 1)]
    assert_gone(result.text, HF_BODY[:12], HF_BODY[12:])
    assert result.text.count("\n") == log.count("\n")
    assert result.text.endswith("Loading weights took 4.1 GB")


def test_a_jwt_over_four_prefixed_lines_is_gone_to_its_last_piece():
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    payload = base64.urlsafe_b64encode(json.dumps({"sub": rand(12)}).encode()).decode()
    token = f"{header}.{payload.rstrip('=')}.{rand(43, ALNUM + '-_')}"
    quarter = len(token) // 4
    pieces = [token[i * quarter : (i + 1) * quarter] for i in range(3)] + [token[3 * quarter :]]
    prefix = "INFO 12-01 10:00:00 [api_server.py:123] "
    log = "\n".join(prefix + p for p in pieces) + f"\n{prefix}Application startup complete."
    result = redact(log, "log")
    assert [(r.kind, r.count) for r in result.redactions] == [("jwt", 1)]
    assert_gone(result.text, pieces[1], pieces[2], pieces[3], token.split(".")[2])
    assert result.text.endswith("Application startup complete.")


def test_a_word_starting_the_line_after_a_broken_token_is_kept():
    prefix = "INFO 12-01 10:00:00 [api_server.py:123] "
    log = f"{prefix}got {AWS[:9]}\n{prefix}{AWS[9:]}\n{prefix}done\n{prefix}Loading weights"
    result = redact(log, "log")
    assert kinds(log) == [("aws-access-key", 1)]
    assert result.text.endswith(f"{prefix}done\n{prefix}Loading weights")


@pytest.mark.parametrize("indent", ["", "  ", "\t"])
def test_a_token_continued_after_a_trailing_backslash_is_found(indent):
    command = f"docker run -e X=1 \\\n  --token {HF[:20]}\\\n{indent}{HF[20:]} \\\n  vllm serve m"
    result = redact(command, "command")
    assert_gone(result.text, HF_BODY[:10], HF_BODY[17:])
    assert ("hf-token", 1) in [(r.kind, r.count) for r in result.redactions]
    assert result.text.endswith("vllm serve m")


GH_PAT = "github_pat_" + rand(82, ALNUM + "_")


@pytest.mark.parametrize("token", [HF, GH_PAT, AWS], ids=["hf", "github-pat", "aws"])
@pytest.mark.parametrize(
    ("line", "kind"),
    [(f"HF_TOKEN={OPAQUE}", "env-secret"), (f"X-Api-Key: {OPAQUE}", "env-secret")],
    ids=["assignment", "header"],
)
def test_the_name_of_a_value_on_the_next_line_is_not_taken_for_a_tokens_last_piece(
    token, line, kind
):
    # ``HF_TOKEN`` looks like a piece of a token (capitals and ``_``): taken as the end
    # of the token above it, it left ``=<value>`` behind, in clear (found by Hypothesis).
    result = redact(f"{token}\n{line}", "log")
    assert_gone(result.text, token[4:14], token[-10:], OPAQUE[:8], OPAQUE[-8:])
    assert kind in {r.kind for r in result.redactions}
    assert line.split(OPAQUE)[0] in result.text, "the name stays readable"


@pytest.mark.parametrize(
    "above",
    [f"Authorization: Bearer {HF}", f"Authorization: {OPAQUE}x"],
    ids=["bearer", "no-scheme"],
)
@pytest.mark.parametrize("flag", ["--api-key {}", "--api-key={}", "--token  {}"])
def test_a_flag_and_its_value_on_the_next_line_are_not_a_header_values_last_piece(
    above, flag
):
    # ``--api-key`` looks like a piece of a value (lower case and ``-``): taken as the
    # end of the Authorization value above it, it was hidden from the flag's own pass,
    # and the key after it stayed in clear (found by Hypothesis in the intake's test).
    key = "Zx" + OPAQUE[:30]
    result = redact(f"{above}\n{flag.format(key)}", "log")
    assert_gone(result.text, key[:10], key[-10:], HF[4:14], OPAQUE[:8])
    assert {"authorization", "cli-secret"} <= {r.kind for r in result.redactions}
    assert flag.split("{}")[0].rstrip() in result.text, "the flag stays readable"


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (f"WANDB_API_KEY={OPAQUE[:12]}\\\n    {OPAQUE[12:]}", "env-secret"),
        (f"--api-key {OPAQUE[:5]}\nINFO 12-01 10:00:00 [x.py:1] {OPAQUE[5:]}", "cli-secret"),
        (f"Authorization: Bearer {OPAQUE[:20]}\n[rank0]: {OPAQUE[20:]}", "authorization"),
        (f"postgres://app:{OPAQUE[:10]}\n{OPAQUE[10:]}@db:5432/x", "url-password"),
    ],
    ids=["env", "cli", "authorization", "url"],
)
def test_a_secret_value_broken_over_lines_is_gone_in_every_piece(value, kind):
    result = redact(value + "\nINFO 12-01 10:00:01 [x.py:2] Starting server", "log")
    assert [(r.kind, r.count) for r in result.redactions] == [(kind, 1)]
    assert_gone(result.text, OPAQUE)
    assert result.text.endswith("Starting server")


COMPOSE = "sglang-server-1  | "


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (f"--api-key {OPAQUE[:5]}\n{COMPOSE}{OPAQUE[5:]}", "cli-secret"),
        (f"Authorization: Bearer {OPAQUE[:20]}\n{COMPOSE}[rank0]: {OPAQUE[20:]}", "authorization"),
        (f"postgres://app:{OPAQUE[:10]}\n{COMPOSE}{OPAQUE[10:]}@db:5432/x", "url-password"),
        (f"token {HF[:15]}\n{COMPOSE}INFO 12-01 10:00:01 [x.py:2] {HF[15:]}", "hf-token"),
    ],
    ids=["cli", "authorization", "url", "hf"],
)
def test_a_secret_broken_over_docker_compose_lines_is_gone_and_the_service_names_stay(
    value, kind
):
    # The next line's piece came after the service's name: the name was taken for the
    # piece (and masked) and the piece itself left in clear.
    log = f"{COMPOSE}Starting\n{COMPOSE}{value}\n{COMPOSE}INFO 12-01 10:00:01 [x.py:2] done"
    result = redact(log, "log")
    assert [(r.kind, r.count) for r in result.redactions] == [(kind, 1)]
    assert_gone(result.text, OPAQUE if kind != "hf-token" else HF_BODY)
    assert result.text.count(COMPOSE) == 4 and result.text.endswith("[x.py:2] done")


@pytest.mark.parametrize(
    "lines",
    [
        ["echo {first}", "{rest} | docker login --password-stdin"],
        ["| key | {first}", "{rest}  | in use |"],
        ["vllm-1  | echo {first}", "{rest}  | docker login --password-stdin"],
    ],
    ids=["pipe", "table", "compose-then-pipe"],
)
def test_a_line_starting_with_a_name_and_a_bar_is_not_composes_unless_the_one_before_is(lines):
    # Read as Compose's prefix, the last piece of a key wrapped before a pipe was lost
    # to the joined view and left in clear.
    text = "\n".join(lines).format(first=HF[:15], rest=HF[15:])
    result = redact(text, "log")
    assert_gone(result.text, HF_BODY[:10], HF_BODY[-12:])
    assert [(r.kind, r.count) for r in result.redactions] == [("hf-token", 1)]


@pytest.mark.parametrize("last", ["", "!", "~", "+"])
@pytest.mark.parametrize("before", ["", "INFO 12-01 10:00:01 [x.py:2] ", "vllm-1  | "])
def test_a_url_password_broken_right_before_its_at_sign_is_gone(before, last):
    # Wholly on its line, it was left to the line passes, which needed the ``@`` on it
    # (and a password ending in ``!`` makes no break inside a token).
    text = f"got postgres://app:{OPAQUE}{last}\n{before}@db:5432/x"
    if before.startswith("vllm"):
        text = before + text
    result = redact(text, "log")
    assert_gone(result.text, OPAQUE)
    assert [(r.kind, r.count) for r in result.redactions] == [("url-password", 1)]
    assert result.text.endswith("@db:5432/x") and redact(result.text).text == result.text


@pytest.mark.parametrize(
    "text",
    [
        'INFO:     Uvicorn running on http://0.0.0.0:8000\n@app.get("/health")',
        "open http://127.0.0.1:7860\n@everyone it works now",
        "vllm-1  | registry http://nexus:8081\nvllm-1  | @mycompany:registry=https://x",
        "it runs on http://localhost:8000.\n@Moderator can you help?",
        "Server is up at http://127.0.0.1:7860!\n@everyone",
        "(http://localhost:8000)\n@app.get('/health')",
    ],
)
def test_a_port_at_a_line_end_before_a_line_starting_with_an_at_sign_is_kept(text):
    assert redact(text, "log").text == text


def test_a_password_with_its_at_sign_on_its_line_keeps_the_host_when_the_next_starts_with_one():
    text = f"postgres://app:{OPAQUE}@db:5432\n@app.get('/health')"
    assert redact(text, "log").text == "postgres://app:[REDACTED:url-password]@db:5432\n" + (
        "@app.get('/health')"
    )


def test_a_password_continued_by_a_backslash_before_its_at_sign_keeps_the_backslash():
    result = redact(f"postgres://app:{OPAQUE}\\\n@db:5432/x", "command")
    assert result.text == "postgres://app:[REDACTED:url-password]\\\n@db:5432/x"


def test_a_compose_prefix_is_known_by_the_line_after_when_the_paste_cut_the_first():
    # The paste starts inside the service's output: the key's first line has no prefix.
    text = f"token {HF[:15]}\nvllm-1  | {HF[15:]}\nvllm-1  | done"
    result = redact(text, "log")
    assert_gone(result.text, HF_BODY[:10], HF_BODY[-12:])
    assert result.text.endswith("\nvllm-1  | [REDACTED:hf-token]\nvllm-1  | done")


def test_another_services_line_goes_on_no_token_of_this_one():
    # The line after the next is the other service's too, but the token's own line says
    # whose it is: ``Qwen2-7B`` is the other service's word, not the key's last piece.
    text = f"a        | got {HF}\nredis-1  | Qwen2-7B loaded\nredis-1  | ok"
    result = redact(text, "log")
    assert result.text == text.replace(HF, "[REDACTED:hf-token]")


def test_a_compose_prefix_whose_padding_widened_still_joins_its_services_lines():
    # Compose pads every name to the longest one attached so far; a longer one widens it.
    text = f"vllm-1  | token {HF[:15]}\nvllm-1     | {HF[15:]}\nvllm-1     | done"
    result = redact(text, "log")
    assert_gone(result.text, HF_BODY[:10], HF_BODY[-12:])
    assert result.text.count("vllm-1 ") == 3


@pytest.mark.parametrize("prefix", ["", "vllm-1  | "], ids=["plain", "compose"])
def test_the_variables_printed_after_a_secret_one_are_not_pieces_of_it(prefix):
    # An environment printed one variable a line: ``HOME=/root`` after the password is
    # a name and its value, as ``--flag value`` is, not the password's next piece.
    names = ["HOME=/root", "HOSTNAME=4f2a9c", "LANG=C.UTF-8", "VLLM_USE_V1=1"]
    text = "\n".join(prefix + line for line in [f"DB_PASSWORD={OPAQUE}", *names])
    result = redact(text, "log")
    assert [(r.kind, r.count) for r in result.redactions] == [("env-secret", 1)]
    assert_gone(result.text, OPAQUE)
    assert result.text.split("\n")[1:] == [prefix + line for line in names]


@pytest.mark.parametrize("prefix", ["", "vllm-1  | "], ids=["plain", "compose"])
@pytest.mark.parametrize(
    "above", [f"Authorization: Bearer {OPAQUE}", f"--api-key {OPAQUE}"], ids=["header", "flag"]
)
def test_a_header_on_the_line_after_a_value_is_left_to_its_own_pass(prefix, above):
    # Taken for the value's next piece, ``X-Api-Key:`` was masked and its key left in
    # clear for the pass that knows the header's name.
    key = "Cd2e" + OPAQUE[:16]
    result = redact(f"{prefix}{above}\n{prefix}X-Api-Key: {key}\n{prefix}ok", "log")
    assert_gone(result.text, OPAQUE, key)
    assert f"{prefix}X-Api-Key: [REDACTED:" in result.text


@pytest.mark.parametrize(
    "text",
    [
        "DB_PASSWORD={a}\n{b}",  # the next piece holds an ``=``: not an upper-case name
        "--api-key {a}\n{b}",
        "Authorization: Bearer {a}\n{b} done",
    ],
    ids=["env", "flag", "header"],
)
def test_a_values_next_piece_holding_an_equals_sign_is_still_a_piece(text):
    first, rest = OPAQUE[:14], "pW8n=" + OPAQUE[14:]
    result = redact(text.format(a=first, b=rest), "log")
    assert_gone(result.text, first, rest[5:])
    assert "=" not in result.text.split("\n")[1]


def test_dotted_names_after_a_secret_value_keep_the_lines_as_they_were():
    # the second line is a value's piece and holds a value of its own: replaced as one,
    # not twice (the text between was written twice, and a line more)
    text = (
        f"DB_PASSWORD={OPAQUE[:16]}\nspring.datasource.password={OPAQUE[16:]}\n"
        "java.home=/usr/lib/jvm\nok"
    )
    result = redact(text, "log")
    assert_gone(result.text, OPAQUE[:16], OPAQUE[16:])
    assert result.text.count("\n") == 3 and result.text.endswith("\nok")
    assert redact(result.text).text == result.text


def test_a_flags_value_wrapped_before_a_pipe_is_gone_in_both_pieces():
    text = f"echo --api-key {OPAQUE[:12]}\n{OPAQUE[12:]} | docker login --password-stdin"
    result = redact(text, "log")
    assert_gone(result.text, OPAQUE)
    assert result.text.endswith(" | docker login --password-stdin")


def test_colour_codes_inside_a_token_are_taken_out():
    log = f"INFO token hf_\x1b[1m{HF_BODY[:10]}\x1b[0m{HF_BODY[10:]} loaded"
    result = redact(log, "log")
    assert kinds(log) == [("hf-token", 1)] and HF_BODY[10:20] not in result.text
    assert result.text == "INFO token [REDACTED:hf-token] loaded"


# --------------------------------------------------------------- look-alikes and marks


@pytest.mark.parametrize(
    ("shown", "kind"),
    [
        ("\u04bbf_" + HF_BODY, "hf-token"),  # Cyrillic shha
        ("gh\u0440_" + rand(36), "github-token"),  # Cyrillic er
        ("\u0410K\u0406\u0410" + AWS[4:], "aws-access-key"),  # Cyrillic A, I, A
        ("\u0397F_" + "T\u039fKEN=" + OPAQUE, "env-secret"),  # Greek Eta, Omicron
    ],
    ids=["hf", "github", "aws", "name"],
)
def test_look_alike_letters_from_other_scripts_are_folded(shown, kind):
    result = redact(f"export {shown} now", "log")
    assert [(r.kind, r.count) for r in result.redactions] == [(kind, 1)]
    assert "REDACTED" in result.text and result.text.isascii()


def test_text_in_other_scripts_without_a_secret_keeps_its_letters():
    text = "Сервер падает при запуске, café, naïve résumé, ΕΛΛΑΔΑ 8x GPU"
    assert redact(text).text == text


@pytest.mark.parametrize("mark", ["\u0301", "\u0308", "\u0327", "\u0336"])
def test_combining_marks_inside_a_token_are_taken_out(mark):
    shown = HF[:8] + mark + HF[8:20] + mark + HF[20:]
    result = redact(f"token {shown} ok", "log")
    assert [(r.kind, r.count) for r in result.redactions] == [("hf-token", 1)]
    assert result.text == "token [REDACTED:hf-token] ok"


# --------------------------------------------------------------------------- encodings


@pytest.mark.parametrize(
    ("shown", "kind"),
    [
        ("q=hf%5F" + HF_BODY, "hf-token"),
        ("".join(f"%{b:02X}" for b in HF.encode()), "hf-token"),
        ("body=user%3Dme%26password%3D" + OPAQUE, "env-secret"),
        ("h=Authorization%3A%20Bearer%20" + OPAQUE, "authorization"),
        ("u=" + urllib.parse.quote(f"postgres://app:{OPAQUE}@db/x", safe=""), "url-password"),
        ("q=hf%255F" + HF_BODY, "hf-token"),  # escaped twice
    ],
    ids=["hf", "every-char", "password", "authorization", "url", "twice"],
)
def test_url_escaped_secrets_are_found(shown, kind):
    result = redact(f"GET /v1/x?{shown} 200", "log")
    assert [(r.kind, r.count) for r in result.redactions] == [(kind, 1)]
    assert_gone(result.text, OPAQUE, HF_BODY)
    assert result.text.startswith("GET /v1/x?") and result.text.endswith(" 200")


def test_base64_inside_base64_is_looked_into_to_a_bounded_depth():
    once = base64.b64encode(HF.encode())
    twice = base64.b64encode(once).decode()
    assert kinds(f"blob {twice} end") == [("encoded-secret", 1)]
    deep = HF.encode()
    for _ in range(6):  # deeper than MAX_DECODE_DEPTH: not unpacked (bounded work)
        deep = base64.b64encode(deep)
    assert kinds(f"blob {deep.decode()} end") == []


@pytest.mark.parametrize("upper", [False, True], ids=["lower", "upper"])
def test_hex_encoded_tokens_are_found(upper):
    shown = AWS.encode().hex()
    shown = shown.upper() if upper else shown
    result = redact(f"key bytes {shown} end", "log")
    assert [(r.kind, r.count) for r in result.redactions] == [("encoded-secret", 1)]
    assert shown not in result.text


def test_hex_that_is_not_text_is_left_alone():
    digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    text = f"image sha256:{digest} commit 45c1582e9b80ba83e71c3a6458e71da4736fbdc4"
    assert redact(text).text == text


# ------------------------------------------------------- limits the audit changed one by one


def test_a_long_assigned_value_is_redacted_whole():
    value = rand(3000)
    for text, kind in ((f"HF_TOKEN={value}", "env-secret"), (f"--api-key {value}", "cli-secret")):
        result = redact(text, "command")
        assert result.text.endswith(f"[REDACTED:{kind}]"), "the value's end is left"
        assert_gone(result.text, value[-200:])


def test_an_authorization_value_without_a_scheme_counts_from_16_characters():
    for value in (rand(16), rand(24)):
        assert kinds(f"Authorization: {value}") == [("authorization", 1)]
    assert kinds("Authorization: required") == []  # a short word, not a credential


def test_a_numeric_key_is_a_count_up_to_8_digits_only():
    assert kinds("MAX_TOKEN=12345678") == []
    for text in ("API_KEY=123456789", "API_KEY=123456789012"):
        assert kinds(text) == [("env-secret", 1)], text
        assert redact_fields({"API_KEY": text.split("=")[1]})[1], text


def test_a_base64_encoded_aws_key_id_is_found():
    # 20 bytes encode to 28 characters: the shortest run looked into must be shorter
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        shown = encode(AWS.encode()).decode()
        assert len(shown.rstrip("=")) < 28
        result = redact(f"aws {shown} ok", "log")
        assert [(r.kind, r.count) for r in result.redactions] == [("encoded-secret", 1)]
        assert result.text == "aws [REDACTED:encoded-secret] ok"


# ----------------------------------------------------------------- the last line: entropy


@pytest.mark.parametrize("size", [32, 40, 64])
def test_a_long_random_string_in_no_known_format_looks_like_a_credential(size):
    found = sum(looks_like_credential(rand(size)) for _ in range(200))
    assert found >= 160, f"only {found} of 200 random strings of {size}"


@pytest.mark.parametrize(
    "text",
    [
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "VLLM_COMMIT=45c1582e9b80ba83e71c3a6458e71da4736fbdc4",
        "snapshots/8a1f4a13204acf2b7ac840375efaed64c231c522/config.json",
        "request 3f2b8c1e-9d4a-4f6b-8e2a-1c5d7e9f0a3b done",
        "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8",
        "voipmonitor/vllm:eldritch-enlightenment-v5-vllmcd272c7-b12xe44cb77-cu132-20260707",
        "Eagle3DeepseekV2ForCausalLM FlashInferMLAAttentionBackend",
        "nvidia/DeepSeek-R1-0528-FP4 --max-num-batched-tokens 16384",
    ],
)
def test_what_helpers_read_is_not_masked(text):
    assert mask_credentials(text).text == text


def test_mask_credentials_masks_and_reports_a_random_key():
    key = "sk-" + "Xq4Lm9Zt2Bv7Nc3Kp8Rw1Hy6Df5Gj0Sa"
    result = mask_credentials(f"OPENAI key is {key} (do not share)", "log")
    assert result.text == "OPENAI key is [REDACTED:credential-like] (do not share)"
    assert [(r.kind, r.field, r.count) for r in result.redactions] == [
        ("credential-like", "log", 1)
    ]


def test_the_forum_post_masks_a_credential_that_redaction_did_not_know(tmp_path):
    key = "Xq4Lm9Zt2Bv7Nc3Kp8Rw1Hy6Df5Gj0SaE"
    kb = KnowledgeBase.open(DEMO, tmp_path / "kb")
    store = SqliteTicketStore.in_folder(tmp_path)
    try:
        desk = SupportDesk(kb.triage_context, store, settings=IntakeSettings(rate=RateLimit(0, 1)))
        draft = desk.new_draft("discord:1").draft
        log = f"INFO started\nINFO client key {key} accepted\nINFO done"
        desk.save(draft.id, "discord:1", {"text": f"fails with {key}", "actual": "x", "log": log})
        ticket = desk.file(draft.id, "discord:1", post=True).ticket
        post = desk.ticket_post(ticket)
    finally:
        store.close()
        kb.close()
    assert key in ticket.values["log"], "no format knows it: only the public post masks it"
    shown = [post.title, post.content, *(f.value for f in post.reply.fields)]
    shown += [text for _, text in post.attachments]
    assert all(key not in text for text in shown)
    assert any("[REDACTED:credential-like]" in text for text in shown)


def masked_by_the_pattern_alone(text: str) -> tuple[str, int]:
    """What the mask makes of ``text`` with its run pattern tried at every position (no
    fast search for the runs): the reference its fast path must agree with."""
    found = 0

    def replace(m):
        nonlocal found
        masked = redact_module._masked_run(m)
        found += masked is not None
        return m.group(0) if masked is None else masked

    return redact_module._CREDENTIAL_RUN_RE.sub(replace, text), found


def assert_masked_as_the_pattern_alone_masks(text: str) -> None:
    expected, found = masked_by_the_pattern_alone(text)
    result = mask_credentials(text, "log")
    assert result.text == expected
    assert sum(r.count for r in result.redactions) == found


# Pieces a text is made of: keys, digests, names, runs just under and over the
# length looked at, separators in and out of the runs' alphabet, other scripts.
MASK_PIECES = st.sampled_from(
    [
        " ",
        "\n",
        ".",
        ":",
        "/",
        "-",
        "=",
        "sha256:",
        "é",
        "日本",
        "█",
        "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8",
        "45c1582e9b80ba83e71c3a6458e71da4736fbdc4",
        "[REDACTED:hf-token]",
        rand(23),
        rand(24),
        rand(40),
        rand(64, ALNUM + "+/_=-"),
        "a" * 30,
        "snapshots/" + rand(30),
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(MASK_PIECES, max_size=24).map("".join))
def test_the_masks_fast_search_masks_as_the_run_pattern_alone(text):
    assert_masked_as_the_pattern_alone_masks(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        rand(24),
        "x " + rand(23),
        rand(70000, ALNUM + "+/"),  # one run longer than the pattern reads at once
        "é" + rand(70000, ALNUM + "+/"),
        "sha256:" + rand(64),
        rand(30) + "é" + rand(30),
    ],
    ids=[
        "empty",
        "exactly-long-enough",
        "one-short",
        "run-over-65536",
        "run-over-65536-non-ascii",
        "digest",
        "runs-around-non-ascii",
    ],
)
def test_the_masks_fast_search_masks_edge_cases_as_the_run_pattern_alone(text):
    assert_masked_as_the_pattern_alone_masks(text)


@pytest.mark.skipif(not SAMPLE_LOGS.is_dir(), reason="../shared/sample-logs is not present")
def test_the_masks_fast_search_reads_the_sample_logs_as_the_run_pattern_alone():
    for path in sorted(p for p in SAMPLE_LOGS.iterdir() if p.is_file()):
        text = path.read_text("utf-8", "replace")
        planted = text.replace("\n", f" {rand(40)}\n", 3)  # keys among real lines
        assert_masked_as_the_pattern_alone_masks(text)
        assert_masked_as_the_pattern_alone_masks(planted)


@pytest.mark.skipif(not SAMPLE_LOGS.is_dir(), reason="../shared/sample-logs is not present")
def test_nothing_in_the_sample_logs_is_masked_as_a_credential():
    for path in sorted(p for p in SAMPLE_LOGS.iterdir() if p.is_file()):
        text = path.read_text("utf-8", "replace")
        assert not mask_credentials(text).redactions, path.name


@pytest.mark.skipif(not SNAPSHOT.is_dir(), reason="../shared/wiki-snapshot is not present")
def test_nothing_in_the_wikis_code_blocks_is_masked_as_a_credential():
    masked = []
    for path in sorted(SNAPSHOT.rglob("*.md")):
        for block in path.read_text("utf-8", "replace").split("```")[1::2]:
            if mask_credentials(block).redactions:
                masked.append(path.relative_to(SNAPSHOT).as_posix())
    assert not masked


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda: "hf_" + rand(34), "hf-token"),
        (lambda: "ghp_" + rand(36), "github-token"),
        (lambda: "AKIA" + rand(16, string.ascii_uppercase + string.digits), "aws-access-key"),
    ],
    ids=["hf", "github", "aws"],
)
def test_broken_tokens_on_consecutive_prefixed_lines_are_each_found(make, kind):
    # joined, each token's match runs on into the next one's prefix letters (``...hf``):
    # the next search starts where the token is whole, not where its match ended
    prefix = "INFO 12-01 10:00:00 [api_server.py:123] "
    tokens = [make() for _ in range(6)]
    log = "\n".join(f"{prefix}{t[:9]}\n{prefix}{t[9:]}" for t in tokens) + f"\n{prefix}done"
    result = redact(log, "log")
    assert [(r.kind, r.count) for r in result.redactions] == [(kind, 6)]
    for token in tokens:
        assert_gone(result.text, token[9:])


def test_folding_keeps_only_its_own_table_of_the_confusables_data():
    """The look-alike table is a few thousand pairs; the package's module would keep
    its whole JSON (six MB of small dicts) for the life of the bot."""
    import subprocess
    import sys

    code = (
        "import sys, tracemalloc\n"
        "import confusable_homoglyphs.utils\n"  # the modules it imports are not the data
        "from knowledge.triage import redact\n"
        "assert redact.redact('plain ascii', 'log').text\n"
        "tracemalloc.start()\n"
        "assert redact.redact('token \\u0455k-' + 'a' * 40, 'log').text\n"
        "held, _ = tracemalloc.get_traced_memory()\n"
        "print(held, 'confusable_homoglyphs.confusables' in sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    held, imported = run.stdout.split()
    assert imported == "False"
    assert int(held) < 1_000_000, held
