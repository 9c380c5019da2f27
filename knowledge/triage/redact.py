"""Mask secrets in pasted launch commands, config files and server logs.

``redact(text)`` replaces every secret it recognises with ``[REDACTED:<kind>]`` and
reports how many of each kind it removed. Reports carry only the kind, the field
name given by the caller and a count: never the value, nor a prefix or hash of it.

Kinds (the ``KINDS`` constant):

``private-key``     a PEM ``-----BEGIN ... PRIVATE KEY-----`` block up to its END line,
                    or to the end of the input when the paste was cut off.
``authorization``   the credentials of an ``Authorization: Bearer|Basic|Token ...`` header.
``url-password``    the password of ``scheme://user:password@host`` (user and host stay),
                    up to the last ``@`` before the host (``user:P@ss@host``).
``hf-token``        Hugging Face ``hf_`` + 34 or more letters/digits, and ``api_org_`` tokens.
``github-token``    ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36, ``github_pat_`` + 82.
``openai-key``      an OpenAI-style API key: ``sk-`` + 32 or more letters, digits, ``_`` and
                    ``-`` holding a digit (``sk-...``, ``sk-proj-...``, ``sk-ant-api03-...``,
                    the keys of the servers that copy OpenAI's API).
``aws-access-key``  ``AKIA``/``ASIA`` + 16 upper-case letters or digits.
``service-key``     a key or token of another service known by its prefix
                    (``SERVICE_KEY_FORMATS``: NVIDIA's ``nvapi-``, Google's ``AIza``,
                    Groq, xAI, GitLab, Docker Hub, PyPI, Slack ...).
``aws-secret-key``  a 40-character AWS secret assigned to a name containing ``SECRET``.
``discord-token``   three dot-separated base64url parts whose first part decodes to a
                    Discord user id (17-20 digits).
``jwt``             a JSON Web Token: ``eyJ...`` header and payload (base64url JSON
                    objects) and a signature, dot-separated.
``encoded-secret``  a base64 (or base64url) run of at least 24 characters, or a hex run,
                    that decodes to printable text in which one of the other kinds is
                    found (or another such run, to ``MAX_DECODE_DEPTH``).
``cli-secret``      the value of a command-line flag named like a secret:
                    ``--api-key X``, ``--hf-token=X``, ``--password X`` ...; and the
                    password of curl's ``-u``/``--user name:password``.
``env-secret``      the value of an assignment whose name looks secret (see
                    ``is_secret_name``): ``NAME=v``, ``export NAME=v``, ``-e NAME=v``,
                    ``--env NAME=v``, YAML ``NAME: v``, JSON ``"NAME": "v"``,
                    Python ``'name': 'v'``, JSON inside a JSON string
                    (``\\"NAME\\": \\"v\\"``); and an environment list's entry,
                    ``- name: NAME`` then ``value: v`` (Kubernetes), or
                    ``{"name": "NAME", "value": "v"}``.

Disguises are undone before matching. Terminal colour codes are taken out. Text that
is not plain ASCII is NFKC-normalised (fullwidth ``ｈｆ＿`` reads ``hf_``) and loses its
format characters (zero-width spaces and joiners, soft hyphens, bidi controls); the
redacted text is that normalised text. Look-alike letters of other scripts (``һf_``,
Cyrillic) are folded to the ASCII they pass for with Unicode's confusables data, and
combining marks inside tokens are dropped: secrets are looked for in that folded
text, which is what a text holding one is given back as (any other keeps its letters).
A token broken over lines (a line that ends in token characters, or in a backslash
after them, and the next that goes on with them after its log prefix or indentation)
is matched as if the lines were joined; each piece is replaced and the line breaks
kept, so line numbers stay. A secret value (``NAME=``, ``--flag``, ``Authorization``)
that ends its line goes on over the next lines' pieces that look like parts of a
token. Words with URL escapes are unescaped, and base64 and hex runs decoded, to
``MAX_DECODE_DEPTH`` encodings deep, and looked into.

:func:`mask_credentials` is the last line of defence for what is posted publicly: it
masks long random-looking strings in no known format (``credential-like``).

Values that are obviously not secrets are left alone: empty values, a value that is
exactly one reference such as ``$VAR``, ``${VAR}`` or ``$(cmd)`` (so a password that
looks like ``$Name`` is indistinguishable from a variable and is kept),
``<placeholder>``, values holding an earlier ``[REDACTED:...]``, runs of one filler
character (``xxxx``, ``****``), and the words in
``NON_SECRET_VALUES`` (``none``, ``null``, ``true``, ``false``, ``changeme`` ...).
``changeme`` is kept on purpose: it is the documented placeholder of many images, and
showing it tells a reader nothing they could not read in the image's README.
For ``${VAR:-default}`` only a non-placeholder default is masked. Names ending in
``_TOKEN``/``_KEY`` whose value is a plain integer of at most 8 digits (``MAX_TOKEN=4096``)
are counts, not secrets; names containing ``PASSWORD``/``SECRET`` are masked even then.

Time is linear in the input (plain ASCII skips the normalising; the joined-lines view
is searched with the token patterns only, and mapped back only when one matches; base64
is looked for in words of 24 characters or more only): every pattern is a handful of
character classes with bounded or non-overlapping repetition and no nested quantifiers,
and assignments and flags are found from a keyword (``token``, ``key``, ``secret``,
``pass``, ``pwd``) and then walked with bounded string scans instead of by backtracking.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import logging
import math
import re
import threading
import unicodedata
import urllib.parse
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Final

__all__ = [
    "KINDS",
    "NON_SECRET_VALUES",
    "Redacted",
    "Redaction",
    "is_secret_name",
    "looks_like_credential",
    "mask_credentials",
    "placeholder",
    "redact",
    "redact_fields",
    "redact_public",
]

log = logging.getLogger(__name__)

PRIVATE_KEY: Final = "private-key"
AUTHORIZATION: Final = "authorization"
URL_PASSWORD: Final = "url-password"
HF_TOKEN: Final = "hf-token"
GITHUB_TOKEN: Final = "github-token"
OPENAI_KEY: Final = "openai-key"
AWS_ACCESS_KEY: Final = "aws-access-key"
SERVICE_KEY: Final = "service-key"
AWS_SECRET_KEY: Final = "aws-secret-key"
DISCORD_TOKEN: Final = "discord-token"
JWT: Final = "jwt"
ENCODED_SECRET: Final = "encoded-secret"
CLI_SECRET: Final = "cli-secret"
ENV_SECRET: Final = "env-secret"
#: What :func:`mask_credentials` reports: a string masked by its looks alone.
CREDENTIAL_LIKE: Final = "credential-like"

#: Every kind ``redact`` can report, in the order the passes run.
KINDS: Final[tuple[str, ...]] = (
    PRIVATE_KEY,
    AUTHORIZATION,
    URL_PASSWORD,
    HF_TOKEN,
    GITHUB_TOKEN,
    OPENAI_KEY,
    AWS_ACCESS_KEY,
    SERVICE_KEY,
    DISCORD_TOKEN,
    JWT,
    ENCODED_SECRET,
    CLI_SECRET,
    ENV_SECRET,
    AWS_SECRET_KEY,
)

#: Values (compared case-insensitively) that are placeholders, not secrets.
NON_SECRET_VALUES: Final = frozenset(
    {
        "none",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        "changeme",
        "change-me",
        "change_me",
        "redacted",
        "...",
        "…",
    }
)

#: Name suffixes (after normalising to upper snake case) that mark a secret.
SECRET_NAME_SUFFIXES: Final = ("_TOKEN", "_KEY", "_SECRET", "_APIKEY", "_PASS", "_PWD")
#: Words one of which every secret name above holds (the name's letters in a row, in
#: any case: normalising a name only adds or swaps in ``_``); a cheap first test.
_NAME_WORDS: Final = ("token", "key", "secret", "pass", "pwd")
#: Name parts that mark a secret wherever they occur.
SECRET_NAME_PARTS: Final = ("PASSWORD", "PASSWD")
#: Whole names that are secrets on their own.
SECRET_NAMES: Final = frozenset({"TOKEN", "SECRET", "APIKEY", "PASS", "PWD"})
#: Names that end like a secret but hold public material.
PUBLIC_NAME_SUFFIXES: Final = ("PUBLIC_KEY", "PUB_KEY", "_PUBKEY")
#: Last dash-separated word of a command-line flag that marks a secret value.
SECRET_FLAG_WORDS: Final = frozenset(
    {"token", "key", "apikey", "secret", "password", "passwd", "pass", "pwd"}
)

#: Longest value (characters) a single assignment or flag value is read to.
MAX_VALUE_CHARS: Final = 4096
#: Lines after its first that a value broken over lines is followed to at most.
MAX_VALUE_LINES: Final = 16
#: Longest assignment or flag name considered.
MAX_NAME_CHARS: Final = 128
#: How many encodings (base64, hex, URL escapes) inside one another are undone at most.
MAX_DECODE_DEPTH: Final = 3
#: Depth beyond which ``redact_fields`` replaces nested containers wholesale.
MAX_FIELD_DEPTH: Final = 32

_NAME_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_PEM_RE: Final = re.compile(
    r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.DOTALL,
)
_AUTH_RE: Final = re.compile(
    r"((?:authorization|Authorization|AUTHORIZATION)(?:\\{0,8}[\"'])?[ \t]{0,16}[:=][ \t]{0,16}"
    r"(?:\\{0,8}[\"'])?)"
    r"(?:((?i:bearer|basic|token|digest|negotiate))[ \t]{1,16})?"
    r"([^\s\"',;\\]+)"
)
# Token patterns start with their literal prefix so the regex engine can jump between
# candidates; whether the candidate starts a word is checked afterwards (``_starts_word``).
# The password runs to the authority's last ``@`` (as ``urllib`` splits it): one typed
# with an ``@`` in it (``P@ssw0rd``) is masked whole, not up to its own ``@``.
#: A URL's scheme separator and user name (group 1), before its password.
_URL_USER: Final = r"://(?<=[A-Za-z0-9]://)([^\s:/?#@\[\]\"'<>]{0,256}:)"
_URL_RE: Final = re.compile(_URL_USER + r"([^\s/?#\"'<>]{1,512})(?=@)")
_HF_RE: Final = re.compile(r"hf_[A-Za-z0-9]{34,}")
_HF_ORG_RE: Final = re.compile(r"api_org_[A-Za-z0-9]{34,}")
_GH_RE: Final = re.compile(r"gh[pousr]_[A-Za-z0-9]{36,}")
_GH_PAT_RE: Final = re.compile(r"github_pat_\w{82,}")
# OpenAI-style keys; a digit in it (``_openai_pass``) tells a key from a long slug.
_OPENAI_RE: Final = re.compile(r"sk-[A-Za-z0-9_-]{32,}")
_AWS_ACCESS_RE: Final = re.compile(r"A(?:KI|SI)A[A-Z0-9]{16}(?![A-Za-z0-9])")
# The same without its end test, for the joined-lines view: there the next line's first
# word follows with no break between, and the end is checked against the line ends.
_AWS_ACCESS_JOINED_RE: Final = re.compile(r"A(?:KI|SI)A[A-Z0-9]{16}")
#: Longest run after its prefix that a token of a known kind is read to in the
#: joined-lines view (real tokens take under 200 characters). There a refused candidate
#: is searched for again from its next character, and a pattern whose characters can
#: spell its own prefix (``sk-`` inside ``sk-...``, ``github_pat_`` inside ``\w``) reads
#: the rest of a run again for each one: 400 kB of ``ask-`` broken over lines took most
#: of a minute, each read bounded it takes a fraction of a second.
MAX_JOINED_TOKEN_CHARS: Final = 512


def _joined(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` (a prefix and one open run ``{n,}``) with its run bounded."""
    return re.compile(pattern.pattern.replace(",}", f",{MAX_JOINED_TOKEN_CHARS}}}"))


