"""The continuous-batching engine: a Generator (docqa.core.protocols) over one llama.cpp context that
decodes many sequences per step; scheduler (batching), sampling, prefix cache, sequences, step outputs."""
