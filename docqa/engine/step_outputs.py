"""What the scheduler hands to the streams: each drawn token's text, and how each sequence ended.

A token's text (its bytes decoded, stop strings, the thinking budget) is made either at once, or
while the next step decodes on the GPU (`defer`, then `make_due_text` in the next step's window):
the next step needs only the token, not its text. Events are collected per step and delivered
together (`flush`), one wake-up per event loop.
"""

from __future__ import annotations

from docqa.core.streams import GenerationStream, GenEvent, deliver
from docqa.engine.sequences import THINKING_CUTOFF, RunningSequence
from docqa.llama.context import LlamaContext


class StepOutputs:
    def __init__(self, llama: LlamaContext) -> None:
        self._llama = llama
        self._thinking_cutoff = llama.tokenize(THINKING_CUTOFF)
        self._think_end = llama.tokenize("</think>")
        self._outbox: list[tuple[GenerationStream, GenEvent]] = []  # events of this step, not yet handed over
        self._due: list[tuple[RunningSequence, int]] = []  # tokens accepted whose text is not made yet

    def emit(self, stream: GenerationStream, event: GenEvent) -> None:
        self._outbox.append((stream, event))

    def flush(self) -> None:
        """Hand this step's events to their streams at once (one wake-up per event loop)."""
        if self._outbox:
            deliver(self._outbox)
            self._outbox = []

    def defer(self, seq: RunningSequence, token: int) -> None:
        """Make this token's text in the next step's window (the token is already the next input)."""
        self._due.append((seq, token))

    def make_due_text(self) -> None:
        """The text of the tokens deferred last step; a stop string marks its sequence to finish when
        its next token (already being decoded) comes back."""
        due, self._due = self._due, []
        for seq, token in due:
            if seq.finished:
                continue
            seq.stop_due = self._feed(seq, self._text_of(seq, token))

    def text_now(self, seq: RunningSequence, token: int) -> tuple[list[int], bool]:
        """This token's text, made now: (the sequence's next input, whether a stop string ended it).
        At an open thinking budget's cap the input gets Qwen's closing sentence after the token."""
        next_input = [token]
        text = self._text_of(seq, token)
        budget = seq.request.params.thinking_budget
        if budget is not None and not seq.thinking_closed and seq.produced >= budget and seq.produced > 1:
            # Close the reasoning the way Qwen documents, then let the model answer.
            next_input += self._thinking_cutoff
            text += THINKING_CUTOFF
            seq.thinking_closed = True
        return next_input, self._feed(seq, text)

    def finished(self, seq: RunningSequence, reason: str) -> None:
        """The sequence's end: the text held back for stop strings (unless it stopped at one or was
        cancelled), then the finished event with its token counts."""
        if reason not in ("stop", "cancelled") and (tail := seq.output.tail()):
            self.emit(seq.request.stream, GenEvent("text", text=tail))
        self.emit(
            seq.request.stream,
            GenEvent("finished", finish_reason=reason, prompt_tokens=len(seq.prompt), completion_tokens=seq.produced),
        )

    def _feed(self, seq: RunningSequence, text: str) -> bool:
        """Pass text through the sequence's stop strings and emit what they let out; whether one ended it."""
        out, stopped = seq.output.feed(text)
        if out:
            self.emit(seq.request.stream, GenEvent("text", text=out))
        return stopped

    def _text_of(self, seq: RunningSequence, token: int) -> str:
        text = seq.output.decode(self._llama.piece(token))
        seq.recent_text = (seq.recent_text + text)[-16:]
        if [token] == self._think_end or "</think>" in seq.recent_text:
            seq.thinking_closed = True
        return text
