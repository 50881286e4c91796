"""Streaming cost (issue 15): the addon against plain mitmproxy against no proxy, in one run.

    uv run python bench/bench_streaming.py [--levels 1,20,100] [--repeats 3] [--deltas 200]
                                           [--interval 0.005] [--heartbeat 0]
                                           [--configs A15,R15,A0,R0,B,C] [--base-tree PATH]

A15 / A0  mitmdump with the addon (cursor_byok_coalesce_ms=15 / =0) serving a full Agent turn
          (RunSSE + BidiAppend run request + KV acks + checkpoints) whose model is the feeder's
          OpenAI-Chat endpoint streaming N small text deltas `interval` apart, over Cursor's
          fallback transport (HTTP/1.1: ~7 flows per turn);
R15       the same addon set-up (its own mitmdump, coalescing 15 ms) serving the same turn over
          Cursor's default transport: one HTTP/2 `Run` stream per turn (run request and KV acks
          up as Connect envelopes on the open upload, frames down), one connection per turn;
P15       (opt-in: --configs) the same turn over Cursor's HTTP/1.0 mode: the run request and
          KV acks over BidiAppend, the frames by one RunPoll after another (a buffered answer
          each), its own mitmdump, coalescing 15 ms;
R0        as R15 with coalescing off (every provider delta its own frame, sent at once);
A15t/R15t (opt-in: --configs) as A15 / R15 with mitmproxy's hop to the loopback server over
          TCP (cursor_byok_loopback_hop=tcp), as before it was made in memory;
R15c      (opt-in: --configs) as R15, but all turns of a batch share one HTTP/2 connection (one
          CONNECT + TLS per batch), as Cursor multiplexes its streams. mitmproxy 12.3.1 gives a
          client connection at most 5 upstream connections per address at a time, and the
          addon's 16 loopback ports make that 80 turns at once (see bench/README.md; the
          `start spread` column);
B         plain mitmdump (only bench/passthrough.py: send to the feeder, stream the response)
          relaying the same Connect frames (one text_delta envelope per delta) from the feeder;
B2        (opt-in: --configs) B's request on an HTTP/2 connection of its own, as `Run` comes:
          plain mitmproxy relaying the same frames to an HTTP/2 client;
BA        (opt-in: --configs) plain mitmdump relaying A's whole fallback turn to the feeder as
          Cursor's server: RunSSE, the run request and every KV ack as BidiAppend, the same
          deltas, then the frames one of the run's own addon turns closed with (recorded at
          start-up: KV SETs, checkpoints);
BP        (opt-in: --configs) plain mitmdump relaying P's whole HTTP/1.0 turn to the feeder as
          Cursor's server: the run request and KV acks as BidiAppend, the same deltas coalesced
          by the run core's own Outbox and read back by RunPoll as the addon's RunPoll reads
          them (streamlib._PollRun: 15 ms), so the turn has the addon's frames and polls;
BR        (opt-in: --configs) plain mitmdump relaying R's whole `Run` turn to the feeder as
          Cursor's server, on the same HTTP/2 stream: the run request and every KV ack up the
          open upload (streamed to the feeder as it comes), the same deltas, the recorded close
          frames and the end down. Plain mitmproxy holds the response's END_STREAM until the
          upload ends (mitmproxy.md §10.1), so BR's client ends its upload at the end-stream
          envelope, where R's waits for END_STREAM first: the same frames either way;
          column ×T: each configuration against plain mitmproxy
          on its own transport (R* ÷ BR, A* ÷ BA, P* ÷ BP);
F         (opt-in: --configs) the floor under any addon that serves a stream from a provider's
          answer: plain mitmdump with bench/floor_addon.py alone, which reads the feeder's
          OpenAI-Chat stream (aiohttp, our SSE parser, json) and writes each delta's envelope,
          coalesced as the addon does (15 ms), through the in-memory hop, to B's client (no
          turn, run or KV);
C         no proxy: the client straight to the feeder (plain HTTP);
X~        with --base-tree PATH, every addon configuration X also runs from PATH's addon/main.py
          (with its own option defaults), interleaved with X in every round: before and after a
          change measured at once, as this shared machine's speed drifts between runs.

The feeder (bench/streamlib.py) runs in its own process and stamps each delta with its
time.monotonic_ns() as it writes it; the client takes the time when the bytes arrive, so latency
is provider send → client receive on one clock. The client is one asyncio process of raw
HTTP/1.1 protocols (CONNECT + TLS through the proxy for A and B, ALPN http/1.1, no compression),
and for R a raw HTTP/2 protocol on the `h2` state machine (CONNECT + TLS, ALPN h2);
its own CPU share is printed so you can see it is not the bottleneck. Repeats are interleaved
(every config at every level in each round, rotating the order); figures are medians over the
rounds with [min–max]. Proxy CPU is utime+stime from /proc/<pid>/stat over the batch (turn set-up
included) divided by the provider deltas sent; peak RSS is VmHWM, reset before each batch
(/proc/<pid>/clear_refs). 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mitm import Mitm
from mitm import mitmdump_path
from mitm import start_mitmdump
from provider_config import KEY_ENV
from provider_config import write_config
from results import DEFAULT
from results import record
from streamlib import EDGE
from streamlib import MANY_TURNS
from streamlib import TEST_HOST
from streamlib import FeederProcess
from streamlib import Http2
from streamlib import TurnStats
from streamlib import addon_turn
from streamlib import by_place
from streamlib import client_tls
from streamlib import client_tls_h2
from streamlib import cpu_seconds
from streamlib import mib
from streamlib import open_h2
from streamlib import percentile_ms
from streamlib import plain_turn
from streamlib import plain_turn_h2
from streamlib import poll_turn
from streamlib import reset_peak
from streamlib import run_turn
from streamlib import status_kib

HERE = Path(__file__).resolve().parent
CONFIGS = ["A15", "R15", "A0", "R0", "B", "C"]  # the default set; --configs picks others
ALL_CONFIGS = [
    *("A15", "R15", "R15c", "P15", "A0", "R0", "A15t", "R15t"),
    *("F", "B", "B2", "BA", "BP", "BR", "C"),
]
ADDON_CONFIGS = {"A15": 15, "R15": 15, "R15c": 15, "P15": 15, "A0": 0, "R0": 0}  # coalescing, ms
# the same, with mitmproxy's hop to the loopback server over TCP (cursor_byok_loopback_hop=tcp):
# what the in-memory hop saves, measured in one run
ADDON_CONFIGS |= {"A15t": 15, "R15t": 15}
# the plain relay on each configuration's transport (×T): HTTP/2 for R*, the fallback for A*, P*
TRANSPORT_BASE = {"R": "BR", "A": "BA", "P": "BP"}
LATE_NS = 50_000_000
# Bytecode for the proxies goes to a cache of our own (outside the tree): the first proxy started
# compiles everything (a cold start, as after an install), the later ones find it (a warm start,
# as every day). Without this, PYTHONDONTWRITEBYTECODE=1 in the environment would make every start
# cold. Set by run() to a directory under its temporary directory.
PROXY_ENV: dict[str, str] = {}
# mitmdump's line per flow: 0 as `cursor-byok run` starts it (cli/launch.py), for the addon and
# plain mitmdump alike; --flow-detail 1 is mitmdump's default (what the figures before issue 38
# were measured with: one line per BidiAppend and per poll).
FLOW_DETAIL = [0]
# More mitmdump arguments for every proxy, addon and plain alike (bench/loop_steps.py loads its
# probe script with them).
EXTRA_ARGS: list[str] = []


def start_addon(
    tmp: Path,
    feeder: FeederProcess,
    coalesce_ms: int,
    hop: str | None = "memory",
    script: Path | None = None,
) -> Mitm:
    """The addon's mitmdump; `hop` None leaves the loopback hop option unset (a tree from
    before it), `script` another tree's addon."""
    tmp.mkdir(parents=True, exist_ok=True)
    return start_mitmdump(
        tmp,
        "--set",
        f"cursor_byok_coalesce_ms={coalesce_ms}",
        *(("--set", f"cursor_byok_loopback_hop={hop}") if hop else ()),
        "--set",
        f"flow_detail={FLOW_DETAIL[0]}",
        *MANY_TURNS,
        *EXTRA_ARGS,
        agent="provider",
        config=write_config(tmp, feeder, "openai-chat"),
        env={KEY_ENV: "sk-bench-not-a-key", **PROXY_ENV},
        script=script,
    )


