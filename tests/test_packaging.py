"""What a user installs: the wheel's files, and which packages a run imports."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bot.install import PACKAGES

ROOT = Path(__file__).resolve().parents[1]
#: What the code reads at run time besides Python files; all of it must ship.
DATA_SUFFIXES = {".py", ".yaml", ".md"}
_BUILD_LEFTOVERS = shutil.ignore_patterns("__pycache__", "*.egg-info")
#: Folders of a working copy that are not source: the virtualenv, caches, local data.
_NOT_SOURCE = {
    ".git",
    ".venv",
    "build",
    "dist",
    "data",
    ".hypothesis",
    ".pytest_cache",
    ".ruff_cache",
}


def _ignore(folder: str, names: list[str]) -> set[str]:
    ignored = set(_BUILD_LEFTOVERS(folder, names))
    if Path(folder) == ROOT:
        ignored |= _NOT_SOURCE & set(names)
    return ignored


def _setuptools_version() -> tuple[int, ...]:
    try:
        text = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return (0,)
    return tuple(int(part) for part in text.split(".")[:2] if part.isdigit())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The project's wheel, built offline from a copy of the working tree."""
    if _setuptools_version() < (77,):
        pytest.skip("building the wheel offline needs setuptools>=77 here (the test extra)")
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(ROOT, source, ignore=_ignore)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "-w", str(work / "out"), str(source)],
        check=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )  # fmt: skip
    (built,) = (work / "out").glob("*.whl")
    with zipfile.ZipFile(built) as archive:
        yield archive


def test_the_wheel_holds_only_the_product_packages(wheel):
    tops = {name.split("/")[0] for name in wheel.namelist()}
    dist_info = {top for top in tops if top.endswith(".dist-info")}
    assert len(dist_info) == 1
    assert tops - dist_info == set(PACKAGES), "no benchmarks/, tests/ or other top level"


def test_every_source_and_data_file_of_the_packages_ships(wheel):
    names = set(wheel.namelist())
    expected = {
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*")
        if path.suffix in DATA_SUFFIXES and "__pycache__" not in path.parts
    }
    assert expected, "the packages were found"
    assert not expected - names, sorted(expected - names)


def test_the_wheel_installs_the_wikibot_command(wheel):
    (entry_points,) = (n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt"))
    text = wheel.read(entry_points).decode()
    assert "wikibot = bot.cli:main" in text


# --- look-alike packages in the working directory ----------------------------------


@pytest.fixture
def web_project(tmp_path) -> Path:
    """A folder with a ``templates`` package of its own, as many web projects have."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "__init__.py").write_text("", encoding="utf-8")
    return tmp_path


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH keeps this independent of how the project is installed; the working
    # directory still comes first for `python -m`, as it does for users.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONSAFEPATH", None)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_python_m_bot_refuses_a_templates_package_from_the_working_directory(web_project):
    run = _run([sys.executable, "-m", "bot", "--help"], web_project)
    assert run.returncode != 0
    assert "'templates' from " + str(web_project / "templates") in run.stderr
    assert "python -P -m bot" in run.stderr


def test_python_p_and_the_wikibot_command_use_the_projects_own_packages(web_project):
    run = _run([sys.executable, "-P", "-m", "bot", "--help"], web_project)
    assert run.returncode == 0, run.stderr
    script = Path(sys.executable).with_name("wikibot")
    if not script.exists():
        pytest.skip("the wikibot command is not installed beside this Python")
    run = _run([str(script), "--help"], web_project)
    assert run.returncode == 0, run.stderr
    assert "usage: wikibot" in run.stdout


# --- the conventions of a Python command ------------------------------------------


@pytest.mark.parametrize("command", [["wikibot"], [sys.executable, "-m", "wikibot"]])
def test_version_from_the_command_and_from_python_m_wikibot(command, tmp_path):
    if command == ["wikibot"]:
        script = Path(sys.executable).with_name("wikibot")
        if not script.exists():
            pytest.skip("the wikibot command is not installed beside this Python")
        command = [str(script)]
    run = _run([*command, "--version"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"wikibot {importlib.metadata.version('rtx6k-wikibot')}"


def test_the_license_file_is_the_mit_text_pyproject_names():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text("utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


def _fake_distribution(site: Path, name: str, files: dict[str, str]) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    for file, text in files.items():
        (info / file).write_text(text, encoding="utf-8")


def test_another_distribution_owning_one_of_our_packages_is_named_and_refused(
    tmp_path, monkeypatch
):
    from bot.install import check_install, foreign_owners

    assert foreign_owners() == {}, "this environment is clean"
    _fake_distribution(tmp_path, "web-kit", {"top_level.txt": "templates\nwebkit\n"})
    _fake_distribution(  # no top_level.txt: its RECORD says what it installs
        tmp_path, "notes-app", {"RECORD": "knowledge/__init__.py,,\nnotes_app/x.py,,\n"}
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert foreign_owners() == {"templates": ["web-kit 1.0"], "knowledge": ["notes-app 1.0"]}
    check_install()  # the cheap check alone does not read the distributions
    with pytest.raises(SystemExit) as stopped:
        check_install(owners=True)
    message = str(stopped.value)
    assert "'templates' also by web-kit 1.0" in message
    assert "'knowledge' also by notes-app 1.0" in message
    assert "own virtual environment" in message


def test_an_editable_install_as_make_does_it_prints_no_setuptools_warning(tmp_path):
    """make's first install (make demo, make test) used to print setuptools' 9-line
    warning about folders shadowing a flat layout; the Makefile silences it."""
    if _setuptools_version() < (77,):
        pytest.skip("building offline needs setuptools>=77 here (the test extra)")
    makefile = (ROOT / "Makefile").read_text("utf-8")
    env_line = next(line for line in makefile.splitlines() if line.startswith("QUIET_EDITABLE"))
    name, value = env_line.split(":=", 1)[1].strip().split("=", 1)
    assert "$(QUIET_EDITABLE) $(BIN)/pip install" in makefile
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=_ignore)
    hook = f"from setuptools import build_meta; build_meta.build_editable(r'{tmp_path}')"

    def build(extra: dict[str, str]) -> str:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"} | extra
        run = subprocess.run(
            [sys.executable, "-c", hook], cwd=source, env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        return run.stderr

    assert "Editable installation" in build({}), "setuptools still warns without it"
    assert "Editable installation" not in build({name: value.strip('"')})
