"""Domain errors. The CLI (docqa.cli.main) and the API (docqa.api.errors) each turn them into
user-facing messages in one place; library code raises these and never prints."""

from __future__ import annotations

import errno


class DocqaError(Exception):
    """Base of every error docqa reports to a user. The message is safe to show."""

    http_status = 500


class ConfigError(DocqaError):
    """Settings or model files are missing or wrong."""

    http_status = 500


class ModelNotFoundError(ConfigError):
    def __init__(self, kind: str, path: str, env_var: str, pull: str | None = None) -> None:
        fix = (
            f"run `docqa models pull {pull}`"
            if pull
            else f"set {env_var} to an existing GGUF file, a name from `docqa models list`, or unset it for the "
            "offline demo model"
        )
        super().__init__(f"{kind} model file not found: {path}; {fix}")


CHOOSE_DATA_HOME = "choose the data home with --data-dir, DOCQA_DATA_DIR or data_dir in docqa.toml"


class DataHomeNotFoundError(ConfigError):
    """A command that only reads found no data home where it looked (it never creates one)."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"no docqa data home at {path} (no docqa.sqlite3 there): ingest documents first "
            f"(`docqa ingest PATH`), or {CHOOSE_DATA_HOME}"
        )


class DataHomeUnusableError(ConfigError):
    """The data home cannot be created or written (a file in its place, /proc, no permission, a full disk):
    said in one line naming it, where the OS or SQLite error came out as a traceback."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"data home {path} cannot be used: {reason}; {CHOOSE_DATA_HOME}")


class DatabaseUnavailableError(DocqaError):
    """The database behind DOCQA_DATABASE_URL cannot be reached or refused docqa (named without its password)."""

    http_status = 503
    # what an HTTP client is told: the reason names the server's socket path or host, which is the operator's
    public_message = "the database is unavailable; retry later (the server's log says why)"

    def __init__(self, location: str, reason: str) -> None:
        super().__init__(f"database {location} is unavailable: {reason}")

    @classmethod
    def said_by(cls, location: str, error: BaseException | None) -> DatabaseUnavailableError:
        """The error with the driver's reason in one line (its first; a driver's are several)."""
        reason = str(error).strip() if error is not None else ""
        return cls(location, reason.splitlines()[0] if reason else "no answer")


class UploadStoreError(DocqaError):
    """The object store that keeps queued uploads failed (named without its keys)."""

    http_status = 503

    def __init__(self, location: str, reason: str) -> None:
        super().__init__(f"upload store {location} failed: {reason}")
        self.reason = reason  # the store's error code where it gave one ("NoSuchKey")


class SchemaOutdatedError(ConfigError):
    def __init__(self, location: str, found: str | None, head: str) -> None:
        super().__init__(
            f"the database {location} has docqa schema {found or '(none)'}, this docqa needs {head}: "
            "run `docqa db upgrade`"
        )


class UnknownModelError(DocqaError):
    """An OpenAI-style request named a model docqa does not serve."""

    http_status = 404

    def __init__(self, model: str) -> None:
        super().__init__(f"model '{model}' not found: use 'docqa/<collection>'; GET /v1/models lists them")


class ModelNotLoadedError(DocqaError):
    """A node was asked for a model it was not started with."""

    http_status = 404


class ModelClosedError(DocqaError):
    """A model was used after the service closed it (an ingest still running at shutdown)."""

    http_status = 503

    def __init__(self, what: str) -> None:
        super().__init__(f"the {what} was closed (docqa is shutting down)")


class NotReadyError(DocqaError):
    """The models are still loading."""

    http_status = 503


class CollectionNotFoundError(DocqaError):
    http_status = 404

    def __init__(self, name: str) -> None:
        super().__init__(f"collection '{name}' does not exist; ingest documents into it first")
        self.name = name


class ConversationNotFoundError(DocqaError):
    """No such conversation in the collection for this caller (another key's conversations are not found)."""

    http_status = 404

    def __init__(self, conversation_id: int) -> None:
        super().__init__(f"conversation {conversation_id} not found")


class MessageNotFoundError(DocqaError):
    """No such message in a conversation the caller has."""

    http_status = 404

    def __init__(self, conversation_id: int, message_id: int) -> None:
        super().__init__(f"message {message_id} not found in conversation {conversation_id}")


