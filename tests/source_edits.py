"""Edits of the demo wiki that a user would notice (or not), for the announcement tests."""

from __future__ import annotations

__all__ = ["invisible_edit", "visible_edits"]


def _replace(files: dict[str, bytes], path: str, old: str, new: str) -> None:
    text = files[path].decode()
    assert old in text, f"{old!r} not in {path}"
    files[path] = text.replace(old, new, 1).encode()


def visible_edits(files: dict[str, bytes]) -> dict[str, bytes]:
    """A new current Qwen3 runbook with a new image, a glossary term, an Error section,
    and a new family on the front page."""
    files = dict(files)
    v2 = files["models/qwen3_v2.md"].decode()
    files["models/qwen3_v3.md"] = (
        v2.replace("# Qwen3 v2:", "# Qwen3 v3:", 1)
        .replace("orchard-v3-cu130-20260801", "orchard-v4-cu130-20261101")
        .encode()
    )
    _replace(
        files,
        "models/qwen.md",
        "| [Qwen3 v2](qwen3_v2.md) | Current |",
        "| [Qwen3 v3](qwen3_v3.md) | Current | Newer image. |\n"
        "| [Qwen3 v2](qwen3_v2.md) | Historical |",
    )
    _replace(
        files,
        "GLOSSARY.md",
        "| TP | Tensor",
        "| ZQX | Zonal Quokka Exchange | Invented for a test. |\n| TP | Tensor",
    )
    files["troubleshooting/common-issues.md"] += (
        b"\n### Quokka Overflow\n\n**Error**: `QuokkaError: too many quokkas in the pen`\n\n"
        b"**Cause**: An invented failure.\n\n**Fix**: Open the gate.\n"
    )
    _replace(
        files,
        "README.md",
        "| Legacy / secondary models |",
        "| Wombat-9 | [Wombat Hub](models/wombat.md) | Invented. |\n| Legacy / secondary models |",
    )
    files["models/wombat.md"] = (
        b"# Wombat Hub\n\nAn invented family.\n\n## Version Map\n\n| Page | Status | Why |\n"
        b"|---|---|---|\n| [Wombat v1](wombat_v1.md) | Current | First. |\n"
    )
    files["models/wombat_v1.md"] = (
        b"# Wombat v1\n\n## Launch\n\n```bash\ndocker run --gpus all demo-registry/vllm:burrow-v1 "
        b"\\\n  vllm serve demo/Wombat-9\n```\n"
    )
    return files


def invisible_edit(files: dict[str, bytes]) -> dict[str, bytes]:
    """A reworded paragraph: nothing a user of the bot's commands would notice."""
    files = dict(files)
    files["hardware/topology.md"] += b"\nOne more sentence about cables, added later.\n"
    return files
