"""Finding the chunks for a question: BM25 and dense search fused (retriever), then optionally reranked."""