def start_plain(tmp: Path, upstream_port: int, script: str = "passthrough.py") -> Mitm:
    confdir = tmp / "mitmconf"
    command = [
        mitmdump_path(),
        "--listen-host",
        "127.0.0.1",
        "-p",
        "0",
        "--set",
        f"confdir={confdir}",
        "--set",
        "connection_strategy=lazy",
        "--set",
        f"flow_detail={FLOW_DETAIL[0]}",
        "-s",
        str(HERE / script),
        *EXTRA_ARGS,
    ]
    return start_mitmdump(
        tmp,
        command=command,
        env={"BENCH_UPSTREAM_PORT": str(upstream_port), **PROXY_ENV},
        wait_ready=False,
    )


@dataclass
class Batch:
    config: str
    level: int
    stats: list[TurnStats]
    wall: float
    proxy_cpu: float | None
    client_cpu: float
    feeder_cpu: float
    peak_kib: int | None
    started_ns: int = 0  # monotonic_ns when the batch's turns began (all at once)

    @property
    def latencies(self) -> list[int]:
        return sorted(x for s in self.stats for x in s.latencies_ns)

    def pct(self, q: float) -> float:
        return percentile_ms(self.latencies, q)

    def pct_by_position(self, q: float) -> tuple[float, float, float]:
        """The q-th percentile of the first `EDGE` deltas of every turn, of those between, and
        of the last `EDGE` (streamlib.by_place)."""
        parts = by_place([s.latencies_ns for s in self.stats])
        return (percentile_ms(parts[0], q), percentile_ms(parts[1], q), percentile_ms(parts[2], q))

    @property
    def late_share(self) -> float:
        xs = self.latencies
        return sum(x > LATE_NS for x in xs) / len(xs) if xs else float("nan")

    @property
    def start_spread(self) -> float:
        """ms between the first and the last turn of the batch to see its first delta."""
        firsts = [s.first_delta_ns for s in self.stats if s.first_delta_ns]
        return (max(firsts) - min(firsts)) / 1e6 if firsts else float("nan")

    def first_delta_ms(self, q: float) -> float:
        """The q-th percentile over the batch's turns of the time from the turns' start to
        each turn's first delta: connection, request, the proxy's set-up of the turn and the
        provider's first write, as a user waits for an answer to begin."""
        firsts = sorted(s.first_delta_ns - self.started_ns for s in self.stats if s.first_delta_ns)
        return percentile_ms(firsts, q)

    @property
    def ok(self) -> int:
        return sum(s.ok for s in self.stats)


