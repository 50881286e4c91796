"""The RPC census: what Cursor sends, counted, so a Cursor update that adds something shows at once.

Users' first complaint about every BYOK proxy is that a Cursor update silently broke it. So the
proxy counts every Cursor RPC path it sees and what became of it (served here, passed through to
Cursor, relayed to Cursor by the loopback server on a run's route), every case and field of a
client message our schema does not model (protobuf's unknown fields, `wire/shape.py`) or
that we model and do not serve, and every request id or blob id it could not resolve. The
counts go into the activity record (`activity.json`), where `cursor-byok doctor --watch` reads
them, and into the live status.

It also keeps privacy's proof (issue 26), per BYOK conversation: the calls about it answered
here instead of going to Cursor, the analytics events about it taken out of batches that went on,
and the bytes of calls about it that did reach Cursor (with `privacy = "local"` this must read
0; `proxy/privacy.py` measures it on every buffered call that leaves, whoever let it pass).

And the editor's features beyond the Agent (issue 34: Cmd-K, terminal Cmd-K, commit messages),
per feature: the calls answered here on the user's model, and the calls and bytes that went to
Cursor because `[features]` leaves that feature to Cursor.

Bounded: at most MAX_KEYS distinct keys per section (more go to "(other)"), so a client that
invents paths cannot grow it. Thread-safe: the activity writer thread takes snapshots.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

MAX_KEYS = 256
UNRESOLVED_IDS = 3  # ids of each kind the census line names (the latest)
OTHER = "(other)"
SERVED, PASSED, RELAYED = "served", "passed", "relayed"
OUTCOMES = (SERVED, PASSED, RELAYED)
TAB_COUNTS = (
    "requests",
    "suggestions",
    "empty",
    "cancelled",
    "errors",
    "input_tokens",
    "output_tokens",
)
TAB_WORDS = {
    "requests": "request(s)",
    "suggestions": "suggestion(s)",
    "empty": "without a suggestion",
    "cancelled": "cancelled (abandoned or superseded)",
    "errors": "model error(s)",
    "input_tokens": "tokens in",
    "output_tokens": "tokens out",
}
TAB_PATH = "/aiserver.v1.AiService/StreamCpp"
UNATTRIBUTED = "(no conversation named)"
PRIVATE_COUNTS = ("answered", "dropped", "sent_bytes", "sent_calls")
FEATURE_COUNTS = ("answered", "sent_bytes", "sent_calls")
PRIVACY_LINES = 5  # conversations listed by name
SIGNED_MEDIA = "/agent.v1.AgentService/GetSignedUrlForAttachedMedia"
MEDIA_PATHS = "/cursor-byok/media/*"  # uploads to the media URLs we hand out (proxy/privacy.py)


class Census:
    """Counts, by section. `on_change` is called (outside the lock) after each change, so the
    activity record can schedule a write."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        self.on_change = on_change
        self._paths: dict[str, dict[str, int]] = {}
        self._transports: dict[str, int] = {}
        self._unmodelled: dict[str, int] = {}
        self._notes: dict[str, str] = {}  # unmodelled key → its description, kept once
        self._unresolved: dict[str, int] = {}
        self._unresolved_ids: dict[str, list[str]] = {}  # kind → the latest ids, for the line
        self._private: dict[str, dict[str, int]] = {}  # conversation → PRIVATE_COUNTS
        self._features: dict[str, dict[str, int]] = {}  # cmd_k, terminal, … → FEATURE_COUNTS
        self.privacy_mode = ""  # the config's `privacy`, as last seen (shown with the counts)
        self._tab: dict[str, int] = {}  # Tab on the user's model: TAB_COUNTS

    def rpc(self, path: str, outcome: str) -> None:
        """One Cursor RPC: `path` (the query string dropped) and what became of it."""
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown census outcome {outcome!r}")
        path = path.split("?", 1)[0][:200]
        with self._lock:
            key = path if path in self._paths or len(self._paths) < MAX_KEYS else OTHER
            counts = self._paths.setdefault(key, {})
            counts[outcome] = counts.get(outcome, 0) + 1
        self._changed()

    def transport(self, name: str) -> None:
        """One Agent call by transport (`RunPoll`, `BidiAppend`, `Run (HTTP/2 stream)`, ...)."""
        with self._lock:
            _bump(self._transports, name)
        self._changed()

    def unmodelled(self, key: str, description: str) -> bool:
        """A client message carried `key` (e.g. `AgentRunRequest.26`); True the first time, so
        the caller logs it once."""
        with self._lock:
            first = key not in self._unmodelled and len(self._unmodelled) < MAX_KEYS
            _bump(self._unmodelled, key)
            if first:
                self._notes[key] = description
        self._changed()
        return first

    def unresolved(self, kind: str, ident: str = "") -> None:
        """An id that could not be resolved: "request id" (no run request ever came for it) or
        "blob id" (neither our store, the upload, the run request nor the client had it). The
        latest `UNRESOLVED_IDS` ids of each kind are kept, so the census line names them."""
        with self._lock:
            _bump(self._unresolved, kind)
            if ident and (kind in self._unresolved_ids or len(self._unresolved_ids) < MAX_KEYS):
                ids = self._unresolved_ids.setdefault(kind, [])
                if ident[:64] not in ids:
                    ids.append(ident[:64])
                    del ids[:-UNRESOLVED_IDS]
        self._changed()

    def private(
        self,
        conversation: str,
        *,
        answered: int = 0,
        dropped: int = 0,
        sent_bytes: int = 0,
        sent_calls: int = 0,
    ) -> None:
        """Privacy's counts for one conversation (the module doc)."""
        key = conversation or UNATTRIBUTED
        with self._lock:
            if key not in self._private and len(self._private) >= MAX_KEYS:
                key = OTHER
            counts = self._private.setdefault(key, dict.fromkeys(PRIVATE_COUNTS, 0))
            counts["answered"] += answered
            counts["dropped"] += dropped
            counts["sent_bytes"] += sent_bytes
            counts["sent_calls"] += sent_calls
        self._changed()

    def tab(self, **counts: int) -> None:
        """Tab calls answered from the user's model (proxy/tab.py): TAB_COUNTS."""
        with self._lock:
            for key, count in counts.items():
                if key in TAB_COUNTS:
                    self._tab[key] = self._tab.get(key, 0) + count
        self._changed()

    def feature(
        self, kind: str, *, answered: int = 0, sent_bytes: int = 0, sent_calls: int = 0
    ) -> None:
        """An editor feature's call: answered here, or sent to Cursor (its request's bytes)."""
        with self._lock:
            if kind not in self._features and len(self._features) >= MAX_KEYS:
                kind = OTHER
            counts = self._features.setdefault(kind, dict.fromkeys(FEATURE_COUNTS, 0))
            counts["answered"] += answered
            counts["sent_bytes"] += sent_bytes
            counts["sent_calls"] += sent_calls
        self._changed()

    def snapshot(self) -> dict[str, Any]:
        """A copy, as plain JSON types."""
        with self._lock:
            return {
                "tab": dict(self._tab),
                "privacy": {
                    "mode": self.privacy_mode,
                    "conversations": {k: dict(v) for k, v in self._private.items()},
                },
                "paths": {path: dict(counts) for path, counts in self._paths.items()},
                "transports": dict(self._transports),
                "unmodelled": {
                    key: {"count": count, "what": self._notes.get(key, "")}
                    for key, count in self._unmodelled.items()
                },
                "unresolved": dict(self._unresolved),
                "features": {k: dict(v) for k, v in self._features.items()},
                "unresolved_ids": {k: list(v) for k, v in self._unresolved_ids.items()},
            }

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()