_ALNUM: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#: Keys and tokens of other services, each known by its literal prefix and then one run
#: of the characters its body is made of, as long as its shortest (as the services and
#: secret scanners such as gitleaks describe them): those a member of this community
#: may paste, the model providers and hosts they compare with, and the platforms they
#: publish to. Each must start a word. Random ones were mostly caught by the public
#: posts' ``credential-like`` mask already, but not all (hex and lower-case bodies never,
#: nor one without a digit), nor anything stored.
SERVICE_KEY_FORMATS: Final[tuple[tuple[str, str], ...]] = (
    ("nvapi-", "[A-Za-z0-9_-]{40,}"),  # NVIDIA NGC and build.nvidia.com
    ("AIza", "[A-Za-z0-9_-]{35,}"),  # Google (Gemini, Cloud)
    ("gsk_", "[A-Za-z0-9]{40,}"),  # Groq
    ("xai-", "[A-Za-z0-9_]{60,}"),  # xAI
    ("pplx-", "[A-Za-z0-9]{40,}"),  # Perplexity
    ("tgp_v1_", "[A-Za-z0-9_-]{30,}"),  # Together AI
    ("fw_", "[A-Za-z0-9]{20,}"),  # Fireworks AI
    ("r8_", "[A-Za-z0-9_-]{30,}"),  # Replicate
    ("csk-", "[a-z0-9]{40,}"),  # Cerebras
    ("rpa_", "[A-Z0-9]{40,}"),  # RunPod
    ("lsv2_pt_", "[0-9a-f_]{43,}"),  # LangSmith, personal
    ("lsv2_sk_", "[0-9a-f_]{43,}"),  # LangSmith, service
    ("dapi", "[0-9a-f]{32,}"),  # Databricks
    ("glpat-", "[A-Za-z0-9_-]{20,}"),  # GitLab
    ("dckr_pat_", "[A-Za-z0-9_-]{20,}"),  # Docker Hub
    ("npm_", "[A-Za-z0-9]{36,}"),  # npm
    ("pypi-AgEIcHlwaS5vcmc", "[A-Za-z0-9_-]{50,}"),  # PyPI
    ("xoxb-", "[A-Za-z0-9-]{20,}"),  # Slack, bot
    ("xoxp-", "[A-Za-z0-9-]{20,}"),  # Slack, user
    ("xoxa-", "[A-Za-z0-9-]{20,}"),  # Slack, app
    ("xoxe-", "[A-Za-z0-9-]{20,}"),  # Slack, refresh
    ("tskey-", "[A-Za-z0-9-]{30,}"),  # Tailscale
    ("sk_live_", "[A-Za-z0-9]{20,}"),  # Stripe
    ("rk_live_", "[A-Za-z0-9]{20,}"),  # Stripe, restricted
    ("dop_v1_", "[0-9a-f]{64,}"),  # DigitalOcean
    ("doo_v1_", "[0-9a-f]{64,}"),  # DigitalOcean, OAuth
)
#: Prefixes short enough to begin a name (``fw_ForwardAttentionBackend``): a key of
#: theirs must hold a digit after its prefix (``_keylike``), as an ``sk-`` key must.
_SERVICE_DIGIT_PREFIXES: Final = ("fw_", "r8_")
#: The characters of every format above, and the fewest a key of any holds (``fw_`` and
#: 20): a key lies in a run of that many of them at least.
_SERVICE_CHARS: Final = _ALNUM + "_-"
SERVICE_KEY_MIN_CHARS: Final = 23
# Where such runs are, found as ``mask_credentials`` finds its runs: the text as bytes,
# each key character read as ``a``, a run long enough that many ``a`` in a row.
_SERVICE_AS_A: Final = bytes.maketrans(_SERVICE_CHARS.encode(), b"a" * len(_SERVICE_CHARS))
_SERVICE_LONG_RUN: Final = b"a" * SERVICE_KEY_MIN_CHARS
#: Each format's pattern, and the same with its run bounded for the joined-lines view
#: (``_joined``), by the first three letters of its prefix.
_SERVICE_KEY_RES: Final = tuple(
    (prefix, re.compile(re.escape(prefix) + body)) for prefix, body in SERVICE_KEY_FORMATS
)
_SERVICE_BY_HEAD: Final[Mapping[str, tuple[tuple[re.Pattern[str], re.Pattern[str]], ...]]] = {
    head: tuple((p, _joined(p)) for prefix, p in _SERVICE_KEY_RES if prefix[:3] == head)
    for head in dict.fromkeys(prefix[:3] for prefix, _ in SERVICE_KEY_FORMATS)
}
# Discord: the middle part (timestamp) is found first, the user-id part is walked back.
_DISCORD_TAIL_RE: Final = re.compile(r"\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,45}(?![A-Za-z0-9_-])")
# The same in the joined-lines view, where the last part may end at a line end with the
# next line's first word after it (see ``_discord_spans``).
_DISCORD_TAIL_JOINED_RE: Final = re.compile(r"\.[A-Za-z0-9_-]{6,7}\.([A-Za-z0-9_-]{27,45})")
_DISCORD_CHARS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
)
# A JWT: base64url JSON header and payload (``{"`` encodes as ``ey``), then a signature
# (empty for ``alg: none``); after a character of none of its parts, or after a string's
# escaped line break (``\\n``, as ``_starts_word``).
_JWT_RE: Final = re.compile(
    r"(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt]))"
    r"ey[A-Za-z0-9_-]{8,4096}\.ey[A-Za-z0-9_-]{8,65536}\.[A-Za-z0-9_-]{0,4096}"
)
# The parts of a JWT after its header, and a run of the characters a header is made of:
# for JWTs that start where a line started in the joined-lines view (_jwts_at_line_starts).
_JWT_TAIL_RE: Final = re.compile(r"\.ey[A-Za-z0-9_-]{8,65536}\.[A-Za-z0-9_-]{0,4096}")
_JWT_JOINED_RE: Final = re.compile(
    r"ey[A-Za-z0-9_-]{8,4096}\.ey[A-Za-z0-9_-]{8,65536}\.[A-Za-z0-9_-]{0,4096}"
)
_TOKEN_RUN_RE: Final = re.compile(r"[A-Za-z0-9_-]*")
# What a logger writes at the start of each line, element by element, each followed by
# blanks: ``(APIServer pid=1)``, a level (``INFO``, ``WARNING:``), a date or time
# (``12-01``, ``10:00:00``, ``2026-12-01T10:00:00.123Z``, ``... 10:00:00,123``), a
# bracketed location or rank (``[api_server.py:123]``, ``[rank0]:``), the logger name of
# Python's ``%(name)s - %(levelname)s -`` format and its dashes. A token a log breaks over
# lines goes on after the next line's prefix, whatever the prefix is on that line.
# (Colour codes are taken out before any pass: see ``_ANSI_RE``.)
_LOG_PREFIX: Final = (
    r"(?:(?:\((?:[A-Za-z0-9_]{1,40} )?pid=[0-9]{1,10}\)"
    r"|\[[^\]\r\n]{1,80}\]:?"
    r"|(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL)(?![A-Za-z0-9_]):?"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?)?"
    r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
    r"|[0-9]{2}[-/][0-9]{2}|[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?"
    r"|[A-Za-z_][A-Za-z0-9_.]{0,64}(?= - )|-"
    r")[ \t]{1,8}){1,12}"
)
# A line break inside a token: a token character before it (right before the line end,
# or before a trailing backslash that continues the line), and another after the next
# line's log prefix or indentation. The literal ``\n`` comes first so the search runs at
# memchr speed; the ``\r`` and ``\`` before it are added to the break afterwards
# (``_breaks``).
# After the line's prefixes, a token's next piece starts with one of ``_TOKEN_NEXT``, a
# value's with one of ``_VALUE_NEXT``.
_AFTER_PREFIXES: Final = rf"(?:{_LOG_PREFIX})?[ \t]{{0,16}}"
_TOKEN_NEXT: Final = r"(?=[A-Za-z0-9_.@:/+=-])"
_VALUE_NEXT: Final = r"(?=[A-Za-z0-9_.+/-])"
_TOKEN_BREAK_RE: Final = re.compile(
    r"\n(?:(?<=[A-Za-z0-9_.-]\n)|(?<=[A-Za-z0-9_.-]\r\n)|(?<=[A-Za-z0-9_.-]\\\n)"
    r"|(?<=[A-Za-z0-9_.-]\\\r\n))" + _AFTER_PREFIXES + _TOKEN_NEXT
)
# The same break where a value ends (no lookbehind: the value's own end is the test).
_BREAK_AT_RE: Final = re.compile(r"\\?\r?\n" + _AFTER_PREFIXES + _VALUE_NEXT)
# Docker Compose writes its service's name before every line of the service's output,
# padded to the longest name, then a bar (``vllm-1  | ``), and then the line as the
# service wrote it (a logger's prefix, a token's next piece). A token the output broke
# over lines goes on after both prefixes, but only where the line before starts with
# the same service's name and a bar, or has no such prefix and the line after the next
# has this one (``_stream_break``): the last piece of a key wrapped before a pipe
# (``<key> | docker login``) reads as a name and a bar too. (The padding may differ:
# Compose widens it when a longer name attaches.)
_COMPOSE_NAME: Final = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
_COMPOSE_BAR: Final = r" {1,64}\| "
_COMPOSE_PREFIX: Final = rf"(?P<service>{_COMPOSE_NAME}){_COMPOSE_BAR}"
_COMPOSE_LINE_RE: Final = re.compile(_COMPOSE_PREFIX)
#: The breaks above (from their ``\n``) when the next line starts with Compose's prefix.
_COMPOSE_BREAK_RE: Final = re.compile(r"\n" + _COMPOSE_PREFIX + _AFTER_PREFIXES + _TOKEN_NEXT)
_COMPOSE_BREAK_AT_RE: Final = re.compile(r"\n" + _COMPOSE_PREFIX + _AFTER_PREFIXES + _VALUE_NEXT)
# A URL's password whose ``@`` starts the next line, after its prefixes (``...:pass``
# then ``@db:5432``): not broken inside, such a password is left by the joined-lines
# view to the line passes (``_url_pass``). It holds no ``@`` (one on its own line ends
# it there) and no ``\`` (one ending the line continues it).
_URL_NEXT_LINE_RE: Final = re.compile(
    _URL_USER + r"([^\s/?#\"'<>@\\]{1,512})"
    rf"(?=\\?\r?\n(?:{_COMPOSE_NAME}{_COMPOSE_BAR})?{_AFTER_PREFIXES}@)"
)
# ANSI colour and cursor codes (``ESC [ ... m``, ``K``, ``H``...; not ``R``, which would take
# the start of a placeholder after a stray ESC): terminals' logs carry them, around a
# level or inside a highlighted token; they are taken out of the text first.
_ANSI_RE: Final = re.compile(r"\x1b\[[0-9;?]{0,32}[A-HJKSTfmsu]")
# Base64 runs, in the standard or the URL-safe alphabet (never both), padded or not;
# one after a string's escaped line break (``\\n``) starts after it, not at its ``n``.
_B64_RE: Final = re.compile(
    r"(?:(?<![A-Za-z0-9+/_-])(?!(?<=\\)[nrt])|(?<=\\[nrt]))"
    r"(?:[A-Za-z0-9+/]{24,65536}|[A-Za-z0-9_-]{24,65536})={0,2}"
    r"(?![A-Za-z0-9+/=_-])"
)
_ASCII_BYTES: Final = bytes(range(128))
_HEX_RE: Final = re.compile(r"[0-9a-f]+|[0-9A-F]+")
# A URL escape (``%3D``): the words holding one are what ``_percent_pass`` unescapes.
_PERCENT_RE: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_SPACE_RE: Final = re.compile(r"\s")
# A JSON escape of a printable ASCII character (``_json_unescaped``), or the same escape
# inside a JSON string held in another (``\\\\u0022``: its backslash escaped).
_JSON_ESCAPE_RE: Final = re.compile(r"(?<!\\)(\\{1,2})u00([2-7][0-9A-Fa-f])")
#: Shortest base64 run looked into (20 bytes, an AWS key id, encode to 28 characters).
_B64_MIN_CHARS: Final = 24
_WORD_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# Secret-looking names are found from a keyword, in lower, UPPER or Capitalised spelling.
_KEYWORD_RE: Final = re.compile(
    "|".join(
        form
        for word in ("token", "key", "secret", "pass", "pwd")
        for form in (word, word.upper(), word.capitalize())
    )
)
# Something every pass needs before it can match: its literal prefix or keyword, a
# line break (tokens broken over lines), a dotted middle part (Discord), a JWT's ``ey``
# and the start of its header; or (``_may_hold_base64``, tested apart) a base64 run.
# Text (normalised) holding none of them is returned as it is, with one search instead
# of a dozen passes: most fields and output strings are short.
_SECRET_HINT_RE: Final = re.compile(
    r"PRIVATE KEY|uthorization|UTHORIZATION|://|hf_|api_org_|gh[pousr]_|github_pat_|sk-|curl"
    rf"|{'|'.join(re.escape(prefix) for prefix, _ in SERVICE_KEY_FORMATS)}"
    r"|A(?:KI|SI)A|\.[A-Za-z0-9_-]{6,7}\.|ey[A-Za-z0-9_-]{8}|\n|%[0-9A-Fa-f]{2}"
    rf"|{_KEYWORD_RE.pattern}"
)
#: The keywords of ``_KEYWORD_RE``, each found in a lower-cased copy and then kept in its
#: three spellings only (str.find runs at C speed; an alternation of fifteen literals,
#: tried at every position, does not).
_KEYWORDS: Final = tuple(
    (word.encode(), (word, word.upper(), word.capitalize()))
    for word in ("token", "key", "secret", "pass", "pwd")
)


