"""Docs that cannot go stale unnoticed (run by `make lint`):

- docs/settings.md is generated from the settings model (docqa.core.settings.Settings): every DOCQA_*
  variable, its type, default and description. `python -m tools.docs_check --write` rewrites it;
  without --write, a difference fails.
  The public settings (marked so) come first, then the advanced ones; settings marked experimental (tuning switches
  settled by measurement) are listed apart, last.
- no setting's description carries a measured figure (a share, a ratio, milliseconds, GiB, tokens/s, a GPU's
  name): figures go stale, so they live in docs/benchmarks.md.
- every repository path that README.md and docs/**/*.md name in backticks (`docqa/...`, `bench/results/...`)
  exists, so a moved module or a renamed result file is caught;
- every relative Markdown link in them (`[text](benchmarks/retrieval.md#a-heading)`) names a file that exists
  and, where it names a heading, a heading of that file (GitHub's anchors), so moving a section is caught;
- every result file in bench/results is cited by a doc or a bench module (by its name, or shortened: the name up
  to a part followed by a brace, a glob or a run number), so bench/results keeps what the docs cite and git the
  rest.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from docqa.core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_DOC = ROOT / "docs" / "settings.md"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# a path in backticks that starts at one of the repository's folders (a glob or a placeholder is left alone)
_PATH = re.compile(r"`((?:docqa|ingest|bench|tests|docs|tools|sample_docs|\.ci)/[\w./-]*)`")
# a Markdown link's target: "](benchmarks/retrieval.md#a-heading)"
_LINK = re.compile(r"\]\(([^)\s]+)\)")

# what a measured figure looks like in a description: "95%", "1.5x", "8 ms", "1.9 GiB", "400 tokens/s", "H200"
_FIGURE = re.compile(r"\d(?:[\d.,]*)\s*(?:%|x\b|ms\b|GiB|GB\b|tokens/s|tok/s)|H200|measured")

HEADER = """# Settings

Generated from `docqa/core/settings.py` by `python -m tools.docs_check --write`; `make lint` fails when this
file is stale. Every setting is an environment variable (`DOCQA_<FIELD>`, nested `DOCQA_<GROUP>_<FIELD>`), a
key of `docqa.toml` (`DOCQA_CONFIG` names another file; nested keys under `[group]`), or an argument of
`Settings(...)`. Why the defaults are what they are: docs/benchmarks.md.

The first tables are what a person sets to run docqa: the models, where data lives, the context, keys, OCR and
how much a question over many documents reads. The advanced settings after them are resource limits and measured
defaults that a deployment rarely changes. The experimental settings, last, are tuning switches that measurement
settled: kept to measure again, and they may go away.
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


def marks(field: FieldInfo) -> set[str]:
    """The tier marks a setting carries ("public", "experimental"; none: advanced)."""
    extra = field.json_schema_extra
    return {mark for mark in ("public", "experimental") if isinstance(extra, dict) and extra.get(mark)}


def tier(field: FieldInfo) -> str:
    """public, experimental or advanced: the part of docs/settings.md the setting is listed in."""
    return next((mark for mark in ("public", "experimental") if mark in marks(field)), "advanced")


def _groups() -> list[tuple[str, str, type[BaseModel]]]:
    """(heading, variable prefix, model) of the general settings and of each group."""
    groups: list[tuple[str, str, type[BaseModel]]] = [("General", "DOCQA_", Settings)]
    for name, field in Settings.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            groups.append((f"{name} ({field.description})", f"DOCQA_{name.upper()}_", annotation))
    return groups


def _fields(model: type[BaseModel]) -> list[tuple[str, FieldInfo]]:
    """The model's own settings (groups get their own table)."""
    return [
        (name, field)
        for name, field in model.model_fields.items()
        if not (isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel))
    ]


def settings() -> list[tuple[str, FieldInfo]]:
    """(variable, field) of every setting, the general ones first, then each group's."""
    return [(f"{prefix}{name.upper()}", field) for _, prefix, model in _groups() for name, field in _fields(model)]


