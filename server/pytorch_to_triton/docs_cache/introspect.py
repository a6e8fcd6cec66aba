"""Offline language reference built from the installed triton package (run as a subprocess).

``python -m pytorch_to_triton.docs_cache.introspect --json`` prints {"triton_version", "markdown", "objects"}.
The server never imports triton; only this subprocess does, with the interpreter named in DocsConfig.python.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

_TL_CLASSES = (
    "tensor",
    "constexpr",
    "dtype",
    "block_type",
    "pointer_type",
    "tensor_descriptor",
    "static_range",
    "range",
)
_TRITON_NAMES = ("jit", "autotune", "Config", "heuristics", "cdiv", "next_power_of_2", "constexpr_function")


def _unwrap(obj: Any) -> Any:
    # @triton.jit functions (tl.sum, tl.softmax, ...) keep the Python function in .fn.
    return getattr(obj, "fn", obj) if type(obj).__name__ == "JITFunction" else obj


def _signature(name: str, obj: Any) -> str:
    target = _unwrap(obj)
    try:
        sig = inspect.signature(target.__init__ if inspect.isclass(target) else target)
    except (TypeError, ValueError):
        return f"{name}(...)"
    # _semantic/_builder/_generator are compiler plumbing, not user arguments.
    params = [p for p in sig.parameters.values() if not p.name.startswith("_") and p.name != "self"]
    return f"{name}{sig.replace(parameters=params, return_annotation=inspect.Signature.empty)}"


def _source_link(obj: Any, package_dir: Path, tag: str) -> str | None:
    target = _unwrap(obj)
    try:
        source = Path(inspect.getsourcefile(target) or "")
        line = inspect.getsourcelines(target)[1]
        rel = source.resolve().relative_to(package_dir.resolve())
    except (TypeError, OSError, ValueError):
        return None
    return f"https://github.com/triton-lang/triton/blob/{tag}/python/triton/{rel.as_posix()}#L{line}"


def rst_to_markdown(doc: str) -> str:
    """Light rst cleanup of docstrings: roles, code-block directives, params, admonitions."""
    doc = re.sub(r":(?:code|class|func|meth|obj|attr|py:\w+):`([^`]+)`", r"`\1`", doc)
    out: list[str] = []
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        directive = re.match(r"\.\.\s+(code-block|code|highlight)::\s*(\w*)", stripped)
        if directive or stripped.endswith("::") and not stripped.startswith(".."):
            if not directive:
                out.append(line.rstrip(":") + ":" if stripped != "::" else "")
            indent = len(line) - len(line.lstrip())
            block: list[str] = []
            i += 1
            while i < len(lines) and (
                not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
            ):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            while block and not block[0].strip():
                block.pop(0)
            if block:
                language = directive.group(2) if directive and directive.group(2) else "python"
                out += [f"```{language}", inspect.cleandoc("\n".join(block)), "```"]
            continue
        admonition = re.match(r"\.\.\s+(warning|note|deprecated)::\s*(.*)", stripped)
        if admonition:
            out.append(f"**{admonition.group(1).capitalize()}:** {admonition.group(2)}".rstrip())
        elif m := re.match(r":(note|warning):\s*(.*)", stripped):
            out.append(f"**{m.group(1).capitalize()}:** {m.group(2)}")
        elif m := re.match(r":param\s+(\w+):\s*(.*)", stripped):
            out.append(f"- `{m.group(1)}`: {m.group(2)}")
        elif m := re.match(r":type\s+(\w+):\s*(.*)", stripped):
            out.append(f"  - type of `{m.group(1)}`: {m.group(2)}")
        elif m := re.match(r":(returns?|rtype):\s*(.*)", stripped):
            out.append(f"- {m.group(1)}: {m.group(2)}")
        else:
            out.append(line)
        i += 1
    return "\n".join(out).strip()


def _entry(qualname: str, obj: Any, package_dir: Path, tag: str) -> str:
    target = _unwrap(obj)
    prefix = "class " if inspect.isclass(target) else ""
    link = _source_link(obj, package_dir, tag)
    heading = f"### `{prefix}{_signature(qualname, obj)}`" + (f" [¶]({link})" if link else "")
    doc = rst_to_markdown(inspect.cleandoc(target.__doc__ or "")) or "(no docstring)"
    if inspect.isclass(target):
        methods = sorted(n for n, v in vars(target).items() if callable(v) and not n.startswith("_"))
        if methods:
            doc += "\n\nMethods: " + ", ".join(f"`{m}`" for m in methods)
    return f"{heading}\n\n{doc}\n"


def _module_functions(module: ModuleType, prefix: str) -> list[tuple[str, Any]]:
    found = []
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        target = _unwrap(obj)
        if inspect.isfunction(target) and (getattr(target, "__module__", "") or "").startswith("triton"):
            found.append((f"{prefix}.{name}", obj))
    return found


def build_reference() -> tuple[str, str, int]:
    """(triton version, markdown, number of objects) for the installed triton."""
    with contextlib.redirect_stdout(sys.stderr):  # stdout carries only our JSON
        import triton
        import triton.language as tl
        import triton.testing as tt
    version = getattr(triton, "__version__", "unknown")
    tag = f"v{version}" if re.fullmatch(r"\d+\.\d+\.\d+", version) else "main"
    package_dir = Path(triton.__file__).parent
    parts = [
        f"# Installed Triton API reference (triton {version})",
        "",
        f"Built offline from the installed triton {version} package (signatures and docstrings), so it "
        "matches the Triton that compiles the kernels. Source links point at the matching tag on GitHub.",
    ]
    count = 0

    def section(title: str, entries: list[tuple[str, Any]]) -> None:
        nonlocal count
        parts.extend(["", f"## {title}", ""])
        for qualname, obj in entries:
            parts.append(_entry(qualname, obj, package_dir, tag))
            count += 1

    section(
        "triton (jit, autotune, Config, heuristics)",
        [(f"triton.{n}", getattr(triton, n)) for n in _TRITON_NAMES if hasattr(triton, n)],
    )
    section("triton.language functions", _module_functions(tl, "triton.language"))
    section(
        "triton.language classes",
        [(f"triton.language.{n}", getattr(tl, n)) for n in _TL_CLASSES if hasattr(tl, n)],
    )
    dtypes = sorted(n for n in dir(tl) if isinstance(getattr(tl, n), tl.dtype))
    parts.extend(["", "## triton.language dtypes", "", ", ".join(f"`tl.{n}`" for n in dtypes), ""])
    testing = _module_functions(tt, "triton.testing")
    testing += [
        (f"triton.testing.{n}", getattr(tt, n))
        for n in ("Benchmark", "Mark")
        if inspect.isclass(getattr(tt, n, None))
    ]
    section("triton.testing", testing)
    return version, "\n".join(parts).rstrip() + "\n", count


def main(argv: list[str] | None = None) -> int:
    """Print the reference (markdown, or JSON with --json); exit 2 when triton cannot be imported."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print {triton_version, markdown, objects}")
    args = parser.parse_args(argv)
    try:
        version, markdown, count = build_reference()
    except Exception as exc:  # noqa: BLE001 - any import failure is reported to the parent the same way
        print(f"introspection failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"triton_version": version, "markdown": markdown, "objects": count}))
    else:
        print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