def _byte_marks(alphabet: str) -> bytes:
    """A ``bytes.translate`` table: ``a`` for the bytes of ``alphabet``, a space else."""
    return bytes(ord("a") if chr(b) in alphabet else ord(" ") for b in range(256))

# The two alphabets of ``_B64_RE``; a run of ``_B64_MIN_CHARS`` of either, looked for in
# the text marked byte by byte, is what a base64 run needs before it can be one.
_B64_STD_MARKS: Final = _byte_marks(_ALNUM + "+/")
_B64_URL_MARKS: Final = _byte_marks(_ALNUM + "_-")
_CAMEL_RE: Final = re.compile(r"([a-z0-9])([A-Z])")
_AWS_SECRET_VALUE_RE: Final = re.compile(r"[A-Za-z0-9/+]{40}")
_INT_RE: Final = re.compile(r"[0-9]{1,8}")
# A port, and the punctuation a sentence may put after it (``:8000.``, ``:7860!``).
_PORT_RE: Final = re.compile(r"[0-9]{1,5}[^A-Za-z0-9_]{0,8}")
# A whole value that is one shell reference: $NAME, ${...}, $(...).
_REFERENCE_RE: Final = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^}\n]*\}|\([^)\n]*\))")
_REF_DEFAULT_RE: Final = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]{0,127}:?-([^}\n]*)")
# Escaped quotes skipped inside one double-quoted value before it counts as unterminated.
_MAX_ESCAPED_QUOTES: Final = 64
_PLACEHOLDER_PREFIX: Final = "[REDACTED:"
# Where an unquoted value ends, by assignment style.
# (An unquoted value also ends where an earlier pass's placeholder starts, before the
# escaped line breaks of a string between them: the secret before it is a value's all
# the same, ``password=...\\n[REDACTED:jwt]`` in a JSON string. A YAML-style value,
# which runs to its line's end, only there: ``token: Bearer [REDACTED:jwt]`` is one.)
_SHELL_VALUE_END: Final = re.compile(
    r"[\s\"'`;&|<>()\]}]|,(?=\s)|(?<!\\)(?:\\[nrt])*\[REDACTED:"
)
_YAML_VALUE_END: Final = re.compile(r"[\n\r,\]}]|\s#|(?<!\\)(?:\\[nrt])+\[REDACTED:")
# curl's ``-u``/``--user name:password``, also written ``-uname:password`` or after other
# short flags, ``-sSu name:password`` (found on a line where ``curl`` came first: in
# ``docker run -u 1000:1000`` the same flag is a user and a group).
_CURL_USER_RE: Final = re.compile(
    r"(?<![\w-])(?:-[A-Za-z]{0,8}u|--user)(?:[ \t]{1,16}|=)?"
    r"([\"']?)[^\s:\"']{1,256}:([^\s\"']{1,512})\1"
)
# An environment list's entry: ``name:`` (YAML, JSON; ``Name:`` in CloudFormation,
# ``name =`` in Terraform) right before the name, and its ``value:`` right after it, on
# the same line or the next (``_listed_value``).
_LIST_NAME_RE: Final = re.compile(
    r"""\b[Nn]ame(?:\\{0,8}["'])?[ \t]{0,8}[:=][ \t]{0,8}(?:\\{0,8}["'])?\Z"""
)
_LIST_VALUE_RE: Final = re.compile(
    r"""(?:\\{0,8}["'])?[ \t]{0,8},?[ \t]{0,8}(?:\r?\n[ \t]{0,64})?(?:\\{0,8}["'])?[Vv]alue"""
    r"""(?:\\{0,8}["'])?[ \t]{0,8}[:=][ \t]{0,8}"""
)
# A quote, escaped or not: JSON inside a JSON string (a logged request body,
# ``kubectl -o json``'s last-applied configuration) quotes its keys and values ``\"``.
_QUOTE_RE: Final = re.compile(r"""\\{0,8}["']""")
# A command-line flag and its value (``--api-key v``, ``--token=v``) starting the line
# after a value: the flag is a name, never the value's next piece (taken as one, it hid
# the flag from its own pass and left the value after it in clear).
_FLAG_WITH_VALUE_RE: Final = re.compile(r"--[A-Za-z][\w-]*(?:[ \t]+|=)[^\s\\]")
# A variable's name and its value, in the upper case of environment variables
# (``HOME=/root``; not ``pW8n=B3c...``, a password's next piece, nor base64's padding
# ``Qx7==``), or a header's (``X-Api-Key: v``).
_NAMED_VALUE_AT_RE: Final = re.compile(
    r"[A-Z_][A-Z0-9_]{1,127}=[^=\s]|[A-Za-z_][\w.-]{0,127}:[ \t]"
)


@dataclass(frozen=True, slots=True)
class Redaction:
    """How many secrets of one kind were removed from one field. Never the value."""

    kind: str
    field: str
    count: int


@dataclass(frozen=True, slots=True)
class Redacted:
    """Text with secrets replaced by ``[REDACTED:<kind>]``, and what was removed."""

    text: str
    redactions: tuple[Redaction, ...] = ()

    @property
    def count(self) -> int:
        """Total number of secrets removed."""
        return sum(r.count for r in self.redactions)


def placeholder(kind: str) -> str:
    """The text that stands in for a removed secret of ``kind``."""
    return f"[REDACTED:{kind}]"


def is_secret_name(name: str) -> bool:
    """True when a variable or key called ``name`` holds a secret by its name.

    The name is normalised first: camelCase is split (``apiKey`` -> ``API_KEY``),
    ``-`` and ``.`` become ``_`` and letters are upper-cased. It is secret when it ends
    in one of ``SECRET_NAME_SUFFIXES``, contains one of ``SECRET_NAME_PARTS`` or is one
    of ``SECRET_NAMES``, and does not end in one of ``PUBLIC_NAME_SUFFIXES``.
    """
    if name.isascii() and not any(map(name.lower().__contains__, _NAME_WORDS)):
        return False  # every secret name holds one of these words, letters in a row
    norm = _CAMEL_RE.sub(r"\1_\2", name.strip("\"'")).replace("-", "_").replace(".", "_")
    norm = norm.upper().strip("_")
    if not norm or norm.endswith(PUBLIC_NAME_SUFFIXES):
        return False
    if norm in SECRET_NAMES or any(part in norm for part in SECRET_NAME_PARTS):
        return True
    return norm.endswith(SECRET_NAME_SUFFIXES)


def _is_strong_name(name: str) -> bool:
    """Names whose values are secret even when they look like a small number."""
    upper = name.upper()
    return any(part in upper for part in (*SECRET_NAME_PARTS, "SECRET", "PASS", "PWD"))


def _is_placeholder(value: str) -> bool:
    """True for values that are references or fillers rather than secrets."""
    v = value.strip()
    if not v or v.lower() in NON_SECRET_VALUES:
        return True
    if _PLACEHOLDER_PREFIX in v or _REFERENCE_RE.fullmatch(v):
        return True
    if v.startswith("<") and v.endswith(">"):
        return True
    return len(v) >= 3 and len(set(v)) == 1 and v[0] in "xX*#.-_"


# --------------------------------------------------------------------------- passes
# Each pass returns (new text, number of secrets replaced). Passes never see the values
# of earlier replacements again: every value test rejects the placeholder prefix.


def _starts_word(text: str, pos: int) -> bool:
    """True when a token may start at ``pos``: after a non-word character or ``\\n``."""
    if pos == 0 or text[pos - 1] not in _WORD_CHARS:
        return True
    return pos >= 2 and text[pos - 2] == "\\" and text[pos - 1] in "nrt"


def _token_pass(patterns: Sequence[re.Pattern[str]], kind: str, text: str) -> tuple[str, int]:
    """Each match of ``patterns`` that starts a word and is taken for a ``kind``
    (``_keylike``) replaced by its placeholder; with how many were."""
    count = 0

    def replace(m: re.Match[str]) -> str:
        nonlocal count
        if not _starts_word(m.string, m.start()) or not _keylike(kind, m.group(0)):
            return m.group(0)
        count += 1
        return placeholder(kind)

    for pattern in patterns:
        text = pattern.sub(replace, text)
    return text, count