class Bench:
    def __init__(self, args: argparse.Namespace, tmp: Path) -> None:
        self.args = args
        self.tmp = tmp
        self.workspace = tmp / "ws"
        self.workspace.mkdir()
        self.close_frames = tmp / "close-frames.bin"  # BA's, BP's and BR's (record_close)
        self.feeder = FeederProcess(args.deltas, args.interval, self.close_frames)
        self.proxies: dict[str, Mitm] = {}
        self.startup: list[str] = []

    async def turn(
        self, config: str, stats: TurnStats, deltas: int, conn: Http2 | None = None
    ) -> None:
        if config == "C":
            await plain_turn(self.feeder.port, tls=None, deltas=deltas, stats=stats)
            return
        proxy = self.proxies[config]
        if config == "B2":
            await plain_turn_h2(
                proxy.port, tls=client_tls_h2(proxy.ca_file), deltas=deltas, stats=stats
            )
            return
        if config.startswith("R") or config == "BR":
            await run_turn(
                proxy.port,
                tls=client_tls_h2(proxy.ca_file),
                deltas=deltas,
                stats=stats,
                workspace=self.workspace,
                heartbeat=self.args.heartbeat,
                conn=conn,
                end_upload_first=config == "BR",
            )
            return
        tls = client_tls(proxy.ca_file)
        if config.startswith("P15") or config == "BP":
            await poll_turn(
                proxy.port, tls=tls, deltas=deltas, stats=stats, workspace=self.workspace
            )
        elif config in ("B", "F"):
            await plain_turn(proxy.port, tls=tls, deltas=deltas, stats=stats)
        else:
            await addon_turn(
                proxy.port,
                tls=tls,
                deltas=deltas,
                stats=stats,
                workspace=self.workspace,
                heartbeat=self.args.heartbeat,
            )

    async def start(self) -> None:
        addons = [name for name in self.args.configs if name.rstrip("~") in ADDON_CONFIGS]
        for name in addons:  # the first: cold bytecode cache, the others: warm
            coalesce = ADDON_CONFIGS[name.rstrip("~")]
            t0 = time.monotonic()
            if name.endswith("~"):  # the base tree's addon, its defaults
                hop, script = None, self.args.base_tree / "addon" / "main.py"
            else:
                hop, script = ("tcp" if name.endswith("t") else "memory"), None
            proxy = start_addon(self.tmp / name, self.feeder, coalesce, hop, script)
            ready = time.monotonic() - t0
            self.proxies[name] = proxy
            stats = TurnStats()
            await self.turn(name, stats, 1)
            first = time.monotonic() - t0
            self.startup.append(
                f"{name} ({'cold' if name == addons[0] else 'warm'} bytecode cache): start → "
                f"'cursor-byok ready' {ready:.2f} s, → first answered turn "
                f"({ {'R': 'Run', 'P': 'RunPoll'}.get(name[0], 'RunSSE') }, 1 delta) {first:.2f} s"
                f"{'' if stats.ok else ' FAILED: ' + stats.error}"
            )
        if "F" in self.args.configs:
            self.proxies["F"] = start_plain(self.tmp / "F", self.feeder.port, "floor_addon.py")
            await self.turn("F", TurnStats(), 1)
        if "B2" in self.args.configs:
            self.proxies["B2"] = start_plain(self.tmp / "B2", self.feeder.port)
            await self.turn("B2", TurnStats(), 1)
        relays = [name for name in ("BA", "BP", "BR") if name in self.args.configs]
        if relays:
            await self.record_close(addons)
        for name in relays:
            self.proxies[name] = start_plain(self.tmp / name, self.feeder.port)
            await self.turn(name, TurnStats(), 1)
        for config in self.args.configs:  # warm-up: TLS certs, imports, connections
            if config != "B":
                await self.batch(config, 2)
        if "B" not in self.args.configs:
            return
        t0 = time.monotonic()
        self.proxies["B"] = start_plain(self.tmp / "B", self.feeder.port)
        stats = TurnStats()
        await self.turn("B", stats, 1)
        self.startup.append(
            f"B ({'warm' if addons else 'cold'} bytecode cache): start → first relayed stream "
            f"(1 delta) {time.monotonic() - t0:.2f} s"
            f"{'' if stats.ok else ' FAILED: ' + stats.error}"
        )
        await self.batch("B", 2)

    async def record_close(self, addons: list[str]) -> None:
        """BA's, BP's and BR's close: the frames (all but text deltas) one turn of this run's
        addon sent, written where the feeder reads them for each of their turns."""
        own = [name for name in addons if not name.endswith("~")]
        if not own:
            print("BA/BP/BR: no addon configuration in this run: their turns close with no frames")
            return
        stats = TurnStats(kept=[])
        await self.turn(own[0], stats, 1)
        self.close_frames.write_bytes(b"".join(stats.kept or []))
        print(f"BA/BP/BR close with the {len(stats.kept or [])} frames a turn of {own[0]} sent")

    async def batch(self, config: str, level: int) -> Batch:
        proxy = self.proxies.get(config)
        pid = proxy.process.pid if proxy else None
        if pid:
            reset_peak(pid)
        stats = [TurnStats() for _ in range(level)]
        cpu0 = cpu_seconds(pid) if pid else 0.0
        feeder0 = cpu_seconds(self.feeder.process.pid)
        client0 = time.process_time()
        started_ns = time.monotonic_ns()
        conn = None
        try:
            if config.startswith("R15c") and proxy is not None:  # one connection for the batch
                conn = await open_h2(
                    proxy.port, tunnel=f"{TEST_HOST}:443", tls=client_tls_h2(proxy.ca_file)
                )
            turns = [self.turn(config, s, self.args.deltas, conn) for s in stats]
            await asyncio.wait_for(asyncio.gather(*turns), self.args.timeout)
        except TimeoutError:
            for s in stats:
                if not s.ok and not s.error:
                    s.error = "timed out"
        except ConnectionError as exc:  # R15c: the batch's connection did not open
            for s in stats:
                s.error = s.error or f"connection: {exc}"
        finally:
            if conn is not None:
                conn.close()
        wall = (time.monotonic_ns() - started_ns) / 1e9
        return Batch(
            config,
            level,
            stats,
            wall,
            cpu_seconds(pid) - cpu0 if pid else None,
            time.process_time() - client0,
            cpu_seconds(self.feeder.process.pid) - feeder0,
            status_kib(pid, "VmHWM") if pid else None,
            started_ns,
        )

    def stop(self) -> None:
        for proxy in self.proxies.values():
            proxy.stop()
        self.feeder.stop()


