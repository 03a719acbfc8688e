"""The user's first hour: the docker-compose LocalStack docs/development.md promises, and the set-up script that
installs what bin/demo and bin/test need (build/prerequisites.sh), tried with stand-ins for apt-get and sudo."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import yaml  # type: ignore[import-untyped,unused-ignore]

ROOT = Path(__file__).resolve().parents[2]
DEVELOPMENT = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
PREREQUISITES = ROOT / "build" / "prerequisites.sh"


def compose() -> Dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8")))


def development_section(title: str) -> str:
    start = DEVELOPMENT.index(f"\n## {title}\n")
    end = DEVELOPMENT.find("\n## ", start + 1)
    return DEVELOPMENT[start:] if end < 0 else DEVELOPMENT[start:end]


def test_given_the_compose_file_then_localstack_serves_kinesis_on_4566_from_a_pinned_image_with_health_check() -> None:
    localstack = compose()["services"]["localstack"]
    image, _, version = localstack["image"].partition(":")
    assert image == "localstack/localstack" and re.fullmatch(r"\d+\.\d+\.\d+", version), localstack["image"]
    assert [p.rsplit(":", 2)[-2:] for p in localstack["ports"]] == [["4566", "4566"]]
    assert "kinesis" in localstack["environment"]["SERVICES"].split(",")
    assert localstack["healthcheck"]["test"][-1].endswith(":4566/_localstack/health")
    volume = localstack["volumes"][0].split(":")[0]
    assert volume in compose()["volumes"], "the data volume is a named one"


def test_given_the_docs_then_their_docker_section_runs_the_demo_and_the_quickstart_against_the_compose_file() -> None:
    section = development_section("With Docker: LocalStack")
    localstack = compose()["services"]["localstack"]
    # The commands: start and wait for health, the demo with its endpoint flag, stop
    assert "docker compose up -d --wait" in section and "docker compose down" in section
    assert "bin/demo --endpoint http://localhost:4566" in section
    # The image, region and endpoints it names are the compose file's
    assert localstack["image"].split(":")[1] in section
    assert f'region="{localstack["environment"]["AWS_DEFAULT_REGION"]}"' in section
    assert 'endpoint_url="http://localhost:4566"' in section, "the source's endpoint"
    assert 'endpoint_url="https://localhost:4566"' in section and "verify_certificate=False" in section, "the sink's"


def fake_machine(tmp_path: Path, present: List[str], root: bool) -> Dict[str, str]:
    """A PATH holding stand-ins for the tools ``present`` and for apt-get, sudo and id, which log their calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"

    def tool(name: str, body: str) -> None:
        path = bin_dir / name
        path.write_text(f"#!{shutil.which('bash')}\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)

    for name in present:
        tool(name, "exit 0")
    for name in ("apt-get", "sudo"):
        tool(name, f'echo "{name} $*" >> {log}; [ "{name}" = sudo ] && exec "$@"; exit 0')
    tool("id", f"echo {0 if root else 1000}")
    (bin_dir / "env").symlink_to(shutil.which("env") or "/usr/bin/env")
    tool("uname", "echo Linux")
    return {"PATH": str(bin_dir), "PYTHON": sys.executable, "HOME": str(tmp_path)}


def run_prerequisites(env: Dict[str, str]) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [shutil.which("bash") or "bash", str(PREREQUISITES), "bin/demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


ALL_TOOLS = ["java", "mvn", "node", "npm", "curl", "aarch64-linux-gnu-strip"]


def test_given_everything_installed_when_set_up_then_nothing_is_installed_and_nothing_said(tmp_path: Path) -> None:
    done = run_prerequisites(fake_machine(tmp_path, ALL_TOOLS, root=False))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not (tmp_path / "calls.log").exists()


def test_given_a_fresh_machine_and_a_user_when_set_up_then_sudo_apt_get_installs_exactly_what_is_missing(
    tmp_path: Path,
) -> None:
    # Given a machine with Java and Maven only, and a user who is not root
    env = fake_machine(tmp_path, ["java", "mvn"], root=False)
    # When bin/demo sets up
    done = run_prerequisites(env)
    # Then it says what it installs, asks for root through sudo, and installs just that
    assert done.returncode == 0, done.stderr
    missing = "nodejs npm curl binutils-aarch64-linux-gnu"
    assert f"bin/demo: installing {missing} with apt-get (through sudo" in done.stderr
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls[0] == "sudo apt-get update -q" and calls[1] == "apt-get update -q"
    assert calls[-1] == f"apt-get install -y -q {missing}"


def test_given_root_when_set_up_then_apt_get_runs_without_sudo(tmp_path: Path) -> None:
    done = run_prerequisites(fake_machine(tmp_path, ["java", "mvn", "node", "npm", "curl"], root=True))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "calls.log").read_text().splitlines() == [
        "apt-get update -q",
        "apt-get install -y -q binutils-aarch64-linux-gnu",
    ]


def test_given_a_python_without_venv_when_set_up_then_python3_venv_is_installed(tmp_path: Path) -> None:
    env = fake_machine(tmp_path, ALL_TOOLS, root=True)
    # A Python whose standard library lacks venv and ensurepip, as Debian's python3 without python3-venv
    no_venv = Path(env["PATH"]) / "python-without-venv"
    no_venv.write_text(f"#!{shutil.which('bash')}\nexit 1\n")
    no_venv.chmod(no_venv.stat().st_mode | stat.S_IEXEC)
    done = run_prerequisites({**env, "PYTHON": str(no_venv)})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "calls.log").read_text().splitlines()[-1] == "apt-get install -y -q python3-venv"


def test_given_a_system_without_apt_get_when_set_up_then_it_prints_the_command_and_fails(tmp_path: Path) -> None:
    env = fake_machine(tmp_path, ["java", "mvn"], root=False)
    os.remove(Path(env["PATH"]) / "apt-get")
    (Path(env["PATH"]) / "uname").write_text(f"#!{shutil.which('bash')}\necho Darwin\n")
    done = run_prerequisites(env)
    assert done.returncode == 1
    assert "missing: nodejs npm curl binutils-aarch64-linux-gnu" in done.stderr
    assert "brew install openjdk@17 maven node curl python llvm" in done.stderr


def test_bin_demo_bin_test_and_ci_share_the_one_set_up_script() -> None:
    for script in ("bin/demo", "bin/test"):
        assert f"build/prerequisites.sh {script}" in (ROOT / script).read_text()
        assert "apt-get" not in (ROOT / script).read_text()
    assert "apt-get" not in (ROOT / ".ci" / "run").read_text() and "exec bin/test" in (ROOT / ".ci" / "run").read_text()