def _pem_pass(text: str) -> tuple[str, int]:
    if "PRIVATE KEY" not in text:
        return text, 0
    return _PEM_RE.subn(placeholder(PRIVATE_KEY), text)


def _auth_pass(text: str) -> tuple[str, int]:
    if "uthorization" not in text and "UTHORIZATION" not in text:
        return text, 0  # the header name is in one of its three spellings
    spans = []
    for m in _AUTH_RE.finditer(text):
        scheme, cred = m.group(2), m.group(3)
        if _is_placeholder(cred) or (scheme is None and len(cred) < 16):
            continue
        spans.append((m.start(3), m.end(3), AUTHORIZATION))
    return _apply(text, _continued(text, spans)), len(spans)


def _continued(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``spans`` of values, and the pieces of each that go on over the next lines: a
    value that ends its line, continued after a trailing backslash or after the next
    line's log prefix (``_BREAK_AT_RE``) by a piece that looks like part of a token
    (``_runs_on``: a word such as ``vllm`` starting the next line is not taken)."""
    if "\n" not in text:
        return spans
    out: list[tuple[int, int, str]] = []
    compose = "| " in text
    for start, end, kind in spans:
        out.append((start, end, kind))
        pieces = []
        for _ in range(MAX_VALUE_LINES):
            m = _BREAK_AT_RE.match(text, end)
            if m is None:
                break
            after = m.end()
            if compose:
                after = _stream_break(text, text.index("\n", end), _COMPOSE_BREAK_AT_RE, after)
            word = _SHELL_VALUE_END.search(text, after, after + MAX_VALUE_CHARS)
            stop = word.start() if word else min(len(text), after + MAX_VALUE_CHARS)
            if (
                stop == after
                or _FLAG_WITH_VALUE_RE.match(text, after)
                or _NAMED_VALUE_AT_RE.match(text, after)
            ):
                # ``--api-key v``, ``X-Api-Key: v`` or ``HOME=/root`` on the next line
                # (an environment printed one variable a line): a name and its value,
                # not a piece (and left to the passes that know it)
                break
            pieces.append((after, stop, _runs_on(text[after:stop])))
            end = stop
        # each piece that runs on, and a short one (``Q``) before one that does
        for i, (piece_start, piece_end, runs_on) in enumerate(pieces):
            if not runs_on and not (i + 1 < len(pieces) and pieces[i + 1][2]):
                break
            out.append((piece_start, piece_end, kind))
    return out


def _stream_break(text: str, newline: int, pattern: re.Pattern[str], end: int) -> int:
    """Where the line break at ``newline`` inside a token ends: after Docker Compose's
    prefix on the next line and the log prefix after it (``pattern``, from the ``\n``)
    when the line before starts with the same service's prefix, or has none and the
    line after the next does (the first line of a paste may have lost its own), else
    at ``end`` (where the break without it ended)."""
    m = pattern.match(text, newline)
    if m is None:
        return end
    before = _COMPOSE_LINE_RE.match(text, text.rfind("\n", 0, newline) + 1)
    if before is not None:  # another service's line goes on no token of this one
        return m.end() if before["service"] == m["service"] else end
    following = text.find("\n", m.end())
    after = _COMPOSE_LINE_RE.match(text, following + 1) if following >= 0 else None
    return m.end() if after is not None and after["service"] == m["service"] else end


def _url_pass(text: str) -> tuple[str, int]:
    count = 0

    def replace(m: re.Match[str]) -> str:
        nonlocal count
        if _is_placeholder(m.group(2)):
            return m.group(0)
        count += 1
        return "://" + m.group(1) + placeholder(URL_PASSWORD)

    def replace_unless_port(m: re.Match[str]) -> str:
        if _PORT_RE.fullmatch(m.group(2)):
            return m.group(0)  # ``http://0.0.0.0:8000.`` then ``@app.get(...)``: a port
        return replace(m)

    text = _URL_RE.sub(replace, text)
    if "\n" in text:
        text = _URL_NEXT_LINE_RE.sub(replace_unless_port, text)
    return text, count


def _curl_user_pass(text: str) -> tuple[str, int]:
    if "curl" not in text:
        return text, 0
    spans = []
    line_end = -1
    curl_at = -1  # where ``curl`` first comes in the line of the match (-1: nowhere)
    for m in _CURL_USER_RE.finditer(text):
        if m.start() > line_end:  # a new line: each is looked through once
            line = text.rfind("\n", 0, m.start()) + 1
            newline = text.find("\n", m.start())
            line_end = len(text) if newline < 0 else newline
            curl_at = text.find("curl", line, line_end)
            for _ in range(MAX_VALUE_LINES):  # or on a line this one continues (``\``)
                if curl_at >= 0 or not text.endswith(("\\\n", "\\\r\n"), 0, line):
                    break
                before = line
                line = text.rfind("\n", 0, line - 1) + 1
                curl_at = text.find("curl", line, before)
        if not 0 <= curl_at < m.start() or _is_placeholder(m.group(2)):
            continue
        spans.append((m.start(2), m.end(2), CLI_SECRET))
    return _apply(text, spans), len(spans)


def _hf_pass(text: str) -> tuple[str, int]:
    return _token_pass((_HF_RE, _HF_ORG_RE), HF_TOKEN, text)


def _github_pass(text: str) -> tuple[str, int]:
    return _token_pass((_GH_RE, _GH_PAT_RE), GITHUB_TOKEN, text)


def _keylike(kind: str, token: str) -> bool:
    """Whether ``token``, found by ``kind``'s pattern, is taken for one (on one line and
    broken over lines alike): an ``sk-`` run needs a digit (``sk-video-frame-sampling``
    is a package's name), and so does the body of a key whose prefix could begin a name
    (``_SERVICE_DIGIT_PREFIXES``)."""
    if kind == SERVICE_KEY and token.startswith(_SERVICE_DIGIT_PREFIXES):
        token = token[3:]  # the body: each of those prefixes is three characters
    elif kind != OPENAI_KEY:
        return True
    return any(map(str.isdigit, token))


def _openai_pass(text: str) -> tuple[str, int]:
    return _token_pass((_OPENAI_RE,), OPENAI_KEY, text)


def _aws_access_pass(text: str) -> tuple[str, int]:
    return _token_pass((_AWS_ACCESS_RE,), AWS_ACCESS_KEY, text)


def _long_runs(text: str, as_a: bytes, run: bytes) -> Iterator[tuple[int, int]]:
    """Start and end of each run in ``text`` of the characters that ``as_a`` (a
    ``bytes.translate`` table) reads as ``a``, at least ``len(run)`` long (``run`` is
    that many ``a``): ``find`` locates them at memory speed, in order."""
    flat = text.encode("ascii", "replace").translate(as_a)  # one byte per character
    start = flat.find(run)
    while start >= 0:  # the first ``a`` of a run long enough (the leftmost find is its start)
        after = _NOT_A_RE.search(flat, start + len(run))
        end = after.start() if after else len(text)
        yield start, end
        start = flat.find(run, end)


def _service_starts(text: str, line_starts: Sequence[int] = ()) -> list[tuple[int, int]]:
    """Where a key of ``SERVICE_KEY_FORMATS`` may start in ``text``, in order, with the
    index of its format among those of the same first three letters: in each run of
    ``SERVICE_KEY_MIN_CHARS`` key characters or more, at its start, after each ``-`` in it,
    after a ``\\n`` escape just before it, and (the joined-lines view) at each of
    ``line_starts`` (in order) inside it; only where the three letters there begin a
    prefix. A server log holds few such runs: it is read at C speed, not by a pattern
    at every position."""
    found: list[tuple[int, int]] = []
    for start, end in _long_runs(text, _SERVICE_AS_A, _SERVICE_LONG_RUN):
        places = {start}
        if start >= 1 and text[start - 1] == "\\" and text[start] in "nrt":
            places.add(start + 1)
        dash = text.find("-", start, end)
        while dash >= 0:
            places.add(dash + 1)
            dash = text.find("-", dash + 1, end)
        places.update(line_starts[bisect_right(line_starts, start) : bisect_left(line_starts, end)])
        for place in sorted(places):
            formats = _SERVICE_BY_HEAD.get(text[place : place + 3], ())
            found.extend((place, index) for index in range(len(formats)))
    return found


def _service_pass(text: str) -> tuple[str, int]:
    spans: list[tuple[int, int, str]] = []
    # Where each pattern's last match ended: a start inside it is a suffix of the same
    # run, refused for the same reason or inside the key found (``nvapi-nvapi-...``
    # would otherwise read the rest of the run again from each dash).
    reach: dict[re.Pattern[str], int] = {}
    for place, index in _service_starts(text):
        pattern = _SERVICE_BY_HEAD[text[place : place + 3]][index][0]
        if place < reach.get(pattern, 0) or (spans and place < spans[-1][1]):
            continue
        m = pattern.match(text, place)
        if m is None:
            continue
        reach[pattern] = m.end()
        if _starts_word(text, place) and _keylike(SERVICE_KEY, m.group(0)):
            # to the end of its word: a body narrower than the word (hex, lower case)
            # would leave a tail that the next redaction takes for a word of its own
            end = _TOKEN_RUN_RE.match(text, m.end()).end()  # type: ignore[union-attr]
            spans.append((place, end, SERVICE_KEY))
            reach[pattern] = end
    return _apply(text, spans), len(spans)


def _is_discord_user_id(part: str) -> bool:
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return False
    return 17 <= len(raw) <= 20 and raw.isdigit()


def _discord_pass(text: str) -> tuple[str, int]:
    spans = _discord_spans(text)
    return _apply(text, [(start, end, kind) for start, end, _, kind in spans]), len(spans)


def _discord_spans(
    text: str, starts: Sequence[int] = (), line_starts: Set[int] | None = None
) -> list[tuple[int, int, int, str]]:
    """Discord tokens (start, end, where the match of the last part ended, kind): the
    middle and last parts found, the user-id part walked back.

    In the joined-lines view (``starts``: where its lines started, in order) the user-id
    part may also start where a line started, the line before it ending in a token
    character; and the last part ends at the first line end after the token's first
    break at which it is long enough, the next line's first word being joined on.
    ``line_starts``: the same as a set, when the caller has one.
    """
    if line_starts is None:
        line_starts = frozenset(starts)
    spans: list[tuple[int, int, int, str]] = []
    last_end = 0
    for m in (_DISCORD_TAIL_JOINED_RE if starts else _DISCORD_TAIL_RE).finditer(text):
        dot = m.start()
        start = dot
        while start > last_end and dot - start < 28 and text[start - 1] in _DISCORD_CHARS:
            start -= 1
        if dot - start < 23:
            continue
        ids = [] if start > 0 and text[start - 1] in _DISCORD_CHARS else [start]
        ids += [p for p in range(start, dot - 22) if p in line_starts and p not in ids]
        found = next((p for p in ids if _is_discord_user_id(text[p:dot])), None)
        if found is None:
            continue
        end = m.end()
        if starts:
            end = _discord_end(text, found, m.start(1), m.end(), starts)
            if end < 0:
                continue
        spans.append((found, end, m.end(), DISCORD_TOKEN))
        last_end = end
    return spans


def _discord_end(text: str, token: int, last: int, end: int, starts: Sequence[int]) -> int:
    """Where a Discord token of the joined-lines view ends (-1: it does not): its last
    part (from ``last``) is 27-45 characters long and ends at a line end after the
    token's first break, or where its run of token characters ends."""
    first = bisect_right(starts, token)  # the token's first break is inside it
    at = bisect_left(starts, last + 27, lo=first + 1)
    if at < len(starts) and starts[at] <= min(end, last + 45):
        return starts[at]  # long enough here (it may go on: ``_runs_on_end``)
    run_end = _TOKEN_RUN_RE.match(text, end).end()  # type: ignore[union-attr]
    return end if run_end == end else -1


def _value_span(text: str, pos: int, yaml_style: bool) -> tuple[int, int] | None:
    """Start and end of the value that begins at ``pos``, without its quotes.

    A quoted value ends at its closing quote on the same line (``\\"`` is skipped in
    double quotes); an unterminated one is read as an unquoted value. A list (``[``)
    is the value up to its ``]`` on the same line, all its items. Unquoted values
    end at shell punctuation or white space, or for YAML-style ``name: value`` at the
    end of the line, a comma, a closing bracket or a `` #`` comment.
    """
    n = len(text)
    if pos >= n:
        return None
    limit = min(n, pos + MAX_VALUE_CHARS)
    if text.startswith("\\", pos):  # an escaped quote (JSON in JSON) to the same one
        escaped = _QUOTE_RE.match(text, pos)
        if escaped is not None:
            newline = text.find("\n", pos, limit)
            close = text.find(escaped.group(), escaped.end(), limit if newline < 0 else newline)
            if close > escaped.end():
                return escaped.end(), close
    quote = text[pos]
    if quote in "\"'":
        newline = text.find("\n", pos + 1, limit)
        line_end = limit if newline < 0 else newline
        end = pos + 1
        for _ in range(_MAX_ESCAPED_QUOTES):
            end = text.find(quote, end, line_end)
            if end < 0:
                break
            if quote == '"' and text[end - 1] == "\\":
                end += 1
                continue
            return pos + 1, end
        pos += 1
    if text.startswith("[", pos) and not text.startswith(_PLACEHOLDER_PREFIX, pos):
        # a list (``'api_key': ['k1', 'k2']``, as vLLM prints its arguments): all of it
        newline = text.find("\n", pos + 1, limit)
        close = text.find("]", pos + 1, limit if newline < 0 else newline)
        if close > pos + 1:
            return pos + 1, close
    scan_from = pos
    if text.startswith(("${", "$("), pos):  # a reference runs to its closing bracket
        close = text.find("}" if text[pos + 1] == "{" else ")", pos, limit)
        scan_from = pos if close < 0 else close + 1
    end_re = _YAML_VALUE_END if yaml_style else _SHELL_VALUE_END
    m = end_re.search(text, scan_from, limit)
    end = m.start() if m else limit
    while end > pos and text[end - 1] in " \t":
        end -= 1
    return (pos, end) if end > pos else None


def _default_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """For a value ``${VAR:-default}`` or ``${VAR-default}``, the span of ``default``."""
    m = _REF_DEFAULT_RE.match(text, start, min(len(text), end + MAX_VALUE_CHARS))
    if m is None:
        return None
    return (m.start(1), m.end(1)) if m.end(1) > m.start(1) else None


def _ascii_view(text: str) -> bytes:
    """``text`` as one byte per character: ASCII kept, anything else ``?``, so positions
    are those of ``text``."""
    return text.encode("ascii", "replace")


def _keywords(text: str) -> list[tuple[int, int]]:
    """Spans of the keywords, as ``_KEYWORD_RE.finditer(text)`` finds them (left to
    right, none overlapping the one before)."""
    lower = _ascii_view(text).lower()
    found: list[tuple[int, int]] = []
    for word, spellings in _KEYWORDS:
        size = len(word)
        pos = lower.find(word)
        while pos >= 0:
            if text[pos : pos + size] in spellings:
                found.append((pos, pos + size))
            pos = lower.find(word, pos + 1)
    found.sort()
    kept: list[tuple[int, int]] = []
    for span in found:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def _keyword_pass(text: str) -> tuple[str, int, int, int]:
    """Flags and assignments named like secrets: (text, cli, env, aws-secret counts)."""
    spans: list[tuple[int, int, str]] = []
    last_name_end = -1
    last_span_end = -1
    n = len(text)
    for m_start, m_end in _keywords(text):
        if m_start < last_name_end or m_start < last_span_end:
            continue
        start = m_start
        floor = max(0, m_start - MAX_NAME_CHARS)
        while start > floor and text[start - 1] in _NAME_CHARS:
            start -= 1
        end = m_end
        ceiling = min(n, m_end + MAX_NAME_CHARS)
        while end < ceiling and text[end] in _NAME_CHARS:
            end += 1
        last_name_end = end
        name = text[start:end]
        if not name or (start and text[start - 1] in "{$"):
            continue  # ${NAME...} is a reference, not an assignment
        if name[0] == "-":
            span = _flag_value(text, name, end)
        else:
            span = _assign_value(text, name, end) or _listed_value(text, name, start, end)
        if span is None or span[0] < last_span_end:
            continue
        spans.append(span)
        last_span_end = span[1]
    if not spans:
        return text, 0, 0, 0
    counts = Counter(kind for _, _, kind in spans)
    return (
        _apply(text, _continued(text, spans)),
        counts[CLI_SECRET],
        counts[ENV_SECRET],
        counts[AWS_SECRET_KEY],
    )


def _flag_value(text: str, name: str, end: int) -> tuple[int, int, str] | None:
    flag = name.lstrip("-").lower().replace("_", "-")
    if not flag or flag.rsplit("-", 1)[-1] not in SECRET_FLAG_WORDS:
        return None
    pos = end
    if text.startswith("=", pos):
        pos += 1
    else:
        while pos < len(text) and pos - end < 16 and text[pos] in " \t":
            pos += 1
        if pos == end or text.startswith("-", pos):
            return None
    span = _value_span(text, pos, yaml_style=False)
    if span is None or _is_placeholder(text[span[0] : span[1]]):
        return None
    return span[0], span[1], CLI_SECRET


def _assign_value(text: str, name: str, end: int) -> tuple[int, int, str] | None:
    name = name.strip(".-")
    if not name:
        return None
    pos = end
    quote = _QUOTE_RE.match(text, pos)
    if quote is not None:
        pos = quote.end()  # closing quote of a JSON or Python key (``\"`` in JSON in JSON)
    named = pos
    while pos < len(text) and pos - end < 16 and text[pos] in " \t":
        pos += 1
    if pos >= len(text) or text[pos] not in ":=":
        return None
    if not is_secret_name(name):  # after the cheaper test above: most names assign nothing
        return None
    yaml_style = text[pos] == ":"
    if text.startswith(("://", ":-", ":=", "=="), pos):
        return None
    spaced = pos > named
    pos += 1
    if yaml_style or spaced:  # `NAME: v`, `name = v`; in `NAME= v` the value is empty
        stop = pos + 16
        while pos < len(text) and pos < stop and text[pos] in " \t":
            pos += 1
    span = _value_span(text, pos, yaml_style)
    if span is None:
        return None
    value = text[span[0] : span[1]]
    default = _default_span(text, span[0], span[1])
    if default is not None:
        span, value = default, text[default[0] : default[1]]
    if _is_placeholder(value):
        return None
    if _INT_RE.fullmatch(value) and not _is_strong_name(name):
        return None
    if "SECRET" in name.upper() and _AWS_SECRET_VALUE_RE.fullmatch(value):
        return span[0], span[1], AWS_SECRET_KEY
    return span[0], span[1], ENV_SECRET


def _listed_value(text: str, name: str, start: int, end: int) -> tuple[int, int, str] | None:
    """The value of an environment list's entry named like a secret: Kubernetes'
    ``- name: HF_TOKEN`` then ``value: v`` on the next line, or JSON's
    ``{"name": "API_KEY", "value": "v"}`` (ECS task definitions, ``kubectl -o json``)."""
    if not _LIST_NAME_RE.search(text, max(0, start - 32), start):
        return None
    m = _LIST_VALUE_RE.match(text, end)
    if m is None or not is_secret_name(name.strip(".-")):
        return None
    span = _value_span(text, m.end(), yaml_style=True)
    if span is None:
        return None
    value = text[span[0] : span[1]]
    if _is_placeholder(value) or (_INT_RE.fullmatch(value) and not _is_strong_name(name)):
        return None
    return span[0], span[1], ENV_SECRET


def _apply(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with each span replaced by its kind's placeholder; spans that overlap
    (a value's piece on the next line that holds another value) are replaced as one."""
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end, kind in sorted(spans):
        if start < pos:
            pos = max(pos, end)
            continue
        out.append(text[pos:start])
        out.append(placeholder(kind))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _decodes_to(part: str, first: bytes) -> bytes | None:
    """``part`` decoded as base64url (or base64), when it starts with ``first``."""
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if raw.startswith(first) else None


def _jwt_pass(text: str) -> tuple[str, int]:
    if "ey" not in text:
        return text, 0
    count = 0

    def replace(m: re.Match[str]) -> str:
        nonlocal count
        header = _decodes_to(m.group(0).split(".", 1)[0], b"{")
        if header is None or b'"' not in header:
            return m.group(0)
        count += 1
        return placeholder(JWT)

    return _JWT_RE.sub(replace, text), count


def _encoded_pass(text: str, depth: int = 0) -> tuple[str, int]:
    """Base64 and hex runs whose decoded text holds a secret of another kind (or, to
    ``MAX_DECODE_DEPTH``, another encoded run that does: base64 inside base64).

    Nothing is looked for unless the text has ``_B64_MIN_CHARS`` characters of one
    alphabet in a row (the text marked byte by byte with ``bytes.translate``, the run
    looked for with ``bytes.find``: a log of plain lines has none; hex digits belong to
    both alphabets). Then runs are looked for only in the long words (a ``split`` and a
    length test run at C speed; a regex over the whole text would not: a pattern for the
    long words alone, tried, took 2-3x as long), and each found run is replaced.
    """
    if not _may_hold_base64(text):
        return text, 0
    words = " ".join(w for w in text.split() if len(w) >= _B64_MIN_CHARS)
    hidden = {run for run in _B64_RE.findall(words) if _hides_secret(run, depth)}
    count = 0
    for run in sorted(hidden, key=len, reverse=True):
        count += text.count(run)
        text = text.replace(run, placeholder(ENCODED_SECRET))
    return text, count


def _percent_pass(text: str, depth: int) -> tuple[str, Counter[str]]:
    """Words with URL escapes (``hf%5F...``, ``password%3D...``,
    ``Authorization%3A%20Bearer%20...``) whose unescaped text holds a secret: each is
    replaced by its unescaped text, redacted (line breaks in it escaped again, so the
    lines stay those of the paste). The counts are those of the unescaped text's kinds."""
    counts: Counter[str] = Counter()
    out: list[str] = []
    pos = 0
    for m in _PERCENT_RE.finditer(text):
        if m.start() < pos:
            continue  # in the word before
        start = max(pos, *(text.rfind(blank, pos, m.start()) + 1 for blank in " \t\n\r"))
        end = _SPACE_RE.search(text, m.end())
        stop = end.start() if end else len(text)
        word = text[start:stop]
        new, found = _redact_counts(urllib.parse.unquote(word), depth + 1)
        if found:
            counts.update(found)
            out.append(text[pos:start])
            out.append(new.replace("\r", "%0D").replace("\n", "%0A"))
            pos = stop
        else:
            out.append(text[pos:stop])
            pos = stop
    if not counts:
        return text, counts
    out.append(text[pos:])
    return "".join(out), counts


def _may_hold_base64(text: str) -> bool:
    """False when no run of ``_B64_MIN_CHARS`` characters of either base64 alphabet is in
    ``text``: then ``_B64_RE`` cannot match."""
    if len(text) < _B64_MIN_CHARS:
        return False
    view = _ascii_view(text)
    run = b"a" * _B64_MIN_CHARS
    return run in view.translate(_B64_STD_MARKS) or run in view.translate(_B64_URL_MARKS)


def _decoded(run: str) -> str | None:
    """``run`` decoded as hex (an even run of hex digits) or else as base64, when that
    gives printable ASCII text."""
    body = run.rstrip("=")
    raw: bytes | None = None
    if body == run and len(body) % 2 == 0 and _HEX_RE.fullmatch(body):
        raw = bytes.fromhex(body)
        if not raw.isascii():
            raw = None
    if raw is None:
        if len(body) % 4 == 1:  # not base64 of anything
            return None
        altchars = b"-_" if "-" in body or "_" in body else None
        try:
            raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=altchars)
        except (binascii.Error, ValueError):
            return None
    if not raw.isascii() or not raw.translate(None, b"\r\n\t").decode().isprintable():
        return None
    return raw.decode("ascii")


def _hides_secret(run: str, depth: int = 0) -> bool:
    """True when ``run`` decodes (:func:`_decoded`) to text in which a secret is found."""
    decoded = _decoded(run)
    return decoded is not None and _redact_counts(decoded, depth + 1)[1].total() > 0


@functools.cache
def _look_alikes() -> dict[str, str]:
    """Each non-ASCII letter or digit that Unicode's confusables data (TR39) says looks
    like an ASCII character, and that character: ``һ`` (Cyrillic shha) -> ``h``.

    The data pairs a character with its prototype (the character its skeleton maps
    to) and back; where the prototype stands for several ASCII characters that look
    alike (``l``, ``I``, ``1``), the one of the same case as the letter is taken
    (Cyrillic ``І`` -> ``I``, ``і`` -> ``i``). Hangul and CJK are left alone: their
    compatibility letters look like strokes (``ㅣ``), not like the letters of a token.

    The data is read from the package's file, not imported: its module keeps the whole
    table (six MB of small dicts) alive for the process's life; only this one is kept.
    """
    from confusable_homoglyphs.utils import load

    confusables_data: dict[str, list[dict[str, str]]] = load("confusables.json")

    table: dict[str, str] = {}
    for char, glyphs in confusables_data.items():
        if len(char) != 1 or char.isascii() or unicodedata.category(char)[0] not in "LN":
            continue
        if unicodedata.name(char, "").startswith(("HANGUL", "CJK")):
            continue
        direct = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii()]
        if not direct:
            continue
        alike = list(direct)
        for target in direct:  # the other ASCII characters of the prototype's class
            alike += [
                g["c"]
                for g in confusables_data.get(target, ())
                if len(g["c"]) == 1 and g["c"].isascii() and g["c"] not in alike
            ]
        if char.isupper():
            same = [c for c in alike if c.isupper()]
        elif char.islower():
            same = [c for c in alike if c.islower()]
        else:
            same = [c for c in alike if c.isdigit()]
        table[char] = (same or direct)[0]
    return table


def _folded(text: str) -> str:
    """``text`` (normalised, not ASCII) as the ASCII it passes for: decomposed (NFKD),
    without combining marks (``Z\u0301`` -> ``Z``), look-alike letters folded to ASCII
    (:func:`_look_alikes`), then composed again (NFKC)."""
    look_alikes = _look_alikes()
    others = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    if not any(  # most logs' other characters are bars and dashes: nothing to fold
        char in look_alikes
        or unicodedata.decomposition(char)
        or unicodedata.category(char) in ("Mn", "Me")
        for char in set(others.decode("utf-8", "surrogatepass"))
    ):
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    others = decomposed.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    table: dict[int, str | None] = {}
    for char in set(others.decode("utf-8", "surrogatepass")):
        if unicodedata.category(char) in ("Mn", "Me", "Cf"):
            table[ord(char)] = None
        elif char in look_alikes:
            table[ord(char)] = look_alikes[char]
    if not table:
        return text
    return unicodedata.normalize("NFKC", decomposed.translate(table))


def _normalised(text: str) -> str:
    """``text`` NFKC-normalised, without format characters and colour codes (ASCII
    without colour codes is returned as is)."""
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    if text.isascii():
        return text
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    # UTF-8 never puts an ASCII byte inside a longer sequence, so deleting the ASCII
    # bytes leaves the other characters whole: their set, at C speed.
    others = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    for char in set(others.decode("utf-8", "surrogatepass")):
        if unicodedata.category(char) == "Cf":
            text = text.replace(char, "")
    return text


#: Patterns of tokens that may be broken over two lines, by kind.
_BREAKABLE: Final = (
    (HF_TOKEN, (_joined(_HF_RE), _joined(_HF_ORG_RE))),
    (GITHUB_TOKEN, (_joined(_GH_RE), _joined(_GH_PAT_RE))),
    (OPENAI_KEY, (_joined(_OPENAI_RE),)),
    (AWS_ACCESS_KEY, (_AWS_ACCESS_JOINED_RE,)),
)


def _broken_spans(
    joined: str, starts: Sequence[int]
) -> list[tuple[int, int, str, re.Pattern[str] | None]]:
    """Tokens in the joined-lines view: (start, end, kind, the pattern that found it).

    A token may start where a word starts in the joined view, or where a line started
    before the lines were joined (``starts``, in order): ``done\nhf_...`` joins to
    ``donehf_...``, whose token still starts a line of its own. Likewise it ends where
    its word ends or where a line ended: ``AKIA...\nINFO`` joins to ``AKIA...INFO``.
    Each token's end is settled (:func:`_whole_end`) before overlaps are: a token that
    seemed to run on into the next one would hide it.
    """
    line_starts = frozenset(starts)
    spans: list[tuple[int, int, str, re.Pattern[str] | None]] = []
    for kind, patterns in _BREAKABLE:
        for pattern in patterns:
            pos = 0
            while (m := pattern.search(joined, pos)) is not None:
                if not (
                    (m.start() in line_starts or _starts_word(joined, m.start()))
                    and (m.end() in line_starts or not joined[m.end() : m.end() + 1].isalnum())
                    and _keylike(kind, m.group(0))
                ):
                    pos = m.start() + 1
                    continue
                spans.append((m.start(), m.end(), kind, pattern))
                # the next token may start where this one is whole, inside its match
                pos = max(m.start() + 1, _whole_end(joined, m.start(), m.end(), pattern, starts))
    reach: dict[re.Pattern[str], int] = {}  # as in ``_service_pass``
    for place, index in _service_starts(joined, starts):
        pattern = _SERVICE_BY_HEAD[joined[place : place + 3]][index][1]
        if place < reach.get(pattern, 0) or (m := pattern.match(joined, place)) is None:
            continue
        # Refused, the next candidate of this pattern is the next line's start at the
        # earliest (a key may start there inside this match); taken, where it is whole.
        following = bisect_right(starts, place)
        reach[pattern] = min(m.end(), starts[following] if following < len(starts) else m.end())
        # No end test: a body narrower than a word (hex, lower case) ends inside the next
        # line's first word, joined on (``...f0d`` then ``done``), and is a key all the same.
        # A digit is looked for in what would be masked: the key to where it is whole, and
        # the next lines' pieces that go on with it (``_runs_on_end``), not in the word
        # the match ran on into.
        whole = _whole_end(joined, place, m.end(), pattern, starts)
        taken = joined[place : _runs_on_end(joined, whole, m.end(), starts)]
        if (place in line_starts or _starts_word(joined, place)) and _keylike(SERVICE_KEY, taken):
            spans.append((place, m.end(), SERVICE_KEY, pattern))
            reach[pattern] = whole
    if "ey" in joined:
        spans.extend(
            (m.start(), m.end(), JWT, _JWT_RE)
            for m in _JWT_RE.finditer(joined)
            if (m.start() in line_starts or _starts_word(joined, m.start()))
            and _decodes_to(m.group(0).split(".", 1)[0], b"{") is not None
        )
        spans.extend(
            (start, end, JWT, _JWT_JOINED_RE)
            for start, end in _jwts_at_line_starts(joined, line_starts)
        )
    settled = [
        (start, _whole_end(joined, start, end, pattern, starts), end, kind)
        for start, end, kind, pattern in spans
    ]
    settled.extend(_discord_spans(joined, starts, line_starts))
    if "://" in joined:  # a URL's password ends at its ``@``, wherever the lines broke
        settled.extend(
            (m.start(2), m.end(2), m.end(2), URL_PASSWORD)
            for m in _URL_RE.finditer(joined)
            if not _is_placeholder(m.group(2))
        )
    settled.sort(key=lambda span: (span[0], -span[1]))
    # where the next token starts after each one (the spans are in order of start)
    following = [len(joined)] * len(settled)
    for i in range(len(settled) - 2, -1, -1):
        after = settled[i + 1][0]
        following[i] = after if after > settled[i][0] else following[i + 1]
    kept: list[tuple[int, int, str, re.Pattern[str] | None]] = []
    for i, (start, end, greedy, kind) in enumerate(settled):
        end = _runs_on_end(joined, end, min(greedy, following[i]), starts)
        if not kept or start >= kept[-1][1]:
            kept.append((start, end, kind, None))
    return kept


def _runs_on_end(joined: str, end: int, cap: int, starts: Sequence[int]) -> int:
    """A token whole at ``end`` goes on over the next lines, up to ``cap`` (where its
    match ran to, or where the next token starts), while their pieces look like parts of
    a token (``_runs_on``): a JWT's signature has no fixed length, a Discord token's last
    part takes 27 to 45 characters, and a token longer than its format's shortest must
    not leave its last piece behind."""
    at = bisect_left(starts, end)
    while end < cap and at < len(starts) and starts[at] == end:
        upto = min(starts[at + 1], cap) if at + 1 < len(starts) else cap
        if _names_a_value(joined, upto):
            break  # ``HF_TOKEN=...`` on the next line: a name and its value, not a piece
        if not _runs_on(joined[end:upto]):
            # a short piece (``Q``) may still be one when the next goes on after it
            after = min(starts[at + 2], cap) if at + 2 < len(starts) else cap
            if upto == cap or upto != starts[at + 1] or not _runs_on(joined[upto:after]):
                break
        end = upto
        at += 1
    return end


def _names_a_value(joined: str, end: int) -> bool:
    """True when the piece ending at ``end`` is the name of an assignment or a header
    (``HF_TOKEN=v``, ``X-Api-Key: v``): a token's last piece is followed by neither
    (base64 padding, ``==`` at a token's end, is not an assignment)."""
    sign = joined[end : end + 1]
    after = joined[end + 1 : end + 2]
    if sign == "=":
        return after not in ("", "=") and not after.isspace()
    return sign == ":" and after == " "


def _runs_on(piece: str) -> bool:
    """True when ``piece``, the start of the line after part of a token, looks like the
    token's next part rather than a word: long, or holding two of lower-case letters,
    upper-case letters after its first, digits and ``_``/``-`` (``SsPw``, ``R8U``, but
    not ``done``, ``Loading``, ``OK``)."""
    if len(piece) >= 20:
        return True
    rest = piece[1:]
    classes = (
        any(c.islower() for c in piece),
        any(c.isupper() for c in rest),
        any(c.isdigit() for c in piece),
        "_" in piece or "-" in piece,
    )
    return sum(classes) >= 2


def _whole_end(
    joined: str, start: int, end: int, pattern: re.Pattern[str], starts: Sequence[int]
) -> int:
    """Where the token found at ``start`` ends: at the first line end after its start
    at which it is whole already (the next line's first word, joined on, is not
    in it), else at ``end``.

    Being whole is monotone over the token's characters (each pattern is a prefix and
    runs of one character class, which the match's characters all belong to), so the
    line ends are searched by halves: a token broken over thousands of short lines
    costs a few matches, not one per line.
    """
    low = bisect_right(starts, start)  # the first line end after the token's start
    high = bisect_left(starts, end) - 1
    if low > high or not pattern.fullmatch(joined, start, starts[high]):
        return end
    while low < high:
        middle = (low + high) // 2
        if pattern.fullmatch(joined, start, starts[middle]):
            high = middle
        else:
            low = middle + 1
    return starts[low]


def _jwts_at_line_starts(joined: str, line_starts: Set[int]) -> list[tuple[int, int]]:
    """(start, end) of the JWTs of the joined-lines view that start where a line started
    after a line ending in a token character: ``_JWT_RE`` wants no token character
    before a JWT, and the joined view has one there (``failed\ne\nyJ...`` joins to
    ``failedeyJ...``).

    The lines that start inside one run of token characters share its end, and so the
    rest of the token after the header: the run is read once and the rest matched once
    however many lines were joined into the run, so the time stays linear. A header
    decodes to ``{`` when its first four characters do and its length is possible for
    base64 (what decoding it whole, as the other JWT tests do, decides).
    """
    found: list[tuple[int, int]] = []
    run_end = -1
    tail: re.Match[str] | None = None
    for start in sorted(line_starts):
        if not joined.startswith("ey", start):
            continue
        if start >= run_end:
            run_end = _TOKEN_RUN_RE.match(joined, start).end()  # type: ignore[union-attr]
            tail = _JWT_TAIL_RE.match(joined, run_end)
        elif found and found[-1][1] > start:
            continue  # inside the JWT found in this run already
        header = run_end - start
        if tail is None or not 10 <= header <= 4098 or header % 4 == 1:
            continue
        if _decodes_to(joined[start : start + 4], b"{") is not None:
            found.append((start, tail.end()))
    return found


def _breaks(text: str) -> list[tuple[int, int]]:
    """Spans of the line breaks inside tokens (``_TOKEN_BREAK_RE``), each from the
    ``\\`` or ``\r`` before its ``\n`` (when there is one) to the next line's token
    character (after Docker Compose's prefix too, where ``_stream_break`` allows it)."""
    compose = "| " in text
    if "\r" not in text and "\\\n" not in text and not compose:
        return [m.span() for m in _TOKEN_BREAK_RE.finditer(text)]
    spans = []
    for m in _TOKEN_BREAK_RE.finditer(text):
        start = m.start()
        end = _stream_break(text, start, _COMPOSE_BREAK_RE, m.end()) if compose else m.end()
        if text[start - 1] == "\r":
            start -= 1
        if text[start - 1] == "\\":
            start -= 1
        spans.append((start, end))
    return spans


def _broken_pass(text: str) -> tuple[str, Counter[str]]:
    """Tokens broken over lines: each piece replaced, the line breaks kept."""
    if "\n" not in text:
        return text, Counter()
    counts: Counter[str] = Counter()
    breaks = _breaks(text)
    if not breaks:
        return text, counts
    pieces: list[str] = []
    pos = 0
    for b_start, b_end in breaks:
        pieces.append(text[pos:b_start])
        pos = b_end
    pieces.append(text[pos:])
    joined = "".join(pieces)
    # joined position -> original position: add the lengths of the breaks before it.
    starts: list[int] = []  # joined position at which each break was cut out
    removed = 0
    for b_start, b_end in breaks:
        starts.append(b_start - removed)
        removed += b_end - b_start
    spans = _broken_spans(joined, starts)
    if not spans:
        return text, counts
    out: list[str] = []
    pos = 0
    index = 0
    shift = 0
    for j_start, j_end, kind, _ in spans:
        while index < len(starts) and starts[index] <= j_start:
            shift += breaks[index][1] - breaks[index][0]
            index += 1
        start = j_start + shift
        inner = []
        for i in range(index, len(starts)):
            if starts[i] >= j_end:
                break
            inner.append(breaks[i])
        if not inner:
            continue  # wholly on one line: not a broken token (left to the line passes)
        end = j_end + shift + sum(b - a for a, b in inner)
        out.append(text[pos:start])
        piece = start
        for b_start, b_end in inner:
            out.append(placeholder(kind) if b_start > piece else "")
            out.append(text[b_start:b_end])
            piece = b_end
        out.append(placeholder(kind) if end > piece else "")
        pos = end
        counts[kind] += 1
    out.append(text[pos:])
    return "".join(out), counts


_SIMPLE_PASSES: Final[tuple[tuple[str, Callable[[str], tuple[str, int]]], ...]] = (
    (PRIVATE_KEY, _pem_pass),
    (AUTHORIZATION, _auth_pass),
    (URL_PASSWORD, _url_pass),
    (CLI_SECRET, _curl_user_pass),
    (HF_TOKEN, _hf_pass),
    (GITHUB_TOKEN, _github_pass),
    (OPENAI_KEY, _openai_pass),
    (AWS_ACCESS_KEY, _aws_access_pass),
    (SERVICE_KEY, _service_pass),
    (DISCORD_TOKEN, _discord_pass),
    (JWT, _jwt_pass),
)


#: Texts one of which a simple pass needs before its pattern can match (passes not
#: named here test for theirs themselves): a substring test skips the pass at C speed.
_PASS_NEEDS: Final[Mapping[str, tuple[str, ...]]] = {
    URL_PASSWORD: ("@",),
    HF_TOKEN: ("hf_", "api_org_"),
    GITHUB_TOKEN: ("gh", "github_pat_"),
    OPENAI_KEY: ("sk-",),
    AWS_ACCESS_KEY: ("AKIA", "ASIA"),
    DISCORD_TOKEN: (".",),
}


def _redact_counts(text: str, depth: int = 0) -> tuple[str, Counter[str]]:
    """``text`` redacted, and how many secrets of each kind were removed (kinds with
    none are absent). ``depth``: how many encodings deep ``text`` was found (see
    ``MAX_DECODE_DEPTH``)."""
    text = _normalised(text)
    if text.isascii():
        return _redacted_counts(text, depth)
    # Look-alike letters and combining marks: the secrets are looked for in the ASCII
    # the text passes for. Only a text that held one is given back folded (its other
    # letters look the same; accents are lost); any other keeps its own letters.
    folded = _folded(text)
    if folded == text:
        return _redacted_counts(text, depth)
    new, counts = _redacted_counts(folded, depth)
    return (new, counts) if counts else (text, counts)


def _json_unescaped(text: str) -> str:
    """``text`` with its JSON escapes of printable ASCII characters written out
    (``\\u003c`` -> ``<``), so that a JSON string stays one: a quote as its short
    escape (``\\"``, or ``\\\\\\"`` for one in a string in a string); a backslash is
    left as it was (written out, it would make the next characters an escape)."""

    def written(m: re.Match[str]) -> str:
        char = chr(int(m.group(2), 16))
        if char in "\\\x7f":
            return m.group(0)
        return "\\" * (2 * len(m.group(1)) - 1) + char if char == '"' else char

    return _JSON_ESCAPE_RE.sub(written, text)


def _redacted_counts(text: str, depth: int) -> tuple[str, Counter[str]]:
    """``_redact_counts`` of a normalised (and folded) text.

    JSON escapes of ASCII characters (``\\u003c``, ``\\u0026``, ``\\u0022``; Go's
    encoder writes ``<``, ``>`` and ``&`` so, and .NET's writes quotes so too) hide a
    token's start (``\\u003chf_...``: a word character before it) and a name's
    (``\\u0026token=...``). The text is redacted as it is first (an escape inside a
    value is part of it there: written out, ``&`` or ``<`` would end the value), then
    what is left is looked at again written out (once, for the whole text: not again
    for each decoded run or word, ``depth`` > 0); a text in which that found more is
    given back written out (as a folded one is)."""
    new, counts = _passes(text, depth)
    if depth == 0 and "\\u00" in new:  # once, on the whole text (not again per decoding)
        unescaped = _json_unescaped(new)
        if unescaped != new:
            again, more = _passes(unescaped, depth)
            if more:
                counts.update(more)
                return again, counts
    return new, counts


def _passes(text: str, depth: int) -> tuple[str, Counter[str]]:
    """Every pass over ``text`` (normalised, folded where it had look-alikes, and with
    its JSON escapes written out on ``_redacted_counts``'s second look)."""
    counts: Counter[str] = Counter()
    if not _SECRET_HINT_RE.search(text) and not _may_hold_base64(text):
        return text, counts
    if "%" in text and depth < MAX_DECODE_DEPTH:
        text, escaped = _percent_pass(text, depth)
        counts.update(escaped)
    if "\n" in text:  # first: a token whose first line holds a whole one goes on
        text, broken = _broken_pass(text)
        counts.update(broken)
    for kind, run in _SIMPLE_PASSES:
        needs = _PASS_NEEDS.get(kind)
        if needs is not None and not any(map(text.__contains__, needs)):
            continue
        text, n = run(text)
        if n:
            counts[kind] += n
    if depth < MAX_DECODE_DEPTH:  # an encoding inside an encoding, to a bounded depth
        text, n = _encoded_pass(text, depth)
        if n:
            counts[ENCODED_SECRET] += n
    text, cli, env, aws = _keyword_pass(text)
    for kind, n in ((CLI_SECRET, cli), (ENV_SECRET, env), (AWS_SECRET_KEY, aws)):
        if n:
            counts[kind] += n
    return text, counts


def _report(counts: Mapping[str, int], field: str) -> tuple[Redaction, ...]:
    if not counts:
        return ()
    return tuple(Redaction(kind, field, counts[kind]) for kind in KINDS if counts.get(kind))


#: Short texts that redacting was seen to leave exactly as they were (never one that held
#: a secret, nor one that normalising changed): an answer words some forty short values
#: each time (page names, titles, flags, evidence), mostly the same from one answer to
#: the next, and a call costs 2-13 us however short the text is (the hint pattern, the
#: base64 look, normalising; the most when a word such as ``key`` or ``token`` is in it),
#: a remembered one under 1 us. Redaction is a pure function of the text, so passing a
#: remembered text through gives what redacting it again would. Only ``str`` itself is
#: looked up and kept: a subclass may compare equal to what it is not.
CLEAN_MEMO_CHARS: Final = 256
#: Texts remembered at most, the oldest out first: about 1.5 MB of ASCII texts, up to
#: about 5 MB of texts in wide characters.
CLEAN_MEMO_KEPT: Final = 4096
_clean_memo: OrderedDict[str, None] = OrderedDict()
_clean_memo_lock = threading.Lock()


def _remember_clean(text: str) -> None:
    with _clean_memo_lock:
        if text in _clean_memo:
            return
        while len(_clean_memo) >= CLEAN_MEMO_KEPT:
            _clean_memo.popitem(last=False)
        _clean_memo[text] = None


def redact(text: str, field: str = "text") -> Redacted:
    """Replace every recognised secret in ``text`` with ``[REDACTED:<kind>]``.

    ``field`` names where the text came from; it is copied into each ``Redaction``.
    Never raises on ``str`` input; running it twice changes nothing more.
    """
    memo = type(text) is str and len(text) <= CLEAN_MEMO_CHARS
    if memo and text in _clean_memo:
        return Redacted(text)
    new, counts = _redact_counts(text)
    if counts.total():
        log.debug("redacted %d secret(s) in field %s", counts.total(), field)
    elif memo and new == text:
        _remember_clean(text)
    return Redacted(new, _report(counts, field))


def redact_fields(
    mapping: Mapping[str, object],
    field: str = "",
    *,
    known_clean: Callable[[str], bool] | None = None,
    found_clean: Callable[[str], None] | None = None,
) -> tuple[dict[str, object], tuple[Redaction, ...]]:
    """Redact every string in ``mapping`` (nested mappings and lists too).

    A string whose key is a secret name (``is_secret_name``) is replaced whole, since the
    key is the only context it has; other strings go through ``redact``. Fields are
    reported as dotted paths (``env.HF_TOKEN``, ``args[2]``); ``field`` prefixes them.
    Returns a new dict; the input is not modified. Non-string scalars are kept.

    ``known_clean`` answers, for a string, whether redacting it was already seen to
    change nothing (a memo of exact contents, ``knowledge.intake.scrub.Scrubber``):
    such strings are kept without another scan. Secret names are judged all the same.
    ``found_clean`` is told each string that redacting here left as it was.
    """
    counts: Counter[tuple[str, str]] = Counter()
    memo = _Memo(known_clean, found_clean)
    result = _redact_mapping(mapping, field, counts, 0, memo)
    report = tuple(
        Redaction(kind, path, n)
        for (kind, path), n in sorted(counts.items(), key=lambda item: item[0][1])
    )
    return result, report


@dataclass(frozen=True, slots=True)
class _Memo:
    """What ``redact_fields`` was given to skip clean strings and to learn new ones."""

    known_clean: Callable[[str], bool] | None = None
    found_clean: Callable[[str], None] | None = None


def _redact_mapping(
    mapping: Mapping[str, object],
    path: str,
    counts: Counter[tuple[str, str]],
    depth: int,
    memo: _Memo,
) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in mapping.items():
        key_text = str(key)
        sub = f"{path}.{key_text}" if path else key_text
        if isinstance(value, str) and _secret_by_name(key_text, value):
            counts[(ENV_SECRET, sub)] += 1
            out[key] = placeholder(ENV_SECRET)
            continue
        out[key] = _redact_value(value, sub, counts, depth + 1, memo)
    return out


def _secret_by_name(name: str, value: str) -> bool:
    """True when ``value``, stored under ``name``, is a secret because of the name."""
    if not is_secret_name(name) or _is_placeholder(value):
        return False
    return not (_INT_RE.fullmatch(value.strip()) and not _is_strong_name(name))


def _redact_value(
    value: object,
    path: str,
    counts: Counter[tuple[str, str]],
    depth: int,
    memo: _Memo,
) -> object:
    if isinstance(value, str):
        if memo.known_clean is not None and memo.known_clean(value):
            return value
        new, found = _redact_counts(value)
        if memo.found_clean is not None and new == value and not found.total():
            memo.found_clean(value)
        for kind, n in found.items():
            if n:
                counts[(kind, path)] += n
        return new
    if depth > MAX_FIELD_DEPTH and isinstance(value, (Mapping, list, tuple)):
        counts[("too-deep", path)] += 1
        return placeholder("too-deep")
    if isinstance(value, Mapping):
        return _redact_mapping(value, path, counts, depth, memo)
    if isinstance(value, (list, tuple)):
        items = [
            _redact_value(v, f"{path}[{i}]", counts, depth + 1, memo) for i, v in enumerate(value)
        ]
        return type(value)(items) if isinstance(value, tuple) else items
    return value


# ------------------------------------------------------------ the last line of defence

#: Shortest run :func:`looks_like_credential` judges (a 128-bit key in base64 is 22).
CREDENTIAL_MIN_CHARS: Final = 24
#: Shannon entropy (bits per character) a run reaches at least to look random: random
#: base64 of 24 characters has about 4.2, of 40 about 4.6; words and names rarely 3.9.
CREDENTIAL_MIN_ENTROPY: Final = 3.9
#: Share of neighbouring characters of different classes (lower, upper, digit) a random
#: run has: about 0.6 for random letters and digits, 0.1-0.3 for names (``Instruct``,
#: ``Qwen3``, ``FlashInferBackend``).
CREDENTIAL_MIN_SWITCHES: Final = 0.4
#: Longest part between separators (``/=_.-``) a run has at least: the parts of names
#: are short (``NVFP4``, ``Instruct``, ``W4A4AsMXFP8``).
CREDENTIAL_MIN_PART: Final = 16
#: Share of a run at most in word-like runs of letters for it to look random (random
#: letters and digits: about 0.1-0.2; ``Eagle3DeepseekV2ForCausalLM``: 0.7).
CREDENTIAL_MAX_WORDS: Final = 0.4
_CREDENTIAL_CHARS: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_=-"
_CREDENTIAL_RUN_RE: Final = re.compile(
    rf"[{re.escape(_CREDENTIAL_CHARS)}]{{{CREDENTIAL_MIN_CHARS},65536}}"
)
# Where the runs are, found fast: the text as bytes, one per character (``?`` for any
# that is not ASCII), each byte a run is made of read as ``a`` (no other is ``a``): a
# run long enough is that many ``a`` in a row, which ``find`` locates at memory speed,
# at the run's place in the text. The run pattern alone, tried at every position, reads
# each short run again from each of its characters: a 300-line server log took 0.9 ms
# to scan, 0.04 ms this way.
_CREDENTIAL_AS_A: Final = bytes.maketrans(_CREDENTIAL_CHARS.encode(), b"a" * len(_CREDENTIAL_CHARS))
_CREDENTIAL_LONG_RUN: Final = b"a" * CREDENTIAL_MIN_CHARS
_NOT_A_RE: Final = re.compile(b"[^a]")
_DIGEST_BEFORE_RE: Final = re.compile(r"(?:sha(?:1|224|256|384|512)|md5|blake2b?)[:=-]$", re.I)
_CREDENTIAL_SEPARATOR_RE: Final = re.compile(r"[/=_.-]")
_WORD_RUN_RE: Final = re.compile(r"[A-Z]?[a-z]{3,}")


def _entropy(text: str) -> float:
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in Counter(text).values())


