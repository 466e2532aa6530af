"""The continuous-batching engine on the real demo model (llama.cpp on the CPU)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from docqa.core.errors import BusyError
from docqa.core.sampling_params import NON_THINKING_SAMPLING, SamplingParams
from docqa.core.settings import LLMSettings
from docqa.core.streams import GenEvent
from docqa.engine.batching import BatchingGenerator
from docqa.engine.sequences import THINKING_CUTOFF
from docqa.engine.step_timing import StepTiming, trace_summary
from docqa.llama.token_batch import common_prefix
from tests.support.engines import PROMPTS, four_sequences, run_together

pytestmark = pytest.mark.slow

GREEDY = replace(NON_THINKING_SAMPLING, temperature=0.0, max_tokens=12, seed=1)


@pytest.fixture(scope="module", params=[False, True], ids=["per-sequence-kv", "unified-kv"])
def engine(demo_model: Path, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    eng = BatchingGenerator(
        demo_model,
        LLMSettings(n_ctx=2048, n_parallel=6, n_batch=256, max_queue=3, prefix_cache_slots=4, kv_unified=request.param),
    )
    yield eng
    eng.close()


def run(engine: BatchingGenerator, prompt: str, params: SamplingParams = GREEDY) -> tuple[str, GenEvent]:
    events = list(engine.submit(prompt, params))
    return "".join(e.text for e in events if e.kind == "text"), events[-1]


def run_within(engine: BatchingGenerator, prompt: str, seconds: float) -> tuple[str, GenEvent]:
    """`run`, failing the test instead of hanging it when the stream does not end in time."""
    result: list[tuple[str, GenEvent]] = []
    reader = threading.Thread(target=lambda: result.append(run(engine, prompt)), daemon=True)
    reader.start()
    reader.join(seconds)
    assert result, f"the stream did not end within {seconds} s"
    return result[0]


def wait_idle(engine: BatchingGenerator) -> None:
    deadline = time.monotonic() + 60
    while engine.memory_report()["running"] and time.monotonic() < deadline:
        time.sleep(0.05)


def greedy_shortfall(engine: BatchingGenerator, prompt: str, text: str) -> float:
    """How far `text` strays from greedy decoding of `prompt` alone: step by step (teacher forcing), the
    likeliest token that spells the text's next bytes, below its step's best logit, as a share of the
    logit range; the worst step. 0: greedy decoding writes this text; 1.0: none of the 1,000 likeliest
    tokens spells it on. Walked over the bytes, not the text tokenized again: the engine may write
    "经" + "验收" where the tokenizer reads "经验" + "收" (the tokenized text scored 24.7% for a greedy
    text in the unified-KV runs of 2026-12-05; docs/benchmarks/gpu-engine.md)."""
    ids, rest, worst = engine.llama.tokenize(prompt), text.encode("utf-8"), 0.0
    while rest:
        (logits,) = engine.teacher_forced_logits([ids])
        row = logits[-1]
        token = next((int(t) for t in np.argsort(row)[::-1][:1000] if _spells(engine.llama.piece(int(t)), rest)), None)
        if token is None:
            return 1.0
        worst = max(worst, float((row.max() - row[token]) / (row.max() - row.min())))
        ids.append(token)
        rest = rest[len(engine.llama.piece(token)) :]
    return worst


def _spells(piece: bytes, rest: bytes) -> bool:
    """The token writes the text's next bytes (or all that is left of it: a stream cut inside a token)."""
    return bool(piece) and (rest.startswith(piece) or piece.startswith(rest))


def test_batching_does_not_change_what_a_sequence_computes(engine: BatchingGenerator) -> None:
    """Teacher forcing: each sequence's own tokens, fed together with the others and alone."""
    sequences = [engine.llama.tokenize(p + " and so on, as the record shows in detail.") for p in PROMPTS]
    together = engine.teacher_forced_logits(sequences)
    agree = total = 0
    worst = 0.0
    for tokens, batched in zip(sequences, together, strict=True):
        (alone,) = engine.teacher_forced_logits([tokens])
        spread = alone.max(axis=1) - alone.min(axis=1)
        worst = max(worst, float((np.abs(batched - alone).max(axis=1) / spread).max()))
        agree += int((batched.argmax(axis=1) == alone.argmax(axis=1)).sum())
        total += len(tokens)
    assert worst <= 0.05, f"logits differ by up to {worst:.1%} of their range"
    assert agree / total >= 0.95, f"argmax agrees at {agree}/{total} positions"


