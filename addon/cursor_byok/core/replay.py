"""What one response stream writes next (sans-IO): the replay rule.

Every subscriber gets its run's frames from the beginning, then live frames. Subscribers of the
attempt that saw a frame get it byte-identical (the client skips the prefix it has); an attempt
that joined later is not sent exec/KV/interaction requests that were already answered, so
nothing runs twice on the client. Heartbeats are live-only, per subscriber. A stream ends with
its run's end-stream frame, or with its attempt's own end (`Attempt.close`).
"""

from __future__ import annotations

from cursor_byok.core.attempt import Subscriber
from cursor_byok.core.runs import Run
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect
from cursor_byok.wire.connect import EndStreamError

_HEARTBEAT = pb.AgentServerMessage(
    interaction_update=pb.InteractionUpdate(heartbeat=pb.HeartbeatUpdate())
).SerializeToString()
HEARTBEAT_FRAME = connect.encode_frame_raw(0, _HEARTBEAT)
# A replay that reaches a frame let go of that the edge can no longer make (its blob left the
# data dir): the stream ends there rather than send other bytes than the first time.
LOST = EndStreamError("internal", "a frame of this run's backlog is no longer in the data dir")


def read(sub: Subscriber, *, now: float, max_bytes: int | None = None) -> tuple[list[bytes], bool]:
    """Encoded frames this subscriber has not been given yet (at least one, then up to
    `max_bytes`: a RunPoll answer), and whether its stream ended."""
    frames: list[bytes] = []
    ended = more = False  # more: stopped at max_bytes with frames left
    attempt = sub.attempt
    if attempt.run is not None:
        ended, more = _take(sub, attempt.run, frames, max_bytes)
    if not ended and not more and attempt.ended:
        frames.append(_end(sub, attempt.end))
        ended = True
    if not frames and sub.heartbeat_due:
        frames.append(HEARTBEAT_FRAME)
    sub.heartbeat_due = False
    if frames:
        sub.last_sent_at = now
    return frames, ended


def _take(
    sub: Subscriber, run: Run, frames: list[bytes], max_bytes: int | None
) -> tuple[bool, bool]:
    """Append the run's readable frames `sub` has not had to `frames`: (ended, more left)."""
    outbox = run.outbox
    entries = outbox.entries
    end = outbox.readable()
    encoding = sub.encoding
    epoch = sub.attempt.bind_epoch
    size = 0
    ended = more = False
    while sub.position < end:
        if max_bytes is not None and frames and size >= max_bytes:
            more = True
            break
        entry = entries[sub.position]
        sub.position += 1
        if entry.key is not None and run.pending.answered_before(entry.key, epoch):
            continue  # answered on an earlier attempt: never twice on the client
        frame = entry.frame
        if frame is None:
            if entry.delta is not None:  # an open delta: taken now, so final now
                frame = outbox.close(entry)
            else:  # let go of: the edge makes it again
                frame = entry.envelope()
                if frame is None:  # it cannot: this stream ends, not with other bytes
                    frames.append(_end(sub, LOST))
                    ended = True
                    break
        elif entry.stored is not None and entry.key is None:
            outbox.let_go(entry)  # this stream has the bytes now; a replay makes them again
        if entry.end_stream:
            frames.append(
                connect.encode_grpc_web_trailer(run.end_stream) if sub.grpc_web else frame
            )
            ended = True
            break
        frames.append(frame if encoding is None else entry.encoded(encoding, frame))
        size += len(frames[-1])
    if sub.position > outbox.read_mark:
        outbox.read_mark = sub.position
    return ended, more


def _end(sub: Subscriber, error: EndStreamError | None) -> bytes:
    """The end of `sub`'s stream with `error`, in its transport's form."""
    end_frame = connect.encode_grpc_web_trailer if sub.grpc_web else connect.encode_end_stream
    return end_frame(error)