def _row(prefix: str, name: str, field: FieldInfo) -> str:
    description = " ".join((field.description or "").split()).replace("|", "\\|")
    return f"| `{prefix}{name.upper()}` | {_type(field)} | {_default(field)} | {description} |"


def render() -> str:
    """The public settings by group, then the advanced ones by group, then the experimental ones."""
    table = ["| variable | type | default | meaning |", "|---|---|---|---|"]
    public, advanced, experimental = (
        [HEADER.rstrip("\n")],
        ["", "## Advanced"],
        ["", "## Experimental: tuning switches\n"],
    )
    experimental += table
    for heading, prefix, model in _groups():
        rows: dict[str, list[str]] = {"public": [], "advanced": [], "experimental": []}
        for name, field in _fields(model):
            rows[tier(field)].append(_row(prefix, name, field))
        if rows["public"]:
            public += ["", f"## {heading}\n", *table, *rows["public"]]
        if rows["advanced"]:
            advanced += ["", f"### {heading}\n", *table, *rows["advanced"]]
        experimental += rows["experimental"]
    return "\n".join([*public, *advanced, *experimental]) + "\n"


def measured_figures() -> list[str]:
    """Settings whose description carries a measured figure."""
    found = []
    for variable, field in settings():
        match = _FIGURE.search(field.description or "")
        if match:
            found.append(f"{variable}: '{match.group(0)}' in its description")
    return found


def _doc_lines() -> Iterator[tuple[Path, str, int, str]]:
    """Each line of the checked docs: the doc, its name as a problem shows it, the line's number, the line."""
    for doc in DOCS:
        shown = str(doc.relative_to(ROOT) if doc.is_relative_to(ROOT) else doc)
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            yield doc, shown, number, line


def dead_paths() -> list[str]:
    missing = []
    for _, shown, number, line in _doc_lines():
        for path in _PATH.findall(line):
            if any(mark in path for mark in ("*", "<", "YYYY")):
                continue
            if not (ROOT / path.rstrip("/")).exists():
                missing.append(f"{shown}:{number}: {path}")
    return missing


def anchors(doc: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings: lower case, punctuation but '-' and '_' dropped,
    spaces to '-', a repeated one numbered."""
    seen: dict[str, int] = {}
    found = set()
    for line in doc.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def dead_links() -> list[str]:
    """Relative links whose file or heading is not there (each linked file's headings read once)."""
    missing = []
    headings: dict[Path, set[str]] = {}
    for doc, shown, number, line in _doc_lines():
        for target in _LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            if not file.exists():
                missing.append(f"{shown}:{number}: {target}: no such file")
            elif anchor and file.suffix == ".md":
                if file not in headings:
                    headings[file] = anchors(file)
                if anchor not in headings[file]:
                    missing.append(f"{shown}:{number}: {target}: no such heading")
    return missing


RESULTS = ROOT / "bench" / "results"


def uncited_results() -> list[str]:
    """The result files no doc or bench module cites."""
    text = "\n".join(
        [
            *(doc.read_text(encoding="utf-8") for doc in DOCS),
            *(p.read_text(encoding="utf-8") for p in (ROOT / "bench").glob("*.py")),
        ]
    )
    names = sorted(p.name for p in RESULTS.iterdir()) if RESULTS.is_dir() else []
    return [f"bench/results/{name}" for name in names if not _cited(name, text)]


def _cited(name: str, text: str) -> bool:
    stem = name.rsplit(".", 1)[0]
    if stem in text:
        return True
    parts = stem.split("_")
    # shortened: "crossval_cuad_dev_2026-12-04_44e1d48{,-2,-3}.json", "h200_engine_session6_run{1..5}", "..._run*"
    return any(
        re.search(re.escape("_".join(parts[:k])) + r"[_{(*,]", text) is not None for k in range(len(parts) - 1, 2, -1)
    )


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
    problems += dead_links()
    problems += [f"{path}: cited by no doc or bench module (git keeps it: delete it)" for path in uncited_results()]
    problems += [f"{what}: measured figures go to docs/benchmarks.md" for what in measured_figures()]
    for problem in problems:
        sys.stderr.write(problem + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