def spread(values: list[float], fmt: str) -> str:
    values = [v for v in values if v == v]
    if not values:
        return "—"
    med = statistics.median(values)
    if len(values) == 1:
        return format(med, fmt)
    return f"{format(med, fmt)} [{format(min(values), fmt)}–{format(max(values), fmt)}]"


def report(
    results: dict[tuple[str, int], list[Batch]], args: argparse.Namespace
) -> dict[str, dict[str, float]]:
    """Print the table; return its figures by "cfg xN" for the JSON file (bench/results.py)."""
    configs = args.configs
    figures: dict[str, dict[str, float]] = {}
    print()
    header = (
        f"{'streams':>7} {'cfg':<4} {'ok':>8} {'p50 ms':>20} {'p99 ms':>22} {'>50ms':>6} "
        f"{'frames/turn':>11} {'delta-frames':>12} {'CPU µs/delta':>18} {'×B':>5} {'×T':>5} "
        f"{'peak RSS':>9} {'client':>7} {'feeder':>7} {'start spread':>12}"
    )
    print(header)
    print("-" * len(header))
    positions: list[tuple[int, str, list[Batch]]] = []
    for level in args.levels:
        base_cpu = {
            base: [
                b.proxy_cpu / (level * args.deltas) * 1e6
                for b in results.get((base, level), [])
                if b.proxy_cpu is not None
            ]
            for base in ("B", "B2", "BA", "BP", "BR")
        }
        b_cpu = base_cpu["B"]
        for config in configs:
            batches = results.get((config, level), [])
            if not batches:
                continue
            n = level * len(batches)
            ok = sum(b.ok for b in batches)
            cpu = [
                b.proxy_cpu / (level * args.deltas) * 1e6
                for b in batches
                if b.proxy_cpu is not None
            ]
            ratio = (
                f"{statistics.median(cpu) / statistics.median(b_cpu):.1f}" if cpu and b_cpu else ""
            )
            t_cpu = base_cpu.get(TRANSPORT_BASE.get(config[:1], ""), [])
            ratio2 = (
                f"{statistics.median(cpu) / statistics.median(t_cpu):.1f}" if cpu and t_cpu else ""
            )
            figures[f"{config} x{level}"] = {
                "ok": ok / n,
                "p50_ms": round(statistics.median(b.pct(0.5) for b in batches), 2),
                "p99_ms": round(statistics.median(b.pct(0.99) for b in batches), 2),
                **({"cpu_us": round(statistics.median(cpu), 1)} if cpu else {}),
                **(
                    {"cpu_ratio": round(statistics.median(cpu) / statistics.median(b_cpu), 2)}
                    if cpu and b_cpu
                    else {}
                ),
                **(
                    {"cpu_ratio_t": round(statistics.median(cpu) / statistics.median(t_cpu), 2)}
                    if cpu and t_cpu
                    else {}
                ),
            }
            late = statistics.median(b.late_share for b in batches) * 100
            frames = statistics.median(statistics.mean(s.frames for s in b.stats) for b in batches)
            dframes = statistics.median(
                statistics.mean(s.delta_frames for s in b.stats) for b in batches
            )
            peaks = [b.peak_kib for b in batches if b.peak_kib]
            peak = f"{mib(max(peaks)):.0f} MiB" if peaks else "—"
            client = statistics.median(b.client_cpu / b.wall for b in batches) * 100
            feeder = statistics.median(b.feeder_cpu / b.wall for b in batches) * 100
            print(
                f"{level:>7} {config:<4} {f'{ok}/{n}':>8} "
                f"{spread([b.pct(0.5) for b in batches], '.2f'):>20} "
                f"{spread([b.pct(0.99) for b in batches], '.2f'):>22} {late:>5.1f}% "
                f"{frames:>11.1f} {dframes:>12.1f} {spread(cpu, '.0f'):>18} {ratio:>5} {ratio2:>5} "
                f"{peak:>9} {client:>6.0f}% {feeder:>6.0f}% "
                f"{statistics.median(b.start_spread for b in batches):>9.0f} ms"
            )
            positions.append((level, config, batches))
            errors = sorted({s.error for b in batches for s in b.stats if s.error})
            for error in errors[:3]:
                print(f"{'':>13} error: {error[:150]}")
        print()
    print(
        "p50/p99: per-delta latency, provider write → client read (median over rounds "
        "[min–max]); >50ms: share of deltas later than 50 ms (median over rounds); "
        "frames/turn: data frames the client saw (heartbeats excluded), delta-frames: those "
        "carrying text deltas; CPU µs/delta: proxy utime+stime / provider deltas, ×B: against "
        "plain mitmdump, ×T: against "
        "plain mitmdump on the configuration's own transport (R: BR, A: BA, P: BP); "
        "peak RSS: max VmHWM of the proxy over the batches at that level; "
        "client/feeder: their CPU as a share of one core over the batch; start spread: time "
        "between the first and the last turn of a batch to get its first delta (median over "
        "rounds): turns that could not start together show here."
    )
    _report_positions(positions, args.deltas)
    _report_first_deltas(positions)
    return figures


