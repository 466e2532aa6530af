"""The settings a person is asked to hold: the public ones (docs/settings.md's first tables) stay few, and a
setting is public, advanced or experimental, never two of these."""

from __future__ import annotations

from tools.docs_check import marks, settings

MOST_PUBLIC = 32  # issue 63: "the public settings at most ~30"


def test_the_public_settings_are_few_and_none_is_also_experimental() -> None:
    fields = settings()
    public = sorted(name for name, field in fields if "public" in marks(field))
    assert 20 <= len(public) <= MOST_PUBLIC, public
    assert not [name for name, field in fields if marks(field) == {"public", "experimental"}]
    assert len(fields) > 2 * len(public)  # the rest are still settings, listed as advanced


def test_what_a_first_run_needs_is_public() -> None:
    public = {name for name, field in settings() if "public" in marks(field)}
    needed = {"DOCQA_LLM_MODEL", "DOCQA_EMBED_MODEL", "DOCQA_DATA_DIR", "DOCQA_LLM_N_CTX", "DOCQA_API_KEYS"}
    assert needed <= public
