"""Storage, with SQLite as the truth: the database (db), the keyword index over it (keyword/), FAISS
vectors that heal from it (vectors, consistency), and the audit that `docqa check` runs."""
