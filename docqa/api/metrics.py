"""Prometheus metrics at GET /metrics.

Counters and histograms are fed as things happen (HTTP requests by a middleware, answers and ingests
through DocQA's observer hooks); gauges (queue, sequences, KV cells, documents, cache size) are read
from the live objects at scrape time, so they are never stale. Each app has its own registry.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docqa.core.documents import IngestReport
from docqa.service import AnswerOutcome, DocQA

access_logger = logging.getLogger("docqa.access")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300)


class Metrics:
    def __init__(self, current: Callable[[], DocQA | None], in_flight: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "docqa_http_requests", "HTTP requests by route and status.", ["method", "route", "status"],
            registry=self.registry,
        )  # fmt: skip
        self.ttft = Histogram(
            "docqa_time_to_first_token_seconds", "Time from request to the first generated token.", ["mode", "cached"],
            buckets=_LATENCY_BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.latency = Histogram(
            "docqa_answer_seconds", "Time from request to the end of the answer.", ["mode", "cached"],
            buckets=_LATENCY_BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.tokens = Counter(
            "docqa_generated_tokens", "Tokens generated (reasoning and answer).", ["mode"], registry=self.registry
        )
        self.ingest_files = Counter(
            "docqa_ingest_files", "Files ingested, by outcome.", ["status"], registry=self.registry
        )
        self.ingest_tokens = Counter("docqa_ingest_tokens", "Tokens chunked and embedded.", registry=self.registry)
        self.ingest_seconds = Counter("docqa_ingest_seconds", "Seconds spent ingesting.", registry=self.registry)
        self._live = _LiveState(current, in_flight)
        self.registry.register(self._live)
        self._attached: DocQA | None = None

    def attach(self, qa: DocQA) -> None:
        if self._attached is not qa:
            qa.on_answer.append(self.observe_answer)
            qa.on_ingest.append(self.observe_ingest)
            self._attached = qa

    def observe_answer(self, outcome: AnswerOutcome) -> None:
        labels = (outcome.mode, "yes" if outcome.cached else "no")
        if outcome.timings.ttft_ms is not None:
            self.ttft.labels(*labels).observe(outcome.timings.ttft_ms / 1000)
        self.latency.labels(*labels).observe(outcome.timings.total_ms / 1000)
        if not outcome.cached:
            self.tokens.labels(outcome.mode).inc(outcome.timings.completion_tokens)

    def observe_ingest(self, report: IngestReport) -> None:
        for f in report.files:
            self.ingest_files.labels(f.status).inc()
        self.ingest_tokens.inc(sum(f.tokens for f in report.files if f.status in ("added", "updated")))
        self.ingest_seconds.inc(report.seconds)

    def render(self) -> bytes:
        """This process's metrics; under `docqa serve --workers N` (PROMETHEUS_MULTIPROC_DIR set), the
        counters and histograms of every API process summed, beside this process's live gauges."""
        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        MultiProcessCollector(merged)
        merged.register(self._live)
        return generate_latest(merged)


class _LiveState(Collector):
    """Gauges read at scrape time from the DocQA the app serves (none while the models load)."""

    def __init__(self, current: Callable[[], DocQA | None], in_flight: Callable[[], int]) -> None:
        self._current = current
        self._in_flight = in_flight

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "docqa_requests_in_flight",
            "HTTP requests being served by this process, this scrape included (/health aside).",
            value=float(self._in_flight()),
        )
        qa = self._current()
        if qa is None:
            return
        engine = qa.status().engine
        if engine is not None:
            for name, value, doc in (
                ("docqa_queue_depth", engine.waiting, "Requests waiting for a generation slot."),
                ("docqa_running_sequences", engine.running, "Sequences being generated now."),
                ("docqa_kv_cells_used", engine.kv_cells_in_sequences, "KV cache cells held by running sequences."),
                ("docqa_kv_cells", engine.kv_cells, "KV cache cells in all."),
                ("docqa_prefix_cache_tokens", engine.prefix_cache_tokens, "Tokens kept for prefix reuse."),
            ):
                if value is not None:
                    yield GaugeMetricFamily(name, doc, value=float(value))
        documents = GaugeMetricFamily(
            "docqa_documents", "Documents per collection and status.", labels=["collection", "status"]
        )
        chunks = GaugeMetricFamily("docqa_chunks", "Chunks per collection.", labels=["collection"])
        for summary in qa.collections():
            for status, count in summary.documents.items():
                documents.add_metric([summary.name, status], count)
            if summary.chunks:
                chunks.add_metric([summary.name], summary.chunks)
        yield documents
        yield chunks
        cache = qa.cache_stats()
        yield GaugeMetricFamily("docqa_answer_cache_entries", "Answers in the cache.", value=cache.entries)
        lookups = CounterMetricFamily("docqa_answer_cache_lookups", "Answer cache lookups.", labels=["result"])
        lookups.add_metric(["hit"], cache.hits)
        lookups.add_metric(["miss"], cache.misses)
        yield lookups


# HTTP's methods: any other a client invents ("X1Q") is counted as OTHER, so that no client can add series.
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"})


def metric_method(method: str) -> str:
    return method if method in KNOWN_METHODS else "OTHER"


class RequestCounter:
    """Counts every HTTP request by method, route template (never the raw path) and status, and writes
    one access-log line for it ("POST /v1/ask 200 812 ms") on the `docqa.access` logger: the route
    template and never the query string, so no key, token or document text can reach the log."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()

        async def tracking_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            method = metric_method(scope["method"])
            self.metrics.requests.labels(method, route, str(status)).inc()
            ms = (time.perf_counter() - started) * 1000
            shown = route if route != "unmatched" else scope["path"][:200]  # refused before routing: the path
            access_logger.info("%s %s %d %.0f ms", method, shown, status, ms)
