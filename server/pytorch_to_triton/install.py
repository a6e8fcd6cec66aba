"""`pytorch-to-triton install|uninstall`: put the skill where a client reads skills, register the MCP server.

Where each client reads its configuration (checked against each client's documentation, see README):

| client         | scope   | MCP server entry                                          | skill directory                              |
| -------------- | ------- | --------------------------------------------------------- | -------------------------------------------- |
| claude-code    | user    | ~/.claude.json, top-level "mcpServers"                    | ~/.claude/skills/pytorch-to-triton/          |
| claude-code    | project | <project>/.mcp.json "mcpServers"                          | <project>/.claude/skills/pytorch-to-triton/  |
| codex          | user    | $CODEX_HOME/config.toml (~/.codex), [mcp_servers.<name>]  | ~/.agents/skills/pytorch-to-triton/          |
| codex          | project | <project>/.codex/config.toml (trusted projects only)      | <project>/.agents/skills/pytorch-to-triton/  |
| qoder          | user    | ~/.qoder/settings.json "mcpServers"                       | ~/.qoder/skills/pytorch-to-triton/           |
| qoder          | project | <project>/.mcp.json "mcpServers"                          | <project>/.qoder/skills/pytorch-to-triton/   |
| claude-desktop | user    | claude_desktop_config.json "mcpServers" (per platform)    | none: Claude Desktop reads no skills folder  |

Rules: the user's other servers and keys are never dropped (TOML is edited with tomlkit, so comments
survive); a file is backed up (``name.bak-<timestamp>``) before it changes and written atomically; a
second install changes nothing; ``--dry-run`` prints the diffs and writes nothing; a config file that does
not parse is an error and is left alone. Everything is planned (and every file parsed) before anything
is written, so a bad file means nothing changed anywhere.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import os
import shutil
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UsageError
from .workspace import atomic_write

NAME = "pytorch-to-triton"  # the MCP server's name in every config, and the skill directory's name
CLIENTS = ("claude-code", "codex", "qoder", "claude-desktop")
SCOPES = ("user", "project")
_CLIENT_TITLE = {"claude-code": "Claude Code", "codex": "Codex", "qoder": "Qoder", "claude-desktop": "Claude Desktop"}


# --------------------------------------------------------------------------------------------- targets


@dataclass
class Target:
    """Where one client, in one scope, keeps its MCP servers and its skills."""

    client: str
    scope: str
    config_path: Path
    config_format: str  # "json" | "toml"
    servers_key: str  # "mcpServers" | "mcp_servers"
    skill_dir: Path | None
    notes: list[str] = field(default_factory=list)


def claude_desktop_config_path(home: Path | None = None, platform: str | None = None,
                               env: dict[str, str] | None = None) -> Path:
    """claude_desktop_config.json: macOS Application Support, Windows %APPDATA%, else XDG config."""
    home = home or Path.home()
    platform = platform or sys.platform
    env = os.environ if env is None else env
    if platform == "darwin":
        base = home / "Library" / "Application Support"
    elif platform.startswith("win"):
        base = Path(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"
    else:
        base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return base / "Claude" / "claude_desktop_config.json"


def resolve_target(client: str, scope: str = "user", project: str | Path | None = None) -> Target:
    """The files `client` reads in `scope` (HOME from Path.home(); project defaults to the cwd)."""
    if client not in CLIENTS:
        raise UsageError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")
    if scope not in SCOPES:
        raise UsageError(f"unknown scope {scope!r}; choose user or project")
    home = Path.home()
    proj: Path | None = None
    if scope == "project":
        proj = Path(project if project is not None else ".").expanduser().resolve()
        if not proj.is_dir():
            raise UsageError(f"project directory {proj} does not exist")
    if client == "claude-code":
        if proj is None:
            return Target(client, scope, home / ".claude.json", "json", "mcpServers",
                          home / ".claude" / "skills" / NAME)
        return Target(client, scope, proj / ".mcp.json", "json", "mcpServers", proj / ".claude" / "skills" / NAME,
                      notes=[f"{proj / '.mcp.json'} is shared with the team and with Qoder; Claude Code asks "
                             "once before it starts a project server"])
    if client == "codex":
        if proj is None:
            codex_home = Path(os.environ["CODEX_HOME"]).expanduser() if os.environ.get("CODEX_HOME") else home / ".codex"
            return Target(client, scope, codex_home / "config.toml", "toml", "mcp_servers",
                          home / ".agents" / "skills" / NAME)
        return Target(client, scope, proj / ".codex" / "config.toml", "toml", "mcp_servers",
                      proj / ".agents" / "skills" / NAME,
                      notes=["Codex reads a project's .codex/config.toml only once you trust the project"])
    if client == "qoder":
        if proj is None:
            return Target(client, scope, home / ".qoder" / "settings.json", "json", "mcpServers",
                          home / ".qoder" / "skills" / NAME,
                          notes=["this is Qoder CLI's user file; if the Qoder IDE does not list the server "
                                 "under Settings > MCP, add the same entry there (My Servers > + Add)"])
        return Target(client, scope, proj / ".mcp.json", "json", "mcpServers", proj / ".qoder" / "skills" / NAME,
                      notes=[f"{proj / '.mcp.json'} is shared with the team and with Claude Code"])
    # claude-desktop
    if proj is not None:
        raise UsageError("Claude Desktop has no project scope; use --scope user")
    try:
        from .skill_files import skill_root

        where = f" in {skill_root()}"
    except FileNotFoundError:
        where = ""
    return Target(client, scope, claude_desktop_config_path(home), "json", "mcpServers", None,
                  notes=["Claude Desktop reads no skills directory, so no skill files were copied (the skill is "
                         f"SKILL.md + references/{where}, if you want to add it in the app yourself)"])


def server_command() -> tuple[str, list[str]]:
    """(command, args) that start this installation's server: the console script, else this Python -m."""
    names = ("pytorch-to-triton.exe", "pytorch-to-triton") if os.name == "nt" else ("pytorch-to-triton",)
    for name in names:  # the script of the environment we run in wins over whatever PATH finds first
        cand = Path(sys.executable).parent / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return os.path.abspath(cand), ["serve"]
    found = shutil.which("pytorch-to-triton")
    if found:
        return os.path.abspath(found), ["serve"]
    return os.path.abspath(sys.executable), ["-m", "pytorch_to_triton", "serve"]


