"""The committed pb modules are what proto/generate.py makes; our schema subset matches Cursor's.

Two guards for hand edits of proto/*.proto: a stale addon/cursor_byok/pb fails the first test, and a
field number, name or type that disagrees with the extracted reference schema fails the second.
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from google.protobuf import descriptor_pool
from google.protobuf.descriptor import Descriptor
from google.protobuf.descriptor import EnumDescriptor
from google.protobuf.descriptor import FieldDescriptor

from cursor_byok.pb import agent_v1_pb2
from cursor_byok.pb import aiserver_features_pb2
from cursor_byok.pb import aiserver_v1_pb2

ROOT = Path(__file__).resolve().parents[2]
PB_DIR = ROOT / "addon" / "cursor_byok" / "pb"
REFERENCE = ROOT.parent / "shared" / "reference" / "proto"
# Newer than the reference extraction: these are in the schema dumped from Cursor's official client
# bundle (`@cursor/sdk` 1.1.0, every agent.v1 message with exact numbers; docs/protocol.md §15),
# which the reference predates. Anything else we model must be in the reference.
NEWER_THAN_REFERENCE = frozenset(
    {
        "agent.v1.SelectedImage.prompt_upload_ref = 10: no such number in the reference",
        "agent.v1.PromptUploadRef: not in the reference schema",
        "agent.v1.SelectedDocument.prompt_upload_ref = 10: no such number in the reference",
        "agent.v1.GetPromptContextUsageRequest: not in the reference schema",
        "agent.v1.GetPromptContextUsageResponse: not in the reference schema",
        "agent.v1.WarmUpRequest: not in the reference schema",
        "agent.v1.WarmUpResponse: not in the reference schema",
        # issue 37: the provider's model behind a BYOK name (docs/protocol.md §19)
        "agent.v1.InteractionUpdate.routed_model = 24: no such number in the reference",
        "agent.v1.RoutedModelUpdate: not in the reference schema",
        # issue 37: read in the same bundle's schema dump (docs/protocol.md §19)
        "agent.v1.GoalState.continuation_count = 8: no such number in the reference",
        "agent.v1.GoalState.agent_session_id = 9: no such number in the reference",
        "agent.v1.GoalState.context_tokens_added = 11: no such number in the reference",
        "agent.v1.SubagentStopRequestQuery.child_conversation_id = 20: no such number in the "
        "reference",
        *(
            f"agent.v1.AgentRunRequest.{name} = {number}: no such number in the reference"
            for name, number in (
                ("agent_session_id", 26),
                # 27: in every capture; not in the SDK dump; its name as a newer schema has it
                ("client_supports_prompt_context_usage_rpc", 27),
                ("client_supports_routed_model_update", 28),
                ("client_supports_preview_card", 31),
                ("started_as_new_project", 32),
                ("first_project_onboarding", 33),
                ("next_interaction_query_id", 34),
                ("transcript_parent_conversation_id", 36),
            )
        ),
    }
)


def _generator() -> types.ModuleType:
    """proto/ is not a package: load generate.py by path."""
    pytest.importorskip("grpc_tools", reason="grpcio-tools (a dev dependency) provides protoc")
    spec = importlib.util.spec_from_file_location("proto_generate", ROOT / "proto" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generated_files(directory: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in directory.iterdir()
        if p.name == "__init__.py" or p.name.endswith(("_pb2.py", "_pb2.pyi"))
    }


def test_committed_modules_are_fresh(tmp_path: Path) -> None:
    generate = _generator()
    generate.generate(tmp_path)
    fresh = _generated_files(tmp_path)
    committed = _generated_files(PB_DIR)
    assert sorted(committed) == sorted(fresh), (
        "pb/ and proto/*.proto disagree on files: run `just proto`"
    )
    stale = sorted(name for name in fresh if fresh[name] != committed[name])
    assert not stale, f"stale generated modules {stale}: run `just proto`"


# --- subset vs reference -------------------------------------------------------------------------


def _reference_pool(tmp_path: Path) -> descriptor_pool.DescriptorPool:
    if not REFERENCE.is_dir():
        pytest.skip(f"reference schema not found at {REFERENCE}")
    pytest.importorskip("grpc_tools", reason="grpcio-tools (a dev dependency) provides protoc")
    from grpc_tools import protoc

    pool = descriptor_pool.DescriptorPool()
    for name in ("agent_v1.proto", "aiserver_v1.proto"):
        out = tmp_path / f"{name}.pb"
        args = [
            "protoc",
            f"-I{REFERENCE}",
            f"--descriptor_set_out={out}",
            "--include_imports",
            name,
        ]
        assert protoc.main(args) == 0, f"protoc failed on the reference {name}"
        fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
        for file in fds.file:
            try:
                pool.FindFileByName(file.name)
            except KeyError:
                pool.Add(file)
    return pool


def _local_name(full_name: str) -> str:
    """Name inside its package: the extraction copies agent.v1 types into aiserver.v1."""
    for package in ("agent.v1.", "aiserver.v1."):
        if full_name.startswith(package):
            return full_name[len(package) :]
    return full_name


def _type_of(fd: FieldDescriptor) -> str:
    if fd.message_type is not None:
        if fd.message_type.GetOptions().map_entry:
            key, value = fd.message_type.fields
            return f"map<{_type_of(key)}, {_type_of(value)}>"
        return _local_name(fd.message_type.full_name)
    if fd.enum_type is not None:
        return _local_name(fd.enum_type.full_name)
    return str(fd.type)


def _all_types(top: list) -> list:
    """Messages and enums, nested ones included."""
    out = []
    for item in top:
        out.append(item)
        if isinstance(item, Descriptor):
            out += _all_types([*item.nested_types, *item.enum_types])
    return out


def _field_problems(ours: Descriptor, ref: Descriptor) -> list[str]:
    problems = []
    for fd in ours.fields:
        where = f"{ours.full_name}.{fd.name}"
        ref_fd = ref.fields_by_number.get(fd.number)
        if ref_fd is None:
            problems.append(f"{where} = {fd.number}: no such number in the reference")
            continue
        if ref_fd.name != fd.name:
            problems.append(f"{where} = {fd.number}: the reference names it {ref_fd.name}")
        if _type_of(ref_fd) != _type_of(fd) or ref_fd.is_repeated != fd.is_repeated:
            problems.append(f"{where}: type {_type_of(fd)}, reference {_type_of(ref_fd)}")
        ours_oneof = fd.containing_oneof.name if fd.containing_oneof else None
        ref_oneof = ref_fd.containing_oneof.name if ref_fd.containing_oneof else None
        if ours_oneof != ref_oneof:
            problems.append(f"{where}: oneof {ours_oneof}, reference {ref_oneof}")
    return problems


def test_subset_matches_reference(tmp_path: Path) -> None:
    pool = _reference_pool(tmp_path)
    problems: list[str] = []
    checked = 0
    for module in (agent_v1_pb2, aiserver_v1_pb2, aiserver_features_pb2):
        file = module.DESCRIPTOR
        top = [*file.message_types_by_name.values(), *file.enum_types_by_name.values()]
        for item in _all_types(top):
            if isinstance(item, Descriptor) and item.GetOptions().map_entry:
                continue
            finder = (
                pool.FindMessageTypeByName
                if isinstance(item, Descriptor)
                else pool.FindEnumTypeByName
            )
            try:
                ref = finder(item.full_name)
            except KeyError:
                problems.append(f"{item.full_name}: not in the reference schema")
                continue
            checked += 1
            if isinstance(item, EnumDescriptor):
                ours_values = {v.name: v.number for v in item.values}
                ref_values = {v.name: v.number for v in ref.values}
                if ours_values != ref_values:
                    problems.append(f"{item.full_name}: enum values differ from the reference")
            else:
                problems += _field_problems(item, ref)
    # aiserver.v1.GetUsableModelsResponse.models: the extraction binds ModelDetails to the legacy
    # aiserver.v1 message; the bundle (and our file) use agent.v1.ModelDetails. Same local name.
    assert checked > 400
    problems = [p for p in problems if p not in NEWER_THAN_REFERENCE]
    assert not problems, "\n".join(problems)
