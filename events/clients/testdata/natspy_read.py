"""Reads kraftwatch's events with nats-py as its documentation shows, defaults otherwise.

usage: natspy_read.py URL SUBJECT COUNT

Prints one line per event received, "<how> <event id> <nats subject>", where how is
  find    js.find_stream_name_by_subject(SUBJECT) found the stream (no event id)
  push    js.subscribe(SUBJECT): an ephemeral push consumer, every stored event
  pull    js.pull_subscribe(SUBJECT, durable="py-pull") and fetch
Exits non-zero on any error.
"""
import asyncio
import json
import sys

import nats


async def main(url: str, subject: str, count: int) -> None:
    nc = await nats.connect(url)
    js = nc.jetstream()
    name = await js.find_stream_name_by_subject(subject)
    print("find", name, "-", flush=True)

    sub = await js.subscribe(subject)
    for _ in range(count):
        msg = await sub.next_msg(timeout=10)
        event = json.loads(msg.data)
        await msg.ack()
        print("push", event["id"], msg.subject, flush=True)
    await sub.unsubscribe()

    psub = await js.pull_subscribe(subject, durable="py-pull")
    got = 0
    while got < count:
        for msg in await psub.fetch(count - got, timeout=10):
            event = json.loads(msg.data)
            await msg.ack()
            print("pull", event["id"], msg.subject, flush=True)
            got += 1
    await nc.drain()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
