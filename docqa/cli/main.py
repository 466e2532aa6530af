"""The `docqa` command: a thin click layer over the DocQA library, one module per command group.

The group is assembled here (add_command); shared options and the one error mapping are in
docqa.cli.options.
"""

from __future__ import annotations

import contextlib

# llama.cpp first: on a CUDA machine, loading its libraries after numpy/pydantic's crashed the first
# model load of the process (seen on the H200 device; importing llama_cpp first avoided it).
with contextlib.suppress(ImportError):  # a missing llama_cpp is reported when a model is loaded
    import llama_cpp  # noqa: F401

import click

from docqa.cli import (
    ask,
    collections,
    database,
    documents,
    evaluate,
    feedback,
    keys,
    models,
    profiles,
    reindex,
    serve,
    worker,
)
from docqa.cli.options import DocqaGroup


@click.group(cls=DocqaGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="docqa")
def main() -> None:
    """docqa: ask questions about long documents and get answers with page citations.

    \b
    Typical use:
      docqa ingest ./contracts                 index PDF, Office, HTML, CSV, email, text
      docqa ask "What is the notice period?"   answer with page citations
      docqa ask --think "..."                  let Qwen3 reason first
      docqa serve                              web page, REST and OpenAI API on :8000
      docqa models pull qwen3-14b              download a model (then DOCQA_LLM_MODEL=qwen3-14b)

    \b
    Settings come from DOCQA_* environment variables or docqa.toml (see README).
    Shell completion: eval "$(docqa completion bash)"   (or zsh, fish)
    """


for command in (
    documents.ingest,
    ask.ask,
    documents.docs,
    collections.collections,
    documents.check,
    feedback.feedback,
    evaluate.eval_,
    models.models,
    profiles.profiles,
    reindex.reindex,
    database.db,
    keys.keys,
    worker.worker,
    serve.serve,
    serve.completion,
):
    main.add_command(command)