def test_concurrent_streams_all_complete_without_mixing(engine: BatchingGenerator) -> None:
    alone = {p: run(engine, p)[0] for p in PROMPTS[:4]}
    streams = {p: engine.submit(p, GREEDY) for p in PROMPTS[:4]}
    together = {p: "".join(e.text for e in s if e.kind == "text") for p, s in streams.items()}
    for p in PROMPTS[:4]:
        assert together[p], p
    wait_idle(engine)
    # CPU kernels round differently in a batch, so greedy text may part from the text alone at a near-tie
    # (on one CPU two of these four did within three tokens). What batching must not do is give a stream
    # another's logits: every token each stream got is the greedy choice of its own prompt, computed
    # alone, to within the rounding the teacher-forcing test allows (5% of the logit range; measured:
    # 0-0.3% for a stream's own text; another prompt's text is spelled by none of the 1,000 likeliest tokens).
    for i, p in enumerate(PROMPTS[:4]):
        assert greedy_shortfall(engine, p, together[p]) <= 0.05, (p, together[p], alone[p])
        assert greedy_shortfall(engine, p, together[PROMPTS[(i + 1) % 4]]) > 0.05  # the check can tell
    assert engine.memory_report()["kv_cells_in_sequences"] == 0


def test_cancelling_one_stream_leaves_the_others_correct(engine: BatchingGenerator) -> None:
    long = replace(GREEDY, max_tokens=40)
    expected = run(engine, PROMPTS[1], long)[0]
    victim = engine.submit(PROMPTS[0], replace(long, max_tokens=200))
    keeper = engine.submit(PROMPTS[1], long)
    got: list[str] = []

    def read_keeper() -> None:
        got.extend(e.text for e in keeper if e.kind == "text")

    reader = threading.Thread(target=read_keeper)
    reader.start()
    seen = 0
    for event in victim:
        seen += event.kind == "text"
        if seen == 3:
            victim.cancel()
            break
    reader.join(timeout=120)
    text = "".join(got)
    assert text[:20] == expected[:20]
    wait_idle(engine)
    report = engine.memory_report()
    assert report["running"] == 0 and report["kv_cells_in_sequences"] == 0


def test_prefix_reuse_gives_the_same_tokens(engine: BatchingGenerator) -> None:
    # How a prompt is split into decode calls moves llama.cpp's CPU logits by up to ~2% of their range
    # (another matmul kernel for one token than for many). After "Answer:" the demo model's top three
    # were within 0.05 of each other, and the greedy text differed on an AVX-512 machine with or without
    # reuse; ending mid-sentence in a repeated one makes the continuation decisive (a margin of ~6), so
    # what differs here is the reused KV, not rounding.
    prompt = (
        "Sources:\n"
        + "The agreement may be terminated on sixty days notice. " * 20
        + "\nQuestion: notice?\nAnswer: The agreement may be"
    )
    cold, first = run(engine, prompt)
    before = engine.cache.tokens_held()
    assert before > 0, "the prompt was kept for reuse"
    reused = engine.prompt_tokens_reused
    warm, second = run(engine, prompt)
    assert engine.prompt_tokens_reused - reused >= first.prompt_tokens // 2, "the second run started from the cache"
    assert warm == cold
    assert cold.startswith(" terminated on sixty days")
    assert first.prompt_tokens == second.prompt_tokens


def test_full_queue_is_busy(engine: BatchingGenerator) -> None:
    streams = []
    with pytest.raises(BusyError):
        for _ in range(20):
            streams.append(engine.submit(PROMPTS[0], replace(GREEDY, max_tokens=100)))
    assert len(streams) <= 6 + 3  # n_parallel running + max_queue waiting
    # what callers that fill the engine read (docqa eval --answers sizes its threads by it)
    assert engine.info.parallel == engine.memory_report()["parallel_sequences"] == 6
    for s in streams:
        s.cancel()
    wait_idle(engine)
    assert run(engine, PROMPTS[2], replace(GREEDY, max_tokens=4))[1].completion_tokens <= 4