def _bump(counts: dict[str, int], key: str) -> None:
    if key not in counts and len(counts) >= MAX_KEYS:
        key = OTHER
    counts[key] = counts.get(key, 0) + 1


def totals(snapshot: dict[str, Any]) -> dict[str, int]:
    """Calls per outcome over every path of a snapshot."""
    out = dict.fromkeys(OUTCOMES, 0)
    for counts in snapshot.get("paths", {}).values():
        for outcome, count in counts.items():
            if outcome in out:
                out[outcome] += int(count)
    return out


def since(now: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    """What `now` counts beyond `before` (the doctor's snapshot when it started watching)."""
    before = before or {}

    def minus(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
        return {k: v - b.get(k, 0) for k, v in a.items() if v - b.get(k, 0) > 0}

    paths = {}
    for path, counts in now.get("paths", {}).items():
        delta = minus(counts, before.get("paths", {}).get(path, {}))
        if delta:
            paths[path] = delta
    unmodelled = {}
    for key, entry in now.get("unmodelled", {}).items():
        old = before.get("unmodelled", {}).get(key, {}).get("count", 0)
        if entry.get("count", 0) > old:
            unmodelled[key] = {**entry, "count": entry["count"] - old}
    private = {}
    old_private = before.get("privacy", {}).get("conversations", {})
    for key, counts in now.get("privacy", {}).get("conversations", {}).items():
        delta = minus(counts, old_private.get(key, {}))
        if delta:
            private[key] = delta
    features = {}
    for key, counts in now.get("features", {}).items():
        delta = minus(counts, before.get("features", {}).get(key, {}))
        if delta:
            features[key] = delta
    return {
        "tab": minus(now.get("tab", {}), before.get("tab", {})),
        "features": features,
        "privacy": {"mode": now.get("privacy", {}).get("mode", ""), "conversations": private},
        "paths": paths,
        "transports": minus(now.get("transports", {}), before.get("transports", {})),
        "unmodelled": unmodelled,
        "unresolved": minus(now.get("unresolved", {}), before.get("unresolved", {})),
        "unresolved_ids": now.get("unresolved_ids", {}),
    }


def leaked(snapshot: dict[str, Any]) -> int:
    """Bytes of BYOK conversations that reached Cursor while `privacy = "local"`."""
    privacy = snapshot.get("privacy", {})
    if privacy.get("mode") == "cursor":
        return 0
    return sum(int(c.get("sent_bytes", 0)) for c in privacy.get("conversations", {}).values())


def feature_lines(snapshot: dict[str, Any]) -> list[str]:
    """The editor features' calls: answered here, or sent to Cursor (`[features]` = "cursor")."""
    features = snapshot.get("features", {})
    if not features:
        return []
    parts = []
    for kind, counts in sorted(features.items()):
        part = f"{kind} {counts.get('answered', 0)} answered here"
        if counts.get("sent_calls"):
            part += (
                f", {counts['sent_calls']} sent to Cursor ({_size(counts.get('sent_bytes', 0))})"
            )
        parts.append(part)
    return ["Editor features: " + "; ".join(parts)]


def privacy_lines(snapshot: dict[str, Any], *, limit: int = PRIVACY_LINES) -> list[str]:
    """Privacy's proof as lines: totals, then the busiest conversations by name."""
    privacy = snapshot.get("privacy", {})
    conversations = privacy.get("conversations", {})
    if not conversations:
        return []
    total = dict.fromkeys(PRIVATE_COUNTS, 0)
    for counts in conversations.values():
        for name in PRIVATE_COUNTS:
            total[name] += int(counts.get(name, 0))
    mode = privacy.get("mode") or "local"
    lines = [
        f'Privacy (privacy = "{mode}"): {len(conversations)} BYOK conversation(s): '
        f"{total['answered']} call(s) answered here, {total['dropped']} analytics event(s) "
        f"dropped, {_size(total['sent_bytes'])} sent to Cursor"
    ]
    ranked = sorted(conversations.items(), key=lambda kv: -sum(kv[1].values()))
    for key, counts in ranked[:limit]:
        sent = f"{_size(counts.get('sent_bytes', 0))} to Cursor"
        if counts.get("sent_calls"):
            sent += f" in {counts['sent_calls']} call(s)"
        lines.append(
            f"  {key[:36]}: {counts.get('answered', 0)} answered here, "
            f"{counts.get('dropped', 0)} event(s) dropped, {sent}"
        )
    if len(ranked) > limit:
        lines.append(f"  … and {len(ranked) - limit} more")
    lines.extend(_media_lines(snapshot.get("paths", {})))
    return lines


def _media_lines(paths: dict[str, dict[str, int]]) -> list[str]:
    """Attached media: URLs of ours handed out, uploads that came back to them. Fewer uploads
    than URLs means the client uploads around the proxy (its attachment then fails)."""
    signed = paths.get(SIGNED_MEDIA, {}).get(SERVED, 0)
    if not signed:
        return []
    uploads = sum(paths.get(f"{m} {MEDIA_PATHS}", {}).get(SERVED, 0) for m in ("PUT", "POST"))
    line = f"  attached media: {signed} upload URL(s) of this proxy handed out, {uploads} kept"
    if uploads < signed:
        line += " (fewer: the client may upload around the proxy; please report it)"
    return [line]


def _size(count: int) -> str:
    return f"{count} B" if count < 10_000 else f"{count / 1024:.0f} KiB"


def tab_lines(snapshot: dict[str, Any]) -> list[str]:
    """Tab's line: what the user's model answered, and Tab calls that went to Cursor."""
    tab = snapshot.get("tab", {})
    lines = []
    if tab:
        lines.append(
            "Tab on your model: "
            + ", ".join(f"{tab[k]} {TAB_WORDS[k]}" for k in TAB_COUNTS if tab.get(k))
        )
    cursor = snapshot.get("paths", {}).get(TAB_PATH, {}).get(PASSED, 0)
    if cursor:
        lines.append(f'Tab to Cursor: {cursor} request(s) ([features] tab = "cursor")')
    return lines


def census_lines(snapshot: dict[str, Any], *, limit: int = 12) -> list[str]:
    """The census as a few readable lines (doctor, live status)."""
    lines = privacy_lines(snapshot) + feature_lines(snapshot) + tab_lines(snapshot)
    counts = totals(snapshot)
    paths = snapshot.get("paths", {})
    if paths:
        lines.append(
            f"Cursor RPCs: {len(paths)} path(s); " + ", ".join(f"{counts[o]} {o}" for o in OUTCOMES)
        )
        ranked = sorted(paths.items(), key=lambda kv: -sum(kv[1].values()))
        for path, per in ranked[:limit]:
            detail = ", ".join(f"{per[o]} {o}" for o in OUTCOMES if per.get(o))
            lines.append(f"  {path}: {detail}")
        if limit and len(ranked) > limit:
            lines.append(f"  … and {len(ranked) - limit} more")
    transports = snapshot.get("transports", {})
    if transports:
        lines.append(
            "Agent calls by transport: "
            + ", ".join(f"{name} ×{n}" for name, n in sorted(transports.items()))
        )
    unmodelled = snapshot.get("unmodelled", {})
    if unmodelled:
        lines.append("Not modelled (new in this Cursor?):")
        for key, entry in sorted(unmodelled.items()):
            lines.append(f"  {key} ×{entry.get('count', 0)}: {entry.get('what', '')}".rstrip(": "))
    unresolved = snapshot.get("unresolved", {})
    if unresolved:
        ids = snapshot.get("unresolved_ids", {})

        def named(kind: str, count: int) -> str:
            latest = [i if len(i) <= 16 else i[:12] + "…" for i in ids.get(kind, [])]
            latest = latest[-min(count, UNRESOLVED_IDS) :]
            return f"{count} {kind}(s)" + (f" ({', '.join(latest)})" if latest else "")

        lines.append(
            "Unresolved: " + ", ".join(named(kind, n) for kind, n in sorted(unresolved.items()))
        )
    return lines
