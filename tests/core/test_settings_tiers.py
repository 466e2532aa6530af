"""The settings a person is asked to hold: the public ones (docs/settings.md's first tables) stay few, and a
setting is public, advanced or experimental, never two of these."""

from __future__ import annotations

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from docqa.core.settings import Settings

MOST_PUBLIC = 32  # issue 63: "the public settings at most ~30"


def _settings() -> dict[str, FieldInfo]:
    fields: dict[str, FieldInfo] = {}
    for name, field in Settings.model_fields.items():
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            fields |= {f"DOCQA_{name}_{n}".upper(): f for n, f in group.model_fields.items()}
        else:
            fields[f"DOCQA_{name}".upper()] = field
    return fields


def _marks(field: FieldInfo) -> set[str]:
    extra = field.json_schema_extra
    return {mark for mark in ("public", "experimental") if isinstance(extra, dict) and extra.get(mark)}


def test_the_public_settings_are_few_and_none_is_also_experimental() -> None:
    fields = _settings()
    public = sorted(name for name, field in fields.items() if "public" in _marks(field))
    assert 20 <= len(public) <= MOST_PUBLIC, public
    assert not [name for name, field in fields.items() if _marks(field) == {"public", "experimental"}]
    assert len(fields) > 2 * len(public)  # the rest are still settings, listed as advanced


def test_what_a_first_run_needs_is_public() -> None:
    public = {name for name, field in _settings().items() if "public" in _marks(field)}
    needed = {"DOCQA_LLM_MODEL", "DOCQA_EMBED_MODEL", "DOCQA_DATA_DIR", "DOCQA_LLM_N_CTX", "DOCQA_API_KEYS"}
    assert needed <= public
