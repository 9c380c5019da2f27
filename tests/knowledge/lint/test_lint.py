"""The lint's checks on the demo wiki, each with a fault put in by hand, and on the snapshots."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.cli import main
from knowledge.lint import RULES, LintOptions, Severity, lint_wiki, render_text
from knowledge.lint.folder import load_for_lint
from knowledge.templates import load_templates
from tests.support import DEMO, ROOT, SNAPSHOT

SNAPSHOTS = [SNAPSHOT, ROOT.parent / "shared" / "wiki-snapshot-2026-08-04"]


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    """A copy of the demo wiki to break."""
    target = tmp_path / "wiki"
    shutil.copytree(DEMO, target)
    return target


def edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    text = file.read_text(encoding="utf-8")
    assert old in text, (path, old)
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


def line_of(root: Path, path: str, needle: str) -> int:
    lines = (root / path).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def lint(root: Path, *, only=None, options=None):
    wiki, glossary, catalogue = load_for_lint(root, None)
    return lint_wiki(wiki, glossary, catalogue, only=only, options=options)


def rules(report) -> dict[str, list[tuple[str, int]]]:
    found: dict[str, list[tuple[str, int]]] = {}
    for f in report.findings:
        found.setdefault(f.rule.id, []).append((f.path, f.line))
    return found


def test_the_demo_wiki_has_no_broken_structure():
    report = lint(DEMO)
    found = rules(report)
    # Links, hubs, glossary rows, troubleshooting entries and runbooks are all sound there.
    assert set(found) <= {"glossary-missing-acronym", "orphan-page"}, found
    for finding in report.findings:
        assert finding.problem and finding.fix and finding.line >= 1


def test_every_rule_has_its_wording_and_no_wording_is_dead():
    t = load_templates("lint.yaml")
    worded = {key.split(".")[1] for key in t.entries if key.startswith("rules.")}
    assert worded == {rule.id for rule in RULES}
    for rule in RULES:
        assert t.raw(f"rules.{rule.id}.problem") and t.raw(f"rules.{rule.id}.fix")


def test_a_version_map_row_pointing_nowhere(wiki):
    edit(
        wiki,
        "models/glm.md",
        "| [GLM-5 v3](glm5_v3.md) | Historical",
        "| [GLM-5 v3](glm5_v9.md) | Historical",
    )
    found = rules(lint(wiki, only=["hubs"]))
    assert found == {
        "hub-missing-page": [("models/glm.md", line_of(wiki, "models/glm.md", "glm5_v9.md"))]
    }


def test_a_hub_whose_current_page_has_a_newer_numbered_page_is_stale(wiki):
    (wiki / "models" / "glm5_v5.md").write_text("# GLM-5 v5\n\nNewer.\n", encoding="utf-8")
    report = lint(wiki, only=["hubs"])
    ((path, line),) = rules(report)["hub-stale"]
    assert path == "models/glm.md"
    assert line == line_of(wiki, "models/glm.md", "| [GLM-5 v4](glm5_v4.md) | Current")
    assert "models/glm5_v5.md" in report.findings[0].problem
    # Listed as historical in the map, the newer page is not a sign of a stale hub.
    edit(
        wiki,
        "models/glm.md",
        "| [GLM-5 v3](glm5_v3.md) | Historical | DCP1",
        "| [GLM-5 v5](glm5_v5.md) | Historical | x |\n| [GLM-5 v3](glm5_v3.md) | Historical | DCP1",
    )
    assert "hub-stale" not in rules(lint(wiki, only=["hubs"]))


def test_links_to_missing_pages_and_anchors(wiki):
    page = "hardware/topology.md"
    with (wiki / page).open("a", encoding="utf-8") as out:
        out.write(
            "\n## Two Cards: A/B Test\n\n## Two Cards: A/B Test\n\n"
            "See [gone](../models/nothing.md), [ok](../models/glm.md#version-map),\n"
            "[bad anchor](../models/glm.md#no-such-heading), [dup](#two-cards-ab-test-1),\n"
            "[slash kept](#two-cards-a-b-test), [script](../scripts/run.sh) and [L](#L12).\n\n"
            "```text\n[in code](missing.md)\n```\n"
        )
    report = lint(wiki, only=["links"])
    found = rules(report)
    line = line_of(wiki, page, "[gone]")
    assert found["link-missing-page"] == [(page, line)]
    # GitHub drops the slash (two-cards-ab-test) and numbers the repeat -1.
    assert sorted(found["link-missing-anchor"]) == [(page, line + 1), (page, line + 2)]
    assert {f.values["anchor"] for f in report.findings if f.rule.id == "link-missing-anchor"} == {
        "no-such-heading",
        "two-cards-a-b-test",
    }
    assert "link-missing-file" not in found  # only with --files: a fetched wiki has no scripts
    with_files = rules(lint(wiki, only=["links"], options=LintOptions(files=True)))
    assert with_files["link-missing-file"] == [(page, line + 2)]


def test_an_html_anchor_counts(wiki):
    with (wiki / "hardware/topology.md").open("a", encoding="utf-8") as out:
        out.write('\n<a id="custom-spot"></a>\n\nSee [here](#custom-spot).\n')
    assert "link-missing-anchor" not in rules(lint(wiki, only=["links"]))


def test_glossary_rows_duplicated_or_without_meaning(wiki):
    edit(
        wiki,
        "GLOSSARY.md",
        "| DP | Data Parallelism |",
        "| EMPTYTERM |  | x |\n| tp | Tensor Parallelism again | y |\n| DP | Data Parallelism |",
    )
    found = rules(lint(wiki, only=["glossary"]))
    assert found["glossary-empty-meaning"] == [
        ("GLOSSARY.md", line_of(wiki, "GLOSSARY.md", "EMPTYTERM"))
    ]
    assert found["glossary-duplicate"] == [("GLOSSARY.md", line_of(wiki, "GLOSSARY.md", "| tp |"))]


def test_an_acronym_used_on_many_pages_that_the_glossary_lacks(wiki):
    pages = [p for p in sorted(wiki.rglob("*.md")) if p.name != "GLOSSARY.md"][:6]
    for number, page in enumerate(pages):
        with page.open("a", encoding="utf-8") as out:
            # Spelled out once; shouted words, units and names beside it are not acronyms.
            out.write(
                f"\nThe QZX path (Quick Zero Xfer (QZX)) is NOT used; it holds {number} GB"
                " on an ACME Board 9, not for GLM or JSON.\n"
            )
    report = lint(wiki, only=["acronyms"], options=LintOptions(acronym_pages=5))
    terms = {f.values["term"]: f for f in report.findings}
    assert "QZX" in terms and terms["QZX"].values["pages"] == 6
    assert "Quick Zero Xfer" in terms["QZX"].problem
    # Shouted, a unit, a name, a word of a family's name (GLM-5), general computing (JSON).
    assert not {"NOT", "GB", "ACME", "GLM", "JSON"} & set(terms)
    assert "QZX" not in {
        f.values["term"]
        for f in lint(wiki, only=["acronyms"], options=LintOptions(acronym_pages=7)).findings
    }
    # Defined in the glossary (or as a composite of a term it defines), it is not reported.
    edit(
        wiki,
        "GLOSSARY.md",
        "| DP | Data Parallelism |",
        "| QZX | Quick Zero Xfer | z |\n| DP | Data Parallelism |",
    )
    assert "QZX" not in {
        f.values["term"]
        for f in lint(wiki, only=["acronyms"], options=LintOptions(acronym_pages=5)).findings
    }


def test_troubleshooting_entries_without_a_fix_or_with_nothing_to_do(wiki):
    with (wiki / "troubleshooting/common-issues.md").open("a", encoding="utf-8") as out:
        out.write(
            "\n### Cards Vanish After A Reboot\n\n**Error**: `no devices found`\n\n"
            "**Cause**: A riser.\n\n"
            "### Server Answers Slowly\n\n**Error**: `timeout waiting`\n\n"
            "**Fix**: Wait a little and try again later.\n\n"
            "### Known But Open\n\n**Error**: `bad thing`\n\n"
            "**Status**: not fixable yet; use the other engine.\n\n"
            "### Fixed By A Link\n\n**Error**: `other thing`\n\n"
            "**Fix**: See [the tuning page](../optimization/nccl-tuning.md).\n"
        )
    page = "troubleshooting/common-issues.md"
    found = rules(lint(wiki, only=["troubleshooting"]))
    assert found == {
        "troubleshooting-no-fix": [(page, line_of(wiki, page, "`no devices found`"))],
        "troubleshooting-vague-fix": [(page, line_of(wiki, page, "Wait a little"))],
    }


def test_a_launch_command_running_another_tag_than_the_release_image(wiki):
    edit(
        wiki,
        "models/glm5_v4.md",
        "  demo-registry/vllm:lantern-v4-cu130-20260722 \\",
        "  demo-registry/vllm:lantern-v3-cu130-20260605 \\",
    )
    report = lint(wiki, only=["runbooks"])
    page = "models/glm5_v4.md"
    assert rules(report) == {
        "runbook-image-mismatch": [(page, line_of(wiki, page, "  demo-registry/vllm:lantern-v3"))]
    }
    assert "lantern-v4-cu130-20260722" in report.findings[0].problem


def test_a_launch_of_another_repository_is_not_a_mismatch(wiki):
    edit(
        wiki,
        "models/glm5_v4.md",
        "  demo-registry/vllm:lantern-v4-cu130-20260722 \\",
        "  demo-registry/sglang:lantern-v4 \\",
    )
    assert lint(wiki, only=["runbooks"]).findings == ()


def test_orphans_and_a_full_index_that_lacks_a_page(wiki):
    (wiki / "notes" / "lonely.md").write_text("# Lonely\n\nNobody links here.\n", encoding="utf-8")
    (wiki / "notes" / "reached.md").write_text("# Reached\n\nText.\n", encoding="utf-8")
    edit(wiki, "hardware/topology.md", "\n## ", "\nSee [reached](../notes/reached.md).\n\n## ")
    (wiki / "notes" / "named.md").write_text("# Named\n\nText.\n", encoding="utf-8")
    (wiki / "notes" / "README.md").write_text(
        "# Notes\n\nRead `named.md` first.\n\n```text\nlonely.md\n```\n", encoding="utf-8"
    )
    found = rules(lint(wiki, only=["orphans"]))
    assert ("notes/lonely.md", 1) in found["orphan-page"]
    # Linked from a reached page, or named by its path in a folder index's inline code.
    assert ("notes/reached.md", 1) not in found["orphan-page"]
    assert ("notes/named.md", 1) not in found["orphan-page"]
    # A generated index of every page (but the new one) is a catalogue: not followed, and stale.
    pages = sorted(p.relative_to(wiki).as_posix() for p in wiki.rglob("*.md"))
    listed = "".join(f"- [{p}]({p})\n" for p in pages if p != "notes/lonely.md")
    assert len(pages) >= 20
    (wiki / "INDEX.md").write_text("# Index\n\n" + listed, encoding="utf-8")
    edit(
        wiki,
        "README.md",
        "| Index | Use |\n|---|---|\n",
        "| Index | Use |\n|---|---|\n| [All](INDEX.md) | all |\n",
    )
    found = rules(lint(wiki, only=["orphans"], options=LintOptions()))
    assert ("notes/lonely.md", 1) in found["orphan-page"]
    assert found["orphan-not-in-index"] == [("INDEX.md", 1)]


def test_only_runs_the_named_checks_and_text_has_the_markdownlint_shape(wiki):
    edit(wiki, "models/glm.md", "(glm5_v3.md) | Historical", "(glm5_v9.md) | Historical")
    report = lint(wiki, only=["hubs"])
    assert report.checks == ("hubs",)
    text = render_text(report, load_templates("lint.yaml"))
    first = text.splitlines()[0]
    assert first.startswith("models/glm.md:") and " hub-missing-page [error] " in first
    assert " Fix: " in first
    with pytest.raises(ValueError):
        lint(wiki, only=["nonsense"])


def test_the_command_exit_code_follows_fail_on(wiki, tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["lint", "--wiki", str(wiki), "--data", str(data)]) == 0  # a warning, no error
    capsys.readouterr()
    assert main(["lint", "--wiki", str(wiki), "--data", str(data), "--fail-on", "warning"]) == 1
    capsys.readouterr()
    edit(wiki, "models/glm.md", "(glm5_v3.md) | Historical", "(glm5_v9.md) | Historical")
    code = main(["lint", "--wiki", str(wiki), "--data", str(data), "--json", "--only", "hubs"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["checks"] == ["hubs"] and out["per_check"] == {"hubs": 1}
    (finding,) = out["findings"]
    assert finding["rule"] == "hub-missing-page" and finding["severity"] == "error"
    assert set(finding) == {"path", "line", "rule", "check", "severity", "problem", "fix"}
    assert main(["lint", "--wiki", str(wiki), "--only", "hubs,bogus"]) == 2
    assert "bogus" in capsys.readouterr().err
    assert (data / "pages.sqlite3").exists() or any(data.iterdir())  # the page cache was kept


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda p: p.name)
def test_every_finding_on_a_real_snapshot_names_a_line_of_its_file(snapshot):
    if not snapshot.is_dir():
        pytest.skip(f"{snapshot.name} is not present beside the repository")
    report = lint(snapshot)
    assert report.pages > 100
    for finding in report.findings:
        lines = (snapshot / finding.path).read_text(encoding="utf-8").splitlines()
        assert 1 <= finding.line <= max(len(lines), 1), finding
        assert finding.severity in Severity


def test_the_example_workflow_runs_commands_the_cli_accepts():
    """docs/wiki-lint-workflow.yml: valid YAML, and each `wikibot lint` line parses."""
    import shlex

    import yaml

    from bot.cli import build_parser

    workflow = yaml.safe_load((ROOT / "docs" / "wiki-lint-workflow.yml").read_text("utf-8"))
    steps = workflow["jobs"]["lint"]["steps"]
    script = "\n".join(step.get("run", "") for step in steps).replace("\\\n", " ")
    commands = [
        line.strip() for line in script.splitlines() if line.strip().startswith("wikibot lint")
    ]
    assert len(commands) >= 1
    for command in commands:
        words = shlex.split(command.split(">")[0])[1:]
        args = build_parser().parse_args(words)
        assert args.func.__name__ == "_lint" and args.fail_on == "error"