def _switches(text: str) -> float:
    """Share of neighbouring letters and digits of different classes."""
    classes = [0 if c.islower() else 1 if c.isupper() else 2 for c in text if c.isalnum()]
    if len(classes) < 2:
        return 0.0
    return sum(a != b for a, b in itertools.pairwise(classes)) / (len(classes) - 1)


def looks_like_credential(run: str) -> bool:
    """True when ``run`` (letters, digits, ``+/_=-``) looks like a key or token in no
    known format, as detect-secrets' entropy plugins judge strings: once its parts that
    are hex are taken out (git commit hashes in ``NAME=<hash>`` or ``snapshots/<hash>``,
    digests, UUIDs), it is long (``CREDENTIAL_MIN_CHARS``), holds lower- and upper-case
    letters and digits, switches between them as random text does
    (``CREDENTIAL_MIN_SWITCHES``), has the entropy of random text
    (``CREDENTIAL_MIN_ENTROPY``), and is not mostly words (``Eagle3DeepseekV2For...``:
    at most ``CREDENTIAL_MAX_WORDS`` of it in capitalised or lower-case runs of four
    letters or more), and has a part of ``CREDENTIAL_MIN_PART`` characters between
    separators. Names of models and images (``Qwen3-Coder-480B-A35B-Instruct``,
    ``vllm:...-cu132-20260707``) fail one test or more."""
    parts = _CREDENTIAL_SEPARATOR_RE.split(run)
    kept = [p for p in parts if not (len(p) >= 7 and _HEX_RE.fullmatch(p))]
    body = "".join(kept)
    if len(body) < CREDENTIAL_MIN_CHARS or max(map(len, kept)) < CREDENTIAL_MIN_PART:
        return False  # short: a name of words and numbers (``-MXFP4-Routed-W4A4``)
    if not (
        any(c.islower() for c in body)
        and any(c.isupper() for c in body)
        and any(c.isdigit() for c in body)
    ):
        return False
    if _switches(body) < CREDENTIAL_MIN_SWITCHES or _entropy(body) < CREDENTIAL_MIN_ENTROPY:
        return False
    words = sum(len(w) for w in _WORD_RUN_RE.findall(body))
    return words <= CREDENTIAL_MAX_WORDS * len(body)


