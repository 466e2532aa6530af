"""`python -m bench.fifo_docqa ...`: the docqa CLI with the batching engine reading prompts first come, first
read (every prompt past its patience at once), as before shortest-first; for the whole-path bench's
comparison of the two orders on the same host."""

from docqa.cli.main import main
from docqa.engine import step_order

step_order.PREFILL_PATIENCE_S = 0.0
main()
