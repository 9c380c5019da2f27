"""Pasted server launches read into one typed ``Launch``: docker run, compose, vllm, sglang.

``parse_launch(text)`` never raises; what it could not read is in ``Launch.problems``.
The parts: :mod:`.shell` (words and expansion), :mod:`.docker`, :mod:`.compose`,
:mod:`.engines` (vllm/sglang commands and flags), :mod:`.settings` (flag and env
aliases, GPUs), :mod:`.images` (image references and the patterns shared with the
wiki and triage), :mod:`.model` (``Launch``, ``Parallelism``). Nothing here imports
the rest of ``knowledge``.
"""

from knowledge.launch.images import (
    HF_CACHE_RE,
    SHA256_DIGEST_RE,
    ImageRef,
    compose_image_word,
    engine_of_image,
    env_image_word,
    hf_cache_repo,
    image_default,
    parse_image,
)
from knowledge.launch.model import LAUNCH_KINDS, PARALLEL_FIELDS, Gpus, Launch, Parallelism
from knowledge.launch.parse import MAX_LAUNCH_CHARS, parse_launch
from knowledge.launch.settings import ENV_ALIASES, FLAG_ALIASES

__all__ = [
    "ENV_ALIASES",
    "FLAG_ALIASES",
    "HF_CACHE_RE",
    "LAUNCH_KINDS",
    "MAX_LAUNCH_CHARS",
    "PARALLEL_FIELDS",
    "SHA256_DIGEST_RE",
    "Gpus",
    "ImageRef",
    "Launch",
    "Parallelism",
    "compose_image_word",
    "engine_of_image",
    "env_image_word",
    "hf_cache_repo",
    "image_default",
    "parse_image",
    "parse_launch",
]
