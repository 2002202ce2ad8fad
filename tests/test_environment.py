"""environment.yml (conda) and pyproject.toml (pip) must name the same packages."""

import re
import sys
from pathlib import Path

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CONDA_TO_PIP = {"pytorch": "torch", "python-graphviz": "graphviz"}
CONDA_ONLY = {"python", "pip", "graphviz"}  # conda's `graphviz` is the `dot` program


def _name(requirement: str) -> str:
    """The normalised project name of a requirement such as 'tomli>=2; python_version<"3.11"'."""
    return re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def conda_packages(path: Path = ROOT / "environment.yml") -> set[str]:
    """The pip names of the conda packages environment.yml installs (conda-only ones left out)."""
    env = yaml.safe_load(path.read_text("utf-8"))
    assert env["channels"] == ["conda-forge"]
    names = {_name(dep) for dep in env["dependencies"] if isinstance(dep, str)}
    return {CONDA_TO_PIP.get(name, name) for name in names - CONDA_ONLY}


OPTIONAL_EXTRAS = ("bench",)  # the other engines `make bench` measures: `pip install -e ".[bench]"`


def pyproject_packages(path: Path = ROOT / "pyproject.toml") -> set[str]:
    """Every package pyproject.toml depends on, in any extra but the optional ones."""
    project = tomllib.loads(path.read_text("utf-8"))["project"]
    requirements = list(project["dependencies"])
    for name, extra in project["optional-dependencies"].items():
        if name not in OPTIONAL_EXTRAS:
            requirements += extra
    return {_name(requirement) for requirement in requirements}


def test_environment_yml_installs_the_project_with_pip():
    env = yaml.safe_load((ROOT / "environment.yml").read_text("utf-8"))
    assert {"pip": ["-e ."]} in env["dependencies"]


def test_conda_and_pip_name_the_same_packages():
    conda, pip = conda_packages(), pyproject_packages()
    assert conda == pip, (
        f"only in environment.yml: {sorted(conda - pip)}; "
        f"only in pyproject.toml: {sorted(pip - conda)}"
    )


def test_requirement_names_are_parsed():
    assert _name("tomli>=2; python_version<'3.11'") == "tomli"
    assert _name("Pytest_Xdist >= 3") == "pytest-xdist"
    assert _name("graphviz") == "graphviz"
