"""One capitalised word alone on its line above a paragraph ("Employees", "Competition") is read as a heading
(docqa.store.keyword.passage_stems): every passage's headings are written again; bodies and term statistics
stay as they are.

This revision once read every such passage's headings again, here, with the rules of its day. Headings are
derived data: they carry the keyword rules' version with their document (documents.derived) and are rebuilt by
`docqa reindex` (which `docqa serve` and `docqa ingest` run when a document is stale), so the revision changes
no schema and does nothing; it stays in the chain for the data homes that recorded it.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Nothing: the headings are rebuilt by `docqa reindex` (docqa.store.derived)."""


def downgrade() -> None:
    """Nothing to undo."""
