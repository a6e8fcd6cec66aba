"""`pytorch-to-triton install|uninstall` on a temporary HOME and project, for every client and scope."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomlkit

from pytorch_to_triton import __version__, install, skill_files
from pytorch_to_triton.cli import main
from pytorch_to_triton.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
NAME = install.NAME
OTHER = {"command": "npx", "args": ["-y", "other-server"], "env": {"TOKEN": "x"}}
CODEX_SEED = """# my codex config: comments must survive
model = "o3"  # favourite

[mcp_servers.other]
command = "npx"
args = ["-y", "other-server"]

[profiles.fast]
model = "mini"
"""


@dataclass
class Env:
    home: Path
    project: Path


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: home))
    for var in ("CODEX_HOME", "XDG_CONFIG_HOME", "APPDATA"):
        monkeypatch.delenv(var, raising=False)
    return Env(home, project)


CASES = [("claude-code", "user"), ("claude-code", "project"), ("codex", "user"), ("codex", "project"),
         ("qoder", "user"), ("qoder", "project"), ("claude-desktop", "user")]
IDS = [f"{c}-{s}" for c, s in CASES]


def _target(client: str, scope: str, e: Env) -> install.Target:
    return install.resolve_target(client, scope, e.project if scope == "project" else None)


def _seed(t: install.Target) -> str:
    """An existing config that already holds another server (and other keys); returns its text."""
    if t.config_format == "toml":
        text = CODEX_SEED
    else:
        data: dict = {"numStartups": 7, "mcpServers": {"other": OTHER}, "projects": {"/x": {"allowedTools": []}}}
        if t.client == "qoder":
            data = {"permissions": {"allow": ["mcp__other__*"]}, "mcpServers": {"other": OTHER}}
        text = json.dumps(data, indent=2) + "\n"
    t.config_path.parent.mkdir(parents=True, exist_ok=True)
    t.config_path.write_text(text)
    return text


def _load(t: install.Target) -> dict:
    text = t.config_path.read_text()
    return tomlkit.parse(text).unwrap() if t.config_format == "toml" else json.loads(text)


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bak-*"))


def _snapshot(*roots: Path) -> dict[str, bytes | None]:
    snap: dict[str, bytes | None] = {}
    for root in roots:
        for p in root.rglob("*"):
            snap[str(p)] = p.read_bytes() if p.is_file() else None
    return snap


def _skill_ok(dest: Path) -> None:
    files = skill_files.skill_files()
    assert len(files) >= 2 and files[0][0] == "SKILL.md"
    for rel, src in files:
        assert (dest / rel).read_bytes() == src.read_bytes(), rel
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == sorted(r for r, _ in files)


# ---------------------------------------------------------------------------------------- every client


@pytest.mark.parametrize(("client", "scope"), CASES, ids=IDS)
def test_install_merges_backs_up_and_copies_the_skill(env: Env, client: str, scope: str) -> None:
    t = _target(client, scope, env)
    original = _seed(t)
    res = install.install(client, scope, env.project if scope == "project" else None)
    assert res.changed and not res.dry_run

    data = _load(t)
    key = t.servers_key
    assert data[key]["other"]["command"] == "npx" and data[key]["other"]["args"] == ["-y", "other-server"]
    ours = data[key][NAME]
    command, args = install.server_command()
    assert ours["command"] == command and Path(ours["command"]).is_absolute()
    assert ours["args"][: len(args)] == args
    if t.config_format == "toml":
        assert t.config_path.read_text().startswith("# my codex config: comments must survive\nmodel = \"o3\"  # favourite")
        assert data["profiles"] == {"fast": {"model": "mini"}} and data["model"] == "o3"
    else:
        assert data[key]["other"] == OTHER
        assert ours["env"] == {}
        assert {k: v for k, v in data.items() if k != key} == {k: v for k, v in json.loads(original).items() if k != key}
        if client != "claude-desktop":
            assert ours["type"] == "stdio"

    backups = _backups(t.config_path)
    assert len(backups) == 1 and backups[0].read_text() == original and backups == res.backups

    if client == "claude-desktop":
        assert t.skill_dir is None
        assert "no skills directory" in res.text and "--workspace" in " ".join(ours["args"])
    else:
        _skill_ok(t.skill_dir)
        assert f"{t.skill_dir}/" in res.text
    assert "added" in res.text and "done" in res.text


@pytest.mark.parametrize(("client", "scope"), CASES, ids=IDS)
def test_second_install_changes_nothing(env: Env, client: str, scope: str) -> None:
    t = _target(client, scope, env)
    _seed(t)
    proj = env.project if scope == "project" else None
    install.install(client, scope, proj)
    before = _snapshot(env.home, env.project)
    res = install.install(client, scope, proj)
    assert not res.changed and res.backups == [] and res.written == []
    assert "already installed" in res.text
    assert _snapshot(env.home, env.project) == before
    assert len(_backups(t.config_path)) == 1


@pytest.mark.parametrize(("client", "scope"), CASES, ids=IDS)
def test_dry_run_prints_a_diff_and_writes_nothing(env: Env, client: str, scope: str) -> None:
    t = _target(client, scope, env)
    _seed(t)
    proj = env.project if scope == "project" else None
    before = _snapshot(env.home, env.project)
    res = install.install(client, scope, proj, dry_run=True)
    assert _snapshot(env.home, env.project) == before
    assert res.dry_run and res.changed and res.backups == [] and res.written == []
    assert f"--- {t.config_path}" in res.text and f"+++ {t.config_path}" in res.text
    assert any(line.lstrip().startswith("+") and NAME in line for line in res.lines)
    assert "nothing was written" in res.text
    if t.skill_dir is not None:
        for rel, src in skill_files.skill_files():
            assert f"copy   {src} -> {t.skill_dir / rel}" in res.text

    # and on a machine with no config at all: the diff is against /dev/null, still nothing written
    t.config_path.unlink()
    before = _snapshot(env.home, env.project)
    res = install.install(client, scope, proj, dry_run=True)
    assert "--- /dev/null" in res.text and _snapshot(env.home, env.project) == before


@pytest.mark.parametrize(("client", "scope"), CASES, ids=IDS)
def test_invalid_config_is_an_error_and_stays_untouched(env: Env, client: str, scope: str) -> None:
    t = _target(client, scope, env)
    t.config_path.parent.mkdir(parents=True, exist_ok=True)
    bad = "[mcp_servers.other\ncommand = \n" if t.config_format == "toml" else '{"mcpServers": {"other": '
    t.config_path.write_text(bad)
    before = _snapshot(env.home, env.project)
    with pytest.raises(UsageError, match=r"not valid (JSON|TOML).*nothing was changed"):
        install.install(client, scope, env.project if scope == "project" else None)
    assert t.config_path.read_text() == bad
    assert _snapshot(env.home, env.project) == before  # no backup, and no skill copied either
    with pytest.raises(UsageError, match="not valid"):
        install.uninstall(client, scope, env.project if scope == "project" else None)
    assert _snapshot(env.home, env.project) == before


@pytest.mark.parametrize(("client", "scope"), CASES, ids=IDS)
def test_uninstall_removes_only_ours(env: Env, client: str, scope: str) -> None:
    t = _target(client, scope, env)
    original = _seed(t)
    proj = env.project if scope == "project" else None
    install.install(client, scope, proj)
    res = install.uninstall(client, scope, proj)
    assert res.changed and "removed" in res.text
    assert t.config_path.read_text() == original  # the other server and every other key, byte for byte
    assert len(_backups(t.config_path)) == 2 and _backups(t.config_path)[-1] in res.backups
    if t.skill_dir is not None:
        assert not t.skill_dir.exists() and t.skill_dir.parent.is_dir()
    again = install.uninstall(client, scope, proj)
    assert not again.changed and "not installed" in again.text and len(_backups(t.config_path)) == 2


# ------------------------------------------------------------------------------------------ edge cases


def test_a_fresh_machine_gets_new_files(env: Env) -> None:
    res = install.install("codex")
    cfg = env.home / ".codex" / "config.toml"
    assert tomlkit.parse(cfg.read_text()).unwrap()["mcp_servers"][NAME]["args"][-1] == "serve"
    assert res.backups == [] and oct(cfg.stat().st_mode & 0o777) == "0o600"
    _skill_ok(env.home / ".agents" / "skills" / NAME)
    install.uninstall("codex")
    assert cfg.read_text() == ""  # nothing of ours left behind


def test_one_line_json_stays_one_line(env: Env) -> None:
    cfg = env.home / ".claude.json"
    cfg.write_text(json.dumps({"mcpServers": {"other": OTHER}}))
    install.install("claude-code")
    assert "\n" not in cfg.read_text().strip()


def test_reinstall_updates_our_entry_and_keeps_the_users_additions(env: Env) -> None:
    cfg = env.home / ".claude.json"
    cfg.write_text(json.dumps({"mcpServers": {NAME: {"command": "/old/p2t", "args": ["serve"], "env": {"A": "1"}}}}))
    res = install.install("claude-code")
    entry = json.loads(cfg.read_text())["mcpServers"][NAME]
    assert "replaced" in res.text and entry["command"] == install.server_command()[0] and entry["env"] == {"A": "1"}

    toml_cfg = env.home / ".codex" / "config.toml"
    toml_cfg.parent.mkdir()
    toml_cfg.write_text(f'[mcp_servers.{NAME}]\ncommand = "/old/p2t"\nargs = ["serve"]\nstartup_timeout_sec = 30\n')
    install.install("codex")
    entry = tomlkit.parse(toml_cfg.read_text()).unwrap()["mcp_servers"][NAME]
    assert entry["command"] == install.server_command()[0] and entry["startup_timeout_sec"] == 30


def test_codex_inline_table_and_codex_home(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    codex_home = env.home / "elsewhere"
    codex_home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    cfg = codex_home / "config.toml"
    cfg.write_text('mcp_servers = { other = { command = "npx" } }\n')
    install.install("codex")
    servers = tomlkit.parse(cfg.read_text()).unwrap()["mcp_servers"]
    assert set(servers) == {"other", NAME}
    install.uninstall("codex")
    assert tomlkit.parse(cfg.read_text()).unwrap() == {"mcp_servers": {"other": {"command": "npx"}}}


def test_symlinked_config_stays_a_symlink(env: Env, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"mcpServers": {"other": OTHER}}, indent=2) + "\n")
    (env.home / ".claude.json").symlink_to(real)
    install.install("claude-code")
    assert (env.home / ".claude.json").is_symlink()
    assert NAME in json.loads(real.read_text())["mcpServers"] and _backups(real)


def test_skill_update_removes_stale_files_and_archives_the_old_copy(env: Env) -> None:
    dest = env.home / ".claude" / "skills" / NAME
    install.install("claude-code")
    (dest / "SKILL.md").write_text("edited by hand\n")
    (dest / "references" / "old.md").write_text("from a previous release\n")
    res = install.install("claude-code")
    assert res.changed
    _skill_ok(dest)
    archives = sorted(dest.parent.glob(f"{NAME}.bak-*.tar.gz"))
    assert len(archives) == 1 and archives[0] in res.backups
    with tarfile.open(archives[0]) as tar:
        assert tar.extractfile(f"{NAME}/SKILL.md").read() == b"edited by hand\n"
    assert [p.name for p in dest.parent.iterdir() if p.is_dir()] == [NAME]  # no second skill directory


def test_a_symlinked_skill_dir_is_never_followed(env: Env, tmp_path: Path) -> None:
    elsewhere = tmp_path / "my-own-skill"
    elsewhere.mkdir()
    (elsewhere / "SKILL.md").write_text("mine\n")
    dest = env.home / ".claude" / "skills" / NAME
    dest.parent.mkdir(parents=True)
    dest.symlink_to(elsewhere)
    with pytest.raises(UsageError, match="is a symlink"):
        install.install("claude-code")
    assert not (env.home / ".claude.json").exists()
    res = install.uninstall("claude-code")
    assert "symlink removed" in res.text and not dest.exists() and (elsewhere / "SKILL.md").read_text() == "mine\n"


def test_claude_desktop_has_no_project_scope(env: Env) -> None:
    with pytest.raises(UsageError, match="no project scope"):
        install.install("claude-desktop", "project", env.project)


def test_claude_desktop_config_path_per_platform(tmp_path: Path) -> None:
    home = tmp_path
    f = install.claude_desktop_config_path
    assert f(home, "darwin", {}) == home / "Library/Application Support/Claude/claude_desktop_config.json"
    assert f(home, "win32", {"APPDATA": str(tmp_path / "Roaming")}) == tmp_path / "Roaming/Claude/claude_desktop_config.json"
    assert f(home, "linux", {}) == home / ".config/Claude/claude_desktop_config.json"
    assert f(home, "linux", {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}) == tmp_path / "xdg/Claude/claude_desktop_config.json"


def test_project_scope_needs_an_existing_directory(env: Env) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        install.install("claude-code", "project", env.project / "missing")


def test_cli_refuses_project_with_user_scope(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--client", "codex", "--scope", "user", "--project", str(env.project)]) == 2
    assert "--project goes with --scope project" in capsys.readouterr().err
    assert main(["install", "--client", "codex", "--project", str(env.project)]) == 0  # --project implies project
    assert (env.project / ".codex" / "config.toml").is_file() and (env.project / ".agents" / "skills" / NAME).is_dir()


# ------------------------------------------------------------------------------------ through the CLI


def test_through_python_m_with_home_set(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    cfg = home / ".codex" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text(CODEX_SEED)
    environ = {k: v for k, v in os.environ.items() if k not in ("CODEX_HOME", "XDG_CONFIG_HOME")}
    environ["HOME"] = str(home)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytorch_to_triton", *args], env=environ, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)

    dry = run("install", "--client", "codex", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"+[mcp_servers.{NAME}]" in dry.stdout and cfg.read_text() == CODEX_SEED

    first = run("install", "--client", "codex")
    assert first.returncode == 0, first.stderr
    assert "added" in first.stdout and len(_backups(cfg)) == 1
    assert tomlkit.parse(cfg.read_text()).unwrap()["mcp_servers"]["other"]["command"] == "npx"
    assert (home / ".agents" / "skills" / NAME / "SKILL.md").is_file()

    second = run("install", "--client", "codex")
    assert second.returncode == 0 and "already installed" in second.stdout and len(_backups(cfg)) == 1

    gone = run("uninstall", "--client", "codex")
    assert gone.returncode == 0 and cfg.read_text() == CODEX_SEED

    cfg.write_text("this is = = not toml\n")
    bad = run("install", "--client", "codex")
    assert bad.returncode == 2 and "error:" in bad.stderr and "not valid TOML" in bad.stderr
    assert cfg.read_text() == "this is = = not toml\n"


# ------------------------------------------------------------------------ the skill outside a checkout


def _fake_skill(root: Path) -> None:
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: pytorch-to-triton\ndescription: x\n---\n")
    (root / "references" / "a.md").write_text("a\n")


def test_skill_root_prefers_the_wheels_bundled_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "site-packages" / "pytorch_to_triton"
    _fake_skill(pkg / skill_files.BUNDLED_DIR)
    monkeypatch.setattr(skill_files, "_PACKAGE", pkg)
    assert skill_files.skill_root() == pkg / skill_files.BUNDLED_DIR
    assert [r for r, _ in skill_files.skill_files()] == ["SKILL.md", "references/a.md"]


def test_skill_root_falls_back_to_the_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "repo" / "server" / "pytorch_to_triton"
    pkg.mkdir(parents=True)
    _fake_skill(tmp_path / "repo")
    (tmp_path / "repo" / "pyproject.toml").write_text("")
    monkeypatch.setattr(skill_files, "_PACKAGE", pkg)
    assert skill_files.skill_root() == tmp_path / "repo"
    (tmp_path / "repo" / "pyproject.toml").unlink()  # a stray SKILL.md two levels up is not a checkout
    with pytest.raises(FileNotFoundError, match="reinstall"):
        skill_files.skill_root()


def test_this_checkout_resolves_to_the_canonical_files() -> None:
    root = skill_files.skill_root()
    assert (root / "SKILL.md").read_bytes() == (ROOT / "SKILL.md").read_bytes()
    assert {p.name for p in skill_files.references_dir().glob("*.md")} == {p.name for p in (ROOT / "references").glob("*.md")}


def test_pyproject_ships_the_skill_and_every_package() -> None:
    """The wheel's contents, read from pyproject.toml (a build is not needed to check them)."""
    conf = tomlkit.parse((ROOT / "pyproject.toml").read_text()).unwrap()
    st = conf["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(ROOT / "server").parts) for p in (ROOT / "server").rglob("__init__.py")}
    assert set(st["packages"]) == found | {"pytorch_to_triton.skill_data"}, "a package under server/ is missing"
    assert st["package-dir"] == {"": "server", "pytorch_to_triton.skill_data": "."}
    assert st["include-package-data"] is False
    patterns = st["package-data"]["pytorch_to_triton.skill_data"]
    for rel, _src in skill_files.skill_files():
        assert any(Path(rel).match(pat) for pat in patterns), f"{rel} would not be in the wheel"
    assert any(d.startswith("tomlkit") for d in conf["project"]["dependencies"])


def test_plugin_manifest() -> None:
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == NAME and manifest["version"] == __version__
    assert manifest["description"] and manifest["author"]["name"]
    for rel in manifest["skills"]:
        skill_dir = (ROOT / rel).resolve()
        front = (skill_dir / "SKILL.md").read_text().split("---")[1]
        assert f"name: {NAME}" in front
    server = manifest["mcpServers"][NAME]
    assert server["command"] == "pytorch-to-triton" and server["args"] == ["serve"]
