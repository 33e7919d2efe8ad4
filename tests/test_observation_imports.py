"""The observation side (collectors, report, models, store) imports nothing of the simulation:
checked twice, statically by the import-linter contract ``observation`` (as ``make lint`` runs
it) and at run time (importing every observation module loads no simulation module)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import textwrap

import pytest

import toolkit

OBSERVATION = ("collect", "report", "models", "store")
SIMULATION = ("toolkit.world", "toolkit.engine", "toolkit.server", "toolkit.simulate")


def test_importing_the_observation_side_loads_no_simulation_module() -> None:
    modules = [
        info.name
        for package in OBSERVATION
        for info in pkgutil.walk_packages(
            [f"{toolkit.__path__[0]}/{package}"], prefix=f"toolkit.{package}."
        )
    ]
    modules += [f"toolkit.{package}" for package in OBSERVATION]
    code = textwrap.dedent(
        f"""
        import importlib, sys
        for name in {sorted(modules)!r}:
            importlib.import_module(name)
        loaded = sorted(m for m in sys.modules if m.startswith({SIMULATION!r}))
        print(",".join(loaded))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"the observation side loaded {out.stdout.strip()}"


def test_the_import_contract_forbids_the_simulation_on_the_observation_side() -> None:
    lint = pytest.importorskip("importlinter.cli")
    assert lint.lint_imports(no_cache=True) == 0  # every contract, "observation" included
