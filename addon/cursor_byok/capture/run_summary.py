"""A run request in a few lines (mode, model, the user's message, images, context): what
`cursor-byok decode` shows above a run request's tree, so a capture reads at a glance.
"""

from __future__ import annotations

import json
from typing import Any

from cursor_byok.pb import agent_v1_pb2


def run_request_summary(
    run: agent_v1_pb2.AgentRunRequest, meta: dict[str, Any]
) -> list[tuple[str, str]]:
    """The few facts a person looks for first in a run request, as (label, value) rows."""
    action = run.action
    which = action.WhichOneof("action") or "none"
    user = _action_user_message(action)
    rows: list[tuple[str, str]] = [("action", which)]
    rows.append(("mode", _mode_summary(run, action, user)))
    rows.append(("model", _model_summary(run)))
    rows.append(("conversation id", run.conversation_id or "-"))
    rows.append(("request id", str(meta.get("request_id") or "-")))
    rows.append(("run id", run.run_id or "-"))
    if user is not None:
        rows.append(("user text", elide(user.text, 200) if user.text else "-"))
        if user.message_id:
            rows.append(("message id", user.message_id))
        images = _images_summary(user, run)
        if images:
            rows.append(("images", images))
    state = run.conversation_state
    state_text = (
        f"{len(state.root_prompt_messages_json)} root prompt blobs, {len(state.turns)} turns, "
        f"{len(state.pending_tool_calls)} pending tool batches"
    )
    if state.HasField("token_details"):
        tokens = state.token_details
        state_text += f", {tokens.used_tokens:,}/{tokens.max_tokens:,} tokens"
    rows.append(("conversation state", state_text))
    rows.append(("request context", _context_summary(run)))
    if run.mcp_tools.mcp_tools:
        rows.append(("mcp tools", str(len(run.mcp_tools.mcp_tools))))
    if run.selected_subagent_models:
        models = ", ".join(m.model_id for m in run.selected_subagent_models)
        rows.append(("subagent models", models))
    return rows


def _images_summary(user: agent_v1_pb2.UserMessage, run: agent_v1_pb2.AgentRunRequest) -> str:
    """`2 (image/png 1.2 KB 640x480, image/jpeg in a pre-fetched blob)`, or "" without any."""
    images = list(user.selected_context.selected_images)
    if not images:
        return ""
    fetched = {blob.id: len(blob.value) for blob in run.pre_fetched_blobs}
    parts = []
    for image in images:
        kind = image.mime_type or "image/?"
        data = image.data or image.blob_id_with_data.data
        blob_id = image.blob_id or image.blob_id_with_data.blob_id
        if data:
            size = _size(len(data))
        elif blob_id in fetched:
            size = _size(fetched[blob_id]) + " (pre-fetched blob)"
        elif blob_id:
            size = "blob " + blob_id.hex()[:12] + "…"
        else:
            size = "no data"
        if image.dimension.width and image.dimension.height:
            size += f" {image.dimension.width}x{image.dimension.height}"
        parts.append(f"{kind} {size}")
    return f"{len(images)} ({', '.join(parts)})"


def _size(n: int) -> str:
    return (
        f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MB"
    )


def _action_user_message(
    action: agent_v1_pb2.ConversationAction,
) -> agent_v1_pb2.UserMessage | None:
    which = action.WhichOneof("action")
    if which == "user_message_action":
        return action.user_message_action.user_message
    if which == "start_plan_action":
        return action.start_plan_action.user_message
    return None


def _mode_name(value: int) -> str:
    return (
        agent_v1_pb2.AgentMode.Name(value)
        if value in agent_v1_pb2.AgentMode.values()
        else str(value)
    )


def _mode_summary(
    run: agent_v1_pb2.AgentRunRequest,
    action: agent_v1_pb2.ConversationAction,
    user: agent_v1_pb2.UserMessage | None,
) -> str:
    # Precedence used by peers: explicit plan actions, then the message, then the checkpoint.
    parts = []
    if action.HasField("start_plan_action"):
        parts.append("AGENT_MODE_PLAN (start_plan_action)")
    elif action.HasField("execute_plan_action"):
        parts.append(
            f"{_mode_name(action.execute_plan_action.execution_mode)} (execute_plan_action)"
        )
    if user is not None and user.mode:
        parts.append(f"{_mode_name(user.mode)} (message)")
    if run.conversation_state.HasField("mode"):
        parts.append(f"{_mode_name(run.conversation_state.mode)} (conversation state)")
    return "; ".join(parts) or "-"


def _model_summary(run: agent_v1_pb2.AgentRunRequest) -> str:
    parts = []
    if run.HasField("requested_model"):
        model = run.requested_model
        params = ", ".join(f"{p.id}={p.value}" for p in model.parameters)
        text = model.model_id or "?"
        if params:
            text += f" ({params})"
        if model.max_mode:
            text += " max"
        parts.append(text + " [requested_model]")
    if run.HasField("model_details") and run.model_details.model_id:
        parts.append(f"{run.model_details.model_id} [model_details]")
    return "; ".join(parts) or "-"


def _context_summary(run: agent_v1_pb2.AgentRunRequest) -> str:
    action = run.action
    contexts = []
    for name in ("user_message_action", "resume_action", "start_plan_action"):
        if action.HasField(name) and getattr(action, name).HasField("request_context"):
            contexts.append(("inline", getattr(action, name).request_context))
    if action.HasField("execute_plan_action") and action.execute_plan_action.HasField(
        "request_context"
    ):
        contexts.append(("inline", action.execute_plan_action.request_context))
    parts = []
    if action.HasField("request_context_parts"):
        refs = action.request_context_parts
        for label in ("rules", "skills", "subagents", "mcps"):
            blob = getattr(refs, f"{label}_blob_id")
            if blob:
                parts.append(
                    f"{label} blob {blob.hex()[:12]}… ({getattr(refs, f'{label}_byte_length'):,} B)"
                )
        if refs.HasField("dynamic_context"):
            contexts.append(("dynamic", refs.dynamic_context))
    for where, ctx in contexts:
        counts = {
            "rules": len(ctx.rules) + len(ctx.non_file_rules),
            "skills": len(ctx.agent_skills),
            "tools": len(ctx.tools),
            "mcp instructions": len(ctx.mcp_instructions),
            "subagents": len(ctx.custom_subagents),
            "git repos": len(ctx.git_repos),
        }
        shown = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
        parts.append(f"{where} context {ctx.ByteSize():,} B" + (f" ({shown})" if shown else ""))
    return "; ".join(parts) or "-"


def elide(text: str, limit: int) -> str:
    """`text` as a JSON string, cut at `limit` characters (0: whole) with how many were left out."""
    shown = json.dumps(text[:limit] if limit else text, ensure_ascii=False)
    if limit and len(text) > limit:
        return f'{shown[:-1]}…" (+{len(text) - limit} chars)'
    return shown
