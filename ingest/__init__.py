"""docqa ingestion: readers, chunking, embedding and the pipeline that writes to the store."""
