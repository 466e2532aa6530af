"""Keyword search inside SQLite: FTS5 passages (index), their stems and term statistics, document titles,
and the second BM25 pass over a document's passages."""
