"""docqa ingestion: readers, the PDF child process, chunking and the pipeline that writes to the store
(embedding through docqa.llama's embedder, behind the Embedder protocol)."""
