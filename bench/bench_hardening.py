"""Hardening figures (issue 13): memory under body bombs and an out-of-order flood, and 100
concurrent turns with client heartbeats, each against a real mitmdump with the addon.

    uv run python bench/bench_hardening.py [--gzip-mib 1024] [--zstd-mib 256] [--ids 12]
        [--appends 60] [--append-mib 1] [--turns 100] [--deltas 200] [--heartbeat 1]
        [--bombs 5] [--only gzip,zstd,flood,turns]

(a) gzip: one BidiAppend POST (https://api2.cursor.test/aiserver.v1.BidiService/BidiAppend,
    content-type application/proto, Content-Encoding: gzip) whose body inflates to --gzip-mib MiB
    of zeros (~1 MB on the wire for 1 GiB);
(b) zstd: the same with Content-Encoding: zstd, --zstd-mib MiB of zeros (~8 KB for 256 MiB);
    for both, --bombs - 1 more of the same follow on the same proxy (RSS after each, overall peak);
(c) flood: --ids request ids × --appends BidiAppends of --append-mib MiB each (a KV get result
    carrying that many bytes), append_seqno starting at 1 so seqno 0 never comes and nothing can
    be delivered; one connection per request id, all ids at once;
(d) turns: --turns concurrent Agent turns of --deltas text deltas 5 ms apart from the loopback
    feeder (bench/streamlib.py), client heartbeats every --heartbeat s, with
    cursor_byok_coalesce_ms=15 (default) and =0.

Every item gets its own fresh mitmdump (so one bomb's leftovers do not count against the next).
Growth = VmHWM after the item (reset to the current RSS just before it via /proc/<pid>/clear_refs)
minus VmRSS before it; "after" is VmRSS once the item is over (what stays). The goals printed are
issue 13's: growth < 100 MiB for (a)-(c); 100/100 turns, no delta later than 50 ms, RSS < 300 MB
for (d). Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
import tempfile
import time
import uuid
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_streaming import PROXY_ENV
from bench_streaming import start_addon
from mitm import Mitm
from streamlib import BIDI_APPEND
from streamlib import TEST_HOST
from streamlib import FeederProcess
from streamlib import Http1
from streamlib import TurnStats
from streamlib import addon_turn
from streamlib import client_tls
from streamlib import mib
from streamlib import open_http
from streamlib import reset_peak
from streamlib import status_kib

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.bidi import encode_bidi_append

MiB = 1024 * 1024
GOAL_GROWTH_MIB = 100
GOAL_RSS_MB = 300


def gzip_bomb(size_mib: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(MiB)
    parts = [compressor.compress(zeros) for _ in range(size_mib)]
    parts.append(compressor.flush())
    return b"".join(parts)


def zstd_bomb(size_mib: int) -> bytes:
    if sys.version_info >= (3, 14):
        from compression.zstd import ZstdCompressor
    else:  # the standard library's API, from its backport (a dependency of mitmproxy)
        from backports.zstd import ZstdCompressor

    compressor = ZstdCompressor(level=3)
    zeros = bytes(MiB)
    parts = [compressor.compress(zeros) for _ in range(size_mib)]
    parts.append(compressor.flush())
    return b"".join(parts)


def _headers(rid: str, **extra: str) -> dict[str, str]:
    return {
        "content-type": "application/proto",
        "connect-protocol-version": "1",
        "x-request-id": rid,
        "authorization": "Bearer eyJfake.cursor.token",
        **extra,
    }


def describe(status: int, body: bytes) -> str:
    """`400 invalid_argument: …` for a Connect error, else the status and the start of the body."""
    try:
        error = json.loads(body)
        return f"{status} {error['code']}: {str(error.get('message', ''))[:90]}"
    except (ValueError, KeyError, TypeError):
        return f"{status} {body[:90]!r}"


class Probe:
    """VmRSS before, VmHWM during, VmRSS after one item, for one mitmdump."""

    def __init__(self, proxy: Mitm) -> None:
        self.pid = proxy.process.pid
        self.proxy = proxy

    def __enter__(self) -> Probe:
        reset_peak(self.pid)
        self.before = status_kib(self.pid, "VmRSS")
        self.t0 = time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.monotonic() - self.t0
        alive = self.proxy.process.poll() is None
        self.peak = status_kib(self.pid, "VmHWM") if alive else 0
        self.after = status_kib(self.pid, "VmRSS") if alive else 0
        self.alive = alive

    @property
    def growth_mib(self) -> float:
        return mib(self.peak - self.before)

    def line(self) -> str:
        if not self.alive:
            return f"mitmdump DIED (exit {self.proxy.process.returncode})"
        return (
            f"RSS {mib(self.before):.0f} → peak {mib(self.peak):.0f} MiB "
            f"(growth {self.growth_mib:.0f} MiB), after {mib(self.after):.0f} MiB, "
            f"{self.seconds:.1f} s"
        )


async def post_bomb(proxy: Mitm, body: bytes, encoding: str, timeout: float) -> str:
    conn = await open_http(proxy.port, tunnel=f"{TEST_HOST}:443", tls=client_tls(proxy.ca_file))
    try:
        rid = str(uuid.uuid4())
        _, result = await conn.request(
            "POST", BIDI_APPEND, _headers(rid, **{"content-encoding": encoding}), body
        )
        response = await asyncio.wait_for(result, timeout)
        return describe(response.status, response.body)
    except Exception as exc:
        return f"no answer: {type(exc).__name__}: {exc}"
    finally:
        conn.close()


async def bomb_item(
    args: argparse.Namespace,
    tmp: Path,
    feeder: FeederProcess,
    label: str,
    size: str,
    body: bytes,
    encoding: str,
) -> list[str]:
    """One bomb against the goal, then --bombs - 1 more in a row (does memory come back?)."""
    proxy = start_addon(tmp, feeder, 15)
    try:
        with Probe(proxy) as probe:
            answer = await post_bomb(proxy, body, encoding, args.timeout)
        after = []
        for _ in range(args.bombs - 1):
            await post_bomb(proxy, body, encoding, args.timeout)
            if proxy.process.poll() is not None:
                break
            after.append(mib(status_kib(proxy.process.pid, "VmRSS")))
        peak = mib(status_kib(proxy.process.pid, "VmHWM")) if proxy.process.poll() is None else 0
    finally:
        proxy.stop()
    lines = [
        f"{label} {size}: {answer}",
        f"    {probe.line()}; {verdict(probe.alive and probe.growth_mib < GOAL_GROWTH_MIB)} "
        f"(< {GOAL_GROWTH_MIB} MiB)",
    ]
    if after:
        lines.append(
            f"    {len(after)} more in a row: RSS after each "
            f"{', '.join(f'{x:.0f}' for x in after)} MiB; peak {peak:.0f} MiB "
            f"(growth {peak - mib(probe.before):.0f} MiB)"
        )
    print(*lines, sep="\n", flush=True)
    return lines


async def flood(proxy: Mitm, ids: int, appends: int, size_mib: float) -> collections.Counter:
    tls = client_tls(proxy.ca_file)
    payload = pb.AgentClientMessage(
        kv_client_message=pb.KvClientMessage(
            id=1, get_blob_result=pb.GetBlobResult(blob_data=b"x" * int(size_mib * MiB))
        )
    ).SerializeToString()
    outcomes: collections.Counter = collections.Counter()

    async def one_id() -> None:
        rid = str(uuid.uuid4())
        conn: Http1 | None = None
        try:
            for seqno in range(1, appends + 1):  # seqno 0 never comes: a gap at the front
                if conn is None or conn.lost:
                    conn = await open_http(proxy.port, tunnel=f"{TEST_HOST}:443", tls=tls)
                body = encode_bidi_append(rid, seqno, payload, binary=True)
                _, result = await conn.request("POST", BIDI_APPEND, _headers(rid), body)
                try:
                    response = await asyncio.wait_for(result, 60)
                    outcomes[describe(response.status, response.body)] += 1
                except Exception as exc:
                    outcomes[f"no answer: {type(exc).__name__}"] += 1
                    conn.close()
                    conn = None
        finally:
            if conn is not None:
                conn.close()

    await asyncio.gather(*(one_id() for _ in range(ids)))
    return outcomes


async def turns(
    proxy: Mitm, feeder: FeederProcess, workspace: Path, n: int, deltas: int, heartbeat: float
) -> list[TurnStats]:
    tls = client_tls(proxy.ca_file)
    stats = [TurnStats() for _ in range(n)]
    await asyncio.wait_for(
        asyncio.gather(
            *(
                addon_turn(
                    proxy.port,
                    tls=tls,
                    deltas=deltas,
                    stats=s,
                    workspace=workspace,
                    heartbeat=heartbeat,
                )
                for s in stats
            )
        ),
        timeout=600,
    )
    return stats


def verdict(ok: bool) -> str:
    return "meets goal" if ok else "MISSES goal"


async def run(args: argparse.Namespace) -> None:
    only = set(args.only.split(","))
    lines: list[str] = []
    load = os.getloadavg()
    print(
        f"hardening bench: {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} "
        f"{load[2]:.1f} at start (other processes share the machine)",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        PROXY_ENV.update(PYTHONDONTWRITEBYTECODE="", PYTHONPYCACHEPREFIX=str(tmp / "pyc"))
        workspace = tmp / "ws"
        workspace.mkdir()
        feeder = FeederProcess(args.deltas, 0.005)
        try:
            if "gzip" in only:
                body = gzip_bomb(args.gzip_mib)
                size = f"gzip body {len(body) / 1e6:.2f} MB → {args.gzip_mib} MiB"
                lines += await bomb_item(args, tmp / "gzip", feeder, "(a)", size, body, "gzip")
            if "zstd" in only:
                body = zstd_bomb(args.zstd_mib)
                size = f"zstd body {len(body) / 1e3:.1f} KB → {args.zstd_mib} MiB"
                lines += await bomb_item(args, tmp / "zstd", feeder, "(b)", size, body, "zstd")
            if "flood" in only:
                proxy = start_addon(tmp / "flood", feeder, 15)
                try:
                    with Probe(proxy) as probe:
                        outcomes = await flood(proxy, args.ids, args.appends, args.append_mib)
                finally:
                    proxy.stop()
                total = args.ids * args.appends
                lines.append(
                    f"(c) out-of-order flood {args.ids} ids × {args.appends} × "
                    f"{args.append_mib:g} MiB, seqno from 1 ({total} appends, "
                    f"{total * args.append_mib:.0f} MiB):"
                )
                lines += [f"    {count:>4} × {what}" for what, count in outcomes.most_common()]
                lines.append(
                    f"    {probe.line()}; "
                    f"{verdict(probe.alive and probe.growth_mib < GOAL_GROWTH_MIB)} "
                    f"(< {GOAL_GROWTH_MIB} MiB)"
                )
                print(*lines[-len(outcomes) - 2 :], sep="\n", flush=True)
            if "turns" in only:
                for coalesce in (15, 0):
                    proxy = start_addon(tmp / f"turns{coalesce}", feeder, coalesce)
                    try:
                        pid = proxy.process.pid
                        start_rss = status_kib(pid, "VmRSS")
                        t0 = time.monotonic()
                        stats = await turns(
                            proxy, feeder, workspace, args.turns, args.deltas, args.heartbeat
                        )
                        wall = time.monotonic() - t0
                        peak = status_kib(pid, "VmHWM")  # since start: "throughout"
                    finally:
                        proxy.stop()
                    lat = sorted(x for s in stats for x in s.latencies_ns)
                    ok = sum(s.ok for s in stats)
                    late = sum(x > 50_000_000 for x in lat)
                    got = len(lat)

                    def pct(q: float, lat=lat) -> float:
                        return lat[min(len(lat) - 1, int(q * len(lat)))] / 1e6 if lat else 0.0

                    errors = collections.Counter(s.error for s in stats if s.error)
                    lines.append(
                        f"(d) {args.turns} concurrent turns × {args.deltas} deltas, heartbeats "
                        f"every {args.heartbeat:g} s, coalesce_ms={coalesce}: {ok}/{args.turns} "
                        f"complete in {wall:.1f} s; {got} deltas seen"
                    )
                    lines.append(
                        f"    latency p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, max "
                        f"{(lat[-1] / 1e6 if lat else 0):.1f} ms; {late} deltas "
                        f"({late / max(got, 1) * 100:.1f}%) later than 50 ms; frames/turn "
                        f"{sum(s.frames for s in stats) / len(stats):.1f}; mitmdump RSS "
                        f"{mib(start_rss):.0f} MiB at start, peak {mib(peak):.0f} MiB "
                        f"({peak * 1024 / 1e6:.0f} MB)"
                    )
                    goal = ok == args.turns and late == 0 and peak * 1024 / 1e6 < GOAL_RSS_MB
                    lines.append(
                        f"    {verdict(goal)} (all complete, none > 50 ms, RSS < {GOAL_RSS_MB} MB)"
                    )
                    lines += [f"    {n} × {e[:150]}" for e, n in errors.most_common(3)]
                    print(*lines[-3 - min(3, len(errors)) :], sep="\n", flush=True)
        finally:
            feeder.stop()
    load = os.getloadavg()
    print(
        f"hardening bench done: {os.cpu_count()} cores, load average {load[0]:.1f} "
        f"{load[1]:.1f} {load[2]:.1f} (other processes share the machine)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gzip-mib", type=int, default=1024)
    parser.add_argument("--zstd-mib", type=int, default=256)
    parser.add_argument("--ids", type=int, default=12)
    parser.add_argument("--appends", type=int, default=60)
    parser.add_argument("--append-mib", type=float, default=1.0)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--deltas", type=int, default=200)
    parser.add_argument("--heartbeat", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=180.0, help="per bomb, seconds")
    parser.add_argument("--bombs", type=int, default=5, help="bombs in a row for (a) and (b)")
    parser.add_argument("--only", default="gzip,zstd,flood,turns")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