def _masked_run(m: re.Match[str]) -> str | None:
    """The placeholder for a run of ``_CREDENTIAL_RUN_RE`` that looks like a credential
    (and does not follow ``sha256:`` or the like); None to keep it."""
    before = m.string[max(0, m.start() - 8) : m.start()]
    if _DIGEST_BEFORE_RE.search(before) or not looks_like_credential(m.group(0)):
        return None
    return placeholder(CREDENTIAL_LIKE)


def mask_credentials(text: str, field: str = "text") -> Redacted:
    """``text`` with every run that :func:`looks_like_credential` replaced by
    ``[REDACTED:credential-like]``: the last line of defence for what is posted publicly,
    after :func:`redact` (whose placeholders it leaves alone). A run right after
    ``sha256:`` (an image digest) is kept."""
    count = 0
    pieces: list[str] = []
    done = 0
    for start, end in _long_runs(text, _CREDENTIAL_AS_A, _CREDENTIAL_LONG_RUN):
        for m in _CREDENTIAL_RUN_RE.finditer(text, start, end):  # as the pattern reads it
            masked = _masked_run(m)
            if masked is not None:
                pieces.append(text[done : m.start()])
                pieces.append(masked)
                done = m.end()
                count += 1
    if not count:
        return Redacted(text, ())
    pieces.append(text[done:])
    return Redacted("".join(pieces), (Redaction(CREDENTIAL_LIKE, field, count),))


def redact_public(text: str, field: str = "text") -> Redacted:
    """``text`` as what is public or leaves the bot shows it: :func:`redact`, then
    :func:`mask_credentials` (search titles, similar solved tickets, the gaps kept, what
    goes to a model server), with the redactions of both."""
    done = redact(text, field)
    masked = mask_credentials(done.text, field)
    return Redacted(masked.text, done.redactions + masked.redactions)
