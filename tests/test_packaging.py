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
