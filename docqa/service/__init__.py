"""The service layer: the DocQA facade that every interface (CLI, REST, OpenAI API, eval) talks to."""

from docqa.service.facade import DocQA
from docqa.service.status import AnswerOutcome, CacheStats, CollectionSummary, ServiceStatus

__all__ = ["AnswerOutcome", "CacheStats", "CollectionSummary", "DocQA", "ServiceStatus"]
