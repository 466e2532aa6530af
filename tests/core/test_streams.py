"""Handing generated events from the engine's thread to the consumers' event loop."""

from __future__ import annotations

import asyncio

from docqa.core.streams import GenerationStream, GenEvent, deliver


def test_a_steps_events_reach_every_stream_in_order_with_one_wakeup_per_loop() -> None:
    async def main() -> tuple[int, list[list[str]], list[str]]:
        loop = asyncio.get_running_loop()
        wakeups = 0
        schedule = loop.call_soon_threadsafe

        def counting(callback, *args, **kwargs):  # type: ignore[no-untyped-def]
            nonlocal wakeups
            wakeups += callback.__name__ == "_put_all"  # asyncio.to_thread wakes the loop too: not ours
            return schedule(callback, *args, **kwargs)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign,assignment]
        streams = [GenerationStream(loop) for _ in range(3)]
        threaded = GenerationStream()  # a synchronous reader gets its events directly
        step = [(s, GenEvent("text", text=f"{i}a")) for i, s in enumerate(streams)]
        step += [(s, GenEvent("text", text=f"{i}b")) for i, s in enumerate(streams)]
        step += [(s, GenEvent("finished", finish_reason="stop")) for s in streams]
        step += [(threaded, GenEvent("text", text="t")), (threaded, GenEvent("finished"))]
        await asyncio.to_thread(deliver, step)  # from another thread, as the engine does

        async def read(stream: GenerationStream) -> list[str]:
            return [e.text or e.kind async for e in stream]

        texts = [await read(s) for s in streams]
        return wakeups, texts, [e.text or e.kind for e in threaded]

    wakeups, texts, threaded = asyncio.run(main())
    assert wakeups == 1
    assert texts == [["0a", "0b", "finished"], ["1a", "1b", "finished"], ["2a", "2b", "finished"]]
    assert threaded == ["t", "finished"]


def test_events_for_a_closed_loop_cancel_their_streams() -> None:
    loop = asyncio.new_event_loop()
    stream = GenerationStream(loop)
    loop.close()
    deliver([(stream, GenEvent("text", text="late"))])
    assert stream.cancelled