def server_entry(target: Target, workspace: str | Path | None = None) -> dict[str, Any]:
    """The config entry for our server, in the target client's format."""
    command, args = server_command()
    if workspace is None and target.client == "claude-desktop":
        workspace = Path.home()  # Claude Desktop starts servers in no particular directory (often /)
    if workspace is not None:
        args = [*args, "--workspace", str(Path(workspace).expanduser().resolve())]
    if target.config_format == "toml":
        return {"command": command, "args": args}
    if target.client == "claude-desktop":
        return {"command": command, "args": args, "env": {}}
    return {"type": "stdio", "command": command, "args": args, "env": {}}


# ----------------------------------------------------------------------------------------------- plans


@dataclass
class ConfigChange:
    path: Path  # the file to write (symlinks resolved, so a dotfiles link stays a link)
    shown: Path  # the path as the client names it
    old_text: str | None  # None: the file does not exist
    new_text: str | None  # None: no change
    summary: str


@dataclass
class SkillChange:
    dest: Path
    copy: list[tuple[str, Path]]  # (relative path, source) to write
    remove: list[str]  # relative paths to delete (files we do not ship)
    delete_dir: bool  # uninstall: remove dest altogether
    unlink: bool  # dest is a symlink: remove only the link
    backup: bool  # dest holds content that differs from what we ship: archive it first
    summary: str

    @property
    def changed(self) -> bool:
        return bool(self.copy or self.remove or self.delete_dir or self.unlink)


