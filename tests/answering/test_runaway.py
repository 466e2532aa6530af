"""The runaway check: blank lines or one phrase over and over end an answer; real answers never do."""

from __future__ import annotations

from docqa.answering.runaway import MAX_BLANK_LINES, RunawayWatch


def _fed(pieces: list[str]) -> int | None:
    """The index of the piece at which the watch stops the text, or None."""
    watch = RunawayWatch()
    for i, piece in enumerate(pieces):
        if watch.feed(piece):
            return i
    return None


def test_a_run_of_blank_lines_stops_after_the_limit() -> None:
    pieces = ["The rent is 1,200 EUR [1].", *["\n"] * 50]
    assert _fed(pieces) == MAX_BLANK_LINES + 1
    assert _fed(["Answer:", "\n\n", "Next paragraph.", "\n\n", "More."]) is None
    assert _fed(["x", " " * 300]) == 1  # spaces without end


def test_a_phrase_said_over_and_over_stops() -> None:
    assert _fed(["The notice period is 30 days.", *[" The notice period is 30 days."] * 20]) is not None
    assert _fed(["合同", *["的的"] * 200]) is not None
    assert _fed(["Revenue", *[" | 0.0"] * 100]) is not None
    line = "The FY2018 capital expenditure amount (in USD millions) for 3M is $ 1.4 billion.\n"  # the demo model's
    said = line * 6
    assert _fed([said[i : i + 4] for i in range(0, len(said), 4)]) is not None  # four characters a token


def test_a_long_row_or_rows_in_turn_said_again_stop_at_the_fourth_time() -> None:
    row = (
        "| Governing law | This Agreement shall be governed by the laws of the State of New York, without regard "
        "to its conflict of laws principles, and the parties submit to the courts of New York County. | p. 10 |\n"
    )
    assert len(row) > 200  # longer than the back-to-back check's unit
    assert _fed(["| Clause | Text | Page |\n", *[row] * 18]) == 4
    other = "| Term | The term of this Agreement is five (5) years from the Effective Date. | p. 2 |\n"
    assert _fed(["| Clause | Text | Page |\n", *[row, other] * 9]) == 7  # the row's fourth time


def test_tables_lists_and_prose_are_left_alone() -> None:
    table = ["| Year | Revenue |\n", "|---|---|\n", *[f"| {2000 + i} | {i * 37.5:.1f} |\n" for i in range(60)]]
    bullets = [f"- Clause {i}: the supplier shall deliver item {i * 7} on time.\n" for i in range(40)]
    prose = ["The agreement ", "may be terminated ", "by either party ", "with 90 days' notice [1]. "] * 3
    chinese = [f"第{i}条 供方应当按期交付第{i}批货物。\n" for i in range(40)]
    said_thrice = ["### Term\n", "The documents do not say how long the agreement runs.\n", "### Renewal\n"] * 3
    for text in (table, bullets, prose, chinese, said_thrice):
        assert _fed(text) is None


def test_the_builder_passes_progress_on_and_ends_a_runaway_answer() -> None:
    import time

    from docqa.answering.builder import AnswerBuilder
    from docqa.answering.prompting import PromptPlan
    from docqa.core.events import DoneEvent, ProgressEvent
    from docqa.core.streams import GenEvent

    builder = AnswerBuilder("non-thinking", PromptPlan("prompt", [], 10, ()), time.perf_counter(), 1.0)
    (progress,) = builder.on_event(GenEvent("progress", prompt_tokens=12_480, prompt_done=4_992))
    assert isinstance(progress, ProgressEvent) and progress.line() == "reading 12,480 tokens: 40%"
    assert progress.as_dict() == {"prompt_tokens": 12_480, "done": 4_992} and not builder.done
    events = [e for _ in range(20) for e in builder.on_event(GenEvent("text", text="\n"))]
    assert builder.done and isinstance(events[-1], DoneEvent) and events[-1].finish_reason == "repetition"
    assert builder.result().finish_reason == "repetition"


def test_the_repeats_that_ended_an_answer_are_cut_to_one() -> None:
    from docqa.answering.runaway import without_repeats

    said = "Revenue rose in every region. "
    assert without_repeats("Answer [1]. " + said * 7, said) == "Answer [1]. " + said
    assert without_repeats("ab" * 3, "ab") == "ab"
    assert without_repeats("no repeat here", "xyz") == "no repeat here"


def test_a_loop_with_small_changes_cut_at_the_limit_is_flagged_and_not_cached() -> None:
    import random
    import time

    from docqa.answering.builder import AnswerBuilder
    from docqa.answering.prompting import PromptPlan
    from docqa.answering.runaway import looped
    from docqa.core.streams import GenEvent

    draw = random.Random(7)
    phrases = [" and the Uniform Commercial Code (UCC)", " and the UCC as adopted in New York", " and the UCC,"]
    loop = "The governing law is New York law" + "".join(draw.choice(phrases) for _ in range(60))
    assert _fed([loop[i : i + 4] for i in range(0, len(loop), 4)]) is None  # not back to back: the watch misses it
    assert looped(loop)
    rows = "".join(f"| contract_{i}.pdf | NOT STATED | - |\n" for i in range(40))
    bullets = "".join(f"- Clause {i}: the supplier shall deliver item {i * 7} on time.\n" for i in range(40))
    assert not looped(rows) and not looped(bullets) and not looped("The notice period is 30 days. " * 3)
    builder = AnswerBuilder("non-thinking", PromptPlan("prompt", [], 10, ()), time.perf_counter(), 1.0)
    for i in range(0, len(loop), 400):
        builder.on_event(GenEvent("text", text=loop[i : i + 400]))
    builder.on_event(GenEvent("finished", finish_reason="length", completion_tokens=512))
    assert builder.result().finish_reason == "repetition"  # flagged, and the answer cache keeps no repetition