class JobNotFoundError(DocqaError):
    http_status = 404

    def __init__(self, job_id: int) -> None:
        super().__init__(f"ingest job {job_id} not found")


class QueueNotConfiguredError(DocqaError):
    """Queued ingestion needs the shared database (the queue lives there)."""

    http_status = 400

    def __init__(self) -> None:
        super().__init__(
            "ingestion jobs need a database: set DOCQA_DATABASE_URL=postgresql+psycopg://... (the queue is kept "
            "there) and run `docqa worker`"
        )


class DocumentNotFoundError(DocqaError):
    http_status = 404

    def __init__(self, document_id: int, collection: str) -> None:
        super().__init__(f"document {document_id} not found in collection '{collection}'")


class OriginalNotKeptError(DocqaError):
    """A document's file cannot be shown: docqa did not keep it, or the file it was read from changed."""

    http_status = 404

    def __init__(self, document: str, why: str) -> None:
        super().__init__(f"the file of {document} cannot be shown: {why}")


class ChunkNotFoundError(DocqaError):
    http_status = 404

    def __init__(self, chunk_id: int, collection: str) -> None:
        super().__init__(f"chunk {chunk_id} not found in collection '{collection}'")


class InvalidRequestError(DocqaError):
    http_status = 400


class NoDocumentMatchesError(InvalidRequestError):
    """A catalog filter (where) that no ready document of the collection meets: said, not answered as if the
    documents were silent. The message names the field or value that matched nothing and the ones that exist."""

    def __init__(self, collection: str, why: str) -> None:
        super().__init__(f"no document of collection '{collection}' matches the filter: {why}")


class EmbeddingModelMismatchError(DocqaError):
    """A collection built with one embedding model cannot be searched or extended with another."""

    http_status = 409

    def __init__(self, collection: str, stored: str, current: str) -> None:
        super().__init__(
            f"collection '{collection}' was built with embedding model '{stored}' but the configured "
            f"embedder is '{current}'; use the same model, or a new collection"
        )


class IndexInconsistentError(DocqaError):
    """The FAISS index and the SQLite chunk rows disagree and could not be repaired."""

    http_status = 500


class BusyError(DocqaError):
    """Too many requests are already waiting for the generator."""

    http_status = 429
    retry_after_s = 2


class ReadError(DocqaError):
    """A document could not be read; recorded against that file, the others go on."""

    http_status = 422


class EndpointError(DocqaError):
    """The OpenAI-compatible server docqa generates through failed or could not be reached; the message
    names it (DOCQA_LLM_ENDPOINT)."""

    http_status = 502


class EndpointUnavailableError(EndpointError):
    """The endpoint is not answering yet (refused, unreachable, or still loading its model: 503): an API
    process started beside its node waits for it and retries."""

    http_status = 503


class EndpointTimeoutError(EndpointError):
    """The endpoint did not connect, start answering or send the next token in time."""

    http_status = 504


class ClientGoneError(DocqaError):
    """The client closed its connection before its answer was ready; nothing is sent back (nginx's 499)."""

    http_status = 499


class DiskFullError(DocqaError):
    """The data home's disk is full: nothing was committed half; free space and retry."""

    http_status = 507


def is_disk_full(exc: BaseException) -> bool:
    """An OS write that found no space, or SQLite saying so (through sqlite3 or SQLAlchemy)."""
    for error in (exc, exc.__cause__, getattr(exc, "orig", None)):
        if isinstance(error, OSError) and error.errno == errno.ENOSPC:
            return True
        if error is not None and "database or disk is full" in str(error):
            return True
    return False


class NotPermittedError(DocqaError):
    """The caller's key may read the collection but not change it (a read-only key uploading, deleting)."""

    http_status = 403

    def __init__(self, name: str, action: str) -> None:
        super().__init__(f"this API key may not {action} in collection '{name}' (a read-only key)")


class AdminOnlyError(DocqaError):
    """A route that spans every collection (metrics, keys) for a key granted only some."""

    http_status = 403

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} needs an admin API key")


class ApiKeyError(DocqaError):
    """`docqa keys`: a key name taken, unknown or malformed."""

    http_status = 400


class KeyGenerationsError(BusyError):
    """The caller's key already runs as many generations as it may; another key's questions keep their slots."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"this API key already runs {limit} generation{'s' if limit != 1 else ''} at once, its limit; "
            "retry when one ends"
        )
