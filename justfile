# cursor-byok task runner (https://github.com/casey/just)

# Start the proxy with the addon (regular proxy mode on 127.0.0.1:8080)
run *ARGS:
    uv run mitmdump -s addon/main.py --listen-host 127.0.0.1 --set connection_strategy=lazy {{ARGS}}

# Run the test suite (the same command CI runs)
test *ARGS:
    uv run pytest {{ARGS}}

# Regenerate addon/cursor_byok/pb from proto/*.proto
proto:
    uv run python proto/generate.py

# Lint, format check, type check (mypy) and the layering contract (import-linter), as CI runs them
lint:
    uv run ruff check .
    uv run ruff format --check .
    uv run mypy
    uv run lint-imports

# Benchmarks (figures, not tests; ~10 min on 2 cores): codec/inbox throughput, the provider
# stream's CPU per delta stage by stage and its memory under compression bombs (issue 23), turns
# through a real mitmdump, streaming cost against plain mitmproxy (issue 15), memory bounds and
# 100 concurrent turns (issue 13), RSS per MB of streamed text (issue 27). Each script takes
# --help for bigger or smaller runs.
# Each script that measures against plain mitmproxy or per MB also writes its figures to
# bench/results/latest.json (--json PATH for another file); bench/compare.py prints them beside
# the last recorded ones in bench/README.md.
bench:
    rm -f bench/results/latest.json
    uv run python bench/bench_codec.py
    uv run python bench/bench_provider_stream.py --repeats 3 --deltas 1000
    uv run python bench/bench_provider_bomb.py
    uv run python bench/bench_turns.py 30
    uv run python bench/bench_streaming.py
    uv run python bench/bench_hardening.py
    uv run python bench/bench_memory.py
    uv run python bench/bench_run_transport.py 30
    uv run python bench/bench_prompt_cache.py
    uv run python bench/compare.py

# The streaming ratios (RunSSE + BidiAppend, RunPoll, Run ÷ plain mitmproxy at 20 streams) and
# memory per MB streamed, in under 2 minutes, beside the last recorded ones (CI runs it; never fails)
bench-quick *ARGS:
    uv run python bench/quick.py {{ARGS}}

# The same proxy under mitmweb, Cursor's Connect bodies decoded in the browser
web *ARGS:
    uv run cursor-byok run --web {{ARGS}}

# Tokens and cost of the recorded turns (e.g. `just usage --since today --by model`)
usage *ARGS:
    uv run cursor-byok usage {{ARGS}}

# The fault suite at full size (bombs of 1 GiB, floods of 720 MiB)
fuzz *ARGS:
    FAULT_SCALE=large uv run pytest tests/faults {{ARGS}}
