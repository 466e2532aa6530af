"""Every llama.cpp touch: model files and downloads, contexts, native libraries, token batches, the
embedder, the reranker model and the serial generator.

llama_cpp is imported inside the functions that use it, throughout this package, to keep start-up light:
importing docqa (the PDF reader's child process, `docqa --help`, the unit tests) loads no native library."""