@dataclass
class Plan:
    action: str  # install | uninstall
    target: Target
    config: ConfigChange
    skill: SkillChange | None
    entry: dict[str, Any] | None

    @property
    def changed(self) -> bool:
        return self.config.new_text is not None or (self.skill is not None and self.skill.changed)


@dataclass
class Result:
    plan: Plan
    changed: bool
    dry_run: bool
    lines: list[str]
    backups: list[Path]
    written: list[Path]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _read(path: Path) -> str | None:
    if not path.exists():
        return None
    if not path.is_file():
        raise UsageError(f"{path} is not a regular file; move it away and run again (nothing was changed)")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {path}: {e} (nothing was changed)") from e


def _json_indent(text: str) -> int | str | None:
    if "\n" not in text.strip():
        return None  # a one-line file stays one line
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            ws = line[: len(line) - len(stripped)]
            return "\t" if ws.startswith("\t") else len(ws)
    return 2


def _load_json(path: Path, text: str | None, key: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{path} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}); fix it, then run "
                         "again (nothing was changed)") from e
    if not isinstance(data, dict):
        raise UsageError(f"{path} holds a JSON {type(data).__name__}, not an object; fix it, then run again "
                         "(nothing was changed)")
    if key in data and not isinstance(data[key], dict):
        raise UsageError(f'{path}: "{key}" is a {type(data[key]).__name__}, not an object; fix it, then run again '
                         "(nothing was changed)")
    return data


def _dump_json(data: dict[str, Any], old_text: str | None) -> str:
    indent = _json_indent(old_text) if old_text and old_text.strip() else 2
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def _entry_matches(current: Any, wanted: dict[str, Any]) -> bool:
    """Ours already: same command, args (and type); keys the user added (env values, timeouts) are theirs."""
    if not isinstance(current, dict):
        return False
    return all(current.get(k) == v for k, v in wanted.items() if k != "env")


def _merged_entry(current: Any, wanted: dict[str, Any]) -> dict[str, Any]:
    merged = dict(current) if isinstance(current, dict) else {}
    for k, v in wanted.items():
        if k == "env" and isinstance(merged.get("env"), dict):
            continue  # keep the user's environment variables
        merged[k] = v
    return merged


def _plan_json(target: Target, path: Path, text: str | None, entry: dict[str, Any] | None) -> tuple[str | None, str]:
    key = target.servers_key
    data = _load_json(path, text, key)
    servers = data.get(key, {})
    current = servers.get(NAME)
    where = f'{key}["{NAME}"]'
    if entry is not None:  # install
        if _entry_matches(current, entry):
            return None, f"{where} already installed"
        new = copy.deepcopy(data)
        new.setdefault(key, {})[NAME] = _merged_entry(current, entry)
        verb = "replaced" if current is not None else "added"
        return _dump_json(new, text), f"{where} {verb}"
    if current is None:
        return None, f"{where} not installed"
    new = copy.deepcopy(data)
    del new[key][NAME]
    if not new[key]:
        del new[key]
    return _dump_json(new, text), f"{where} removed"


def _plan_toml(target: Target, path: Path, text: str | None, entry: dict[str, Any] | None) -> tuple[str | None, str]:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError
    from tomlkit.items import InlineTable

    key = target.servers_key
    try:
        doc = tomlkit.parse(text or "")
    except TOMLKitError as e:
        raise UsageError(f"{path} is not valid TOML ({e}); fix it, then run again (nothing was changed)") from e
    servers = doc.get(key)
    if servers is not None and not isinstance(servers, dict):
        raise UsageError(f"{path}: {key} is not a table; fix it, then run again (nothing was changed)")
    current = servers.get(NAME) if servers is not None else None
    current_plain = current.unwrap() if hasattr(current, "unwrap") else current
    where = f"[{key}.{NAME}]"
    if entry is not None:  # install
        if _entry_matches(current_plain, entry):
            return None, f"{where} already installed"
        if isinstance(current, dict):  # update in place: the user's extra keys (env, timeouts) stay
            for k, v in entry.items():
                current[k] = v
            verb = "replaced"
        else:
            inline = isinstance(servers, InlineTable)
            table = tomlkit.inline_table() if inline else tomlkit.table()
            for k, v in entry.items():
                table[k] = v
            if not inline:
                table.add(tomlkit.nl())
            if servers is None:
                if text and not text.endswith("\n"):
                    doc.add(tomlkit.nl())
                servers = tomlkit.table(is_super_table=True)
                doc[key] = servers
            if current is not None:
                del servers[NAME]
            servers[NAME] = table
            verb = "added" if current is None else "replaced"
        return tomlkit.dumps(doc), f"{where} {verb}"
    if current is None:
        return None, f"{where} not installed"
    del servers[NAME]
    if not servers:
        del doc[key]
    out = tomlkit.dumps(doc)
    if out.strip():
        out = out.rstrip("\n") + "\n"
    return out, f"{where} removed"


