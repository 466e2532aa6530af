"""Docs that cannot go stale unnoticed (run by `make lint`):

- docs/settings.md is generated from the settings model (docqa.core.settings.Settings): every DOCQA_*
  variable, its type, default and description. `python -m tools.docs_check --write` rewrites it;
  without --write, a difference fails.
- every repository path that README.md and docs/*.md name in backticks (`docqa/...`, `bench/results/...`)
  exists, so a moved module or a renamed result file is caught.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from docqa.core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_DOC = ROOT / "docs" / "settings.md"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# a path in backticks that starts at one of the repository's folders (a glob or a placeholder is left alone)
_PATH = re.compile(r"`((?:docqa|ingest|bench|tests|docs|tools|sample_docs|\.ci)/[\w./-]*)`")

HEADER = """# Settings

Generated from `docqa/core/settings.py` by `python -m tools.docs_check --write`; `make lint` fails when this
file is stale. Every setting is an environment variable (`DOCQA_<FIELD>`, nested `DOCQA_<GROUP>_<FIELD>`), a
key of `docqa.toml` (`DOCQA_CONFIG` names another file; nested keys under `[group]`), or an argument of
`Settings(...)`. Why the defaults are what they are: docs/benchmarks.md.
"""


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        return "(group)"
    value: Any = field.default
    if value is PydanticUndefined or value is None:
        return "unset"
    if isinstance(value, str) and not value:
        return "empty"
    return f"`{value}`"


def _type(field: FieldInfo) -> str:
    text = str(field.annotation).replace("typing.", "").replace("pathlib.", "")
    text = re.sub(r"<class '(\w+)'>", r"\1", text)
    return text.replace("|", "or")


def _rows(model: type[BaseModel], prefix: str) -> list[str]:
    rows = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            continue  # groups get their own table
        description = " ".join((field.description or "").split()).replace("|", "\\|")
        rows.append(f"| `{prefix}{name.upper()}` | {_type(field)} | {_default(field)} | {description} |")
    return rows


def render() -> str:
    table = ["| variable | type | default | meaning |", "|---|---|---|---|"]
    out = [HEADER, "## General\n", *table]
    out += _rows(Settings, "DOCQA_")
    for name, field in Settings.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            out += [
                "",
                f"## {name} ({field.description})\n",
                "| variable | type | default | meaning |",
                "|---|---|---|---|",
            ]
            out += _rows(annotation, f"DOCQA_{name.upper()}_")
    return "\n".join(out) + "\n"


def dead_paths() -> list[str]:
    missing = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for path in _PATH.findall(line):
                if any(mark in path for mark in ("*", "<", "YYYY")):
                    continue
                if not (ROOT / path.rstrip("/")).exists():
                    shown = doc.relative_to(ROOT) if doc.is_relative_to(ROOT) else doc
                    missing.append(f"{shown}:{number}: {path}")
    return missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="rewrite docs/settings.md")
    args = parser.parse_args()
    problems = []
    rendered = render()
    if args.write:
        SETTINGS_DOC.write_text(rendered, encoding="utf-8")
    elif not SETTINGS_DOC.is_file() or SETTINGS_DOC.read_text(encoding="utf-8") != rendered:
        problems.append("docs/settings.md is stale: run `python -m tools.docs_check --write`")
    problems += [f"{where}: no such path" for where in dead_paths()]
    for problem in problems:
        sys.stderr.write(problem + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
