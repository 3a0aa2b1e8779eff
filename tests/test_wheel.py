"""handrail installed from its wheel works outside the checkout, as `pipx install`, `uv tool
install` and an MCP client that spawns it by path would run it.

The wheel is built from a copy of the sources and installed into a new virtual environment
of its own; the libraries it depends on are taken from the test environment by a path
line (a ``.pth`` that names a folder adds it to ``sys.path`` without running that folder's
own ``.pth`` files, so the checkout's editable install stays out). Every command runs from
an empty folder: only what the wheel carries can be found.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from core.audit.key import data_dir

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "core", "tui", "themes")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a new venv holding only handrail's wheel."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(
                source, src / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(source, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "dist"), str(src)],
        check=True,
        capture_output=True,
    )
    (wheel,) = (work / "dist").glob("handrail-*.whl")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "handrail-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env_dir / "bin"


def handrail(
    bin_dir: Path, cwd: Path, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / "handrail"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_wheel_carries_every_file_handrail_reads(installed: Path) -> None:
    (wheel,) = installed.parent.parent.glob("dist/handrail-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    checkout = {
        p.relative_to(ROOT).as_posix()
        for folder in ("core", "tui")
        for p in (ROOT / folder).rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    }
    themes = {f"tui/theme_files/{p.name}" for p in (ROOT / "themes").glob("*.toml")}
    assert themes, "the checkout has built-in themes"
    assert checkout | themes <= names, sorted((checkout | themes) - names)


def test_version_and_doctor_run_from_any_folder(installed: Path, tmp_path: Path) -> None:
    version = handrail(installed, tmp_path, "--version")
    assert version.returncode == 0 and version.stdout.startswith("handrail 0.1.0"), version
    doctor = handrail(installed, tmp_path, "doctor")
    assert "Traceback" not in doctor.stderr + doctor.stdout, doctor.stderr
    assert "✓ chrome starts" in doctor.stdout, doctor.stdout
    assert f"✓ python           3.{sys.version_info.minor}" in doctor.stdout, doctor.stdout
    # Outside a checkout the logs go to handrail's data folder, and doctor says so.
    logs = data_dir() / "audit_logs"  # this test's own (tests/conftest.py)
    assert str(logs) in " ".join(doctor.stdout.split()), doctor.stdout
    shown = handrail(installed, tmp_path, "policy", "show", "risky")
    assert shown.returncode == 0 and 'risk = "any"' in shown.stdout, shown


def test_the_demo_runs_from_any_folder_until_the_payment_hand_over(
    installed: Path, tmp_path: Path
) -> None:
    demo = handrail(
        installed, tmp_path, "demo", "--headless", "--no-tui", "--approve", "none", timeout=240
    )
    assert "Traceback" not in demo.stderr, demo.stderr
    assert demo.returncode == 3, (demo.stdout[-2000:], demo.stderr[-2000:])
    assert "needs a person: payment" in demo.stdout
    logs = data_dir() / "audit_logs"
    assert not (tmp_path / "audit_logs").exists()
    (log,) = logs.glob("*.jsonl")
    assert str(log) in demo.stdout + demo.stderr


def test_mcp_demo_serves_an_agent_from_any_folder(installed: Path, tmp_path: Path) -> None:
    """As an MCP client spawns it: the installed command, by its path, from an empty folder
    (docs/examples/mcp_client.py --handrail PATH is that client)."""
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "docs" / "examples" / "mcp_client.py"),
            "--handrail",
            str(installed / "handrail"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    assert "the payment page is handed to a person" in done.stdout