def _plan_config(target: Target, entry: dict[str, Any] | None) -> ConfigChange:
    shown = target.config_path
    path = shown.resolve() if shown.is_symlink() else shown
    text = _read(path)
    planner = _plan_toml if target.config_format == "toml" else _plan_json
    new_text, summary = planner(target, shown, text, entry)
    if new_text is not None and new_text == (text or ""):
        new_text = None
    return ConfigChange(path=path, shown=shown, old_text=text, new_text=new_text, summary=summary)


def _existing_files(dest: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(dest, followlinks=False):
        base = Path(dirpath)
        # a symlinked directory inside ours is listed as a file so that we remove the link, never its target
        names = list(filenames) + [d for d in dirnames if (base / d).is_symlink()]
        dirnames[:] = [d for d in dirnames if not (base / d).is_symlink()]
        for name in names:
            p = base / name
            found[p.relative_to(dest).as_posix()] = p
    return found


def _same(a: Path, b: Path) -> bool:
    try:
        return not a.is_symlink() and a.is_file() and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _plan_skill(target: Target, install: bool) -> SkillChange | None:
    dest = target.skill_dir
    if dest is None:
        return None
    try:
        from .skill_files import skill_files, skill_root

        files = skill_files()
        source_root = skill_root().resolve()
    except FileNotFoundError as e:
        raise UsageError(str(e)) from e
    if dest.is_symlink():
        points_home = dest.resolve() == source_root
        if install:
            if points_home:
                return SkillChange(dest, [], [], False, False, False,
                                   f"already installed (a symlink to {source_root})")
            raise UsageError(f"{dest} is a symlink to {dest.resolve()}; remove it and run again (nothing was "
                             "changed)")
        return SkillChange(dest, [], [], False, True, False, f"symlink removed (its target {dest.resolve()} is kept)")
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"{dest} exists and is not a directory; move it away and run again (nothing was changed)")
    existing = _existing_files(dest) if dest.is_dir() else {}
    shipped = dict(files)
    identical = set(existing) == set(shipped) and all(_same(existing[r], shipped[r]) for r in shipped)
    if not install:
        if not dest.exists():
            return SkillChange(dest, [], [], False, False, False, "not installed")
        return SkillChange(dest, [], [], True, False, not identical and bool(existing),
                           f"removed ({len(existing)} files)")
    copy_ = [(rel, src) for rel, src in files if rel not in existing or not _same(existing[rel], src)]
    remove = sorted(rel for rel in existing if rel not in shipped)
    if not copy_ and not remove:
        return SkillChange(dest, [], [], False, False, False, f"already installed ({len(files)} files up to date)")
    parts = [f"{len(copy_)} of {len(files)} files copied"] + ([f"{len(remove)} stale files removed"] if remove else [])
    return SkillChange(dest, copy_, remove, False, False, bool(existing), ", ".join(parts))


