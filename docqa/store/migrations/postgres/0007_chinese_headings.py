"""Chinese headings read again: a heading the PDF's text runs into the sentence before it is found, and a
Chinese sentence or table row after a number is no longer taken for one (docqa.store.keyword.passage_stems).
Only documents holding Chinese text are indexed again.

This revision once read every such passage's headings again, here, with the rules of its day. Headings are
derived data: they carry the keyword rules' version with their document (documents.derived) and are rebuilt by
`docqa reindex` (which `docqa serve` and `docqa ingest` run when a document is stale), so the revision changes
no schema and does nothing; it stays in the chain for the data homes that recorded it.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Nothing: the headings are rebuilt by `docqa reindex` (docqa.store.derived)."""


def downgrade() -> None:
    """Nothing to undo."""
