"""The llm section of the config: off by default, checked like every other section, the
API key only ever read from the environment variable it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load_config

ON = "wiki: {path: wiki}\nllm:\n  enabled: true\n  base_url: http://gpu-box:8000/v1\n  model: m\n"


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "wiki").mkdir(exist_ok=True)
    path = tmp_path / "bot.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_answering_is_off_unless_enabled(tmp_path):
    assert load_config(write(tmp_path, "wiki: {path: wiki}\n")).llm is None
    off = "wiki: {path: wiki}\nllm: {enabled: false, base_url: http://x:1, model: m}\n"
    assert load_config(write(tmp_path, off)).llm is None


def test_an_enabled_section_loads_with_its_defaults_and_reads_the_key_from_the_environment(
    tmp_path,
):
    config = load_config(write(tmp_path, ON + "  api_key_env: MY_KEY\n  max_tokens: 256\n"))
    llm = config.llm
    assert llm is not None and (llm.base_url, llm.model, llm.max_tokens) == (
        "http://gpu-box:8000/v1",
        "m",
        256,
    )
    assert (llm.cooldown_seconds, llm.max_concurrent, llm.in_support) == (20.0, 4, True)
    assert llm.settings({"MY_KEY": " sk-1 "}).api_key == "sk-1"
    assert llm.settings({}).api_key is None
    assert "sk-1" not in repr(llm.settings({"MY_KEY": "sk-1"}))


@pytest.mark.parametrize(
    ("text", "key", "hint"),
    [
        ("wiki: {path: wiki}\nllm: {enabled: true, model: m}\n", "llm.base_url", "required"),
        (
            "wiki: {path: wiki}\nllm: {enabled: true, base_url: http://x:1}\n",
            "llm.model",
            "required",
        ),
        (ON.replace("http://gpu-box:8000/v1", "ftp://gpu-box"), "llm.base_url", "http(s) URL"),
        (ON.replace("http://gpu-box", "http://user:pw@gpu-box"), "llm.base_url", "api_key_env"),
        (ON + "  api_key: sk-abc.def.ghi\n", "llm.api_key", "llm.api_key_env"),
        (ON + "  api_key_env: sk-abc.def.ghi\n", "llm.api_key_env", "NAME of an environment"),
        (ON + "  max_tokens: 0\n", "llm.max_tokens", "16-4096"),
        (ON + "  max_chars: 9000\n", "llm.max_chars", "200-3500"),
        (ON + "  max_concurrent: 0\n", "llm.max_concurrent", "1 to 64"),
        (ON + "  total_timeout: .inf\n", "llm.total_timeout", "seconds"),
        (ON + "  cooldown_seconds: -1\n", "llm.cooldown_seconds", "seconds"),
        (ON.replace("enabled: true", "enabled: yes please"), "llm.enabled", "true or false"),
        (ON + "  temprature: 0.5\n", "llm.temprature", "unknown key"),
    ],
)
def test_errors_name_the_file_and_the_key(tmp_path, text, key, hint):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {key}: "), message
    assert hint in message
    assert "abc.def.ghi" not in message, "a pasted secret is never echoed"