def plan(action: str, client: str, scope: str = "user", project: str | Path | None = None,
         workspace: str | Path | None = None) -> Plan:
    """Work out every change (parsing every file) without writing anything."""
    if action not in ("install", "uninstall"):
        raise UsageError(f"unknown action {action!r}")
    target = resolve_target(client, scope, project)
    entry = server_entry(target, workspace) if action == "install" else None
    config = _plan_config(target, entry)
    skill = _plan_skill(target, install=action == "install")
    return Plan(action, target, config, skill, entry)


# --------------------------------------------------------------------------------------------- applying


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def _free_name(base: Path, suffix: str = "") -> Path:
    cand = base.with_name(f"{base.name}.bak-{_stamp()}{suffix}")
    n = 1
    while cand.exists() or cand.is_symlink():
        cand = base.with_name(f"{base.name}.bak-{_stamp()}-{n}{suffix}")
        n += 1
    return cand


def _backup_file(path: Path) -> Path:
    dst = _free_name(path)
    shutil.copy2(path, dst)
    return dst


def _backup_dir(path: Path) -> Path:
    """Archive a skill directory as a .tar.gz beside it (a file, so no client loads it as a second skill)."""
    dst = _free_name(path, ".tar.gz")
    with tarfile.open(dst, "w:gz") as tar:
        tar.add(path, arcname=path.name)
    return dst


def _write(path: Path, data: str | bytes, mode: int) -> None:
    atomic_write(path, data, mode)  # the mode is set before the content lands: a 0600 config is never readable
    os.chmod(path, mode)


def _diff(change: ConfigChange) -> list[str]:
    old = (change.old_text or "").splitlines(keepends=True)
    new = (change.new_text or "").splitlines(keepends=True)
    before = str(change.shown) if change.old_text is not None else "/dev/null"
    lines = difflib.unified_diff(old, new, fromfile=before, tofile=str(change.shown))
    return [ln.rstrip("\n") for ln in lines]


def _command_line(entry: dict[str, Any]) -> str:
    return " ".join([entry["command"], *entry["args"]])


def apply(p: Plan, dry_run: bool = False) -> Result:
    """Carry a plan out (or, with dry_run, only describe it); returns the human-readable lines."""
    t = p.target
    title = _CLIENT_TITLE[t.client]
    lines = [f"{'[dry run] ' if dry_run else ''}{p.action} {NAME} for {title} ({t.scope} scope)"]
    if p.entry is not None:
        lines.append(f"  server command: {_command_line(p.entry)}")
    backups: list[Path] = []
    written: list[Path] = []
    cfg, sk = p.config, p.skill

    if dry_run:
        if cfg.new_text is None:
            lines.append(f"  config {cfg.shown}: {cfg.summary} (no change)")
        else:
            lines.append(f"  config {cfg.shown}: would be changed ({cfg.summary})"
                         + (", after a backup" if cfg.old_text is not None else ", a new file"))
            lines += ["    " + ln for ln in _diff(cfg)]
        if sk is not None:
            if not sk.changed:
                lines.append(f"  skill  {sk.dest}/: {sk.summary} (no change)")
            else:
                lines.append(f"  skill  {sk.dest}/: would be {sk.summary}"
                             + (", after a backup as .tar.gz" if sk.backup else ""))
                lines += [f"    copy   {src} -> {sk.dest / rel}" for rel, src in sk.copy]
                lines += [f"    remove {sk.dest / rel}" for rel in sk.remove]
                if sk.delete_dir or sk.unlink:
                    lines.append(f"    remove {sk.dest}{'' if sk.unlink else '/'}")
        if p.action == "install":
            lines += [f"  note: {n}" for n in t.notes]
        if p.changed:
            lines.append("dry run: nothing was written")
        else:
            lines.append("dry run: nothing was written; " + ("already installed" if p.action == "install"
                                                               else "not installed"))
        return Result(p, p.changed, True, lines, backups, written)

    # the config file
    if cfg.new_text is None:
        lines.append(f"  config {cfg.shown}: {cfg.summary}")
    else:
        note = ""
        if cfg.old_text is not None:
            mode = cfg.path.stat().st_mode & 0o7777
            b = _backup_file(cfg.path)
            backups.append(b)
            note = f" (backup {b})"
        else:
            mode = 0o600 if t.scope == "user" else 0o644
        _write(cfg.path, cfg.new_text, mode)
        written.append(cfg.path)
        lines.append(f"  config {cfg.shown}: {cfg.summary}{note}")

    # the skill directory
    if sk is not None:
        note = ""
        if sk.changed and sk.backup:
            b = _backup_dir(sk.dest)
            backups.append(b)
            note = f" (its old content archived in {b})"
        if sk.unlink:
            sk.dest.unlink()
        elif sk.delete_dir:
            shutil.rmtree(sk.dest)
        else:
            for rel in sk.remove:
                (sk.dest / rel).unlink()
            for dirpath, _dirs, _files in sorted(os.walk(sk.dest), key=lambda w: -len(w[0])):
                if Path(dirpath) != sk.dest and not any(Path(dirpath).iterdir()):
                    Path(dirpath).rmdir()  # directories the stale files left empty
            for rel, src in sk.copy:
                dst = sk.dest / rel
                if dst.is_symlink():
                    dst.unlink()
                _write(dst, src.read_bytes(), 0o644)
                written.append(dst)
        lines.append(f"  skill  {sk.dest}/: {sk.summary}{note}")

    if p.action == "install":
        lines += [f"  note: {n}" for n in t.notes]
    if not p.changed:
        lines.append("already installed: nothing changed" if p.action == "install" else "not installed: nothing changed")
    else:
        lines.append(f"done: restart {title} (or start a new session) to pick it up" if p.action == "install"
                     else "done")
    return Result(p, p.changed, False, lines, backups, written)