def _report_first_deltas(positions: list[tuple[int, str, list[Batch]]]) -> None:
    """How long the turns of a batch, started together, waited for their first delta."""
    print()
    print("ms from the turns' start to their first delta (p50 / p90 / max of a batch's turns):")
    for level, config, batches in positions:
        p50, p90, top = (
            statistics.median(b.first_delta_ms(q) for b in batches) for q in (0.5, 0.9, 1.0)
        )
        print(f"{level:>7} {config:<4} {p50:8.1f} {p90:8.1f} {top:8.1f}")


def _report_positions(positions: list[tuple[int, str, list[Batch]]], deltas: int) -> None:
    """p99 of each turn's first, middle and last deltas, and RunPoll's polls per turn."""
    if deltas <= 2 * EDGE:
        return
    print()
    print(f"p99 ms by a delta's place in its turn (first {EDGE} / the rest / last {EDGE}):")
    for level, config, batches in positions:
        first, middle, last = (
            statistics.median(b.pct_by_position(0.99)[i] for b in batches) for i in range(3)
        )
        polls = statistics.median(statistics.mean(s.polls for s in b.stats) for b in batches)
        line = f"{level:>7} {config:<4} {first:8.1f} {middle:8.1f} {last:8.1f}"
        print(line + (f"   {polls:.1f} polls/turn" if polls else ""))


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        PROXY_ENV.update(PYTHONDONTWRITEBYTECODE="", PYTHONPYCACHEPREFIX=str(Path(tmp) / "pyc"))
        bench = Bench(args, Path(tmp))
        try:
            await bench.start()
            results: dict[tuple[str, int], list[Batch]] = {}
            configs = args.configs
            for round_ in range(args.repeats):
                for level in args.levels:
                    shift = (round_ + level) % len(configs)
                    for config in configs[shift:] + configs[:shift]:
                        batch = await bench.batch(config, level)
                        results.setdefault((config, level), []).append(batch)
                        print(
                            f"round {round_ + 1} {config:<3} x{level:<3} {batch.ok}/{level} ok "
                            f"in {batch.wall:.1f} s, p50 {batch.pct(0.5):.2f} ms, "
                            f"p99 {batch.pct(0.99):.2f} ms",
                            flush=True,
                        )
        finally:
            bench.stop()
    load = os.getloadavg()
    print()
    print(
        f"streaming bench: {args.deltas} deltas {args.interval * 1000:g} ms apart per turn, "
        f"{args.repeats} interleaved rounds, flow_detail={args.flow_detail}, client heartbeats "
        f"{f'every {args.heartbeat:g} s' if args.heartbeat else 'off'}; "
        f"{os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} "
        "(other processes share the machine)"
    )
    for line in bench.startup:
        print("start-up " + line)
    figures = report(results, args)
    if args.json is not None:
        record(
            args.json,
            "streaming",
            {
                "deltas": args.deltas,
                "interval": args.interval,
                "repeats": args.repeats,
                "flow_detail": args.flow_detail,
                **figures,
            },
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,20,100", help="concurrent turns, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--deltas", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.005, help="seconds between deltas")
    parser.add_argument("--heartbeat", type=float, default=0.0, help="client heartbeat s (0 off)")
    parser.add_argument(
        "--configs",
        default=",".join(CONFIGS),
        help=f"comma-separated, of {','.join(ALL_CONFIGS)} (R15c: R15 on one connection a batch)",
    )
    add_base_tree_option(parser)
    parser.add_argument("--timeout", type=float, default=120.0, help="per batch, seconds")
    parser.add_argument(
        "--flow-detail",
        type=int,
        default=0,
        help="mitmdump's flow_detail for every proxy (0: as `cursor-byok run`; 1: mitmdump's)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=DEFAULT,
        help=f"merge the figures (×B ratios included) into this JSON file (default {DEFAULT})",
    )
    args = parser.parse_args()
    args.levels = [int(x) for x in args.levels.split(",")]
    args.configs = [x for x in args.configs.split(",") if x]
    FLOW_DETAIL[0] = args.flow_detail
    unknown = set(args.configs) - set(ALL_CONFIGS)
    if unknown:
        parser.error(f"unknown configs {sorted(unknown)}; known: {','.join(ALL_CONFIGS)}")
    add_base_configs(parser, args)
    asyncio.run(run(args))


def add_base_tree_option(parser: argparse.ArgumentParser) -> None:
    """`--base-tree PATH` (this script's and loop_steps.py's)."""
    parser.add_argument(
        "--base-tree",
        type=Path,
        default=None,
        help="another checkout (the tree before a change): each addon configuration also runs "
        "from its addon/main.py, as <config>~, in the same rounds (before and after at once)",
    )


def add_base_configs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """With `--base-tree`, each addon configuration X also as `X~`, from that tree's addon
    with its defaults (so not the `t` ones, which set an option it may not have)."""
    if args.base_tree is None:
        return
    if not (args.base_tree / "addon" / "main.py").is_file():
        parser.error(f"--base-tree {args.base_tree}: no addon/main.py there")
    args.configs += [f"{c}~" for c in args.configs if c in ADDON_CONFIGS and not c.endswith("t")]


if __name__ == "__main__":
    main()