def test_thinking_budget_closes_the_reasoning(engine: BatchingGenerator) -> None:
    text, done = run(engine, "<think>\nLet me think about colours.", replace(GREEDY, max_tokens=30, thinking_budget=5))
    assert THINKING_CUTOFF in text
    assert done.completion_tokens >= 5


def test_a_stop_string_ends_the_text_though_the_next_step_was_launched(engine: BatchingGenerator) -> None:
    """A token's text is made while the next step decodes (launched ahead): a stop string found
    there must still end the text exactly at the stop, and the sequence's cells must be freed."""
    run(engine, PROMPTS[1], replace(GREEDY, max_tokens=2))  # the prompt's KV is cached: both runs reuse it
    before = engine.timing.launched_ahead
    free, _ = run(engine, PROMPTS[1], replace(GREEDY, max_tokens=24))
    assert engine.timing.launched_ahead == before, "on the CPU no step is launched ahead by default"
    # four characters from the second half that do not occur earlier: the stop comes many tokens in
    starts = [i for i in range(len(free) // 2, len(free) - 4) if free.index(free[i : i + 4]) == i]
    assert starts, free
    stop = free[starts[0] : starts[0] + 4]
    ahead = engine.timing.launched_ahead
    engine.launch_ahead = True  # on a GPU; on the CPU llama_decode computes in the call, so it is off
    try:
        text, done = run(engine, PROMPTS[1], replace(GREEDY, max_tokens=24, stop=(stop,)))
    finally:
        engine.launch_ahead = False
    assert engine.timing.launched_ahead - ahead >= 3, "the steps were launched ahead"
    assert text == free[: free.index(stop)]
    assert done.finish_reason == "stop" and done.completion_tokens < 24
    wait_idle(engine)
    assert engine.memory_report()["kv_cells_in_sequences"] == 0


def test_a_prompt_longer_than_the_context_fails_clearly(engine: BatchingGenerator) -> None:
    _text, done = run(engine, "word " * 5000)
    assert done.kind == "failed" and "does not fit" in done.text


def test_token_pieces_round_trip_without_padding(engine: BatchingGenerator) -> None:
    text = "Revenue 2025: EUR 184.6 million — 设备质保期 ✓"
    tokens = engine.llama.tokenize(text, special=False)
    joined = b"".join(engine.llama.piece(t) for t in tokens).decode("utf-8")
    assert "\x00" not in joined
    assert joined.strip() == text


def test_asks_over_the_same_chunks_arriving_together_share_one_prefill(engine: BatchingGenerator) -> None:
    """The second of two prompts that share their sources waits for the first one's prefill and
    starts from its cached KV, instead of evaluating the same sources in parallel."""
    wait_idle(engine)
    sources = "Sources:\n" + "Either party may terminate this agreement on ninety days written notice. " * 30
    prompts = [sources + "\nQuestion: how much notice?\nAnswer:", sources + "\nQuestion: who may terminate?\nAnswer:"]
    shared = int(common_prefix(*(np.asarray(engine.llama.tokenize(p)) for p in prompts)))
    assert shared > 300
    before = engine.memory_report()["prompt_tokens_reused"]
    results: list[tuple[str, GenEvent]] = []
    threads = [threading.Thread(target=lambda p=p: results.append(run(engine, p))) for p in prompts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(event.kind == "finished" for _, event in results)
    assert engine.memory_report()["prompt_tokens_reused"] - before >= shared - 1


def test_without_a_prefix_cache_prompts_sharing_a_prefix_are_read_together(demo_model: Path) -> None:
    """With no cache to keep a prompt's KV (prefix_cache_slots=0), nothing could start from a twin's prefill:
    prompts that share their opening (a collection question's instructions) are read in the same step, not
    one a step as they were (a collection question on an H100 read its 87 prompts in 87 steps)."""
    eng = BatchingGenerator(demo_model, LLMSettings(n_ctx=1024, n_parallel=3, n_batch=1024, prefix_cache_slots=0))
    try:
        opening = "Read the contract below and say whether it restricts competition. " * 8
        prompts = [f"{opening}\nContract {n}: " + "The parties agree to the terms herein. " * (3 + n) for n in range(3)]
        assert common_prefix(*(np.asarray(eng.llama.tokenize(p)) for p in prompts[:2])) > 60
        lengths = [len(eng.llama.tokenize(p)) for p in prompts]
        eng.timing = StepTiming(trace=[])
        texts = run_together(eng, prompts, replace(GREEDY, max_tokens=3, ignore_eos=True))
        trace = eng.timing.trace or []
    finally:
        eng.close()
    assert len(texts) == 3 and trace
    assert trace[0][2] == sum(lengths)  # the first step read all three prompts


# --- sampling inside llama.cpp's decode graph (on by default on a GPU; forced on here) -------------


def _sampled_texts(model: Path, backend: bool, requests: list[SamplingParams]) -> tuple[list[str], BatchingGenerator]:
    settings = LLMSettings(n_ctx=1024, n_parallel=2, n_batch=256, prefix_cache_slots=0, backend_sampling=backend)
    eng = BatchingGenerator(model, settings)
    return [run(eng, PROMPTS[1], params)[0] for params in requests], eng


def test_backend_sampling_draws_what_host_sampling_draws(tiny_qwen3: Path) -> None:
    """The same chain and seed give the same tokens whether llama.cpp samples in its graph or on the host;
    a slot's chain is reset, not rebuilt, for a request with the same parameters, and a different mode
    gets its own chain."""
    seeded = replace(NON_THINKING_SAMPLING, max_tokens=40, ignore_eos=True, seed=11)
    other = replace(seeded, temperature=0.6, top_p=0.95, seed=12)
    requests = [seeded, other, seeded, other, seeded]
    on_host, host_engine = _sampled_texts(tiny_qwen3, False, requests)
    on_graph, graph_engine = _sampled_texts(tiny_qwen3, True, requests)
    try:
        assert graph_engine.memory_report()["sampling_on_backend"] == 1
        assert host_engine.memory_report()["sampling_on_backend"] == 0
        assert on_graph == on_host
        assert on_graph[0] == on_graph[2] == on_graph[4] and on_graph[0] != on_graph[1]
        assert host_engine.samplers.chains_built == 2  # one per parameter set, each kept by its slot
        # in the graph, a chain is attached for each request (llama.cpp takes a chain once) and
        # detached when it ends: llama.cpp runs every attached chain at every step, busy or not
        assert graph_engine.samplers.chains_built == len(requests)
        assert not graph_engine.samplers.attached_slots
        # teacher forcing afterwards still sees raw logits: the chains are detached first
        tokens = graph_engine.llama.tokenize(PROMPTS[2])
        (forced_graph,) = graph_engine.teacher_forced_logits([tokens])
        (forced_host,) = host_engine.teacher_forced_logits([tokens])
        assert np.allclose(forced_graph, forced_host, atol=1e-3)
        assert run(graph_engine, PROMPTS[1], seeded)[0] == on_graph[0]
    finally:
        host_engine.close()
        graph_engine.close()


@pytest.mark.parametrize("unified", [False, True], ids=["per-sequence-kv", "unified-kv"])
def test_greedy_text_of_the_tiny_qwen3_is_the_same_together_and_alone(tiny_qwen3: Path, unified: bool) -> None:
    """The Qwen3-architecture model, greedy, six prompts of 32 tokens each, decoded alone and all six in the
    same batches. Seen on this CPU: all six identical, either KV layout; where llama.cpp's kernels round
    differently in a batch a text may drift late, so one in six may differ, but not from its start."""
    greedy = replace(GREEDY, max_tokens=32, ignore_eos=True)
    settings = LLMSettings(n_ctx=1024, n_parallel=6, n_batch=256, prefix_cache_slots=0, kv_unified=unified)
    eng = BatchingGenerator(tiny_qwen3, settings)
    try:
        alone = [run(eng, prompt, greedy)[0] for prompt in PROMPTS]
        together = run_together(eng, PROMPTS, greedy)
    finally:
        eng.close()
    assert len(set(alone)) == len(PROMPTS)  # six prompts, six continuations: a swap would show
    assert sum(a == t for a, t in zip(alone, together, strict=True)) >= len(PROMPTS) - 1, (alone, together)
    assert all(a[:16] == t[:16] for a, t in zip(alone, together, strict=True)), (alone, together)


# --- drawing every row on the host at once under load (docqa.engine.batched_sampling) ------------


@pytest.mark.parametrize("graph", [False, True], ids=["full-logits-on-host", "top-k-in-graph"])
def test_batched_sampling_reads_each_sequence_its_own_logits(tiny_qwen3: Path, graph: bool) -> None:
    """Drawing all rows at once (from the full logits, or from the top-k the graph kept) must match
    llama.cpp's own chains token for token over the same batches: top-1 sampling is deterministic,
    and a sequence given another's row would diverge at once."""
    top_1 = replace(NON_THINKING_SAMPLING, top_k=1, max_tokens=24, ignore_eos=True, seed=3)
    texts = {}
    for batched_from in (0, 2):
        eng = four_sequences(tiny_qwen3, backend_sampling=graph, batched_sampling_from=batched_from)
        try:
            texts[batched_from] = run_together(eng, PROMPTS[:4], top_1)
            assert eng.samplers.mode_switches == (1 if batched_from else 0)
            # in the graph, every row went through a top-k-only chain and was finished on the host
            assert (eng.samplers.rows_from_graph_top_k > 0) == (graph and batched_from > 0)
        finally:
            eng.close()
    assert len(set(texts[0])) == 4  # four prompts, four different continuations
    assert texts[2] == texts[0]


def test_sampling_moves_to_the_host_under_load_and_back(tiny_qwen3: Path) -> None:
    """Chains sit in llama.cpp's graph only while their slot is busy; from `batched_sampling_from`
    generating sequences on the graph keeps only each row's top-k and the host draws; below half,
    whole chains go back into the graph."""
    sampled = replace(NON_THINKING_SAMPLING, max_tokens=24, ignore_eos=True, seed=5)
    eng = four_sequences(tiny_qwen3, backend_sampling=True, batched_sampling_from=4)
    try:
        alone = run(eng, PROMPTS[0], sampled)[0]
        assert eng.samplers.mode_switches == 0 and not eng.samplers.attached_slots  # detached when done
        loaded = run_together(eng, PROMPTS[:4], sampled)
        assert all(loaded) and eng.samplers.mode_switches == 1 and eng.samplers.batched
        assert run(eng, PROMPTS[0], sampled)[0] == alone  # back in the graph: llama.cpp's draws again
        assert eng.samplers.mode_switches == 2 and not eng.samplers.batched
        assert not eng.samplers.attached_slots
    finally:
        eng.close()


def test_on_the_cpu_two_generating_sequences_are_drawn_at_once(tiny_qwen3: Path) -> None:
    """Unset, the CPU draws from two generating sequences on all rows at once (each llama.cpp chain sorts its
    own full row there), and a request left alone goes back to llama.cpp's chain."""
    eng = four_sequences(tiny_qwen3)
    try:
        assert not eng.samplers.on_backend and eng.samplers.batched_from == 2
        for generating, batched in ((1, False), (2, True), (3, True), (1, False), (2, True)):
            eng.samplers.adapt(generating)
            assert eng.samplers.batched is batched, generating
        assert eng.samplers.mode_switches == 3
        eng.samplers.adapt(1)
        seeded = replace(NON_THINKING_SAMPLING, max_tokens=16, ignore_eos=True, seed=7)
        together = run_together(eng, PROMPTS[:2], seeded)
        assert all(together) and eng.samplers.batched
        assert run_together(eng, PROMPTS[:2], seeded) == together  # numpy's draws, seeded per request, repeat
    finally:
        eng.close()


def test_a_long_step_is_computed_in_passes_of_n_ubatch(tiny_qwen3: Path) -> None:
    """n_ubatch reaches llama.cpp (capped at n_batch), and splitting a step into shorter passes does
    not change what it computes beyond the CPU kernels' rounding."""
    text = " ".join(PROMPTS) * 8
    logits = {}
    for n_ubatch in (1024, 96):
        settings = LLMSettings(n_ctx=2048, n_parallel=1, n_batch=1024, n_ubatch=n_ubatch, prefix_cache_slots=0)
        eng = BatchingGenerator(tiny_qwen3, settings)
        try:
            assert eng.llama.lib.llama_n_ubatch(eng.llama.ctx.ctx) == n_ubatch
            tokens = eng.llama.tokenize(text)
            assert len(tokens) > 3 * 96  # several passes at the smaller size
            (logits[n_ubatch],) = eng.teacher_forced_logits([tokens])
        finally:
            eng.close()
    one_pass, passes = logits[1024], logits[96]
    spread = float(one_pass.max() - one_pass.min())
    assert float(np.abs(one_pass - passes).max()) <= 0.05 * spread
    assert float(np.mean(one_pass.argmax(axis=1) == passes.argmax(axis=1))) >= 0.95
    capped = BatchingGenerator(tiny_qwen3, LLMSettings(n_ctx=1024, n_parallel=1, n_batch=256, prefix_cache_slots=0))
    try:
        assert capped.llama.lib.llama_n_ubatch(capped.llama.ctx.ctx) == 256  # the 1024 default, capped
    finally:
        capped.close()


def test_a_long_prompt_reports_how_far_it_has_read_before_the_first_token(engine: BatchingGenerator) -> None:
    prompt = " ".join(f"Line {i} of the depot report lists crates." for i in range(120))
    total = len(engine.llama.tokenize(prompt))
    assert total > 3 * 256  # several steps of n_batch
    events = list(engine.submit(prompt, replace(GREEDY, max_tokens=4)))
    kinds = [e.kind for e in events]
    progress = [e for e in events if e.kind == "progress"]
    assert len(progress) == (total - 1) // 256, kinds  # one after each step that leaves some of the prompt
    assert all(e.prompt_tokens == total for e in progress)
    done = [e.prompt_done for e in progress]
    assert done == sorted(done) and done[-1] < total and done[0] >= 256
    assert kinds.index("progress") < kinds.index("text") and kinds[-1] == "finished"
    assert "progress" not in kinds[kinds.index("text") :]


def test_a_prompt_counted_before_it_is_submitted_is_not_tokenized_again(
    engine: BatchingGenerator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ask counts its prompt's tokens and then submits it: the engine takes the tokens counted
    (docqa.engine.prompt_tokens) instead of tokenizing the prompt again, to the same text; one submitted
    uncounted is tokenized once, at submit."""
    prompt = PROMPTS[2] + " Say which."
    calls: list[str] = []
    tokenize = engine.llama.tokenize

    def counting(text: str, special: bool = True) -> list[int]:
        calls.append(text)
        return tokenize(text, special)

    monkeypatch.setattr(engine.llama, "tokenize", counting)
    run(engine, prompt)
    assert calls.count(prompt) == 1  # tokenized once, at submit
    # Compared from the same cache state: the first run may reuse another test's cached head, the later ones
    # this prompt whole, and on some CPUs those passes round apart enough to flip a greedy token.
    uncounted, _ = run(engine, prompt)
    assert engine.count_tokens(prompt) == len(tokenize(prompt))
    calls.clear()
    counted, _ = run(engine, prompt)
    assert prompt not in calls, "the counted prompt was tokenized again"
    assert counted == uncounted
    assert engine.tokenized.take(prompt) is None  # its entry went with the request


def test_a_short_prompt_that_arrives_behind_a_long_one_is_read_first(engine: BatchingGenerator) -> None:
    """Shortest remaining prompt first (step_order): the long prompt, admitted first, needs 6 steps of
    256 tokens; the short one's first token comes while the long is still being read (first come, first
    read, it came with the long's, after the long's last progress report). Neither prompt is cached: a
    cached prompt has one token left and is served first in any order."""
    wait_idle(engine)
    long_prompt = " ".join(f"Crate {i} of the harbour manifest holds roof tiles." for i in range(110))  # cached nowhere
    assert len(engine.llama.tokenize(long_prompt)) > 5 * 256
    log: list[tuple[str, str]] = []
    lock = threading.Lock()

    def consume(name: str, stream: Iterator[GenEvent]) -> None:
        for event in stream:
            with lock:
                log.append((name, event.kind))

    with engine._step_lock:  # both admitted in the same step, the long one first
        streams = {
            "long": engine.submit(long_prompt, replace(GREEDY, max_tokens=4)),
            "short": engine.submit("Which crate of the manifest holds roof tiles?", replace(GREEDY, max_tokens=4)),
        }
    threads = [threading.Thread(target=consume, args=item) for item in streams.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    short_first = log.index(("short", "text"))
    long_progress_after = [i for i, entry in enumerate(log) if entry == ("long", "progress") and i > short_first]
    assert len(long_progress_after) >= 3, log


def test_a_step_trace_says_what_each_step_held_and_a_row_cap_holds_generating_rows_back(
    engine: BatchingGenerator,
) -> None:
    """The benchmark's per-step trace (StepTiming.trace), and generating rows held back while a prompt is read
    (prompt_steps_per_decode): a short ask finishes its prompt first, then waits while a long prompt is read,
    and both complete."""
    long_prompt = " ".join(PROMPTS) * 12  # several n_batch slices
    wait_idle(engine)
    try:
        engine.planner.prompt_steps_per_decode = 64
        engine.timing = StepTiming(trace=[])
        started = time.perf_counter()
        texts = run_together(engine, [PROMPTS[0], long_prompt], replace(GREEDY, max_tokens=6))
        trace = engine.timing.trace or []
    finally:
        engine.planner.prompt_steps_per_decode = 1
        engine.timing = StepTiming()
    assert all(texts)
    assert trace and all(prompt == 0 or rows == 0 for _, rows, prompt in trace)  # no generating row beside a prompt
    summary = trace_summary(trace, started)
    assert summary["prompt_only_steps"] >= 2 and summary["decode_only_steps"] >= 5 and "mixed_steps" not in summary
    assert summary["prompt_only_prompt_tokens"] > summary["decode_only_prompt_tokens"] == 0
    assert sum(summary[f"{k}_s"] for k in ("prompt_only", "decode_only")) <= time.perf_counter() - started


def _gapped_run(model: Path, fillers: bool) -> tuple[list[str], BatchingGenerator]:
    """Slots 0 and 2 generate long while slot 1's short answer ends and a long prompt then takes slot 1
    and 3, read 30 tokens a step: steps with generating rows on both sides of a slot that holds nothing
    (or a prompt left out of the step)."""
    settings = LLMSettings(n_ctx=1024, n_parallel=4, n_batch=32, prefix_cache_slots=0, pass_fillers=fillers)
    eng = BatchingGenerator(model, settings)
    lengths = [40, 2, 40]
    with eng._step_lock:
        first = [
            eng.submit(p, replace(GREEDY, max_tokens=n, ignore_eos=True))
            for p, n in zip(PROMPTS[:3], lengths, strict=True)
        ]
    texts = ["".join(e.text for e in first[1] if e.kind == "text")]
    long_prompt = " ".join(PROMPTS[3:6]) * 2
    later = [eng.submit(long_prompt + str(i), replace(GREEDY, max_tokens=8, ignore_eos=True)) for i in range(2)]
    texts += ["".join(e.text for e in s if e.kind == "text") for s in (first[0], first[2], *later)]
    wait_idle(eng)
    return texts, eng


def test_fillers_keep_generating_rows_in_one_pass_and_leave_no_trace(tiny_qwen3: Path) -> None:
    """With a slot between generating rows that holds nothing in a step, the steps with fillers take fewer
    llama.cpp passes than without, every stream gets the same greedy text either way (the tiny Qwen3's
    greedy text does not move with the batch, test above), and no filler's cell is left in any slot."""
    runs = {}
    for fillers in (False, True):
        texts, eng = _gapped_run(tiny_qwen3, fillers)
        try:
            runs[fillers] = (texts, eng.timing.passes, eng.timing.fillers)
            assert all(texts), texts
            assert [eng.llama.seq_max_pos(slot) for slot in range(4)] == [-1, -1, -1, -1]
        finally:
            eng.close()
    (texts_without, passes_without, fillers_without), (texts_with, passes_with, fillers_with) = runs[False], runs[True]
    assert texts_with == texts_without
    assert fillers_without == 0 and fillers_with > 0
    assert passes_with < passes_without, runs


def test_a_fault_in_a_step_fails_the_requests_it_held_and_the_engine_serves_on(tiny_qwen3: Path) -> None:
    eng = four_sequences(tiny_qwen3)
    try:
        real_launch = eng._launch
        faults = iter([RuntimeError("a bug")])

        def launch_once_faulty(order):  # type: ignore[no-untyped-def]
            if (fault := next(faults, None)) is not None:
                raise fault
            return real_launch(order)

        eng._launch = launch_once_faulty  # type: ignore[method-assign]
        text, last = run(eng, PROMPTS[0])
        assert last.kind == "failed" and "internal error" in last.text and not text
        text, last = run(eng, PROMPTS[0])
        assert last.kind == "finished" and text
        assert eng.memory_report()["running"] == 0
    finally:
        eng.close()


def test_a_fault_while_admitting_fails_that_request_gives_its_slot_back_and_the_engine_serves_on(
    tiny_qwen3: Path,
) -> None:
    """Tokenising (before the request holds a slot) and its sampler chain (after) each fail. The tokenizer
    fails twice: at submit (the request goes on uncounted) and again at admission, in the loop."""
    eng = four_sequences(tiny_qwen3)
    try:
        real_tokenize, real_chain = eng.llama.tokenize, eng.samplers.for_request
        faults = {"tokenize": 2, "chain": 1}

        def tokenize_once_faulty(text: str, special: bool = True) -> list[int]:
            if faults["tokenize"]:
                faults["tokenize"] -= 1
                raise RuntimeError("a tokenizer bug")
            return real_tokenize(text, special)

        def chain_once_faulty(slot, params):  # type: ignore[no-untyped-def]
            if faults["chain"]:
                faults["chain"] -= 1
                raise RuntimeError("a sampler bug")
            return real_chain(slot, params)

        eng.llama.tokenize = tokenize_once_faulty  # type: ignore[method-assign]
        eng.samplers.for_request = chain_once_faulty  # type: ignore[method-assign]
        for _ in range(2):  # bounded: without the guard the loop thread dies and a stream never ends
            text, last = run_within(eng, PROMPTS[0], seconds=120)
            assert last.kind == "failed" and "internal error" in last.text and not text
        assert faults == {"tokenize": 0, "chain": 0}
        wait_idle(eng)
        assert eng._free_slots == [0, 1, 2, 3]  # the slot the chain's fault held came back
        text, last = run(eng, PROMPTS[0])
        assert last.kind == "finished" and text
    finally:
        eng.close()


def test_close_frees_no_context_the_engine_thread_still_uses(demo_model: Path) -> None:
    """Issue 60 (a review): close() freed llama.cpp's context even when the engine thread outlived its join,
    which a decode still running would then use. Now a thread still in a decode keeps the context."""
    eng = four_sequences(demo_model)
    eng.close_wait_s = 0.5
    in_decode, finish = threading.Event(), threading.Event()
    decode = eng.llama.decode

    def slow_decode() -> int:  # a decode that takes longer than close waits
        in_decode.set()
        finish.wait(60)
        return decode()

    eng.llama.decode = slow_decode  # type: ignore[method-assign]
    freed: list[bool] = []
    close_context = eng.llama.close
    eng.llama.close = lambda: freed.append(True)  # type: ignore[method-assign]
    try:
        eng.submit("Tell me a long story about a lighthouse keeper.", replace(NON_THINKING_SAMPLING, max_tokens=8))
        assert in_decode.wait(60)
        eng.close()
        assert not freed and eng._thread.is_alive()  # nothing freed under the decode
        finish.set()
        eng._thread.join(60)
        assert not eng._thread.is_alive()
    finally:
        finish.set()
        close_context()