def install(client: str, scope: str = "user", project: str | Path | None = None, dry_run: bool = False,
            workspace: str | Path | None = None) -> Result:
    """Copy the skill and register the server for `client`; idempotent."""
    return apply(plan("install", client, scope, project, workspace), dry_run=dry_run)


def uninstall(client: str, scope: str = "user", project: str | Path | None = None, dry_run: bool = False) -> Result:
    """Remove only our server entry and our skill directory, after backups."""
    return apply(plan("uninstall", client, scope, project), dry_run=dry_run)


# ------------------------------------------------------------------------------------------------- CLI


def _scope(args: argparse.Namespace) -> str:
    if args.scope is None:
        return "project" if args.project is not None else "user"
    if args.scope == "user" and args.project is not None:
        raise UsageError("--project goes with --scope project")
    return args.scope


def _cmd_install(args: argparse.Namespace) -> int:
    res = install(args.client, _scope(args), args.project, dry_run=args.dry_run, workspace=args.server_workspace)
    print(res.text)
    return 0


def _cmd_uninstall(args: argparse.Namespace) -> int:
    res = uninstall(args.client, _scope(args), args.project, dry_run=args.dry_run)
    print(res.text)
    return 0


def register_cli(subparsers: Any) -> None:
    """Add `install` and `uninstall` to the `pytorch-to-triton` command."""
    for name, func, helptext in (
        ("install", _cmd_install, "copy the skill and register the MCP server in a client's config"),
        ("uninstall", _cmd_uninstall, "remove our MCP server entry and our skill directory from a client"),
    ):
        p = subparsers.add_parser(name, help=helptext, description=helptext + ". Files are backed up "
                                  "(name.bak-<timestamp>) before they change; --dry-run shows the diffs only.")
        p.add_argument("--client", required=True, choices=CLIENTS)
        p.add_argument("--scope", choices=SCOPES, default=None,
                       help="user (default) or project (the project's own config files)")
        p.add_argument("--project", default=None, metavar="DIR",
                       help="project root for --scope project (default: the current directory)")
        p.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
        if name == "install":
            p.add_argument("--workspace", dest="server_workspace", default=None, metavar="DIR",
                           help="pin the server's workspace (default: the directory the client starts it in; "
                                "your home directory for claude-desktop)")
        p.set_defaults(func=func)
