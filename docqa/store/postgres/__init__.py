"""docqa's store on Postgres: the same tables and searches as SQLite, vectors in pgvector (DOCQA_DATABASE_URL)."""
