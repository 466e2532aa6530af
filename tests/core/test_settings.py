"""Settings from the environment, a TOML file and arguments (pure logic)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from docqa.core.errors import ConfigError
from docqa.core.settings import Settings


def test_environment_names_match_the_docs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOCQA_DATA_DIR", "/srv/docqa")
    monkeypatch.setenv("DOCQA_LLM_MODEL", "/models/Qwen3-14B-Q4_K_M.gguf")
    monkeypatch.setenv("DOCQA_EMBED_MODEL", "/models/Qwen3-Embedding-0.6B-Q8_0.gguf")
    monkeypatch.setenv("DOCQA_LLM_N_CTX", "32768")
    monkeypatch.setenv("DOCQA_CHUNKING_MAX_TOKENS", "2048")
    monkeypatch.setenv("DOCQA_MAX_UPLOAD_MB", "5")
    s = Settings()
    assert s.data_dir == Path("/srv/docqa")
    assert s.llm.model == Path("/models/Qwen3-14B-Q4_K_M.gguf")
    assert s.embed.model == Path("/models/Qwen3-Embedding-0.6B-Q8_0.gguf")
    assert (s.llm.n_ctx, s.chunking.max_tokens, s.max_upload_mb) == (32768, 2048, 5)
    assert s.llm.n_gpu_layers == -1 and s.retrieval.top_k == 3 and s.collection == "default"


def test_toml_file_is_read_and_the_environment_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "my.toml"
    config.write_text('data_dir = "/from/toml"\n[retrieval]\ntop_k = 5\n[llm]\nn_ctx = 8192\n')
    monkeypatch.setenv("DOCQA_CONFIG", str(config))
    monkeypatch.setenv("DOCQA_LLM_N_CTX", "4096")
    s = Settings()
    assert s.data_dir == Path("/from/toml") and s.retrieval.top_k == 5 and s.llm.n_ctx == 4096


def test_bad_values_are_refused_with_the_field_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOCQA_CHUNKING_MAX_TOKENS", "100000")
    with pytest.raises(ValidationError, match="max_tokens"):
        Settings()
    monkeypatch.setenv("DOCQA_CHUNKING_MAX_TOKENS", "256")
    monkeypatch.setenv("DOCQA_CHUNKING_OVERLAP_TOKENS", "256")
    with pytest.raises(ValidationError, match="overlap_tokens must be smaller"):
        Settings()


def test_errors_name_secret_settings_without_their_values(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 41, item 9: DOCQA_API_KEYS' value was printed (the pattern matched 'key', not 'keys'), and a
    group set as a string (DOCQA_API=notjson) was a traceback."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="DOCQA_API_KEYS: Input should be a valid string") as bad_keys:
        Settings.load(api={"keys": 123456789})
    assert "123456789" not in str(bad_keys.value)
    monkeypatch.setenv("DOCQA_API", "notjson-s3cret")
    with pytest.raises(ConfigError, match="DOCQA_API is not a JSON object") as bad_group:
        Settings.load()
    assert "s3cret" not in str(bad_group.value)


def test_every_field_is_described() -> None:
    def walk(model: type) -> list[str]:
        missing = []
        for name, field in model.model_fields.items():  # type: ignore[attr-defined]
            if not field.description:
                missing.append(name)
            if isinstance(field.annotation, type) and hasattr(field.annotation, "model_fields"):
                missing += [f"{name}.{n}" for n in walk(field.annotation)]
        return missing

    assert walk(Settings) == []


def test_every_docqa_variable_is_read_through_the_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 45, item 3: DOCQA_LLAMA_LOG was read from the environment beside the settings. Only the
    settings module reads DOCQA_* variables (DOCQA_CONFIG names its own file there)."""
    import re

    from docqa.core import settings as settings_module

    package = Path(settings_module.__file__).parent.parent
    reads = re.compile(r"""(?:environ\.get|getenv|environ\[)\(?\s*["']DOCQA_""")
    found = [
        f"{path.relative_to(package)}:{n}"
        for path in package.rglob("*.py")
        if path.name != "settings.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if reads.search(line) and "environ[" not in line.split("=")[0] + "="  # a write is not a read
    ]
    assert found == [], found
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOCQA_LLAMA_LOG", "1")
    assert Settings.load().llama_log is True


@pytest.mark.parametrize(
    ("variable", "closest"),
    [
        ("DOCQA_LLM_MAX_TOKEN", "DOCQA_LLM_MAX_TOKENS"),
        ("DOCQA_LLM_N_CTXX", "DOCQA_LLM_N_CTX"),
        ("DOCQA_COLLECTON", "DOCQA_COLLECTION"),
        ("DOCQA_API_KEY", "DOCQA_API_KEYS"),
    ],
)
def test_a_setting_that_does_not_exist_is_refused_naming_the_closest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: str, closest: str
) -> None:
    """Issue 60: a misspelled setting was ignored without a word, and docqa ran with the default."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(variable, "5")
    with pytest.raises(ConfigError, match=f"{variable} is no setting \\(did you mean {closest}\\?\\)"):
        Settings.load()


def test_a_misspelled_key_of_the_toml_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for text, name in (("[llm]\nn_ctxx = 4096\n", "DOCQA_LLM_N_CTXX"), ('colection = "x"\n', "DOCQA_COLECTION")):
        (tmp_path / "docqa.toml").write_text(text)
        with pytest.raises(ConfigError, match=f"{name} is no setting"):
            Settings.load()
    (tmp_path / "docqa.toml").write_text("[llm]\nn_ctx = 4096\n")
    monkeypatch.setenv("DOCQA_CONFIG", str(tmp_path / "docqa.toml"))  # no setting, but read: allowed
    assert Settings.load().llm.n_ctx == 4096
