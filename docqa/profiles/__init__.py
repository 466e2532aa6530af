"""Document profiles: what docqa knows about one kind of document, as an optional component over a generic
core.

A profile says what a document of its kind is (its identity and catalog fields, read from the file name and
head at ingest), what a question asks of such documents (the documents it names, the section titles that hold
the answer, how the head is treated), and which words such documents write a clause in. The core Query
(docqa.core.query) and the store (docqa.store) know nothing of any profile: the store is handed one reader
(docqa.core.identity.DocumentReader), retrieval one ProfileSet (docqa.profiles.registry), and `make lint`'s
import contracts keep it so. Built in: `sec` (SEC filings and results releases), `csrc` (Chinese listed
companies' filings), `contracts` (commercial contracts), beside the `generic` default that knows nothing.
docs/profiles.md shows how to add one.
"""
