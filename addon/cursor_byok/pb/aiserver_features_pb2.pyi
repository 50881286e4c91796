from . import aiserver_v1_pb2 as _aiserver_v1_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CppFate(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CPP_FATE_UNSPECIFIED: _ClassVar[CppFate]
    CPP_FATE_ACCEPT: _ClassVar[CppFate]
    CPP_FATE_REJECT: _ClassVar[CppFate]
    CPP_FATE_PARTIAL_ACCEPT: _ClassVar[CppFate]

class CppSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CPP_SOURCE_UNSPECIFIED: _ClassVar[CppSource]
    CPP_SOURCE_LINE_CHANGE: _ClassVar[CppSource]
    CPP_SOURCE_TYPING: _ClassVar[CppSource]
    CPP_SOURCE_OPTION_HOLD: _ClassVar[CppSource]
    CPP_SOURCE_LINTER_ERRORS: _ClassVar[CppSource]
    CPP_SOURCE_PARAMETER_HINTS: _ClassVar[CppSource]
    CPP_SOURCE_CURSOR_PREDICTION: _ClassVar[CppSource]
    CPP_SOURCE_MANUAL_TRIGGER: _ClassVar[CppSource]
    CPP_SOURCE_EDITOR_CHANGE: _ClassVar[CppSource]
    CPP_SOURCE_LSP_SUGGESTIONS: _ClassVar[CppSource]

class DatabaseProvider(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DATABASE_PROVIDER_UNSPECIFIED: _ClassVar[DatabaseProvider]
    DATABASE_PROVIDER_AURORA: _ClassVar[DatabaseProvider]
    DATABASE_PROVIDER_PLANETSCALE: _ClassVar[DatabaseProvider]

class EmbeddingModel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EMBEDDING_MODEL_UNSPECIFIED: _ClassVar[EmbeddingModel]
    EMBEDDING_MODEL_VOYAGE_CODE_2: _ClassVar[EmbeddingModel]
    EMBEDDING_MODEL_TEXT_EMBEDDINGS_LARGE_3: _ClassVar[EmbeddingModel]
    EMBEDDING_MODEL_QWEN_1_5B_CUSTOM: _ClassVar[EmbeddingModel]
    EMBEDDING_MODEL_MOCK_CHUNKER_ERROR: _ClassVar[EmbeddingModel]
    EMBEDDING_MODEL_QWEN_1_5B_0618_CUSTOM: _ClassVar[EmbeddingModel]
    EMBEDDING_MODEL_QWEN_1_5B_0618_FP8_MM_CUSTOM: _ClassVar[EmbeddingModel]

class FSSyncErrorType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FS_SYNC_ERROR_TYPE_UNSPECIFIED: _ClassVar[FSSyncErrorType]
    FS_SYNC_ERROR_TYPE_NON_EXISTANT: _ClassVar[FSSyncErrorType]
    FS_SYNC_ERROR_TYPE_HASH_MISMATCH: _ClassVar[FSSyncErrorType]

class FSUploadErrorType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FS_UPLOAD_ERROR_TYPE_UNSPECIFIED: _ClassVar[FSUploadErrorType]
    FS_UPLOAD_ERROR_TYPE_NON_EXISTANT: _ClassVar[FSUploadErrorType]
    FS_UPLOAD_ERROR_TYPE_HASH_MISMATCH: _ClassVar[FSUploadErrorType]

class LintSeverity(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LINT_SEVERITY_UNSPECIFIED: _ClassVar[LintSeverity]
    LINT_SEVERITY_ERROR: _ClassVar[LintSeverity]
    LINT_SEVERITY_WARNING: _ClassVar[LintSeverity]
    LINT_SEVERITY_INFO: _ClassVar[LintSeverity]
    LINT_SEVERITY_HINT: _ClassVar[LintSeverity]
    LINT_SEVERITY_AI: _ClassVar[LintSeverity]
CPP_FATE_UNSPECIFIED: CppFate
CPP_FATE_ACCEPT: CppFate
CPP_FATE_REJECT: CppFate
CPP_FATE_PARTIAL_ACCEPT: CppFate
CPP_SOURCE_UNSPECIFIED: CppSource
CPP_SOURCE_LINE_CHANGE: CppSource
CPP_SOURCE_TYPING: CppSource
CPP_SOURCE_OPTION_HOLD: CppSource
CPP_SOURCE_LINTER_ERRORS: CppSource
CPP_SOURCE_PARAMETER_HINTS: CppSource
CPP_SOURCE_CURSOR_PREDICTION: CppSource
CPP_SOURCE_MANUAL_TRIGGER: CppSource
CPP_SOURCE_EDITOR_CHANGE: CppSource
CPP_SOURCE_LSP_SUGGESTIONS: CppSource
DATABASE_PROVIDER_UNSPECIFIED: DatabaseProvider
DATABASE_PROVIDER_AURORA: DatabaseProvider
DATABASE_PROVIDER_PLANETSCALE: DatabaseProvider
EMBEDDING_MODEL_UNSPECIFIED: EmbeddingModel
EMBEDDING_MODEL_VOYAGE_CODE_2: EmbeddingModel
EMBEDDING_MODEL_TEXT_EMBEDDINGS_LARGE_3: EmbeddingModel
EMBEDDING_MODEL_QWEN_1_5B_CUSTOM: EmbeddingModel
EMBEDDING_MODEL_MOCK_CHUNKER_ERROR: EmbeddingModel
EMBEDDING_MODEL_QWEN_1_5B_0618_CUSTOM: EmbeddingModel
EMBEDDING_MODEL_QWEN_1_5B_0618_FP8_MM_CUSTOM: EmbeddingModel
FS_SYNC_ERROR_TYPE_UNSPECIFIED: FSSyncErrorType
FS_SYNC_ERROR_TYPE_NON_EXISTANT: FSSyncErrorType
FS_SYNC_ERROR_TYPE_HASH_MISMATCH: FSSyncErrorType
FS_UPLOAD_ERROR_TYPE_UNSPECIFIED: FSUploadErrorType
FS_UPLOAD_ERROR_TYPE_NON_EXISTANT: FSUploadErrorType
FS_UPLOAD_ERROR_TYPE_HASH_MISMATCH: FSUploadErrorType
LINT_SEVERITY_UNSPECIFIED: LintSeverity
LINT_SEVERITY_ERROR: LintSeverity
LINT_SEVERITY_WARNING: LintSeverity
LINT_SEVERITY_INFO: LintSeverity
LINT_SEVERITY_HINT: LintSeverity
LINT_SEVERITY_AI: LintSeverity

class AcceptCursorPredictionEvent(_message.Message):
    __slots__ = ("cursor_prediction", "point_in_time_model")
    CURSOR_PREDICTION_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    cursor_prediction: CursorPrediction
    point_in_time_model: PointInTimeModel
    def __init__(self, cursor_prediction: _Optional[_Union[CursorPrediction, _Mapping]] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ...) -> None: ...

class AdditionalFile(_message.Message):
    __slots__ = ("relative_workspace_path", "is_open", "visible_range_content", "last_viewed_at", "start_line_number_one_indexed", "visible_ranges")
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    IS_OPEN_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_RANGE_CONTENT_FIELD_NUMBER: _ClassVar[int]
    LAST_VIEWED_AT_FIELD_NUMBER: _ClassVar[int]
    START_LINE_NUMBER_ONE_INDEXED_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_RANGES_FIELD_NUMBER: _ClassVar[int]
    relative_workspace_path: str
    is_open: bool
    visible_range_content: _containers.RepeatedScalarFieldContainer[str]
    last_viewed_at: float
    start_line_number_one_indexed: _containers.RepeatedScalarFieldContainer[int]
    visible_ranges: _containers.RepeatedCompositeFieldContainer[LineRange]
    def __init__(self, relative_workspace_path: _Optional[str] = ..., is_open: _Optional[bool] = ..., visible_range_content: _Optional[_Iterable[str]] = ..., last_viewed_at: _Optional[float] = ..., start_line_number_one_indexed: _Optional[_Iterable[int]] = ..., visible_ranges: _Optional[_Iterable[_Union[LineRange, _Mapping]]] = ...) -> None: ...

class AiRequestEvent(_message.Message):
    __slots__ = ("request_type", "request_id", "source")
    class RequestType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        REQUEST_TYPE_UNSPECIFIED: _ClassVar[AiRequestEvent.RequestType]
        REQUEST_TYPE_START: _ClassVar[AiRequestEvent.RequestType]
        REQUEST_TYPE_END: _ClassVar[AiRequestEvent.RequestType]
    REQUEST_TYPE_UNSPECIFIED: AiRequestEvent.RequestType
    REQUEST_TYPE_START: AiRequestEvent.RequestType
    REQUEST_TYPE_END: AiRequestEvent.RequestType
    class Source(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        SOURCE_UNSPECIFIED: _ClassVar[AiRequestEvent.Source]
        SOURCE_CHAT: _ClassVar[AiRequestEvent.Source]
        SOURCE_CMDK: _ClassVar[AiRequestEvent.Source]
        SOURCE_APPLY: _ClassVar[AiRequestEvent.Source]
        SOURCE_COMPOSER: _ClassVar[AiRequestEvent.Source]
        SOURCE_TASK: _ClassVar[AiRequestEvent.Source]
        SOURCE_CODE_INTERPRETER: _ClassVar[AiRequestEvent.Source]
        SOURCE_INTERPRETER_EXECUTION: _ClassVar[AiRequestEvent.Source]
        SOURCE_BUGBOT: _ClassVar[AiRequestEvent.Source]
    SOURCE_UNSPECIFIED: AiRequestEvent.Source
    SOURCE_CHAT: AiRequestEvent.Source
    SOURCE_CMDK: AiRequestEvent.Source
    SOURCE_APPLY: AiRequestEvent.Source
    SOURCE_COMPOSER: AiRequestEvent.Source
    SOURCE_TASK: AiRequestEvent.Source
    SOURCE_CODE_INTERPRETER: AiRequestEvent.Source
    SOURCE_INTERPRETER_EXECUTION: AiRequestEvent.Source
    SOURCE_BUGBOT: AiRequestEvent.Source
    REQUEST_TYPE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    request_type: AiRequestEvent.RequestType
    request_id: str
    source: AiRequestEvent.Source
    def __init__(self, request_type: _Optional[_Union[AiRequestEvent.RequestType, str]] = ..., request_id: _Optional[str] = ..., source: _Optional[_Union[AiRequestEvent.Source, str]] = ...) -> None: ...

class AnythingQuickAccessItem(_message.Message):
    __slots__ = ("resource", "separator", "section")
    class Resource(_message.Message):
        __slots__ = ("model", "range", "uri")
        MODEL_FIELD_NUMBER: _ClassVar[int]
        RANGE_FIELD_NUMBER: _ClassVar[int]
        URI_FIELD_NUMBER: _ClassVar[int]
        model: PointInTimeModel
        range: IRange
        uri: str
        def __init__(self, model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., range: _Optional[_Union[IRange, _Mapping]] = ..., uri: _Optional[str] = ...) -> None: ...
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    SEPARATOR_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    resource: AnythingQuickAccessItem.Resource
    separator: str
    section: str
    def __init__(self, resource: _Optional[_Union[AnythingQuickAccessItem.Resource, _Mapping]] = ..., separator: _Optional[str] = ..., section: _Optional[str] = ...) -> None: ...

class AnythingQuickAccessSelectionEvent(_message.Message):
    __slots__ = ("query", "items", "selected_indices")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    SELECTED_INDICES_FIELD_NUMBER: _ClassVar[int]
    query: str
    items: _containers.RepeatedCompositeFieldContainer[AnythingQuickAccessItem]
    selected_indices: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, query: _Optional[str] = ..., items: _Optional[_Iterable[_Union[AnythingQuickAccessItem, _Mapping]]] = ..., selected_indices: _Optional[_Iterable[int]] = ...) -> None: ...

class ApiKeyCredentials(_message.Message):
    __slots__ = ("api_key", "base_url")
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    api_key: str
    base_url: str
    def __init__(self, api_key: _Optional[str] = ..., base_url: _Optional[str] = ...) -> None: ...

class AvailableCppModelsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AvailableCppModelsResponse(_message.Message):
    __slots__ = ("models", "default_model")
    MODELS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_MODEL_FIELD_NUMBER: _ClassVar[int]
    models: _containers.RepeatedScalarFieldContainer[str]
    default_model: str
    def __init__(self, models: _Optional[_Iterable[str]] = ..., default_model: _Optional[str] = ...) -> None: ...

class AzureCredentials(_message.Message):
    __slots__ = ("api_key", "base_url", "deployment")
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    DEPLOYMENT_FIELD_NUMBER: _ClassVar[int]
    api_key: str
    base_url: str
    deployment: str
    def __init__(self, api_key: _Optional[str] = ..., base_url: _Optional[str] = ..., deployment: _Optional[str] = ...) -> None: ...

class AzureState(_message.Message):
    __slots__ = ("api_key", "base_url", "deployment", "use_azure")
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    DEPLOYMENT_FIELD_NUMBER: _ClassVar[int]
    USE_AZURE_FIELD_NUMBER: _ClassVar[int]
    api_key: str
    base_url: str
    deployment: str
    use_azure: bool
    def __init__(self, api_key: _Optional[str] = ..., base_url: _Optional[str] = ..., deployment: _Optional[str] = ..., use_azure: _Optional[bool] = ...) -> None: ...

class BM25Chunk(_message.Message):
    __slots__ = ("content", "range", "score", "relative_path")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_PATH_FIELD_NUMBER: _ClassVar[int]
    content: str
    range: SimplestRange
    score: int
    relative_path: str
    def __init__(self, content: _Optional[str] = ..., range: _Optional[_Union[SimplestRange, _Mapping]] = ..., score: _Optional[int] = ..., relative_path: _Optional[str] = ...) -> None: ...

class BackgroundFilesEvent(_message.Message):
    __slots__ = ("files",)
    class BackgroundFile(_message.Message):
        __slots__ = ("relative_workspace_path", "contents", "hash", "full_path")
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        CONTENTS_FIELD_NUMBER: _ClassVar[int]
        HASH_FIELD_NUMBER: _ClassVar[int]
        FULL_PATH_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        contents: str
        hash: str
        full_path: str
        def __init__(self, relative_workspace_path: _Optional[str] = ..., contents: _Optional[str] = ..., hash: _Optional[str] = ..., full_path: _Optional[str] = ...) -> None: ...
    FILES_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[BackgroundFilesEvent.BackgroundFile]
    def __init__(self, files: _Optional[_Iterable[_Union[BackgroundFilesEvent.BackgroundFile, _Mapping]]] = ...) -> None: ...

class BedrockCredentials(_message.Message):
    __slots__ = ("access_key", "secret_key", "region", "session_token")
    ACCESS_KEY_FIELD_NUMBER: _ClassVar[int]
    SECRET_KEY_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    access_key: str
    secret_key: str
    region: str
    session_token: str
    def __init__(self, access_key: _Optional[str] = ..., secret_key: _Optional[str] = ..., region: _Optional[str] = ..., session_token: _Optional[str] = ...) -> None: ...

class BedrockState(_message.Message):
    __slots__ = ("access_key", "secret_key", "region", "use_bedrock", "session_token")
    ACCESS_KEY_FIELD_NUMBER: _ClassVar[int]
    SECRET_KEY_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    USE_BEDROCK_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    access_key: str
    secret_key: str
    region: str
    use_bedrock: bool
    session_token: str
    def __init__(self, access_key: _Optional[str] = ..., secret_key: _Optional[str] = ..., region: _Optional[str] = ..., use_bedrock: _Optional[bool] = ..., session_token: _Optional[str] = ...) -> None: ...

class BeforeAiEditEvent(_message.Message):
    __slots__ = ("tool_call_id", "request_id", "tool_name", "point_in_time_model", "relative_workspace_path")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    request_id: str
    tool_name: str
    point_in_time_model: PointInTimeModel
    relative_workspace_path: str
    def __init__(self, tool_call_id: _Optional[str] = ..., request_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., relative_workspace_path: _Optional[str] = ...) -> None: ...

class BlockDiffPatch(_message.Message):
    __slots__ = ("start_model_window", "changes", "relative_path", "model_uuid", "start_from_change_index")
    class Change(_message.Message):
        __slots__ = ("text", "range")
        TEXT_FIELD_NUMBER: _ClassVar[int]
        RANGE_FIELD_NUMBER: _ClassVar[int]
        text: str
        range: IRange
        def __init__(self, text: _Optional[str] = ..., range: _Optional[_Union[IRange, _Mapping]] = ...) -> None: ...
    class ModelWindow(_message.Message):
        __slots__ = ("lines", "start_line_number", "end_line_number")
        LINES_FIELD_NUMBER: _ClassVar[int]
        START_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
        END_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
        lines: _containers.RepeatedScalarFieldContainer[str]
        start_line_number: int
        end_line_number: int
        def __init__(self, lines: _Optional[_Iterable[str]] = ..., start_line_number: _Optional[int] = ..., end_line_number: _Optional[int] = ...) -> None: ...
    START_MODEL_WINDOW_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_PATH_FIELD_NUMBER: _ClassVar[int]
    MODEL_UUID_FIELD_NUMBER: _ClassVar[int]
    START_FROM_CHANGE_INDEX_FIELD_NUMBER: _ClassVar[int]
    start_model_window: BlockDiffPatch.ModelWindow
    changes: _containers.RepeatedCompositeFieldContainer[BlockDiffPatch.Change]
    relative_path: str
    model_uuid: str
    start_from_change_index: int
    def __init__(self, start_model_window: _Optional[_Union[BlockDiffPatch.ModelWindow, _Mapping]] = ..., changes: _Optional[_Iterable[_Union[BlockDiffPatch.Change, _Mapping]]] = ..., relative_path: _Optional[str] = ..., model_uuid: _Optional[str] = ..., start_from_change_index: _Optional[int] = ...) -> None: ...

class BrowserEvent(_message.Message):
    __slots__ = ("view_id", "tab_created", "tab_closed", "navigation", "tool_action")
    class Navigation(_message.Message):
        __slots__ = ("url", "title")
        URL_FIELD_NUMBER: _ClassVar[int]
        TITLE_FIELD_NUMBER: _ClassVar[int]
        url: str
        title: str
        def __init__(self, url: _Optional[str] = ..., title: _Optional[str] = ...) -> None: ...
    class TabClosed(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class TabCreated(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class ToolAction(_message.Message):
        __slots__ = ("tool_name", "args_json", "success", "post_snapshot_yaml", "post_url", "post_title", "source")
        class Source(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
            __slots__ = ()
            SOURCE_UNSPECIFIED: _ClassVar[BrowserEvent.ToolAction.Source]
            SOURCE_MCP_TOOL: _ClassVar[BrowserEvent.ToolAction.Source]
            SOURCE_MANUAL_USER: _ClassVar[BrowserEvent.ToolAction.Source]
        SOURCE_UNSPECIFIED: BrowserEvent.ToolAction.Source
        SOURCE_MCP_TOOL: BrowserEvent.ToolAction.Source
        SOURCE_MANUAL_USER: BrowserEvent.ToolAction.Source
        TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
        ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
        SUCCESS_FIELD_NUMBER: _ClassVar[int]
        POST_SNAPSHOT_YAML_FIELD_NUMBER: _ClassVar[int]
        POST_URL_FIELD_NUMBER: _ClassVar[int]
        POST_TITLE_FIELD_NUMBER: _ClassVar[int]
        SOURCE_FIELD_NUMBER: _ClassVar[int]
        tool_name: str
        args_json: str
        success: bool
        post_snapshot_yaml: str
        post_url: str
        post_title: str
        source: BrowserEvent.ToolAction.Source
        def __init__(self, tool_name: _Optional[str] = ..., args_json: _Optional[str] = ..., success: _Optional[bool] = ..., post_snapshot_yaml: _Optional[str] = ..., post_url: _Optional[str] = ..., post_title: _Optional[str] = ..., source: _Optional[_Union[BrowserEvent.ToolAction.Source, str]] = ...) -> None: ...
    VIEW_ID_FIELD_NUMBER: _ClassVar[int]
    TAB_CREATED_FIELD_NUMBER: _ClassVar[int]
    TAB_CLOSED_FIELD_NUMBER: _ClassVar[int]
    NAVIGATION_FIELD_NUMBER: _ClassVar[int]
    TOOL_ACTION_FIELD_NUMBER: _ClassVar[int]
    view_id: str
    tab_created: BrowserEvent.TabCreated
    tab_closed: BrowserEvent.TabClosed
    navigation: BrowserEvent.Navigation
    tool_action: BrowserEvent.ToolAction
    def __init__(self, view_id: _Optional[str] = ..., tab_created: _Optional[_Union[BrowserEvent.TabCreated, _Mapping]] = ..., tab_closed: _Optional[_Union[BrowserEvent.TabClosed, _Mapping]] = ..., navigation: _Optional[_Union[BrowserEvent.Navigation, _Mapping]] = ..., tool_action: _Optional[_Union[BrowserEvent.ToolAction, _Mapping]] = ...) -> None: ...

class BugBotEvent(_message.Message):
    __slots__ = ("request_id", "started", "reports_generated", "pressed_fix_in_composer", "pressed_open_in_editor", "viewed_report", "user_feedback", "pressed_add_to_chat", "background_interval_started", "background_interval_ended", "background_interval_interrupted", "background_interval_errored")
    class BackgroundIntervalInterruptedReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_UNSPECIFIED: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_DISABLED: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_TOO_RECENT: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_UNVIEWED_BUG_REPORTS: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_NOT_IN_GIT_REPO: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_DEFAULT_BRANCH_IS_NOT_CURRENT_BRANCH: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_NO_GIT_USER: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_NO_LAST_COMMIT: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_LAST_COMMIT_NOT_MADE_BY_USER: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_LAST_COMMIT_TOO_OLD: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_DIFF_TOO_LONG: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_DIFF_TOO_SHORT: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
        BACKGROUND_INTERVAL_INTERRUPTED_REASON_TELEMETRY_UNHEALTHY: _ClassVar[BugBotEvent.BackgroundIntervalInterruptedReason]
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_UNSPECIFIED: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_DISABLED: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_TOO_RECENT: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_UNVIEWED_BUG_REPORTS: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_NOT_IN_GIT_REPO: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_DEFAULT_BRANCH_IS_NOT_CURRENT_BRANCH: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_NO_GIT_USER: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_NO_LAST_COMMIT: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_LAST_COMMIT_NOT_MADE_BY_USER: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_LAST_COMMIT_TOO_OLD: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_DIFF_TOO_LONG: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_DIFF_TOO_SHORT: BugBotEvent.BackgroundIntervalInterruptedReason
    BACKGROUND_INTERVAL_INTERRUPTED_REASON_TELEMETRY_UNHEALTHY: BugBotEvent.BackgroundIntervalInterruptedReason
    class BackgroundIntervalEnded(_message.Message):
        __slots__ = ("success",)
        SUCCESS_FIELD_NUMBER: _ClassVar[int]
        success: bool
        def __init__(self, success: _Optional[bool] = ...) -> None: ...
    class BackgroundIntervalErrored(_message.Message):
        __slots__ = ("error_message",)
        ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
        error_message: str
        def __init__(self, error_message: _Optional[str] = ...) -> None: ...
    class BackgroundIntervalInterrupted(_message.Message):
        __slots__ = ("reason",)
        REASON_FIELD_NUMBER: _ClassVar[int]
        reason: BugBotEvent.BackgroundIntervalInterruptedReason
        def __init__(self, reason: _Optional[_Union[BugBotEvent.BackgroundIntervalInterruptedReason, str]] = ...) -> None: ...
    class BackgroundIntervalStarted(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class PressedAddToChat(_message.Message):
        __slots__ = ("bug_report_id",)
        BUG_REPORT_ID_FIELD_NUMBER: _ClassVar[int]
        bug_report_id: str
        def __init__(self, bug_report_id: _Optional[str] = ...) -> None: ...
    class PressedFixInComposer(_message.Message):
        __slots__ = ("bug_report_id",)
        BUG_REPORT_ID_FIELD_NUMBER: _ClassVar[int]
        bug_report_id: str
        def __init__(self, bug_report_id: _Optional[str] = ...) -> None: ...
    class PressedOpenInEditor(_message.Message):
        __slots__ = ("bug_location", "bug_report_id")
        BUG_LOCATION_FIELD_NUMBER: _ClassVar[int]
        BUG_REPORT_ID_FIELD_NUMBER: _ClassVar[int]
        bug_location: BugLocation
        bug_report_id: str
        def __init__(self, bug_location: _Optional[_Union[BugLocation, _Mapping]] = ..., bug_report_id: _Optional[str] = ...) -> None: ...
    class ReportsGenerated(_message.Message):
        __slots__ = ("bug_reports",)
        BUG_REPORTS_FIELD_NUMBER: _ClassVar[int]
        bug_reports: BugReports
        def __init__(self, bug_reports: _Optional[_Union[BugReports, _Mapping]] = ...) -> None: ...
    class Started(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class UserFeedback(_message.Message):
        __slots__ = ("bug_report_id", "feedback")
        BUG_REPORT_ID_FIELD_NUMBER: _ClassVar[int]
        FEEDBACK_FIELD_NUMBER: _ClassVar[int]
        bug_report_id: str
        feedback: str
        def __init__(self, bug_report_id: _Optional[str] = ..., feedback: _Optional[str] = ...) -> None: ...
    class ViewedReport(_message.Message):
        __slots__ = ("seconds_viewed", "report_views")
        class ReportView(_message.Message):
            __slots__ = ("bug_report_id", "view_percentage", "text_percentage")
            BUG_REPORT_ID_FIELD_NUMBER: _ClassVar[int]
            VIEW_PERCENTAGE_FIELD_NUMBER: _ClassVar[int]
            TEXT_PERCENTAGE_FIELD_NUMBER: _ClassVar[int]
            bug_report_id: str
            view_percentage: float
            text_percentage: float
            def __init__(self, bug_report_id: _Optional[str] = ..., view_percentage: _Optional[float] = ..., text_percentage: _Optional[float] = ...) -> None: ...
        SECONDS_VIEWED_FIELD_NUMBER: _ClassVar[int]
        REPORT_VIEWS_FIELD_NUMBER: _ClassVar[int]
        seconds_viewed: int
        report_views: _containers.RepeatedCompositeFieldContainer[BugBotEvent.ViewedReport.ReportView]
        def __init__(self, seconds_viewed: _Optional[int] = ..., report_views: _Optional[_Iterable[_Union[BugBotEvent.ViewedReport.ReportView, _Mapping]]] = ...) -> None: ...
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    REPORTS_GENERATED_FIELD_NUMBER: _ClassVar[int]
    PRESSED_FIX_IN_COMPOSER_FIELD_NUMBER: _ClassVar[int]
    PRESSED_OPEN_IN_EDITOR_FIELD_NUMBER: _ClassVar[int]
    VIEWED_REPORT_FIELD_NUMBER: _ClassVar[int]
    USER_FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    PRESSED_ADD_TO_CHAT_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_INTERVAL_STARTED_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_INTERVAL_ENDED_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_INTERVAL_INTERRUPTED_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_INTERVAL_ERRORED_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    started: BugBotEvent.Started
    reports_generated: BugBotEvent.ReportsGenerated
    pressed_fix_in_composer: BugBotEvent.PressedFixInComposer
    pressed_open_in_editor: BugBotEvent.PressedOpenInEditor
    viewed_report: BugBotEvent.ViewedReport
    user_feedback: BugBotEvent.UserFeedback
    pressed_add_to_chat: BugBotEvent.PressedAddToChat
    background_interval_started: BugBotEvent.BackgroundIntervalStarted
    background_interval_ended: BugBotEvent.BackgroundIntervalEnded
    background_interval_interrupted: BugBotEvent.BackgroundIntervalInterrupted
    background_interval_errored: BugBotEvent.BackgroundIntervalErrored
    def __init__(self, request_id: _Optional[str] = ..., started: _Optional[_Union[BugBotEvent.Started, _Mapping]] = ..., reports_generated: _Optional[_Union[BugBotEvent.ReportsGenerated, _Mapping]] = ..., pressed_fix_in_composer: _Optional[_Union[BugBotEvent.PressedFixInComposer, _Mapping]] = ..., pressed_open_in_editor: _Optional[_Union[BugBotEvent.PressedOpenInEditor, _Mapping]] = ..., viewed_report: _Optional[_Union[BugBotEvent.ViewedReport, _Mapping]] = ..., user_feedback: _Optional[_Union[BugBotEvent.UserFeedback, _Mapping]] = ..., pressed_add_to_chat: _Optional[_Union[BugBotEvent.PressedAddToChat, _Mapping]] = ..., background_interval_started: _Optional[_Union[BugBotEvent.BackgroundIntervalStarted, _Mapping]] = ..., background_interval_ended: _Optional[_Union[BugBotEvent.BackgroundIntervalEnded, _Mapping]] = ..., background_interval_interrupted: _Optional[_Union[BugBotEvent.BackgroundIntervalInterrupted, _Mapping]] = ..., background_interval_errored: _Optional[_Union[BugBotEvent.BackgroundIntervalErrored, _Mapping]] = ...) -> None: ...

class BugBotLinterEvent(_message.Message):
    __slots__ = ("request_id", "point_in_time_model", "lint_generated", "lint_dismissed", "user_feedback", "viewed_report", "unviewed_report", "started", "not_shown_because_heuristic")
    class LintDismissed(_message.Message):
        __slots__ = ("bug_report_id",)
        BUG_REPORT_ID_FIELD_NUMBER: _ClassVar[int]
        bug_report_id: str
        def __init__(self, bug_report_id: _Optional[str] = ...) -> None: ...
    class LintGenerated(_message.Message):
        __slots__ = ("bug_report",)
        BUG_REPORT_FIELD_NUMBER: _ClassVar[int]
        bug_report: BugReport
        def __init__(self, bug_report: _Optional[_Union[BugReport, _Mapping]] = ...) -> None: ...
    class NotShownBecauseHeuristic(_message.Message):
        __slots__ = ("heuristic",)
        class Heuristic(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
            __slots__ = ()
            HEURISTIC_UNSPECIFIED: _ClassVar[BugBotLinterEvent.NotShownBecauseHeuristic.Heuristic]
            HEURISTIC_LINT_OVERLAP: _ClassVar[BugBotLinterEvent.NotShownBecauseHeuristic.Heuristic]
            HEURISTIC_LINES_MISMATCH: _ClassVar[BugBotLinterEvent.NotShownBecauseHeuristic.Heuristic]
        HEURISTIC_UNSPECIFIED: BugBotLinterEvent.NotShownBecauseHeuristic.Heuristic
        HEURISTIC_LINT_OVERLAP: BugBotLinterEvent.NotShownBecauseHeuristic.Heuristic
        HEURISTIC_LINES_MISMATCH: BugBotLinterEvent.NotShownBecauseHeuristic.Heuristic
        HEURISTIC_FIELD_NUMBER: _ClassVar[int]
        heuristic: BugBotLinterEvent.NotShownBecauseHeuristic.Heuristic
        def __init__(self, heuristic: _Optional[_Union[BugBotLinterEvent.NotShownBecauseHeuristic.Heuristic, str]] = ...) -> None: ...
    class Started(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class UnviewedReport(_message.Message):
        __slots__ = ("bug_report_id",)
        BUG_REPORT_ID_FIELD_NUMBER: _ClassVar[int]
        bug_report_id: str
        def __init__(self, bug_report_id: _Optional[str] = ...) -> None: ...
    class UserFeedback(_message.Message):
        __slots__ = ("bug_report_id", "feedback")
        BUG_REPORT_ID_FIELD_NUMBER: _ClassVar[int]
        FEEDBACK_FIELD_NUMBER: _ClassVar[int]
        bug_report_id: str
        feedback: str
        def __init__(self, bug_report_id: _Optional[str] = ..., feedback: _Optional[str] = ...) -> None: ...
    class ViewedReport(_message.Message):
        __slots__ = ("bug_report_id",)
        BUG_REPORT_ID_FIELD_NUMBER: _ClassVar[int]
        bug_report_id: str
        def __init__(self, bug_report_id: _Optional[str] = ...) -> None: ...
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    LINT_GENERATED_FIELD_NUMBER: _ClassVar[int]
    LINT_DISMISSED_FIELD_NUMBER: _ClassVar[int]
    USER_FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    VIEWED_REPORT_FIELD_NUMBER: _ClassVar[int]
    UNVIEWED_REPORT_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    NOT_SHOWN_BECAUSE_HEURISTIC_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    point_in_time_model: PointInTimeModel
    lint_generated: BugBotLinterEvent.LintGenerated
    lint_dismissed: BugBotLinterEvent.LintDismissed
    user_feedback: BugBotLinterEvent.UserFeedback
    viewed_report: BugBotLinterEvent.ViewedReport
    unviewed_report: BugBotLinterEvent.UnviewedReport
    started: BugBotLinterEvent.Started
    not_shown_because_heuristic: BugBotLinterEvent.NotShownBecauseHeuristic
    def __init__(self, request_id: _Optional[str] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., lint_generated: _Optional[_Union[BugBotLinterEvent.LintGenerated, _Mapping]] = ..., lint_dismissed: _Optional[_Union[BugBotLinterEvent.LintDismissed, _Mapping]] = ..., user_feedback: _Optional[_Union[BugBotLinterEvent.UserFeedback, _Mapping]] = ..., viewed_report: _Optional[_Union[BugBotLinterEvent.ViewedReport, _Mapping]] = ..., unviewed_report: _Optional[_Union[BugBotLinterEvent.UnviewedReport, _Mapping]] = ..., started: _Optional[_Union[BugBotLinterEvent.Started, _Mapping]] = ..., not_shown_because_heuristic: _Optional[_Union[BugBotLinterEvent.NotShownBecauseHeuristic, _Mapping]] = ...) -> None: ...

class BugLocation(_message.Message):
    __slots__ = ("file", "start_line", "end_line", "code_lines")
    FILE_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    CODE_LINES_FIELD_NUMBER: _ClassVar[int]
    file: str
    start_line: int
    end_line: int
    code_lines: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, file: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., code_lines: _Optional[_Iterable[str]] = ...) -> None: ...

class BugReport(_message.Message):
    __slots__ = ("locations", "id", "description", "confidence", "category", "severity", "title", "rationale", "triggered_by_rule_id", "model_confidence")
    LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    TRIGGERED_BY_RULE_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    locations: _containers.RepeatedCompositeFieldContainer[BugLocation]
    id: str
    description: str
    confidence: float
    category: str
    severity: str
    title: str
    rationale: str
    triggered_by_rule_id: str
    model_confidence: float
    def __init__(self, locations: _Optional[_Iterable[_Union[BugLocation, _Mapping]]] = ..., id: _Optional[str] = ..., description: _Optional[str] = ..., confidence: _Optional[float] = ..., category: _Optional[str] = ..., severity: _Optional[str] = ..., title: _Optional[str] = ..., rationale: _Optional[str] = ..., triggered_by_rule_id: _Optional[str] = ..., model_confidence: _Optional[float] = ...) -> None: ...

class BugReports(_message.Message):
    __slots__ = ("bug_reports",)
    BUG_REPORTS_FIELD_NUMBER: _ClassVar[int]
    bug_reports: _containers.RepeatedCompositeFieldContainer[BugReport]
    def __init__(self, bug_reports: _Optional[_Iterable[_Union[BugReport, _Mapping]]] = ...) -> None: ...

class ChatEvent(_message.Message):
    __slots__ = ("request_id", "submit_prompt", "end_of_any_generation", "end_of_uninterrupted_generation")
    class EndOfAnyGeneration(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class EndOfUninterruptedGeneration(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class SubmitPrompt(_message.Message):
        __slots__ = ("prompt",)
        PROMPT_FIELD_NUMBER: _ClassVar[int]
        prompt: str
        def __init__(self, prompt: _Optional[str] = ...) -> None: ...
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SUBMIT_PROMPT_FIELD_NUMBER: _ClassVar[int]
    END_OF_ANY_GENERATION_FIELD_NUMBER: _ClassVar[int]
    END_OF_UNINTERRUPTED_GENERATION_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    submit_prompt: ChatEvent.SubmitPrompt
    end_of_any_generation: ChatEvent.EndOfAnyGeneration
    end_of_uninterrupted_generation: ChatEvent.EndOfUninterruptedGeneration
    def __init__(self, request_id: _Optional[str] = ..., submit_prompt: _Optional[_Union[ChatEvent.SubmitPrompt, _Mapping]] = ..., end_of_any_generation: _Optional[_Union[ChatEvent.EndOfAnyGeneration, _Mapping]] = ..., end_of_uninterrupted_generation: _Optional[_Union[ChatEvent.EndOfUninterruptedGeneration, _Mapping]] = ...) -> None: ...

class CmdKDebugInfo(_message.Message):
    __slots__ = ("remote_url", "commit_id", "git_patch", "unsaved_files", "unix_timestamp_ms", "open_editors", "file_diff_histories", "branch_name", "branch_notes", "branch_notes_rich", "global_notes", "past_thoughts", "base_branch_name", "base_branch_commit_id")
    class CppFileDiffHistory(_message.Message):
        __slots__ = ("file_name", "diff_history")
        FILE_NAME_FIELD_NUMBER: _ClassVar[int]
        DIFF_HISTORY_FIELD_NUMBER: _ClassVar[int]
        file_name: str
        diff_history: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, file_name: _Optional[str] = ..., diff_history: _Optional[_Iterable[str]] = ...) -> None: ...
    class OpenEditor(_message.Message):
        __slots__ = ("relative_workspace_path", "editor_group_index", "editor_group_id", "is_active")
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        EDITOR_GROUP_INDEX_FIELD_NUMBER: _ClassVar[int]
        EDITOR_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
        IS_ACTIVE_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        editor_group_index: int
        editor_group_id: int
        is_active: bool
        def __init__(self, relative_workspace_path: _Optional[str] = ..., editor_group_index: _Optional[int] = ..., editor_group_id: _Optional[int] = ..., is_active: _Optional[bool] = ...) -> None: ...
    class PastThought(_message.Message):
        __slots__ = ("text", "time_in_unix_seconds")
        TEXT_FIELD_NUMBER: _ClassVar[int]
        TIME_IN_UNIX_SECONDS_FIELD_NUMBER: _ClassVar[int]
        text: str
        time_in_unix_seconds: float
        def __init__(self, text: _Optional[str] = ..., time_in_unix_seconds: _Optional[float] = ...) -> None: ...
    class UnsavedFiles(_message.Message):
        __slots__ = ("relative_workspace_path", "contents")
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        CONTENTS_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        contents: str
        def __init__(self, relative_workspace_path: _Optional[str] = ..., contents: _Optional[str] = ...) -> None: ...
    REMOTE_URL_FIELD_NUMBER: _ClassVar[int]
    COMMIT_ID_FIELD_NUMBER: _ClassVar[int]
    GIT_PATCH_FIELD_NUMBER: _ClassVar[int]
    UNSAVED_FILES_FIELD_NUMBER: _ClassVar[int]
    UNIX_TIMESTAMP_MS_FIELD_NUMBER: _ClassVar[int]
    OPEN_EDITORS_FIELD_NUMBER: _ClassVar[int]
    FILE_DIFF_HISTORIES_FIELD_NUMBER: _ClassVar[int]
    BRANCH_NAME_FIELD_NUMBER: _ClassVar[int]
    BRANCH_NOTES_FIELD_NUMBER: _ClassVar[int]
    BRANCH_NOTES_RICH_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_NOTES_FIELD_NUMBER: _ClassVar[int]
    PAST_THOUGHTS_FIELD_NUMBER: _ClassVar[int]
    BASE_BRANCH_NAME_FIELD_NUMBER: _ClassVar[int]
    BASE_BRANCH_COMMIT_ID_FIELD_NUMBER: _ClassVar[int]
    remote_url: str
    commit_id: str
    git_patch: str
    unsaved_files: _containers.RepeatedCompositeFieldContainer[CmdKDebugInfo.UnsavedFiles]
    unix_timestamp_ms: float
    open_editors: _containers.RepeatedCompositeFieldContainer[CmdKDebugInfo.OpenEditor]
    file_diff_histories: _containers.RepeatedCompositeFieldContainer[CmdKDebugInfo.CppFileDiffHistory]
    branch_name: str
    branch_notes: str
    branch_notes_rich: str
    global_notes: str
    past_thoughts: _containers.RepeatedCompositeFieldContainer[CmdKDebugInfo.PastThought]
    base_branch_name: str
    base_branch_commit_id: str
    def __init__(self, remote_url: _Optional[str] = ..., commit_id: _Optional[str] = ..., git_patch: _Optional[str] = ..., unsaved_files: _Optional[_Iterable[_Union[CmdKDebugInfo.UnsavedFiles, _Mapping]]] = ..., unix_timestamp_ms: _Optional[float] = ..., open_editors: _Optional[_Iterable[_Union[CmdKDebugInfo.OpenEditor, _Mapping]]] = ..., file_diff_histories: _Optional[_Iterable[_Union[CmdKDebugInfo.CppFileDiffHistory, _Mapping]]] = ..., branch_name: _Optional[str] = ..., branch_notes: _Optional[str] = ..., branch_notes_rich: _Optional[str] = ..., global_notes: _Optional[str] = ..., past_thoughts: _Optional[_Iterable[_Union[CmdKDebugInfo.PastThought, _Mapping]]] = ..., base_branch_name: _Optional[str] = ..., base_branch_commit_id: _Optional[str] = ...) -> None: ...

class CmdKEvent(_message.Message):
    __slots__ = ("point_in_time_model", "request_id", "prompt_bar_id", "submit_prompt", "end_of_generation", "interrupt_generation", "accept_all", "reject_all", "reject_partial_diff", "accept_partial_diff", "after_reject")
    class AcceptDiffs(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class AcceptPartialDiff(_message.Message):
        __slots__ = ("green_range", "green_lines", "red_lines")
        GREEN_RANGE_FIELD_NUMBER: _ClassVar[int]
        GREEN_LINES_FIELD_NUMBER: _ClassVar[int]
        RED_LINES_FIELD_NUMBER: _ClassVar[int]
        green_range: IRange
        green_lines: _containers.RepeatedScalarFieldContainer[str]
        red_lines: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, green_range: _Optional[_Union[IRange, _Mapping]] = ..., green_lines: _Optional[_Iterable[str]] = ..., red_lines: _Optional[_Iterable[str]] = ...) -> None: ...
    class AfterReject(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class EndOfGeneration(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class InterruptGeneration(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class RejectDiffs(_message.Message):
        __slots__ = ("actor_request_id", "silent")
        ACTOR_REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
        SILENT_FIELD_NUMBER: _ClassVar[int]
        actor_request_id: str
        silent: bool
        def __init__(self, actor_request_id: _Optional[str] = ..., silent: _Optional[bool] = ...) -> None: ...
    class RejectPartialDiff(_message.Message):
        __slots__ = ("green_range", "green_lines", "red_lines")
        GREEN_RANGE_FIELD_NUMBER: _ClassVar[int]
        GREEN_LINES_FIELD_NUMBER: _ClassVar[int]
        RED_LINES_FIELD_NUMBER: _ClassVar[int]
        green_range: IRange
        green_lines: _containers.RepeatedScalarFieldContainer[str]
        red_lines: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, green_range: _Optional[_Union[IRange, _Mapping]] = ..., green_lines: _Optional[_Iterable[str]] = ..., red_lines: _Optional[_Iterable[str]] = ...) -> None: ...
    class SubmitPrompt(_message.Message):
        __slots__ = ("original_range", "original_text", "prompt")
        ORIGINAL_RANGE_FIELD_NUMBER: _ClassVar[int]
        ORIGINAL_TEXT_FIELD_NUMBER: _ClassVar[int]
        PROMPT_FIELD_NUMBER: _ClassVar[int]
        original_range: IRange
        original_text: str
        prompt: str
        def __init__(self, original_range: _Optional[_Union[IRange, _Mapping]] = ..., original_text: _Optional[str] = ..., prompt: _Optional[str] = ...) -> None: ...
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_BAR_ID_FIELD_NUMBER: _ClassVar[int]
    SUBMIT_PROMPT_FIELD_NUMBER: _ClassVar[int]
    END_OF_GENERATION_FIELD_NUMBER: _ClassVar[int]
    INTERRUPT_GENERATION_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_ALL_FIELD_NUMBER: _ClassVar[int]
    REJECT_ALL_FIELD_NUMBER: _ClassVar[int]
    REJECT_PARTIAL_DIFF_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_PARTIAL_DIFF_FIELD_NUMBER: _ClassVar[int]
    AFTER_REJECT_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: PointInTimeModel
    request_id: str
    prompt_bar_id: str
    submit_prompt: CmdKEvent.SubmitPrompt
    end_of_generation: CmdKEvent.EndOfGeneration
    interrupt_generation: CmdKEvent.InterruptGeneration
    accept_all: CmdKEvent.AcceptDiffs
    reject_all: CmdKEvent.RejectDiffs
    reject_partial_diff: CmdKEvent.RejectPartialDiff
    accept_partial_diff: CmdKEvent.AcceptPartialDiff
    after_reject: CmdKEvent.AfterReject
    def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., request_id: _Optional[str] = ..., prompt_bar_id: _Optional[str] = ..., submit_prompt: _Optional[_Union[CmdKEvent.SubmitPrompt, _Mapping]] = ..., end_of_generation: _Optional[_Union[CmdKEvent.EndOfGeneration, _Mapping]] = ..., interrupt_generation: _Optional[_Union[CmdKEvent.InterruptGeneration, _Mapping]] = ..., accept_all: _Optional[_Union[CmdKEvent.AcceptDiffs, _Mapping]] = ..., reject_all: _Optional[_Union[CmdKEvent.RejectDiffs, _Mapping]] = ..., reject_partial_diff: _Optional[_Union[CmdKEvent.RejectPartialDiff, _Mapping]] = ..., accept_partial_diff: _Optional[_Union[CmdKEvent.AcceptPartialDiff, _Mapping]] = ..., after_reject: _Optional[_Union[CmdKEvent.AfterReject, _Mapping]] = ...) -> None: ...

class CmdKExternalLink(_message.Message):
    __slots__ = ("url", "uuid")
    URL_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    url: str
    uuid: str
    def __init__(self, url: _Optional[str] = ..., uuid: _Optional[str] = ...) -> None: ...

class CmdKLegacyContext(_message.Message):
    __slots__ = ("explicit_context", "prompt_code_blocks", "documentation_identifiers")
    EXPLICIT_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_CODE_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTATION_IDENTIFIERS_FIELD_NUMBER: _ClassVar[int]
    explicit_context: ExplicitContext
    prompt_code_blocks: _containers.RepeatedCompositeFieldContainer[CodeBlock]
    documentation_identifiers: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, explicit_context: _Optional[_Union[ExplicitContext, _Mapping]] = ..., prompt_code_blocks: _Optional[_Iterable[_Union[CodeBlock, _Mapping]]] = ..., documentation_identifiers: _Optional[_Iterable[str]] = ...) -> None: ...

class CmdKOptions(_message.Message):
    __slots__ = ("model_details", "chat_mode", "ada_cmd_k_context", "use_reranker", "use_web", "request_is_for_caching")
    MODEL_DETAILS_FIELD_NUMBER: _ClassVar[int]
    CHAT_MODE_FIELD_NUMBER: _ClassVar[int]
    ADA_CMD_K_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    USE_RERANKER_FIELD_NUMBER: _ClassVar[int]
    USE_WEB_FIELD_NUMBER: _ClassVar[int]
    REQUEST_IS_FOR_CACHING_FIELD_NUMBER: _ClassVar[int]
    model_details: _aiserver_v1_pb2.ModelDetails
    chat_mode: bool
    ada_cmd_k_context: bool
    use_reranker: bool
    use_web: bool
    request_is_for_caching: bool
    def __init__(self, model_details: _Optional[_Union[_aiserver_v1_pb2.ModelDetails, _Mapping]] = ..., chat_mode: _Optional[bool] = ..., ada_cmd_k_context: _Optional[bool] = ..., use_reranker: _Optional[bool] = ..., use_web: _Optional[bool] = ..., request_is_for_caching: _Optional[bool] = ...) -> None: ...

class CmdKPreviousEdit(_message.Message):
    __slots__ = ("original_lines", "new_lines", "relative_path", "extra_context_above", "extra_context_below")
    ORIGINAL_LINES_FIELD_NUMBER: _ClassVar[int]
    NEW_LINES_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_PATH_FIELD_NUMBER: _ClassVar[int]
    EXTRA_CONTEXT_ABOVE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_CONTEXT_BELOW_FIELD_NUMBER: _ClassVar[int]
    original_lines: _containers.RepeatedScalarFieldContainer[str]
    new_lines: _containers.RepeatedScalarFieldContainer[str]
    relative_path: str
    extra_context_above: _containers.RepeatedScalarFieldContainer[str]
    extra_context_below: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, original_lines: _Optional[_Iterable[str]] = ..., new_lines: _Optional[_Iterable[str]] = ..., relative_path: _Optional[str] = ..., extra_context_above: _Optional[_Iterable[str]] = ..., extra_context_below: _Optional[_Iterable[str]] = ...) -> None: ...

class CmdKUpcomingEdit(_message.Message):
    __slots__ = ("original_lines", "relative_path", "extra_context_above", "extra_context_below")
    ORIGINAL_LINES_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_PATH_FIELD_NUMBER: _ClassVar[int]
    EXTRA_CONTEXT_ABOVE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_CONTEXT_BELOW_FIELD_NUMBER: _ClassVar[int]
    original_lines: _containers.RepeatedScalarFieldContainer[str]
    relative_path: str
    extra_context_above: _containers.RepeatedScalarFieldContainer[str]
    extra_context_below: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, original_lines: _Optional[_Iterable[str]] = ..., relative_path: _Optional[str] = ..., extra_context_above: _Optional[_Iterable[str]] = ..., extra_context_below: _Optional[_Iterable[str]] = ...) -> None: ...

class CodeBlock(_message.Message):
    __slots__ = ("relative_workspace_path", "file_contents", "file_contents_length", "range", "contents", "signatures", "override_contents", "original_contents", "detailed_lines", "file_git_context")
    class Signatures(_message.Message):
        __slots__ = ("ranges",)
        RANGES_FIELD_NUMBER: _ClassVar[int]
        ranges: _containers.RepeatedCompositeFieldContainer[CursorRange]
        def __init__(self, ranges: _Optional[_Iterable[_Union[CursorRange, _Mapping]]] = ...) -> None: ...
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    FILE_CONTENTS_FIELD_NUMBER: _ClassVar[int]
    FILE_CONTENTS_LENGTH_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    CONTENTS_FIELD_NUMBER: _ClassVar[int]
    SIGNATURES_FIELD_NUMBER: _ClassVar[int]
    OVERRIDE_CONTENTS_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_CONTENTS_FIELD_NUMBER: _ClassVar[int]
    DETAILED_LINES_FIELD_NUMBER: _ClassVar[int]
    FILE_GIT_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    relative_workspace_path: str
    file_contents: str
    file_contents_length: int
    range: CursorRange
    contents: str
    signatures: CodeBlock.Signatures
    override_contents: str
    original_contents: str
    detailed_lines: _containers.RepeatedCompositeFieldContainer[DetailedLine]
    file_git_context: FileGit
    def __init__(self, relative_workspace_path: _Optional[str] = ..., file_contents: _Optional[str] = ..., file_contents_length: _Optional[int] = ..., range: _Optional[_Union[CursorRange, _Mapping]] = ..., contents: _Optional[str] = ..., signatures: _Optional[_Union[CodeBlock.Signatures, _Mapping]] = ..., override_contents: _Optional[str] = ..., original_contents: _Optional[str] = ..., detailed_lines: _Optional[_Iterable[_Union[DetailedLine, _Mapping]]] = ..., file_git_context: _Optional[_Union[FileGit, _Mapping]] = ...) -> None: ...

class CodeResult(_message.Message):
    __slots__ = ("code_block", "score")
    CODE_BLOCK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    code_block: CodeBlock
    score: float
    def __init__(self, code_block: _Optional[_Union[CodeBlock, _Mapping]] = ..., score: _Optional[float] = ...) -> None: ...

class Commit(_message.Message):
    __slots__ = ("sha", "message", "description", "diff", "author", "date")
    SHA_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    DATE_FIELD_NUMBER: _ClassVar[int]
    sha: str
    message: str
    description: str
    diff: _containers.RepeatedCompositeFieldContainer[FileDiff]
    author: str
    date: str
    def __init__(self, sha: _Optional[str] = ..., message: _Optional[str] = ..., description: _Optional[str] = ..., diff: _Optional[_Iterable[_Union[FileDiff, _Mapping]]] = ..., author: _Optional[str] = ..., date: _Optional[str] = ...) -> None: ...

class ContextIntent(_message.Message):
    __slots__ = ("type", "uuid", "file", "code_selection", "lints", "recent_locations", "cmd_k_current_file", "cmd_k_query_etc", "terminal_cmd_k_defaults", "cmd_k_definitions", "documentation", "custom_instructions", "chat_history", "terminal_history", "visible_tabs", "lsp_subgraph", "commit_notes", "diff_history", "past_cmdk_messages_in_diff_sessions")
    class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        TYPE_UNSPECIFIED: _ClassVar[ContextIntent.Type]
        TYPE_USER_ADDED: _ClassVar[ContextIntent.Type]
        TYPE_AUTOMATIC: _ClassVar[ContextIntent.Type]
    TYPE_UNSPECIFIED: ContextIntent.Type
    TYPE_USER_ADDED: ContextIntent.Type
    TYPE_AUTOMATIC: ContextIntent.Type
    class ChatHistory(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class CmdKCurrentFile(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class CmdKDefinitions(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class CmdKQueryEtc(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class CodeSelection(_message.Message):
        __slots__ = ("relative_workspace_path", "potentially_out_of_date_range", "text")
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        POTENTIALLY_OUT_OF_DATE_RANGE_FIELD_NUMBER: _ClassVar[int]
        TEXT_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        potentially_out_of_date_range: SimpleRange
        text: str
        def __init__(self, relative_workspace_path: _Optional[str] = ..., potentially_out_of_date_range: _Optional[_Union[SimpleRange, _Mapping]] = ..., text: _Optional[str] = ...) -> None: ...
    class CodebaseChunks(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class CommitNotes(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class CustomInstructions(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class DiffHistory(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Documentation(_message.Message):
        __slots__ = ("documentation_identifier",)
        DOCUMENTATION_IDENTIFIER_FIELD_NUMBER: _ClassVar[int]
        documentation_identifier: str
        def __init__(self, documentation_identifier: _Optional[str] = ...) -> None: ...
    class File(_message.Message):
        __slots__ = ("relative_workspace_path", "mode")
        class Mode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
            __slots__ = ()
            MODE_UNSPECIFIED: _ClassVar[ContextIntent.File.Mode]
            MODE_FULL: _ClassVar[ContextIntent.File.Mode]
            MODE_OUTLINE: _ClassVar[ContextIntent.File.Mode]
            MODE_CHUNKS: _ClassVar[ContextIntent.File.Mode]
        MODE_UNSPECIFIED: ContextIntent.File.Mode
        MODE_FULL: ContextIntent.File.Mode
        MODE_OUTLINE: ContextIntent.File.Mode
        MODE_CHUNKS: ContextIntent.File.Mode
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        MODE_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        mode: ContextIntent.File.Mode
        def __init__(self, relative_workspace_path: _Optional[str] = ..., mode: _Optional[_Union[ContextIntent.File.Mode, str]] = ...) -> None: ...
    class Lints(_message.Message):
        __slots__ = ("filter_to_severities", "cmdk_scope", "file_scope")
        class CmdKScope(_message.Message):
            __slots__ = ()
            def __init__(self) -> None: ...
        class FileScope(_message.Message):
            __slots__ = ("relative_workspace_path", "filter_range")
            RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
            FILTER_RANGE_FIELD_NUMBER: _ClassVar[int]
            relative_workspace_path: str
            filter_range: LineRange
            def __init__(self, relative_workspace_path: _Optional[str] = ..., filter_range: _Optional[_Union[LineRange, _Mapping]] = ...) -> None: ...
        FILTER_TO_SEVERITIES_FIELD_NUMBER: _ClassVar[int]
        CMDK_SCOPE_FIELD_NUMBER: _ClassVar[int]
        FILE_SCOPE_FIELD_NUMBER: _ClassVar[int]
        filter_to_severities: _containers.RepeatedScalarFieldContainer[LintSeverity]
        cmdk_scope: ContextIntent.Lints.CmdKScope
        file_scope: ContextIntent.Lints.FileScope
        def __init__(self, filter_to_severities: _Optional[_Iterable[_Union[LintSeverity, str]]] = ..., cmdk_scope: _Optional[_Union[ContextIntent.Lints.CmdKScope, _Mapping]] = ..., file_scope: _Optional[_Union[ContextIntent.Lints.FileScope, _Mapping]] = ...) -> None: ...
    class LspSubgraph(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class PastCmdkConversationsInDiffSessions(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class RecentLocations(_message.Message):
        __slots__ = ("timestamp",)
        TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
        timestamp: float
        def __init__(self, timestamp: _Optional[float] = ...) -> None: ...
    class Symbol(_message.Message):
        __slots__ = ("symbol", "relative_workspace_path")
        SYMBOL_FIELD_NUMBER: _ClassVar[int]
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        symbol: DocumentSymbol
        relative_workspace_path: str
        def __init__(self, symbol: _Optional[_Union[DocumentSymbol, _Mapping]] = ..., relative_workspace_path: _Optional[str] = ...) -> None: ...
    class TerminalCmdKDefaults(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class TerminalHistory(_message.Message):
        __slots__ = ("instance_id", "active_for_cmd_k", "use_active_instance_as_fallback")
        INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
        ACTIVE_FOR_CMD_K_FIELD_NUMBER: _ClassVar[int]
        USE_ACTIVE_INSTANCE_AS_FALLBACK_FIELD_NUMBER: _ClassVar[int]
        instance_id: int
        active_for_cmd_k: bool
        use_active_instance_as_fallback: bool
        def __init__(self, instance_id: _Optional[int] = ..., active_for_cmd_k: _Optional[bool] = ..., use_active_instance_as_fallback: _Optional[bool] = ...) -> None: ...
    class VisibleTabs(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    TYPE_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    CODE_SELECTION_FIELD_NUMBER: _ClassVar[int]
    LINTS_FIELD_NUMBER: _ClassVar[int]
    RECENT_LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    CMD_K_CURRENT_FILE_FIELD_NUMBER: _ClassVar[int]
    CMD_K_QUERY_ETC_FIELD_NUMBER: _ClassVar[int]
    TERMINAL_CMD_K_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    CMD_K_DEFINITIONS_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTATION_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    CHAT_HISTORY_FIELD_NUMBER: _ClassVar[int]
    TERMINAL_HISTORY_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_TABS_FIELD_NUMBER: _ClassVar[int]
    LSP_SUBGRAPH_FIELD_NUMBER: _ClassVar[int]
    COMMIT_NOTES_FIELD_NUMBER: _ClassVar[int]
    DIFF_HISTORY_FIELD_NUMBER: _ClassVar[int]
    PAST_CMDK_MESSAGES_IN_DIFF_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    type: ContextIntent.Type
    uuid: str
    file: ContextIntent.File
    code_selection: ContextIntent.CodeSelection
    lints: ContextIntent.Lints
    recent_locations: ContextIntent.RecentLocations
    cmd_k_current_file: ContextIntent.CmdKCurrentFile
    cmd_k_query_etc: ContextIntent.CmdKQueryEtc
    terminal_cmd_k_defaults: ContextIntent.TerminalCmdKDefaults
    cmd_k_definitions: ContextIntent.CmdKDefinitions
    documentation: ContextIntent.Documentation
    custom_instructions: ContextIntent.CustomInstructions
    chat_history: ContextIntent.ChatHistory
    terminal_history: ContextIntent.TerminalHistory
    visible_tabs: ContextIntent.VisibleTabs
    lsp_subgraph: ContextIntent.LspSubgraph
    commit_notes: ContextIntent.CommitNotes
    diff_history: ContextIntent.DiffHistory
    past_cmdk_messages_in_diff_sessions: ContextIntent.PastCmdkConversationsInDiffSessions
    def __init__(self, type: _Optional[_Union[ContextIntent.Type, str]] = ..., uuid: _Optional[str] = ..., file: _Optional[_Union[ContextIntent.File, _Mapping]] = ..., code_selection: _Optional[_Union[ContextIntent.CodeSelection, _Mapping]] = ..., lints: _Optional[_Union[ContextIntent.Lints, _Mapping]] = ..., recent_locations: _Optional[_Union[ContextIntent.RecentLocations, _Mapping]] = ..., cmd_k_current_file: _Optional[_Union[ContextIntent.CmdKCurrentFile, _Mapping]] = ..., cmd_k_query_etc: _Optional[_Union[ContextIntent.CmdKQueryEtc, _Mapping]] = ..., terminal_cmd_k_defaults: _Optional[_Union[ContextIntent.TerminalCmdKDefaults, _Mapping]] = ..., cmd_k_definitions: _Optional[_Union[ContextIntent.CmdKDefinitions, _Mapping]] = ..., documentation: _Optional[_Union[ContextIntent.Documentation, _Mapping]] = ..., custom_instructions: _Optional[_Union[ContextIntent.CustomInstructions, _Mapping]] = ..., chat_history: _Optional[_Union[ContextIntent.ChatHistory, _Mapping]] = ..., terminal_history: _Optional[_Union[ContextIntent.TerminalHistory, _Mapping]] = ..., visible_tabs: _Optional[_Union[ContextIntent.VisibleTabs, _Mapping]] = ..., lsp_subgraph: _Optional[_Union[ContextIntent.LspSubgraph, _Mapping]] = ..., commit_notes: _Optional[_Union[ContextIntent.CommitNotes, _Mapping]] = ..., diff_history: _Optional[_Union[ContextIntent.DiffHistory, _Mapping]] = ..., past_cmdk_messages_in_diff_sessions: _Optional[_Union[ContextIntent.PastCmdkConversationsInDiffSessions, _Mapping]] = ...) -> None: ...

class ContextItem(_message.Message):
    __slots__ = ("intent", "file_chunk", "outline_chunk", "cmd_k_selection", "cmd_k_immediate_context", "cmd_k_query", "cmd_k_query_history", "custom_instructions", "go_to_definition_result", "documentation_chunk", "lints", "chat_history", "notebook_cell_output", "terminal_history", "terminal_cmd_k_query", "terminal_cmd_k_query_history", "sparse_file_chunk", "lsp_subgraph_chunk", "commit_note_chunk", "file_diff_history", "cmd_k_query_history_in_diff_session", "project_rule")
    class ChatHistory(_message.Message):
        __slots__ = ("user_message", "assistant_response", "chat_history", "active_for_cmd_k", "timestamp", "timestamp_double")
        USER_MESSAGE_FIELD_NUMBER: _ClassVar[int]
        ASSISTANT_RESPONSE_FIELD_NUMBER: _ClassVar[int]
        CHAT_HISTORY_FIELD_NUMBER: _ClassVar[int]
        ACTIVE_FOR_CMD_K_FIELD_NUMBER: _ClassVar[int]
        TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
        TIMESTAMP_DOUBLE_FIELD_NUMBER: _ClassVar[int]
        user_message: str
        assistant_response: str
        chat_history: ContextItem.ChatHistory
        active_for_cmd_k: bool
        timestamp: int
        timestamp_double: float
        def __init__(self, user_message: _Optional[str] = ..., assistant_response: _Optional[str] = ..., chat_history: _Optional[_Union[ContextItem.ChatHistory, _Mapping]] = ..., active_for_cmd_k: _Optional[bool] = ..., timestamp: _Optional[int] = ..., timestamp_double: _Optional[float] = ...) -> None: ...
    class CmdKImmediateContext(_message.Message):
        __slots__ = ("relative_workspace_path", "lines", "total_number_of_lines_in_file", "cell_number")
        class Line(_message.Message):
            __slots__ = ("line", "line_number")
            LINE_FIELD_NUMBER: _ClassVar[int]
            LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
            line: str
            line_number: int
            def __init__(self, line: _Optional[str] = ..., line_number: _Optional[int] = ...) -> None: ...
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        LINES_FIELD_NUMBER: _ClassVar[int]
        TOTAL_NUMBER_OF_LINES_IN_FILE_FIELD_NUMBER: _ClassVar[int]
        CELL_NUMBER_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        lines: _containers.RepeatedCompositeFieldContainer[ContextItem.CmdKImmediateContext.Line]
        total_number_of_lines_in_file: int
        cell_number: int
        def __init__(self, relative_workspace_path: _Optional[str] = ..., lines: _Optional[_Iterable[_Union[ContextItem.CmdKImmediateContext.Line, _Mapping]]] = ..., total_number_of_lines_in_file: _Optional[int] = ..., cell_number: _Optional[int] = ...) -> None: ...
    class CmdKQuery(_message.Message):
        __slots__ = ("query",)
        QUERY_FIELD_NUMBER: _ClassVar[int]
        query: str
        def __init__(self, query: _Optional[str] = ...) -> None: ...
    class CmdKQueryHistory(_message.Message):
        __slots__ = ("query", "immediate_context", "selection", "query_history", "context_item_hashes", "timestamp", "timestamp_double")
        QUERY_FIELD_NUMBER: _ClassVar[int]
        IMMEDIATE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
        SELECTION_FIELD_NUMBER: _ClassVar[int]
        QUERY_HISTORY_FIELD_NUMBER: _ClassVar[int]
        CONTEXT_ITEM_HASHES_FIELD_NUMBER: _ClassVar[int]
        TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
        TIMESTAMP_DOUBLE_FIELD_NUMBER: _ClassVar[int]
        query: ContextItem.CmdKQuery
        immediate_context: ContextItem.CmdKImmediateContext
        selection: ContextItem.CmdKSelection
        query_history: ContextItem.CmdKQueryHistory
        context_item_hashes: _containers.RepeatedScalarFieldContainer[str]
        timestamp: int
        timestamp_double: float
        def __init__(self, query: _Optional[_Union[ContextItem.CmdKQuery, _Mapping]] = ..., immediate_context: _Optional[_Union[ContextItem.CmdKImmediateContext, _Mapping]] = ..., selection: _Optional[_Union[ContextItem.CmdKSelection, _Mapping]] = ..., query_history: _Optional[_Union[ContextItem.CmdKQueryHistory, _Mapping]] = ..., context_item_hashes: _Optional[_Iterable[str]] = ..., timestamp: _Optional[int] = ..., timestamp_double: _Optional[float] = ...) -> None: ...
    class CmdKQueryHistoryInDiffSession(_message.Message):
        __slots__ = ("past_cmdk_queries", "curr_timestamp_double")
        class PastCmdKQueryInDiffSession(_message.Message):
            __slots__ = ("query", "relative_workspace_path", "cmdk_was_accepted", "timestamp_double", "timestamp_for_diff_interleaving", "request_id")
            QUERY_FIELD_NUMBER: _ClassVar[int]
            RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
            CMDK_WAS_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
            TIMESTAMP_DOUBLE_FIELD_NUMBER: _ClassVar[int]
            TIMESTAMP_FOR_DIFF_INTERLEAVING_FIELD_NUMBER: _ClassVar[int]
            REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
            query: ContextItem.CmdKQuery
            relative_workspace_path: str
            cmdk_was_accepted: bool
            timestamp_double: float
            timestamp_for_diff_interleaving: float
            request_id: str
            def __init__(self, query: _Optional[_Union[ContextItem.CmdKQuery, _Mapping]] = ..., relative_workspace_path: _Optional[str] = ..., cmdk_was_accepted: _Optional[bool] = ..., timestamp_double: _Optional[float] = ..., timestamp_for_diff_interleaving: _Optional[float] = ..., request_id: _Optional[str] = ...) -> None: ...
        PAST_CMDK_QUERIES_FIELD_NUMBER: _ClassVar[int]
        CURR_TIMESTAMP_DOUBLE_FIELD_NUMBER: _ClassVar[int]
        past_cmdk_queries: _containers.RepeatedCompositeFieldContainer[ContextItem.CmdKQueryHistoryInDiffSession.PastCmdKQueryInDiffSession]
        curr_timestamp_double: float
        def __init__(self, past_cmdk_queries: _Optional[_Iterable[_Union[ContextItem.CmdKQueryHistoryInDiffSession.PastCmdKQueryInDiffSession, _Mapping]]] = ..., curr_timestamp_double: _Optional[float] = ...) -> None: ...
    class CmdKSelection(_message.Message):
        __slots__ = ("lines", "start_line_number")
        LINES_FIELD_NUMBER: _ClassVar[int]
        START_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
        lines: _containers.RepeatedScalarFieldContainer[str]
        start_line_number: int
        def __init__(self, lines: _Optional[_Iterable[str]] = ..., start_line_number: _Optional[int] = ...) -> None: ...
    class CommitNoteChunk(_message.Message):
        __slots__ = ("note",)
        NOTE_FIELD_NUMBER: _ClassVar[int]
        note: str
        def __init__(self, note: _Optional[str] = ...) -> None: ...
    class CustomInstructions(_message.Message):
        __slots__ = ("instructions",)
        INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
        instructions: str
        def __init__(self, instructions: _Optional[str] = ...) -> None: ...
    class DocumentationChunk(_message.Message):
        __slots__ = ("doc_name", "page_url", "documentation_chunk", "score")
        DOC_NAME_FIELD_NUMBER: _ClassVar[int]
        PAGE_URL_FIELD_NUMBER: _ClassVar[int]
        DOCUMENTATION_CHUNK_FIELD_NUMBER: _ClassVar[int]
        SCORE_FIELD_NUMBER: _ClassVar[int]
        doc_name: str
        page_url: str
        documentation_chunk: str
        score: float
        def __init__(self, doc_name: _Optional[str] = ..., page_url: _Optional[str] = ..., documentation_chunk: _Optional[str] = ..., score: _Optional[float] = ...) -> None: ...
    class FileChunk(_message.Message):
        __slots__ = ("relative_workspace_path", "chunk_contents", "start_line_number")
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        CHUNK_CONTENTS_FIELD_NUMBER: _ClassVar[int]
        START_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        chunk_contents: str
        start_line_number: int
        def __init__(self, relative_workspace_path: _Optional[str] = ..., chunk_contents: _Optional[str] = ..., start_line_number: _Optional[int] = ...) -> None: ...
    class FileDiffHistory(_message.Message):
        __slots__ = ("cpp_file_diff_history", "how_many_diffs_ago", "is_very_recent")
        CPP_FILE_DIFF_HISTORY_FIELD_NUMBER: _ClassVar[int]
        HOW_MANY_DIFFS_AGO_FIELD_NUMBER: _ClassVar[int]
        IS_VERY_RECENT_FIELD_NUMBER: _ClassVar[int]
        cpp_file_diff_history: CppFileDiffHistory
        how_many_diffs_ago: int
        is_very_recent: bool
        def __init__(self, cpp_file_diff_history: _Optional[_Union[CppFileDiffHistory, _Mapping]] = ..., how_many_diffs_ago: _Optional[int] = ..., is_very_recent: _Optional[bool] = ...) -> None: ...
    class GoToDefinitionResult(_message.Message):
        __slots__ = ("relative_workspace_path", "line", "line_number", "column_number", "definition_chunk")
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        LINE_FIELD_NUMBER: _ClassVar[int]
        LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
        COLUMN_NUMBER_FIELD_NUMBER: _ClassVar[int]
        DEFINITION_CHUNK_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        line: str
        line_number: int
        column_number: int
        definition_chunk: ContextItem.FileChunk
        def __init__(self, relative_workspace_path: _Optional[str] = ..., line: _Optional[str] = ..., line_number: _Optional[int] = ..., column_number: _Optional[int] = ..., definition_chunk: _Optional[_Union[ContextItem.FileChunk, _Mapping]] = ...) -> None: ...
    class Lints(_message.Message):
        __slots__ = ("relative_workspace_path", "lints", "context_lines")
        class Line(_message.Message):
            __slots__ = ("line", "line_number")
            LINE_FIELD_NUMBER: _ClassVar[int]
            LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
            line: str
            line_number: int
            def __init__(self, line: _Optional[str] = ..., line_number: _Optional[int] = ...) -> None: ...
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        LINTS_FIELD_NUMBER: _ClassVar[int]
        CONTEXT_LINES_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        lints: _containers.RepeatedCompositeFieldContainer[Lint]
        context_lines: _containers.RepeatedCompositeFieldContainer[ContextItem.Lints.Line]
        def __init__(self, relative_workspace_path: _Optional[str] = ..., lints: _Optional[_Iterable[_Union[Lint, _Mapping]]] = ..., context_lines: _Optional[_Iterable[_Union[ContextItem.Lints.Line, _Mapping]]] = ...) -> None: ...
    class LspSubgraphChunk(_message.Message):
        __slots__ = ("lsp_subgraph_full_context",)
        LSP_SUBGRAPH_FULL_CONTEXT_FIELD_NUMBER: _ClassVar[int]
        lsp_subgraph_full_context: LspSubgraphFullContext
        def __init__(self, lsp_subgraph_full_context: _Optional[_Union[LspSubgraphFullContext, _Mapping]] = ...) -> None: ...
    class NotebookCellOutput(_message.Message):
        __slots__ = ("relative_workspace_path", "cell_output", "cell_number")
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        CELL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
        CELL_NUMBER_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        cell_output: str
        cell_number: int
        def __init__(self, relative_workspace_path: _Optional[str] = ..., cell_output: _Optional[str] = ..., cell_number: _Optional[int] = ...) -> None: ...
    class OutlineChunk(_message.Message):
        __slots__ = ("relative_workspace_path", "contents", "full_range")
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        CONTENTS_FIELD_NUMBER: _ClassVar[int]
        FULL_RANGE_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        contents: str
        full_range: LineRange
        def __init__(self, relative_workspace_path: _Optional[str] = ..., contents: _Optional[str] = ..., full_range: _Optional[_Union[LineRange, _Mapping]] = ...) -> None: ...
    class SparseFileChunk(_message.Message):
        __slots__ = ("relative_workspace_path", "lines", "total_number_of_lines_in_file", "cell_number")
        class Line(_message.Message):
            __slots__ = ("line", "line_number")
            LINE_FIELD_NUMBER: _ClassVar[int]
            LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
            line: str
            line_number: int
            def __init__(self, line: _Optional[str] = ..., line_number: _Optional[int] = ...) -> None: ...
        RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        LINES_FIELD_NUMBER: _ClassVar[int]
        TOTAL_NUMBER_OF_LINES_IN_FILE_FIELD_NUMBER: _ClassVar[int]
        CELL_NUMBER_FIELD_NUMBER: _ClassVar[int]
        relative_workspace_path: str
        lines: _containers.RepeatedCompositeFieldContainer[ContextItem.SparseFileChunk.Line]
        total_number_of_lines_in_file: int
        cell_number: int
        def __init__(self, relative_workspace_path: _Optional[str] = ..., lines: _Optional[_Iterable[_Union[ContextItem.SparseFileChunk.Line, _Mapping]]] = ..., total_number_of_lines_in_file: _Optional[int] = ..., cell_number: _Optional[int] = ...) -> None: ...
    class TerminalCmdKQuery(_message.Message):
        __slots__ = ("query",)
        QUERY_FIELD_NUMBER: _ClassVar[int]
        query: str
        def __init__(self, query: _Optional[str] = ...) -> None: ...
    class TerminalCmdKQueryHistory(_message.Message):
        __slots__ = ("query", "query_history", "context_item_hashes", "suggested_command")
        QUERY_FIELD_NUMBER: _ClassVar[int]
        QUERY_HISTORY_FIELD_NUMBER: _ClassVar[int]
        CONTEXT_ITEM_HASHES_FIELD_NUMBER: _ClassVar[int]
        SUGGESTED_COMMAND_FIELD_NUMBER: _ClassVar[int]
        query: ContextItem.TerminalCmdKQuery
        query_history: ContextItem.TerminalCmdKQueryHistory
        context_item_hashes: _containers.RepeatedScalarFieldContainer[str]
        suggested_command: str
        def __init__(self, query: _Optional[_Union[ContextItem.TerminalCmdKQuery, _Mapping]] = ..., query_history: _Optional[_Union[ContextItem.TerminalCmdKQueryHistory, _Mapping]] = ..., context_item_hashes: _Optional[_Iterable[str]] = ..., suggested_command: _Optional[str] = ...) -> None: ...
    class TerminalHistory(_message.Message):
        __slots__ = ("history", "cwd_full", "cwd_relative_workspace_path", "active_for_cmd_k", "timestamp", "timestamp_double")
        HISTORY_FIELD_NUMBER: _ClassVar[int]
        CWD_FULL_FIELD_NUMBER: _ClassVar[int]
        CWD_RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
        ACTIVE_FOR_CMD_K_FIELD_NUMBER: _ClassVar[int]
        TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
        TIMESTAMP_DOUBLE_FIELD_NUMBER: _ClassVar[int]
        history: str
        cwd_full: str
        cwd_relative_workspace_path: str
        active_for_cmd_k: bool
        timestamp: int
        timestamp_double: float
        def __init__(self, history: _Optional[str] = ..., cwd_full: _Optional[str] = ..., cwd_relative_workspace_path: _Optional[str] = ..., active_for_cmd_k: _Optional[bool] = ..., timestamp: _Optional[int] = ..., timestamp_double: _Optional[float] = ...) -> None: ...
    INTENT_FIELD_NUMBER: _ClassVar[int]
    FILE_CHUNK_FIELD_NUMBER: _ClassVar[int]
    OUTLINE_CHUNK_FIELD_NUMBER: _ClassVar[int]
    CMD_K_SELECTION_FIELD_NUMBER: _ClassVar[int]
    CMD_K_IMMEDIATE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    CMD_K_QUERY_FIELD_NUMBER: _ClassVar[int]
    CMD_K_QUERY_HISTORY_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    GO_TO_DEFINITION_RESULT_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTATION_CHUNK_FIELD_NUMBER: _ClassVar[int]
    LINTS_FIELD_NUMBER: _ClassVar[int]
    CHAT_HISTORY_FIELD_NUMBER: _ClassVar[int]
    NOTEBOOK_CELL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TERMINAL_HISTORY_FIELD_NUMBER: _ClassVar[int]
    TERMINAL_CMD_K_QUERY_FIELD_NUMBER: _ClassVar[int]
    TERMINAL_CMD_K_QUERY_HISTORY_FIELD_NUMBER: _ClassVar[int]
    SPARSE_FILE_CHUNK_FIELD_NUMBER: _ClassVar[int]
    LSP_SUBGRAPH_CHUNK_FIELD_NUMBER: _ClassVar[int]
    COMMIT_NOTE_CHUNK_FIELD_NUMBER: _ClassVar[int]
    FILE_DIFF_HISTORY_FIELD_NUMBER: _ClassVar[int]
    CMD_K_QUERY_HISTORY_IN_DIFF_SESSION_FIELD_NUMBER: _ClassVar[int]
    PROJECT_RULE_FIELD_NUMBER: _ClassVar[int]
    intent: ContextIntent
    file_chunk: ContextItem.FileChunk
    outline_chunk: ContextItem.OutlineChunk
    cmd_k_selection: ContextItem.CmdKSelection
    cmd_k_immediate_context: ContextItem.CmdKImmediateContext
    cmd_k_query: ContextItem.CmdKQuery
    cmd_k_query_history: ContextItem.CmdKQueryHistory
    custom_instructions: ContextItem.CustomInstructions
    go_to_definition_result: ContextItem.GoToDefinitionResult
    documentation_chunk: ContextItem.DocumentationChunk
    lints: ContextItem.Lints
    chat_history: ContextItem.ChatHistory
    notebook_cell_output: ContextItem.NotebookCellOutput
    terminal_history: ContextItem.TerminalHistory
    terminal_cmd_k_query: ContextItem.TerminalCmdKQuery
    terminal_cmd_k_query_history: ContextItem.TerminalCmdKQueryHistory
    sparse_file_chunk: ContextItem.SparseFileChunk
    lsp_subgraph_chunk: ContextItem.LspSubgraphChunk
    commit_note_chunk: ContextItem.CommitNoteChunk
    file_diff_history: ContextItem.FileDiffHistory
    cmd_k_query_history_in_diff_session: ContextItem.CmdKQueryHistoryInDiffSession
    project_rule: CursorRule
    def __init__(self, intent: _Optional[_Union[ContextIntent, _Mapping]] = ..., file_chunk: _Optional[_Union[ContextItem.FileChunk, _Mapping]] = ..., outline_chunk: _Optional[_Union[ContextItem.OutlineChunk, _Mapping]] = ..., cmd_k_selection: _Optional[_Union[ContextItem.CmdKSelection, _Mapping]] = ..., cmd_k_immediate_context: _Optional[_Union[ContextItem.CmdKImmediateContext, _Mapping]] = ..., cmd_k_query: _Optional[_Union[ContextItem.CmdKQuery, _Mapping]] = ..., cmd_k_query_history: _Optional[_Union[ContextItem.CmdKQueryHistory, _Mapping]] = ..., custom_instructions: _Optional[_Union[ContextItem.CustomInstructions, _Mapping]] = ..., go_to_definition_result: _Optional[_Union[ContextItem.GoToDefinitionResult, _Mapping]] = ..., documentation_chunk: _Optional[_Union[ContextItem.DocumentationChunk, _Mapping]] = ..., lints: _Optional[_Union[ContextItem.Lints, _Mapping]] = ..., chat_history: _Optional[_Union[ContextItem.ChatHistory, _Mapping]] = ..., notebook_cell_output: _Optional[_Union[ContextItem.NotebookCellOutput, _Mapping]] = ..., terminal_history: _Optional[_Union[ContextItem.TerminalHistory, _Mapping]] = ..., terminal_cmd_k_query: _Optional[_Union[ContextItem.TerminalCmdKQuery, _Mapping]] = ..., terminal_cmd_k_query_history: _Optional[_Union[ContextItem.TerminalCmdKQueryHistory, _Mapping]] = ..., sparse_file_chunk: _Optional[_Union[ContextItem.SparseFileChunk, _Mapping]] = ..., lsp_subgraph_chunk: _Optional[_Union[ContextItem.LspSubgraphChunk, _Mapping]] = ..., commit_note_chunk: _Optional[_Union[ContextItem.CommitNoteChunk, _Mapping]] = ..., file_diff_history: _Optional[_Union[ContextItem.FileDiffHistory, _Mapping]] = ..., cmd_k_query_history_in_diff_session: _Optional[_Union[ContextItem.CmdKQueryHistoryInDiffSession, _Mapping]] = ..., project_rule: _Optional[_Union[CursorRule, _Mapping]] = ...) -> None: ...

class ContextItemStatus(_message.Message):
    __slots__ = ("context_item_hash", "shown_to_the_model", "score", "percentage_of_available_space", "post_generation_evaluation")
    class PostGenerationEvaluation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        POST_GENERATION_EVALUATION_UNSPECIFIED: _ClassVar[ContextItemStatus.PostGenerationEvaluation]
        POST_GENERATION_EVALUATION_USEFUL: _ClassVar[ContextItemStatus.PostGenerationEvaluation]
        POST_GENERATION_EVALUATION_USELESS: _ClassVar[ContextItemStatus.PostGenerationEvaluation]
    POST_GENERATION_EVALUATION_UNSPECIFIED: ContextItemStatus.PostGenerationEvaluation
    POST_GENERATION_EVALUATION_USEFUL: ContextItemStatus.PostGenerationEvaluation
    POST_GENERATION_EVALUATION_USELESS: ContextItemStatus.PostGenerationEvaluation
    CONTEXT_ITEM_HASH_FIELD_NUMBER: _ClassVar[int]
    SHOWN_TO_THE_MODEL_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    PERCENTAGE_OF_AVAILABLE_SPACE_FIELD_NUMBER: _ClassVar[int]
    POST_GENERATION_EVALUATION_FIELD_NUMBER: _ClassVar[int]
    context_item_hash: str
    shown_to_the_model: bool
    score: float
    percentage_of_available_space: float
    post_generation_evaluation: ContextItemStatus.PostGenerationEvaluation
    def __init__(self, context_item_hash: _Optional[str] = ..., shown_to_the_model: _Optional[bool] = ..., score: _Optional[float] = ..., percentage_of_available_space: _Optional[float] = ..., post_generation_evaluation: _Optional[_Union[ContextItemStatus.PostGenerationEvaluation, str]] = ...) -> None: ...

class ContextStatusUpdate(_message.Message):
    __slots__ = ("context_item_statuses",)
    CONTEXT_ITEM_STATUSES_FIELD_NUMBER: _ClassVar[int]
    context_item_statuses: _containers.RepeatedCompositeFieldContainer[ContextItemStatus]
    def __init__(self, context_item_statuses: _Optional[_Iterable[_Union[ContextItemStatus, _Mapping]]] = ...) -> None: ...

class CppAcceptEvent(_message.Message):
    __slots__ = ("cpp_suggestion",)
    CPP_SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    cpp_suggestion: CppSuggestion
    def __init__(self, cpp_suggestion: _Optional[_Union[CppSuggestion, _Mapping]] = ...) -> None: ...

class CppAcceptEventNew(_message.Message):
    __slots__ = ("cpp_suggestion", "point_in_time_model")
    CPP_SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    cpp_suggestion: CurrentlyShownCppSuggestion
    point_in_time_model: PointInTimeModel
    def __init__(self, cpp_suggestion: _Optional[_Union[CurrentlyShownCppSuggestion, _Mapping]] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ...) -> None: ...

class CppAppendRequest(_message.Message):
    __slots__ = ("changes",)
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    changes: bytes
    def __init__(self, changes: _Optional[bytes] = ...) -> None: ...

class CppAppendResponse(_message.Message):
    __slots__ = ("success",)
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    success: bool
    def __init__(self, success: _Optional[bool] = ...) -> None: ...

class CppChangeQuickActionEvent(_message.Message):
    __slots__ = ("point_in_time_model", "added", "removed", "actions")
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: PointInTimeModel
    added: _containers.RepeatedCompositeFieldContainer[CppQuickAction]
    removed: _containers.RepeatedCompositeFieldContainer[CppQuickAction]
    actions: _containers.RepeatedCompositeFieldContainer[CppQuickAction]
    def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., added: _Optional[_Iterable[_Union[CppQuickAction, _Mapping]]] = ..., removed: _Optional[_Iterable[_Union[CppQuickAction, _Mapping]]] = ..., actions: _Optional[_Iterable[_Union[CppQuickAction, _Mapping]]] = ...) -> None: ...

class CppConfigRequest(_message.Message):
    __slots__ = ("is_nightly", "model", "supports_cpt")
    IS_NIGHTLY_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    SUPPORTS_CPT_FIELD_NUMBER: _ClassVar[int]
    is_nightly: bool
    model: str
    supports_cpt: bool
    def __init__(self, is_nightly: _Optional[bool] = ..., model: _Optional[str] = ..., supports_cpt: _Optional[bool] = ...) -> None: ...

class CppConfigResponse(_message.Message):
    __slots__ = ("above_radius", "below_radius", "merge_behavior", "is_on", "is_ghost_text", "should_let_user_enable_cpp_even_if_not_pro", "heuristics", "exclude_recently_viewed_files_patterns", "enable_rvf_tracking", "global_debounce_duration_millis", "client_debounce_duration_millis", "cpp_url", "use_whitespace_diff_history", "import_prediction_config", "enable_filesync_debounce_skipping", "check_filesync_hash_percent", "geo_cpp_backend_url", "recently_rejected_edit_thresholds", "is_fused_cursor_prediction_model", "include_unchanged_lines", "should_fetch_rvf_text", "max_number_of_cleared_suggestions_since_last_accept", "suggestion_hint_config", "allows_tab_chunks", "tab_context_refresh_debounce_ms", "tab_context_refresh_editor_change_debounce_ms")
    class Heuristic(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        HEURISTIC_UNSPECIFIED: _ClassVar[CppConfigResponse.Heuristic]
        HEURISTIC_LOTS_OF_ADDED_TEXT: _ClassVar[CppConfigResponse.Heuristic]
        HEURISTIC_DUPLICATING_LINE_AFTER_SUGGESTION: _ClassVar[CppConfigResponse.Heuristic]
        HEURISTIC_DUPLICATING_MULTIPLE_LINES_AFTER_SUGGESTION: _ClassVar[CppConfigResponse.Heuristic]
        HEURISTIC_REVERTING_USER_CHANGE: _ClassVar[CppConfigResponse.Heuristic]
        HEURISTIC_OUTPUT_EXTENDS_BEYOND_RANGE_AND_IS_REPEATED: _ClassVar[CppConfigResponse.Heuristic]
        HEURISTIC_SUGGESTING_RECENTLY_REJECTED_EDIT: _ClassVar[CppConfigResponse.Heuristic]
    HEURISTIC_UNSPECIFIED: CppConfigResponse.Heuristic
    HEURISTIC_LOTS_OF_ADDED_TEXT: CppConfigResponse.Heuristic
    HEURISTIC_DUPLICATING_LINE_AFTER_SUGGESTION: CppConfigResponse.Heuristic
    HEURISTIC_DUPLICATING_MULTIPLE_LINES_AFTER_SUGGESTION: CppConfigResponse.Heuristic
    HEURISTIC_REVERTING_USER_CHANGE: CppConfigResponse.Heuristic
    HEURISTIC_OUTPUT_EXTENDS_BEYOND_RANGE_AND_IS_REPEATED: CppConfigResponse.Heuristic
    HEURISTIC_SUGGESTING_RECENTLY_REJECTED_EDIT: CppConfigResponse.Heuristic
    class ImportPredictionConfig(_message.Message):
        __slots__ = ("is_disabled_by_backend", "should_turn_on_automatically", "python_enabled")
        IS_DISABLED_BY_BACKEND_FIELD_NUMBER: _ClassVar[int]
        SHOULD_TURN_ON_AUTOMATICALLY_FIELD_NUMBER: _ClassVar[int]
        PYTHON_ENABLED_FIELD_NUMBER: _ClassVar[int]
        is_disabled_by_backend: bool
        should_turn_on_automatically: bool
        python_enabled: bool
        def __init__(self, is_disabled_by_backend: _Optional[bool] = ..., should_turn_on_automatically: _Optional[bool] = ..., python_enabled: _Optional[bool] = ...) -> None: ...
    class MergeBehavior(_message.Message):
        __slots__ = ("type", "limit", "radius")
        TYPE_FIELD_NUMBER: _ClassVar[int]
        LIMIT_FIELD_NUMBER: _ClassVar[int]
        RADIUS_FIELD_NUMBER: _ClassVar[int]
        type: str
        limit: int
        radius: int
        def __init__(self, type: _Optional[str] = ..., limit: _Optional[int] = ..., radius: _Optional[int] = ...) -> None: ...
    class RecentlyRejectedEditThresholds(_message.Message):
        __slots__ = ("hard_reject_threshold", "soft_reject_threshold")
        HARD_REJECT_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
        SOFT_REJECT_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
        hard_reject_threshold: int
        soft_reject_threshold: int
        def __init__(self, hard_reject_threshold: _Optional[int] = ..., soft_reject_threshold: _Optional[int] = ...) -> None: ...
    class SuggestionHintConfig(_message.Message):
        __slots__ = ("important_lsp_extensions", "enabled_for_path_extensions")
        IMPORTANT_LSP_EXTENSIONS_FIELD_NUMBER: _ClassVar[int]
        ENABLED_FOR_PATH_EXTENSIONS_FIELD_NUMBER: _ClassVar[int]
        important_lsp_extensions: _containers.RepeatedScalarFieldContainer[str]
        enabled_for_path_extensions: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, important_lsp_extensions: _Optional[_Iterable[str]] = ..., enabled_for_path_extensions: _Optional[_Iterable[str]] = ...) -> None: ...
    ABOVE_RADIUS_FIELD_NUMBER: _ClassVar[int]
    BELOW_RADIUS_FIELD_NUMBER: _ClassVar[int]
    MERGE_BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    IS_ON_FIELD_NUMBER: _ClassVar[int]
    IS_GHOST_TEXT_FIELD_NUMBER: _ClassVar[int]
    SHOULD_LET_USER_ENABLE_CPP_EVEN_IF_NOT_PRO_FIELD_NUMBER: _ClassVar[int]
    HEURISTICS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_RECENTLY_VIEWED_FILES_PATTERNS_FIELD_NUMBER: _ClassVar[int]
    ENABLE_RVF_TRACKING_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_DEBOUNCE_DURATION_MILLIS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_DEBOUNCE_DURATION_MILLIS_FIELD_NUMBER: _ClassVar[int]
    CPP_URL_FIELD_NUMBER: _ClassVar[int]
    USE_WHITESPACE_DIFF_HISTORY_FIELD_NUMBER: _ClassVar[int]
    IMPORT_PREDICTION_CONFIG_FIELD_NUMBER: _ClassVar[int]
    ENABLE_FILESYNC_DEBOUNCE_SKIPPING_FIELD_NUMBER: _ClassVar[int]
    CHECK_FILESYNC_HASH_PERCENT_FIELD_NUMBER: _ClassVar[int]
    GEO_CPP_BACKEND_URL_FIELD_NUMBER: _ClassVar[int]
    RECENTLY_REJECTED_EDIT_THRESHOLDS_FIELD_NUMBER: _ClassVar[int]
    IS_FUSED_CURSOR_PREDICTION_MODEL_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_UNCHANGED_LINES_FIELD_NUMBER: _ClassVar[int]
    SHOULD_FETCH_RVF_TEXT_FIELD_NUMBER: _ClassVar[int]
    MAX_NUMBER_OF_CLEARED_SUGGESTIONS_SINCE_LAST_ACCEPT_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_HINT_CONFIG_FIELD_NUMBER: _ClassVar[int]
    ALLOWS_TAB_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    TAB_CONTEXT_REFRESH_DEBOUNCE_MS_FIELD_NUMBER: _ClassVar[int]
    TAB_CONTEXT_REFRESH_EDITOR_CHANGE_DEBOUNCE_MS_FIELD_NUMBER: _ClassVar[int]
    above_radius: int
    below_radius: int
    merge_behavior: CppConfigResponse.MergeBehavior
    is_on: bool
    is_ghost_text: bool
    should_let_user_enable_cpp_even_if_not_pro: bool
    heuristics: _containers.RepeatedScalarFieldContainer[CppConfigResponse.Heuristic]
    exclude_recently_viewed_files_patterns: _containers.RepeatedScalarFieldContainer[str]
    enable_rvf_tracking: bool
    global_debounce_duration_millis: int
    client_debounce_duration_millis: int
    cpp_url: str
    use_whitespace_diff_history: bool
    import_prediction_config: CppConfigResponse.ImportPredictionConfig
    enable_filesync_debounce_skipping: bool
    check_filesync_hash_percent: float
    geo_cpp_backend_url: str
    recently_rejected_edit_thresholds: CppConfigResponse.RecentlyRejectedEditThresholds
    is_fused_cursor_prediction_model: bool
    include_unchanged_lines: bool
    should_fetch_rvf_text: bool
    max_number_of_cleared_suggestions_since_last_accept: int
    suggestion_hint_config: CppConfigResponse.SuggestionHintConfig
    allows_tab_chunks: bool
    tab_context_refresh_debounce_ms: int
    tab_context_refresh_editor_change_debounce_ms: int
    def __init__(self, above_radius: _Optional[int] = ..., below_radius: _Optional[int] = ..., merge_behavior: _Optional[_Union[CppConfigResponse.MergeBehavior, _Mapping]] = ..., is_on: _Optional[bool] = ..., is_ghost_text: _Optional[bool] = ..., should_let_user_enable_cpp_even_if_not_pro: _Optional[bool] = ..., heuristics: _Optional[_Iterable[_Union[CppConfigResponse.Heuristic, str]]] = ..., exclude_recently_viewed_files_patterns: _Optional[_Iterable[str]] = ..., enable_rvf_tracking: _Optional[bool] = ..., global_debounce_duration_millis: _Optional[int] = ..., client_debounce_duration_millis: _Optional[int] = ..., cpp_url: _Optional[str] = ..., use_whitespace_diff_history: _Optional[bool] = ..., import_prediction_config: _Optional[_Union[CppConfigResponse.ImportPredictionConfig, _Mapping]] = ..., enable_filesync_debounce_skipping: _Optional[bool] = ..., check_filesync_hash_percent: _Optional[float] = ..., geo_cpp_backend_url: _Optional[str] = ..., recently_rejected_edit_thresholds: _Optional[_Union[CppConfigResponse.RecentlyRejectedEditThresholds, _Mapping]] = ..., is_fused_cursor_prediction_model: _Optional[bool] = ..., include_unchanged_lines: _Optional[bool] = ..., should_fetch_rvf_text: _Optional[bool] = ..., max_number_of_cleared_suggestions_since_last_accept: _Optional[int] = ..., suggestion_hint_config: _Optional[_Union[CppConfigResponse.SuggestionHintConfig, _Mapping]] = ..., allows_tab_chunks: _Optional[bool] = ..., tab_context_refresh_debounce_ms: _Optional[int] = ..., tab_context_refresh_editor_change_debounce_ms: _Optional[int] = ...) -> None: ...

class CppContextItem(_message.Message):
    __slots__ = ("contents", "symbol", "relative_workspace_path", "score")
    CONTENTS_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    contents: str
    symbol: str
    relative_workspace_path: str
    score: float
    def __init__(self, contents: _Optional[str] = ..., symbol: _Optional[str] = ..., relative_workspace_path: _Optional[str] = ..., score: _Optional[float] = ...) -> None: ...

class CppCopyEvent(_message.Message):
    __slots__ = ("clipboard_contents",)
    CLIPBOARD_CONTENTS_FIELD_NUMBER: _ClassVar[int]
    clipboard_contents: str
    def __init__(self, clipboard_contents: _Optional[str] = ...) -> None: ...

class CppDebouncedCursorMovementEvent(_message.Message):
    __slots__ = ("point_in_time_model", "cursor_position")
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    CURSOR_POSITION_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: PointInTimeModel
    cursor_position: OneIndexedPosition
    def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., cursor_position: _Optional[_Union[OneIndexedPosition, _Mapping]] = ...) -> None: ...

class CppEditHistoryStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CppEditHistoryStatusResponse(_message.Message):
    __slots__ = ("on", "only_if_explicit")
    ON_FIELD_NUMBER: _ClassVar[int]
    ONLY_IF_EXPLICIT_FIELD_NUMBER: _ClassVar[int]
    on: bool
    only_if_explicit: bool
    def __init__(self, on: _Optional[bool] = ..., only_if_explicit: _Optional[bool] = ...) -> None: ...

class CppEditorChangedEvent(_message.Message):
    __slots__ = ("point_in_time_model", "cursor_position", "visible_ranges", "editor_id")
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    CURSOR_POSITION_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_RANGES_FIELD_NUMBER: _ClassVar[int]
    EDITOR_ID_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: PointInTimeModel
    cursor_position: OneIndexedPosition
    visible_ranges: _containers.RepeatedCompositeFieldContainer[IRange]
    editor_id: str
    def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., cursor_position: _Optional[_Union[OneIndexedPosition, _Mapping]] = ..., visible_ranges: _Optional[_Iterable[_Union[IRange, _Mapping]]] = ..., editor_id: _Optional[str] = ...) -> None: ...

class CppFileDiffHistory(_message.Message):
    __slots__ = ("file_name", "diff_history", "diff_history_timestamps")
    FILE_NAME_FIELD_NUMBER: _ClassVar[int]
    DIFF_HISTORY_FIELD_NUMBER: _ClassVar[int]
    DIFF_HISTORY_TIMESTAMPS_FIELD_NUMBER: _ClassVar[int]
    file_name: str
    diff_history: _containers.RepeatedScalarFieldContainer[str]
    diff_history_timestamps: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, file_name: _Optional[str] = ..., diff_history: _Optional[_Iterable[str]] = ..., diff_history_timestamps: _Optional[_Iterable[float]] = ...) -> None: ...

class CppHistoryAppendEvent(_message.Message):
    __slots__ = ("final_model_hash", "model_change", "accept_event", "reject_event", "manual_trigger_event")
    FINAL_MODEL_HASH_FIELD_NUMBER: _ClassVar[int]
    MODEL_CHANGE_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_EVENT_FIELD_NUMBER: _ClassVar[int]
    REJECT_EVENT_FIELD_NUMBER: _ClassVar[int]
    MANUAL_TRIGGER_EVENT_FIELD_NUMBER: _ClassVar[int]
    final_model_hash: str
    model_change: ModelChange
    accept_event: CppAcceptEvent
    reject_event: CppRejectEvent
    manual_trigger_event: CppManualTriggerEvent
    def __init__(self, final_model_hash: _Optional[str] = ..., model_change: _Optional[_Union[ModelChange, _Mapping]] = ..., accept_event: _Optional[_Union[CppAcceptEvent, _Mapping]] = ..., reject_event: _Optional[_Union[CppRejectEvent, _Mapping]] = ..., manual_trigger_event: _Optional[_Union[CppManualTriggerEvent, _Mapping]] = ...) -> None: ...

class CppIntentInfo(_message.Message):
    __slots__ = ("source",)
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    source: str
    def __init__(self, source: _Optional[str] = ...) -> None: ...

class CppLinterErrorEvent(_message.Message):
    __slots__ = ("point_in_time_model", "added_errors", "removed_errors", "errors")
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    ADDED_ERRORS_FIELD_NUMBER: _ClassVar[int]
    REMOVED_ERRORS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: PointInTimeModel
    added_errors: _containers.RepeatedCompositeFieldContainer[LinterError]
    removed_errors: _containers.RepeatedCompositeFieldContainer[LinterError]
    errors: _containers.RepeatedCompositeFieldContainer[LinterError]
    def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., added_errors: _Optional[_Iterable[_Union[LinterError, _Mapping]]] = ..., removed_errors: _Optional[_Iterable[_Union[LinterError, _Mapping]]] = ..., errors: _Optional[_Iterable[_Union[LinterError, _Mapping]]] = ...) -> None: ...

class CppManualTriggerEvent(_message.Message):
    __slots__ = ("position",)
    POSITION_FIELD_NUMBER: _ClassVar[int]
    position: CursorPosition
    def __init__(self, position: _Optional[_Union[CursorPosition, _Mapping]] = ...) -> None: ...

class CppManualTriggerEventNew(_message.Message):
    __slots__ = ("line_number_one_indexed", "column_number_one_indexed", "point_in_time_model")
    LINE_NUMBER_ONE_INDEXED_FIELD_NUMBER: _ClassVar[int]
    COLUMN_NUMBER_ONE_INDEXED_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    line_number_one_indexed: int
    column_number_one_indexed: int
    point_in_time_model: PointInTimeModel
    def __init__(self, line_number_one_indexed: _Optional[int] = ..., column_number_one_indexed: _Optional[int] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ...) -> None: ...

class CppParameterHint(_message.Message):
    __slots__ = ("label", "documentation")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTATION_FIELD_NUMBER: _ClassVar[int]
    label: str
    documentation: str
    def __init__(self, label: _Optional[str] = ..., documentation: _Optional[str] = ...) -> None: ...

class CppPartialAcceptEvent(_message.Message):
    __slots__ = ("cpp_suggestion", "edit", "point_in_time_model")
    CPP_SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    EDIT_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    cpp_suggestion: CurrentlyShownCppSuggestion
    edit: Edit
    point_in_time_model: PointInTimeModel
    def __init__(self, cpp_suggestion: _Optional[_Union[CurrentlyShownCppSuggestion, _Mapping]] = ..., edit: _Optional[_Union[Edit, _Mapping]] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ...) -> None: ...

class CppQuickAction(_message.Message):
    __slots__ = ("title", "edits", "is_preferred", "command")
    class Edit(_message.Message):
        __slots__ = ("text", "range")
        TEXT_FIELD_NUMBER: _ClassVar[int]
        RANGE_FIELD_NUMBER: _ClassVar[int]
        text: str
        range: IRange
        def __init__(self, text: _Optional[str] = ..., range: _Optional[_Union[IRange, _Mapping]] = ...) -> None: ...
    TITLE_FIELD_NUMBER: _ClassVar[int]
    EDITS_FIELD_NUMBER: _ClassVar[int]
    IS_PREFERRED_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    title: str
    edits: _containers.RepeatedCompositeFieldContainer[CppQuickAction.Edit]
    is_preferred: bool
    command: CppQuickActionCommand
    def __init__(self, title: _Optional[str] = ..., edits: _Optional[_Iterable[_Union[CppQuickAction.Edit, _Mapping]]] = ..., is_preferred: _Optional[bool] = ..., command: _Optional[_Union[CppQuickActionCommand, _Mapping]] = ...) -> None: ...

class CppQuickActionCommand(_message.Message):
    __slots__ = ("title", "id", "arguments")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    title: str
    id: str
    arguments: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, title: _Optional[str] = ..., id: _Optional[str] = ..., arguments: _Optional[_Iterable[str]] = ...) -> None: ...

class CppQuickActionFireEvent(_message.Message):
    __slots__ = ("point_in_time_model", "quick_action_command", "quick_action_event")
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    QUICK_ACTION_COMMAND_FIELD_NUMBER: _ClassVar[int]
    QUICK_ACTION_EVENT_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: PointInTimeModel
    quick_action_command: CppQuickActionCommand
    quick_action_event: CppQuickAction
    def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., quick_action_command: _Optional[_Union[CppQuickActionCommand, _Mapping]] = ..., quick_action_event: _Optional[_Union[CppQuickAction, _Mapping]] = ...) -> None: ...

class CppRejectEvent(_message.Message):
    __slots__ = ("cpp_suggestion",)
    CPP_SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    cpp_suggestion: CppSuggestion
    def __init__(self, cpp_suggestion: _Optional[_Union[CppSuggestion, _Mapping]] = ...) -> None: ...

class CppRejectEventNew(_message.Message):
    __slots__ = ("cpp_suggestion", "point_in_time_model")
    CPP_SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    cpp_suggestion: CurrentlyShownCppSuggestion
    point_in_time_model: PointInTimeModel
    def __init__(self, cpp_suggestion: _Optional[_Union[CurrentlyShownCppSuggestion, _Mapping]] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ...) -> None: ...

class CppSessionEvent(_message.Message):
    __slots__ = ("performance_now_timestamp", "performance_time_origin", "global_index", "performance_now_flush_time", "event_index", "flush_index", "global_index_v2", "accept_event", "reject_event", "manual_trigger_event", "stopped_tracking_model_event", "suggest_event", "linter_error_event", "debounced_cursor_movement_event", "editor_changed_event", "copy_event", "quick_action_event", "quick_action_fire_event", "model_opened_event", "cmd_k_event", "chat_event", "ai_event", "scroll_event", "editor_close_event", "tab_close_event", "model_added_event", "partial_accept_event", "accept_cursor_prediction_event", "reject_cursor_prediction_event", "suggest_cursor_prediction_event", "cpp_trigger_event", "finished_cpp_generation_event", "bug_bot_event", "bug_bot_linter_event", "anything_quick_access_selection_event", "lsp_suggestion_event", "ntp_event", "repo_event", "git_event", "tool_call_event", "before_ai_edit_event", "search_event", "terminal_event", "worktree_event", "review_changes_opened_event", "browser_event", "background_files_event")
    PERFORMANCE_NOW_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    PERFORMANCE_TIME_ORIGIN_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_INDEX_FIELD_NUMBER: _ClassVar[int]
    PERFORMANCE_NOW_FLUSH_TIME_FIELD_NUMBER: _ClassVar[int]
    EVENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    FLUSH_INDEX_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_INDEX_V2_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_EVENT_FIELD_NUMBER: _ClassVar[int]
    REJECT_EVENT_FIELD_NUMBER: _ClassVar[int]
    MANUAL_TRIGGER_EVENT_FIELD_NUMBER: _ClassVar[int]
    STOPPED_TRACKING_MODEL_EVENT_FIELD_NUMBER: _ClassVar[int]
    SUGGEST_EVENT_FIELD_NUMBER: _ClassVar[int]
    LINTER_ERROR_EVENT_FIELD_NUMBER: _ClassVar[int]
    DEBOUNCED_CURSOR_MOVEMENT_EVENT_FIELD_NUMBER: _ClassVar[int]
    EDITOR_CHANGED_EVENT_FIELD_NUMBER: _ClassVar[int]
    COPY_EVENT_FIELD_NUMBER: _ClassVar[int]
    QUICK_ACTION_EVENT_FIELD_NUMBER: _ClassVar[int]
    QUICK_ACTION_FIRE_EVENT_FIELD_NUMBER: _ClassVar[int]
    MODEL_OPENED_EVENT_FIELD_NUMBER: _ClassVar[int]
    CMD_K_EVENT_FIELD_NUMBER: _ClassVar[int]
    CHAT_EVENT_FIELD_NUMBER: _ClassVar[int]
    AI_EVENT_FIELD_NUMBER: _ClassVar[int]
    SCROLL_EVENT_FIELD_NUMBER: _ClassVar[int]
    EDITOR_CLOSE_EVENT_FIELD_NUMBER: _ClassVar[int]
    TAB_CLOSE_EVENT_FIELD_NUMBER: _ClassVar[int]
    MODEL_ADDED_EVENT_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_ACCEPT_EVENT_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_CURSOR_PREDICTION_EVENT_FIELD_NUMBER: _ClassVar[int]
    REJECT_CURSOR_PREDICTION_EVENT_FIELD_NUMBER: _ClassVar[int]
    SUGGEST_CURSOR_PREDICTION_EVENT_FIELD_NUMBER: _ClassVar[int]
    CPP_TRIGGER_EVENT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_CPP_GENERATION_EVENT_FIELD_NUMBER: _ClassVar[int]
    BUG_BOT_EVENT_FIELD_NUMBER: _ClassVar[int]
    BUG_BOT_LINTER_EVENT_FIELD_NUMBER: _ClassVar[int]
    ANYTHING_QUICK_ACCESS_SELECTION_EVENT_FIELD_NUMBER: _ClassVar[int]
    LSP_SUGGESTION_EVENT_FIELD_NUMBER: _ClassVar[int]
    NTP_EVENT_FIELD_NUMBER: _ClassVar[int]
    REPO_EVENT_FIELD_NUMBER: _ClassVar[int]
    GIT_EVENT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_EVENT_FIELD_NUMBER: _ClassVar[int]
    BEFORE_AI_EDIT_EVENT_FIELD_NUMBER: _ClassVar[int]
    SEARCH_EVENT_FIELD_NUMBER: _ClassVar[int]
    TERMINAL_EVENT_FIELD_NUMBER: _ClassVar[int]
    WORKTREE_EVENT_FIELD_NUMBER: _ClassVar[int]
    REVIEW_CHANGES_OPENED_EVENT_FIELD_NUMBER: _ClassVar[int]
    BROWSER_EVENT_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_FILES_EVENT_FIELD_NUMBER: _ClassVar[int]
    performance_now_timestamp: float
    performance_time_origin: float
    global_index: int
    performance_now_flush_time: float
    event_index: int
    flush_index: int
    global_index_v2: int
    accept_event: CppAcceptEventNew
    reject_event: CppRejectEventNew
    manual_trigger_event: CppManualTriggerEventNew
    stopped_tracking_model_event: CppStoppedTrackingModelEvent
    suggest_event: CppSuggestEvent
    linter_error_event: CppLinterErrorEvent
    debounced_cursor_movement_event: CppDebouncedCursorMovementEvent
    editor_changed_event: CppEditorChangedEvent
    copy_event: CppCopyEvent
    quick_action_event: CppChangeQuickActionEvent
    quick_action_fire_event: CppQuickActionFireEvent
    model_opened_event: ModelOpenedEvent
    cmd_k_event: CmdKEvent
    chat_event: ChatEvent
    ai_event: AiRequestEvent
    scroll_event: ScrollEvent
    editor_close_event: EditorCloseEvent
    tab_close_event: TabCloseEvent
    model_added_event: ModelAddedEvent
    partial_accept_event: CppPartialAcceptEvent
    accept_cursor_prediction_event: AcceptCursorPredictionEvent
    reject_cursor_prediction_event: RejectCursorPredictionEvent
    suggest_cursor_prediction_event: SuggestCursorPredictionEvent
    cpp_trigger_event: CppTriggerEvent
    finished_cpp_generation_event: FinishedCppGenerationEvent
    bug_bot_event: BugBotEvent
    bug_bot_linter_event: BugBotLinterEvent
    anything_quick_access_selection_event: AnythingQuickAccessSelectionEvent
    lsp_suggestion_event: LspSuggestionEvent
    ntp_event: NtpEvent
    repo_event: RepoEvent
    git_event: GitEvent
    tool_call_event: ToolCallEvent
    before_ai_edit_event: BeforeAiEditEvent
    search_event: SearchEvent
    terminal_event: TerminalEvent
    worktree_event: WorktreeEvent
    review_changes_opened_event: ReviewChangesOpenedEvent
    browser_event: BrowserEvent
    background_files_event: BackgroundFilesEvent
    def __init__(self, performance_now_timestamp: _Optional[float] = ..., performance_time_origin: _Optional[float] = ..., global_index: _Optional[int] = ..., performance_now_flush_time: _Optional[float] = ..., event_index: _Optional[int] = ..., flush_index: _Optional[int] = ..., global_index_v2: _Optional[int] = ..., accept_event: _Optional[_Union[CppAcceptEventNew, _Mapping]] = ..., reject_event: _Optional[_Union[CppRejectEventNew, _Mapping]] = ..., manual_trigger_event: _Optional[_Union[CppManualTriggerEventNew, _Mapping]] = ..., stopped_tracking_model_event: _Optional[_Union[CppStoppedTrackingModelEvent, _Mapping]] = ..., suggest_event: _Optional[_Union[CppSuggestEvent, _Mapping]] = ..., linter_error_event: _Optional[_Union[CppLinterErrorEvent, _Mapping]] = ..., debounced_cursor_movement_event: _Optional[_Union[CppDebouncedCursorMovementEvent, _Mapping]] = ..., editor_changed_event: _Optional[_Union[CppEditorChangedEvent, _Mapping]] = ..., copy_event: _Optional[_Union[CppCopyEvent, _Mapping]] = ..., quick_action_event: _Optional[_Union[CppChangeQuickActionEvent, _Mapping]] = ..., quick_action_fire_event: _Optional[_Union[CppQuickActionFireEvent, _Mapping]] = ..., model_opened_event: _Optional[_Union[ModelOpenedEvent, _Mapping]] = ..., cmd_k_event: _Optional[_Union[CmdKEvent, _Mapping]] = ..., chat_event: _Optional[_Union[ChatEvent, _Mapping]] = ..., ai_event: _Optional[_Union[AiRequestEvent, _Mapping]] = ..., scroll_event: _Optional[_Union[ScrollEvent, _Mapping]] = ..., editor_close_event: _Optional[_Union[EditorCloseEvent, _Mapping]] = ..., tab_close_event: _Optional[_Union[TabCloseEvent, _Mapping]] = ..., model_added_event: _Optional[_Union[ModelAddedEvent, _Mapping]] = ..., partial_accept_event: _Optional[_Union[CppPartialAcceptEvent, _Mapping]] = ..., accept_cursor_prediction_event: _Optional[_Union[AcceptCursorPredictionEvent, _Mapping]] = ..., reject_cursor_prediction_event: _Optional[_Union[RejectCursorPredictionEvent, _Mapping]] = ..., suggest_cursor_prediction_event: _Optional[_Union[SuggestCursorPredictionEvent, _Mapping]] = ..., cpp_trigger_event: _Optional[_Union[CppTriggerEvent, _Mapping]] = ..., finished_cpp_generation_event: _Optional[_Union[FinishedCppGenerationEvent, _Mapping]] = ..., bug_bot_event: _Optional[_Union[BugBotEvent, _Mapping]] = ..., bug_bot_linter_event: _Optional[_Union[BugBotLinterEvent, _Mapping]] = ..., anything_quick_access_selection_event: _Optional[_Union[AnythingQuickAccessSelectionEvent, _Mapping]] = ..., lsp_suggestion_event: _Optional[_Union[LspSuggestionEvent, _Mapping]] = ..., ntp_event: _Optional[_Union[NtpEvent, _Mapping]] = ..., repo_event: _Optional[_Union[RepoEvent, _Mapping]] = ..., git_event: _Optional[_Union[GitEvent, _Mapping]] = ..., tool_call_event: _Optional[_Union[ToolCallEvent, _Mapping]] = ..., before_ai_edit_event: _Optional[_Union[BeforeAiEditEvent, _Mapping]] = ..., search_event: _Optional[_Union[SearchEvent, _Mapping]] = ..., terminal_event: _Optional[_Union[TerminalEvent, _Mapping]] = ..., worktree_event: _Optional[_Union[WorktreeEvent, _Mapping]] = ..., review_changes_opened_event: _Optional[_Union[ReviewChangesOpenedEvent, _Mapping]] = ..., browser_event: _Optional[_Union[BrowserEvent, _Mapping]] = ..., background_files_event: _Optional[_Union[BackgroundFilesEvent, _Mapping]] = ...) -> None: ...

class CppStoppedTrackingModelEvent(_message.Message):
    __slots__ = ("model_uuid", "relative_path", "reason")
    class StoppedTrackingModelReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STOPPED_TRACKING_MODEL_REASON_UNSPECIFIED: _ClassVar[CppStoppedTrackingModelEvent.StoppedTrackingModelReason]
        STOPPED_TRACKING_MODEL_REASON_FILE_TOO_BIG: _ClassVar[CppStoppedTrackingModelEvent.StoppedTrackingModelReason]
        STOPPED_TRACKING_MODEL_REASON_FILE_DISPOSED: _ClassVar[CppStoppedTrackingModelEvent.StoppedTrackingModelReason]
        STOPPED_TRACKING_MODEL_REASON_CHANGE_TOO_BIG: _ClassVar[CppStoppedTrackingModelEvent.StoppedTrackingModelReason]
    STOPPED_TRACKING_MODEL_REASON_UNSPECIFIED: CppStoppedTrackingModelEvent.StoppedTrackingModelReason
    STOPPED_TRACKING_MODEL_REASON_FILE_TOO_BIG: CppStoppedTrackingModelEvent.StoppedTrackingModelReason
    STOPPED_TRACKING_MODEL_REASON_FILE_DISPOSED: CppStoppedTrackingModelEvent.StoppedTrackingModelReason
    STOPPED_TRACKING_MODEL_REASON_CHANGE_TOO_BIG: CppStoppedTrackingModelEvent.StoppedTrackingModelReason
    MODEL_UUID_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_PATH_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    model_uuid: str
    relative_path: str
    reason: CppStoppedTrackingModelEvent.StoppedTrackingModelReason
    def __init__(self, model_uuid: _Optional[str] = ..., relative_path: _Optional[str] = ..., reason: _Optional[_Union[CppStoppedTrackingModelEvent.StoppedTrackingModelReason, str]] = ...) -> None: ...

class CppSuggestEvent(_message.Message):
    __slots__ = ("cpp_suggestion", "point_in_time_model", "recoverable_cpp_data")
    CPP_SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    RECOVERABLE_CPP_DATA_FIELD_NUMBER: _ClassVar[int]
    cpp_suggestion: CurrentlyShownCppSuggestion
    point_in_time_model: PointInTimeModel
    recoverable_cpp_data: RecoverableCppData
    def __init__(self, cpp_suggestion: _Optional[_Union[CurrentlyShownCppSuggestion, _Mapping]] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., recoverable_cpp_data: _Optional[_Union[RecoverableCppData, _Mapping]] = ...) -> None: ...

class CppSuggestion(_message.Message):
    __slots__ = ("suggestion_text", "range", "seen", "editor_selection_before_peek", "binding_id")
    SUGGESTION_TEXT_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    SEEN_FIELD_NUMBER: _ClassVar[int]
    EDITOR_SELECTION_BEFORE_PEEK_FIELD_NUMBER: _ClassVar[int]
    BINDING_ID_FIELD_NUMBER: _ClassVar[int]
    suggestion_text: str
    range: IRange
    seen: bool
    editor_selection_before_peek: SelectionWithOrientation
    binding_id: str
    def __init__(self, suggestion_text: _Optional[str] = ..., range: _Optional[_Union[IRange, _Mapping]] = ..., seen: _Optional[bool] = ..., editor_selection_before_peek: _Optional[_Union[SelectionWithOrientation, _Mapping]] = ..., binding_id: _Optional[str] = ...) -> None: ...

class CppTriggerEvent(_message.Message):
    __slots__ = ("generation_uuid", "model_version", "cursor_position", "point_in_time_model", "source")
    GENERATION_UUID_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    CURSOR_POSITION_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    generation_uuid: str
    model_version: int
    cursor_position: OneIndexedPosition
    point_in_time_model: PointInTimeModel
    source: CppSource
    def __init__(self, generation_uuid: _Optional[str] = ..., model_version: _Optional[int] = ..., cursor_position: _Optional[_Union[OneIndexedPosition, _Mapping]] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., source: _Optional[_Union[CppSource, str]] = ...) -> None: ...

class CurrentFileInfo(_message.Message):
    __slots__ = ("relative_workspace_path", "contents", "rely_on_filesync", "sha_256_hash", "cells", "top_chunks", "contents_start_at_line", "cursor_position", "dataframes", "total_number_of_lines", "language_id", "selection", "alternative_version_id", "diagnostics", "file_version", "cell_start_lines", "workspace_root_path", "line_ending")
    class NotebookCell(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENTS_FIELD_NUMBER: _ClassVar[int]
    RELY_ON_FILESYNC_FIELD_NUMBER: _ClassVar[int]
    SHA_256_HASH_FIELD_NUMBER: _ClassVar[int]
    CELLS_FIELD_NUMBER: _ClassVar[int]
    TOP_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    CONTENTS_START_AT_LINE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_POSITION_FIELD_NUMBER: _ClassVar[int]
    DATAFRAMES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_NUMBER_OF_LINES_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_ID_FIELD_NUMBER: _ClassVar[int]
    SELECTION_FIELD_NUMBER: _ClassVar[int]
    ALTERNATIVE_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSTICS_FIELD_NUMBER: _ClassVar[int]
    FILE_VERSION_FIELD_NUMBER: _ClassVar[int]
    CELL_START_LINES_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ROOT_PATH_FIELD_NUMBER: _ClassVar[int]
    LINE_ENDING_FIELD_NUMBER: _ClassVar[int]
    relative_workspace_path: str
    contents: str
    rely_on_filesync: bool
    sha_256_hash: str
    cells: _containers.RepeatedCompositeFieldContainer[CurrentFileInfo.NotebookCell]
    top_chunks: _containers.RepeatedCompositeFieldContainer[BM25Chunk]
    contents_start_at_line: int
    cursor_position: CursorPosition
    dataframes: _containers.RepeatedCompositeFieldContainer[DataframeInfo]
    total_number_of_lines: int
    language_id: str
    selection: CursorRange
    alternative_version_id: int
    diagnostics: _containers.RepeatedCompositeFieldContainer[Diagnostic]
    file_version: int
    cell_start_lines: _containers.RepeatedScalarFieldContainer[int]
    workspace_root_path: str
    line_ending: str
    def __init__(self, relative_workspace_path: _Optional[str] = ..., contents: _Optional[str] = ..., rely_on_filesync: _Optional[bool] = ..., sha_256_hash: _Optional[str] = ..., cells: _Optional[_Iterable[_Union[CurrentFileInfo.NotebookCell, _Mapping]]] = ..., top_chunks: _Optional[_Iterable[_Union[BM25Chunk, _Mapping]]] = ..., contents_start_at_line: _Optional[int] = ..., cursor_position: _Optional[_Union[CursorPosition, _Mapping]] = ..., dataframes: _Optional[_Iterable[_Union[DataframeInfo, _Mapping]]] = ..., total_number_of_lines: _Optional[int] = ..., language_id: _Optional[str] = ..., selection: _Optional[_Union[CursorRange, _Mapping]] = ..., alternative_version_id: _Optional[int] = ..., diagnostics: _Optional[_Iterable[_Union[Diagnostic, _Mapping]]] = ..., file_version: _Optional[int] = ..., cell_start_lines: _Optional[_Iterable[int]] = ..., workspace_root_path: _Optional[str] = ..., line_ending: _Optional[str] = ...) -> None: ...

class CurrentlyShownCppSuggestion(_message.Message):
    __slots__ = ("suggestion_id", "suggestion_text", "model_version_when_the_change_is_first_indicated_to_the_user_but_not_shown_in_the_model", "range_of_suggestion_in_current_model", "original_text", "binding_id")
    SUGGESTION_ID_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_TEXT_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_WHEN_THE_CHANGE_IS_FIRST_INDICATED_TO_THE_USER_BUT_NOT_SHOWN_IN_THE_MODEL_FIELD_NUMBER: _ClassVar[int]
    RANGE_OF_SUGGESTION_IN_CURRENT_MODEL_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_TEXT_FIELD_NUMBER: _ClassVar[int]
    BINDING_ID_FIELD_NUMBER: _ClassVar[int]
    suggestion_id: int
    suggestion_text: str
    model_version_when_the_change_is_first_indicated_to_the_user_but_not_shown_in_the_model: int
    range_of_suggestion_in_current_model: IRange
    original_text: str
    binding_id: str
    def __init__(self, suggestion_id: _Optional[int] = ..., suggestion_text: _Optional[str] = ..., model_version_when_the_change_is_first_indicated_to_the_user_but_not_shown_in_the_model: _Optional[int] = ..., range_of_suggestion_in_current_model: _Optional[_Union[IRange, _Mapping]] = ..., original_text: _Optional[str] = ..., binding_id: _Optional[str] = ...) -> None: ...

class CursorPosition(_message.Message):
    __slots__ = ("line", "column")
    LINE_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    line: int
    column: int
    def __init__(self, line: _Optional[int] = ..., column: _Optional[int] = ...) -> None: ...

class CursorPrediction(_message.Message):
    __slots__ = ("request_id", "prediction_id", "line_number", "source", "binding_id")
    class CursorPredictionSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        CURSOR_PREDICTION_SOURCE_UNSPECIFIED: _ClassVar[CursorPrediction.CursorPredictionSource]
        CURSOR_PREDICTION_SOURCE_ALWAYS_ON: _ClassVar[CursorPrediction.CursorPredictionSource]
        CURSOR_PREDICTION_SOURCE_ACCEPT: _ClassVar[CursorPrediction.CursorPredictionSource]
        CURSOR_PREDICTION_SOURCE_UNDO: _ClassVar[CursorPrediction.CursorPredictionSource]
        CURSOR_PREDICTION_SOURCE_EDITOR_CHANGE: _ClassVar[CursorPrediction.CursorPredictionSource]
    CURSOR_PREDICTION_SOURCE_UNSPECIFIED: CursorPrediction.CursorPredictionSource
    CURSOR_PREDICTION_SOURCE_ALWAYS_ON: CursorPrediction.CursorPredictionSource
    CURSOR_PREDICTION_SOURCE_ACCEPT: CursorPrediction.CursorPredictionSource
    CURSOR_PREDICTION_SOURCE_UNDO: CursorPrediction.CursorPredictionSource
    CURSOR_PREDICTION_SOURCE_EDITOR_CHANGE: CursorPrediction.CursorPredictionSource
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PREDICTION_ID_FIELD_NUMBER: _ClassVar[int]
    LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    BINDING_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    prediction_id: int
    line_number: int
    source: CursorPrediction.CursorPredictionSource
    binding_id: str
    def __init__(self, request_id: _Optional[str] = ..., prediction_id: _Optional[int] = ..., line_number: _Optional[int] = ..., source: _Optional[_Union[CursorPrediction.CursorPredictionSource, str]] = ..., binding_id: _Optional[str] = ...) -> None: ...

class CursorRange(_message.Message):
    __slots__ = ("start_position", "end_position")
    START_POSITION_FIELD_NUMBER: _ClassVar[int]
    END_POSITION_FIELD_NUMBER: _ClassVar[int]
    start_position: CursorPosition
    end_position: CursorPosition
    def __init__(self, start_position: _Optional[_Union[CursorPosition, _Mapping]] = ..., end_position: _Optional[_Union[CursorPosition, _Mapping]] = ...) -> None: ...

class CursorRule(_message.Message):
    __slots__ = ("name", "description", "body", "is_from_glob", "always_apply", "attach_to_background_agents", "full_path", "environments", "disabled_environments", "plugin", "marketplace")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    IS_FROM_GLOB_FIELD_NUMBER: _ClassVar[int]
    ALWAYS_APPLY_FIELD_NUMBER: _ClassVar[int]
    ATTACH_TO_BACKGROUND_AGENTS_FIELD_NUMBER: _ClassVar[int]
    FULL_PATH_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENTS_FIELD_NUMBER: _ClassVar[int]
    DISABLED_ENVIRONMENTS_FIELD_NUMBER: _ClassVar[int]
    PLUGIN_FIELD_NUMBER: _ClassVar[int]
    MARKETPLACE_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    body: str
    is_from_glob: bool
    always_apply: bool
    attach_to_background_agents: bool
    full_path: str
    environments: _containers.RepeatedScalarFieldContainer[str]
    disabled_environments: _containers.RepeatedScalarFieldContainer[str]
    plugin: str
    marketplace: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., body: _Optional[str] = ..., is_from_glob: _Optional[bool] = ..., always_apply: _Optional[bool] = ..., attach_to_background_agents: _Optional[bool] = ..., full_path: _Optional[str] = ..., environments: _Optional[_Iterable[str]] = ..., disabled_environments: _Optional[_Iterable[str]] = ..., plugin: _Optional[str] = ..., marketplace: _Optional[str] = ...) -> None: ...

class CursorSelection(_message.Message):
    __slots__ = ("selection_start_line_number", "selection_start_column", "position_line_number", "position_column")
    SELECTION_START_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SELECTION_START_COLUMN_FIELD_NUMBER: _ClassVar[int]
    POSITION_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    POSITION_COLUMN_FIELD_NUMBER: _ClassVar[int]
    selection_start_line_number: int
    selection_start_column: int
    position_line_number: int
    position_column: int
    def __init__(self, selection_start_line_number: _Optional[int] = ..., selection_start_column: _Optional[int] = ..., position_line_number: _Optional[int] = ..., position_column: _Optional[int] = ...) -> None: ...

class DataframeInfo(_message.Message):
    __slots__ = ("name", "shape", "data_dimensionality", "columns", "row_count", "index_column")
    class Column(_message.Message):
        __slots__ = ("key", "type")
        KEY_FIELD_NUMBER: _ClassVar[int]
        TYPE_FIELD_NUMBER: _ClassVar[int]
        key: str
        type: str
        def __init__(self, key: _Optional[str] = ..., type: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DATA_DIMENSIONALITY_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    ROW_COUNT_FIELD_NUMBER: _ClassVar[int]
    INDEX_COLUMN_FIELD_NUMBER: _ClassVar[int]
    name: str
    shape: str
    data_dimensionality: int
    columns: _containers.RepeatedCompositeFieldContainer[DataframeInfo.Column]
    row_count: int
    index_column: str
    def __init__(self, name: _Optional[str] = ..., shape: _Optional[str] = ..., data_dimensionality: _Optional[int] = ..., columns: _Optional[_Iterable[_Union[DataframeInfo.Column, _Mapping]]] = ..., row_count: _Optional[int] = ..., index_column: _Optional[str] = ...) -> None: ...

class DetailedLine(_message.Message):
    __slots__ = ("text", "line_number", "is_signature")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    IS_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    text: str
    line_number: float
    is_signature: bool
    def __init__(self, text: _Optional[str] = ..., line_number: _Optional[float] = ..., is_signature: _Optional[bool] = ...) -> None: ...

class Diagnostic(_message.Message):
    __slots__ = ("message", "range", "severity", "related_information")
    class DiagnosticSeverity(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        DIAGNOSTIC_SEVERITY_UNSPECIFIED: _ClassVar[Diagnostic.DiagnosticSeverity]
        DIAGNOSTIC_SEVERITY_ERROR: _ClassVar[Diagnostic.DiagnosticSeverity]
        DIAGNOSTIC_SEVERITY_WARNING: _ClassVar[Diagnostic.DiagnosticSeverity]
        DIAGNOSTIC_SEVERITY_INFORMATION: _ClassVar[Diagnostic.DiagnosticSeverity]
        DIAGNOSTIC_SEVERITY_HINT: _ClassVar[Diagnostic.DiagnosticSeverity]
    DIAGNOSTIC_SEVERITY_UNSPECIFIED: Diagnostic.DiagnosticSeverity
    DIAGNOSTIC_SEVERITY_ERROR: Diagnostic.DiagnosticSeverity
    DIAGNOSTIC_SEVERITY_WARNING: Diagnostic.DiagnosticSeverity
    DIAGNOSTIC_SEVERITY_INFORMATION: Diagnostic.DiagnosticSeverity
    DIAGNOSTIC_SEVERITY_HINT: Diagnostic.DiagnosticSeverity
    class RelatedInformation(_message.Message):
        __slots__ = ("message", "range")
        MESSAGE_FIELD_NUMBER: _ClassVar[int]
        RANGE_FIELD_NUMBER: _ClassVar[int]
        message: str
        range: CursorRange
        def __init__(self, message: _Optional[str] = ..., range: _Optional[_Union[CursorRange, _Mapping]] = ...) -> None: ...
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    RELATED_INFORMATION_FIELD_NUMBER: _ClassVar[int]
    message: str
    range: CursorRange
    severity: Diagnostic.DiagnosticSeverity
    related_information: _containers.RepeatedCompositeFieldContainer[Diagnostic.RelatedInformation]
    def __init__(self, message: _Optional[str] = ..., range: _Optional[_Union[CursorRange, _Mapping]] = ..., severity: _Optional[_Union[Diagnostic.DiagnosticSeverity, str]] = ..., related_information: _Optional[_Iterable[_Union[Diagnostic.RelatedInformation, _Mapping]]] = ...) -> None: ...

class DocumentSymbol(_message.Message):
    __slots__ = ("name", "detail", "kind", "container_name", "range", "selection_range", "children")
    class SymbolKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        SYMBOL_KIND_UNSPECIFIED: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_FILE: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_MODULE: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_NAMESPACE: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_PACKAGE: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_CLASS: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_METHOD: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_PROPERTY: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_FIELD: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_CONSTRUCTOR: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_ENUM: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_INTERFACE: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_FUNCTION: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_VARIABLE: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_CONSTANT: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_STRING: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_NUMBER: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_BOOLEAN: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_ARRAY: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_OBJECT: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_KEY: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_NULL: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_ENUM_MEMBER: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_STRUCT: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_EVENT: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_OPERATOR: _ClassVar[DocumentSymbol.SymbolKind]
        SYMBOL_KIND_TYPE_PARAMETER: _ClassVar[DocumentSymbol.SymbolKind]
    SYMBOL_KIND_UNSPECIFIED: DocumentSymbol.SymbolKind
    SYMBOL_KIND_FILE: DocumentSymbol.SymbolKind
    SYMBOL_KIND_MODULE: DocumentSymbol.SymbolKind
    SYMBOL_KIND_NAMESPACE: DocumentSymbol.SymbolKind
    SYMBOL_KIND_PACKAGE: DocumentSymbol.SymbolKind
    SYMBOL_KIND_CLASS: DocumentSymbol.SymbolKind
    SYMBOL_KIND_METHOD: DocumentSymbol.SymbolKind
    SYMBOL_KIND_PROPERTY: DocumentSymbol.SymbolKind
    SYMBOL_KIND_FIELD: DocumentSymbol.SymbolKind
    SYMBOL_KIND_CONSTRUCTOR: DocumentSymbol.SymbolKind
    SYMBOL_KIND_ENUM: DocumentSymbol.SymbolKind
    SYMBOL_KIND_INTERFACE: DocumentSymbol.SymbolKind
    SYMBOL_KIND_FUNCTION: DocumentSymbol.SymbolKind
    SYMBOL_KIND_VARIABLE: DocumentSymbol.SymbolKind
    SYMBOL_KIND_CONSTANT: DocumentSymbol.SymbolKind
    SYMBOL_KIND_STRING: DocumentSymbol.SymbolKind
    SYMBOL_KIND_NUMBER: DocumentSymbol.SymbolKind
    SYMBOL_KIND_BOOLEAN: DocumentSymbol.SymbolKind
    SYMBOL_KIND_ARRAY: DocumentSymbol.SymbolKind
    SYMBOL_KIND_OBJECT: DocumentSymbol.SymbolKind
    SYMBOL_KIND_KEY: DocumentSymbol.SymbolKind
    SYMBOL_KIND_NULL: DocumentSymbol.SymbolKind
    SYMBOL_KIND_ENUM_MEMBER: DocumentSymbol.SymbolKind
    SYMBOL_KIND_STRUCT: DocumentSymbol.SymbolKind
    SYMBOL_KIND_EVENT: DocumentSymbol.SymbolKind
    SYMBOL_KIND_OPERATOR: DocumentSymbol.SymbolKind
    SYMBOL_KIND_TYPE_PARAMETER: DocumentSymbol.SymbolKind
    class Range(_message.Message):
        __slots__ = ("start_line_number", "start_column", "end_line_number", "end_column")
        START_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
        START_COLUMN_FIELD_NUMBER: _ClassVar[int]
        END_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
        END_COLUMN_FIELD_NUMBER: _ClassVar[int]
        start_line_number: int
        start_column: int
        end_line_number: int
        end_column: int
        def __init__(self, start_line_number: _Optional[int] = ..., start_column: _Optional[int] = ..., end_line_number: _Optional[int] = ..., end_column: _Optional[int] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_NAME_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    SELECTION_RANGE_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    name: str
    detail: str
    kind: DocumentSymbol.SymbolKind
    container_name: str
    range: DocumentSymbol.Range
    selection_range: DocumentSymbol.Range
    children: _containers.RepeatedCompositeFieldContainer[DocumentSymbol]
    def __init__(self, name: _Optional[str] = ..., detail: _Optional[str] = ..., kind: _Optional[_Union[DocumentSymbol.SymbolKind, str]] = ..., container_name: _Optional[str] = ..., range: _Optional[_Union[DocumentSymbol.Range, _Mapping]] = ..., selection_range: _Optional[_Union[DocumentSymbol.Range, _Mapping]] = ..., children: _Optional[_Iterable[_Union[DocumentSymbol, _Mapping]]] = ...) -> None: ...

class DocumentationChunk(_message.Message):
    __slots__ = ("doc_name", "page_url", "documentation_chunk", "score", "page_title")
    DOC_NAME_FIELD_NUMBER: _ClassVar[int]
    PAGE_URL_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTATION_CHUNK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TITLE_FIELD_NUMBER: _ClassVar[int]
    doc_name: str
    page_url: str
    documentation_chunk: str
    score: float
    page_title: str
    def __init__(self, doc_name: _Optional[str] = ..., page_url: _Optional[str] = ..., documentation_chunk: _Optional[str] = ..., score: _Optional[float] = ..., page_title: _Optional[str] = ...) -> None: ...

class Edit(_message.Message):
    __slots__ = ("text", "range")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    text: str
    range: IRange
    def __init__(self, text: _Optional[str] = ..., range: _Optional[_Union[IRange, _Mapping]] = ...) -> None: ...

class EditHistoryAppendChangesRequest(_message.Message):
    __slots__ = ("session_id", "model_uuid", "starting_model_value", "starting_model_version", "relative_path", "uri", "client_version", "client_commit", "changes", "session_events", "model_changes_may_be_out_of_order", "privacy_mode_status", "events", "time_origin")
    class PrivacyModeStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        PRIVACY_MODE_STATUS_UNSPECIFIED: _ClassVar[EditHistoryAppendChangesRequest.PrivacyModeStatus]
        PRIVACY_MODE_STATUS_PRIVACY_ENABLED: _ClassVar[EditHistoryAppendChangesRequest.PrivacyModeStatus]
        PRIVACY_MODE_STATUS_IMPLICIT_NO_PRIVACY: _ClassVar[EditHistoryAppendChangesRequest.PrivacyModeStatus]
        PRIVACY_MODE_STATUS_EXPLICIT_NO_PRIVACY: _ClassVar[EditHistoryAppendChangesRequest.PrivacyModeStatus]
    PRIVACY_MODE_STATUS_UNSPECIFIED: EditHistoryAppendChangesRequest.PrivacyModeStatus
    PRIVACY_MODE_STATUS_PRIVACY_ENABLED: EditHistoryAppendChangesRequest.PrivacyModeStatus
    PRIVACY_MODE_STATUS_IMPLICIT_NO_PRIVACY: EditHistoryAppendChangesRequest.PrivacyModeStatus
    PRIVACY_MODE_STATUS_EXPLICIT_NO_PRIVACY: EditHistoryAppendChangesRequest.PrivacyModeStatus
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_UUID_FIELD_NUMBER: _ClassVar[int]
    STARTING_MODEL_VALUE_FIELD_NUMBER: _ClassVar[int]
    STARTING_MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_PATH_FIELD_NUMBER: _ClassVar[int]
    URI_FIELD_NUMBER: _ClassVar[int]
    CLIENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    CLIENT_COMMIT_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    SESSION_EVENTS_FIELD_NUMBER: _ClassVar[int]
    MODEL_CHANGES_MAY_BE_OUT_OF_ORDER_FIELD_NUMBER: _ClassVar[int]
    PRIVACY_MODE_STATUS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    TIME_ORIGIN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    model_uuid: str
    starting_model_value: str
    starting_model_version: int
    relative_path: str
    uri: str
    client_version: str
    client_commit: str
    changes: _containers.RepeatedCompositeFieldContainer[ModelChange]
    session_events: _containers.RepeatedCompositeFieldContainer[CppSessionEvent]
    model_changes_may_be_out_of_order: bool
    privacy_mode_status: EditHistoryAppendChangesRequest.PrivacyModeStatus
    events: _containers.RepeatedCompositeFieldContainer[CppHistoryAppendEvent]
    time_origin: float
    def __init__(self, session_id: _Optional[str] = ..., model_uuid: _Optional[str] = ..., starting_model_value: _Optional[str] = ..., starting_model_version: _Optional[int] = ..., relative_path: _Optional[str] = ..., uri: _Optional[str] = ..., client_version: _Optional[str] = ..., client_commit: _Optional[str] = ..., changes: _Optional[_Iterable[_Union[ModelChange, _Mapping]]] = ..., session_events: _Optional[_Iterable[_Union[CppSessionEvent, _Mapping]]] = ..., model_changes_may_be_out_of_order: _Optional[bool] = ..., privacy_mode_status: _Optional[_Union[EditHistoryAppendChangesRequest.PrivacyModeStatus, str]] = ..., events: _Optional[_Iterable[_Union[CppHistoryAppendEvent, _Mapping]]] = ..., time_origin: _Optional[float] = ...) -> None: ...

class EditHistoryAppendChangesResponse(_message.Message):
    __slots__ = ("success",)
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    success: bool
    def __init__(self, success: _Optional[bool] = ...) -> None: ...

class EditorCloseEvent(_message.Message):
    __slots__ = ("editor_id",)
    EDITOR_ID_FIELD_NUMBER: _ClassVar[int]
    editor_id: str
    def __init__(self, editor_id: _Optional[str] = ...) -> None: ...

class ExplicitContext(_message.Message):
    __slots__ = ("context", "repo_context", "rules", "mode_specific_context", "mcp_instructions")
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    REPO_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    MODE_SPECIFIC_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    MCP_INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    context: str
    repo_context: str
    rules: _containers.RepeatedCompositeFieldContainer[CursorRule]
    mode_specific_context: str
    mcp_instructions: _containers.RepeatedCompositeFieldContainer[MCPInstructions]
    def __init__(self, context: _Optional[str] = ..., repo_context: _Optional[str] = ..., rules: _Optional[_Iterable[_Union[CursorRule, _Mapping]]] = ..., mode_specific_context: _Optional[str] = ..., mcp_instructions: _Optional[_Iterable[_Union[MCPInstructions, _Mapping]]] = ...) -> None: ...

class FSConfigRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FSConfigResponse(_message.Message):
    __slots__ = ("check_filesync_hash_percent", "rate_limiter_breaker_reset_time_ms", "rate_limiter_rps", "rate_limiter_burst_capacity", "max_recent_updates_stored", "max_model_version_cache_size", "max_file_size_to_sync_bytes", "sync_retry_max_attempts", "sync_retry_initial_delay_ms", "sync_retry_time_multiplier", "file_sync_status_max_cache_size", "successive_syncs_required_for_reliance", "extra_successful_syncs_needed_after_errors", "big_change_stripping_threshold_bytes", "last_n_updates_to_send", "file_sync_status_ttl_ms", "sync_debounce_ms", "sync_update_threshold")
    CHECK_FILESYNC_HASH_PERCENT_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITER_BREAKER_RESET_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITER_RPS_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITER_BURST_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    MAX_RECENT_UPDATES_STORED_FIELD_NUMBER: _ClassVar[int]
    MAX_MODEL_VERSION_CACHE_SIZE_FIELD_NUMBER: _ClassVar[int]
    MAX_FILE_SIZE_TO_SYNC_BYTES_FIELD_NUMBER: _ClassVar[int]
    SYNC_RETRY_MAX_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    SYNC_RETRY_INITIAL_DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    SYNC_RETRY_TIME_MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    FILE_SYNC_STATUS_MAX_CACHE_SIZE_FIELD_NUMBER: _ClassVar[int]
    SUCCESSIVE_SYNCS_REQUIRED_FOR_RELIANCE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_SUCCESSFUL_SYNCS_NEEDED_AFTER_ERRORS_FIELD_NUMBER: _ClassVar[int]
    BIG_CHANGE_STRIPPING_THRESHOLD_BYTES_FIELD_NUMBER: _ClassVar[int]
    LAST_N_UPDATES_TO_SEND_FIELD_NUMBER: _ClassVar[int]
    FILE_SYNC_STATUS_TTL_MS_FIELD_NUMBER: _ClassVar[int]
    SYNC_DEBOUNCE_MS_FIELD_NUMBER: _ClassVar[int]
    SYNC_UPDATE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    check_filesync_hash_percent: float
    rate_limiter_breaker_reset_time_ms: int
    rate_limiter_rps: int
    rate_limiter_burst_capacity: int
    max_recent_updates_stored: int
    max_model_version_cache_size: int
    max_file_size_to_sync_bytes: int
    sync_retry_max_attempts: int
    sync_retry_initial_delay_ms: int
    sync_retry_time_multiplier: int
    file_sync_status_max_cache_size: int
    successive_syncs_required_for_reliance: int
    extra_successful_syncs_needed_after_errors: int
    big_change_stripping_threshold_bytes: int
    last_n_updates_to_send: int
    file_sync_status_ttl_ms: int
    sync_debounce_ms: int
    sync_update_threshold: int
    def __init__(self, check_filesync_hash_percent: _Optional[float] = ..., rate_limiter_breaker_reset_time_ms: _Optional[int] = ..., rate_limiter_rps: _Optional[int] = ..., rate_limiter_burst_capacity: _Optional[int] = ..., max_recent_updates_stored: _Optional[int] = ..., max_model_version_cache_size: _Optional[int] = ..., max_file_size_to_sync_bytes: _Optional[int] = ..., sync_retry_max_attempts: _Optional[int] = ..., sync_retry_initial_delay_ms: _Optional[int] = ..., sync_retry_time_multiplier: _Optional[int] = ..., file_sync_status_max_cache_size: _Optional[int] = ..., successive_syncs_required_for_reliance: _Optional[int] = ..., extra_successful_syncs_needed_after_errors: _Optional[int] = ..., big_change_stripping_threshold_bytes: _Optional[int] = ..., last_n_updates_to_send: _Optional[int] = ..., file_sync_status_ttl_ms: _Optional[int] = ..., sync_debounce_ms: _Optional[int] = ..., sync_update_threshold: _Optional[int] = ...) -> None: ...

class FSIsEnabledForUserRequest(_message.Message):
    __slots__ = ("uuid",)
    UUID_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    def __init__(self, uuid: _Optional[str] = ...) -> None: ...

class FSIsEnabledForUserResponse(_message.Message):
    __slots__ = ("enabled",)
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    enabled: bool
    def __init__(self, enabled: _Optional[bool] = ...) -> None: ...

class FSSyncFileRequest(_message.Message):
    __slots__ = ("uuid", "relative_workspace_path", "model_version", "filesync_updates", "sha256_hash")
    UUID_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    FILESYNC_UPDATES_FIELD_NUMBER: _ClassVar[int]
    SHA256_HASH_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    relative_workspace_path: str
    model_version: int
    filesync_updates: _containers.RepeatedCompositeFieldContainer[FilesyncUpdateWithModelVersion]
    sha256_hash: str
    def __init__(self, uuid: _Optional[str] = ..., relative_workspace_path: _Optional[str] = ..., model_version: _Optional[int] = ..., filesync_updates: _Optional[_Iterable[_Union[FilesyncUpdateWithModelVersion, _Mapping]]] = ..., sha256_hash: _Optional[str] = ...) -> None: ...

class FSSyncFileResponse(_message.Message):
    __slots__ = ("error",)
    ERROR_FIELD_NUMBER: _ClassVar[int]
    error: FSSyncErrorType
    def __init__(self, error: _Optional[_Union[FSSyncErrorType, str]] = ...) -> None: ...

class FSUploadFileRequest(_message.Message):
    __slots__ = ("uuid", "relative_workspace_path", "contents", "model_version", "sha256_hash")
    UUID_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENTS_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SHA256_HASH_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    relative_workspace_path: str
    contents: str
    model_version: int
    sha256_hash: str
    def __init__(self, uuid: _Optional[str] = ..., relative_workspace_path: _Optional[str] = ..., contents: _Optional[str] = ..., model_version: _Optional[int] = ..., sha256_hash: _Optional[str] = ...) -> None: ...

class FSUploadFileResponse(_message.Message):
    __slots__ = ("error",)
    ERROR_FIELD_NUMBER: _ClassVar[int]
    error: FSUploadErrorType
    def __init__(self, error: _Optional[_Union[FSUploadErrorType, str]] = ...) -> None: ...

class File(_message.Message):
    __slots__ = ("relative_workspace_path", "contents", "file_git_context")
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENTS_FIELD_NUMBER: _ClassVar[int]
    FILE_GIT_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    relative_workspace_path: str
    contents: str
    file_git_context: FileGit
    def __init__(self, relative_workspace_path: _Optional[str] = ..., contents: _Optional[str] = ..., file_git_context: _Optional[_Union[FileGit, _Mapping]] = ...) -> None: ...

class FileDiff(_message.Message):
    __slots__ = ("added", "removed", "to", "chunks", "before_file_contents", "after_file_contents", "is_generated")
    class Chunk(_message.Message):
        __slots__ = ("content", "lines", "old_start", "old_lines", "new_start", "new_lines")
        CONTENT_FIELD_NUMBER: _ClassVar[int]
        LINES_FIELD_NUMBER: _ClassVar[int]
        OLD_START_FIELD_NUMBER: _ClassVar[int]
        OLD_LINES_FIELD_NUMBER: _ClassVar[int]
        NEW_START_FIELD_NUMBER: _ClassVar[int]
        NEW_LINES_FIELD_NUMBER: _ClassVar[int]
        content: str
        lines: _containers.RepeatedScalarFieldContainer[str]
        old_start: int
        old_lines: int
        new_start: int
        new_lines: int
        def __init__(self, content: _Optional[str] = ..., lines: _Optional[_Iterable[str]] = ..., old_start: _Optional[int] = ..., old_lines: _Optional[int] = ..., new_start: _Optional[int] = ..., new_lines: _Optional[int] = ...) -> None: ...
    ADDED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FILE_CONTENTS_FIELD_NUMBER: _ClassVar[int]
    AFTER_FILE_CONTENTS_FIELD_NUMBER: _ClassVar[int]
    IS_GENERATED_FIELD_NUMBER: _ClassVar[int]
    added: int
    removed: int
    to: str
    chunks: _containers.RepeatedCompositeFieldContainer[FileDiff.Chunk]
    before_file_contents: str
    after_file_contents: str
    is_generated: bool
    def __init__(self, added: _Optional[int] = ..., removed: _Optional[int] = ..., to: _Optional[str] = ..., chunks: _Optional[_Iterable[_Union[FileDiff.Chunk, _Mapping]]] = ..., before_file_contents: _Optional[str] = ..., after_file_contents: _Optional[str] = ..., is_generated: _Optional[bool] = ..., **kwargs) -> None: ...

class FileGit(_message.Message):
    __slots__ = ("commits",)
    COMMITS_FIELD_NUMBER: _ClassVar[int]
    commits: _containers.RepeatedCompositeFieldContainer[GitCommit]
    def __init__(self, commits: _Optional[_Iterable[_Union[GitCommit, _Mapping]]] = ...) -> None: ...

class FilesyncUpdateWithModelVersion(_message.Message):
    __slots__ = ("model_version", "relative_workspace_path", "updates", "expected_file_length")
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    UPDATES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_FILE_LENGTH_FIELD_NUMBER: _ClassVar[int]
    model_version: int
    relative_workspace_path: str
    updates: _containers.RepeatedCompositeFieldContainer[SingleUpdateRequest]
    expected_file_length: int
    def __init__(self, model_version: _Optional[int] = ..., relative_workspace_path: _Optional[str] = ..., updates: _Optional[_Iterable[_Union[SingleUpdateRequest, _Mapping]]] = ..., expected_file_length: _Optional[int] = ...) -> None: ...

class FinishedCppGenerationEvent(_message.Message):
    __slots__ = ("point_in_time_model", "recoverable_cpp_data")
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    RECOVERABLE_CPP_DATA_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: PointInTimeModel
    recoverable_cpp_data: RecoverableCppData
    def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., recoverable_cpp_data: _Optional[_Union[RecoverableCppData, _Mapping]] = ...) -> None: ...

class GitCommit(_message.Message):
    __slots__ = ("commit", "author", "date", "message")
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    DATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    commit: str
    author: str
    date: str
    message: str
    def __init__(self, commit: _Optional[str] = ..., author: _Optional[str] = ..., date: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class GitEvent(_message.Message):
    __slots__ = ("operation_type", "repository_path", "operation_success", "branch_name", "error_message", "is_default_branch", "default_branch_name", "commit_hash", "previous_commit_hash", "remote_url")
    class OperationType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OPERATION_TYPE_UNSPECIFIED: _ClassVar[GitEvent.OperationType]
        OPERATION_TYPE_COMMIT: _ClassVar[GitEvent.OperationType]
        OPERATION_TYPE_CHECKOUT: _ClassVar[GitEvent.OperationType]
        OPERATION_TYPE_PULL: _ClassVar[GitEvent.OperationType]
        OPERATION_TYPE_FETCH: _ClassVar[GitEvent.OperationType]
        OPERATION_TYPE_MERGE: _ClassVar[GitEvent.OperationType]
        OPERATION_TYPE_REBASE: _ClassVar[GitEvent.OperationType]
        OPERATION_TYPE_STASH: _ClassVar[GitEvent.OperationType]
        OPERATION_TYPE_BRANCH: _ClassVar[GitEvent.OperationType]
        OPERATION_TYPE_TAG: _ClassVar[GitEvent.OperationType]
    OPERATION_TYPE_UNSPECIFIED: GitEvent.OperationType
    OPERATION_TYPE_COMMIT: GitEvent.OperationType
    OPERATION_TYPE_CHECKOUT: GitEvent.OperationType
    OPERATION_TYPE_PULL: GitEvent.OperationType
    OPERATION_TYPE_FETCH: GitEvent.OperationType
    OPERATION_TYPE_MERGE: GitEvent.OperationType
    OPERATION_TYPE_REBASE: GitEvent.OperationType
    OPERATION_TYPE_STASH: GitEvent.OperationType
    OPERATION_TYPE_BRANCH: GitEvent.OperationType
    OPERATION_TYPE_TAG: GitEvent.OperationType
    OPERATION_TYPE_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_PATH_FIELD_NUMBER: _ClassVar[int]
    OPERATION_SUCCESS_FIELD_NUMBER: _ClassVar[int]
    BRANCH_NAME_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    IS_DEFAULT_BRANCH_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_BRANCH_NAME_FIELD_NUMBER: _ClassVar[int]
    COMMIT_HASH_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_COMMIT_HASH_FIELD_NUMBER: _ClassVar[int]
    REMOTE_URL_FIELD_NUMBER: _ClassVar[int]
    operation_type: GitEvent.OperationType
    repository_path: str
    operation_success: bool
    branch_name: str
    error_message: str
    is_default_branch: bool
    default_branch_name: str
    commit_hash: str
    previous_commit_hash: str
    remote_url: str
    def __init__(self, operation_type: _Optional[_Union[GitEvent.OperationType, str]] = ..., repository_path: _Optional[str] = ..., operation_success: _Optional[bool] = ..., branch_name: _Optional[str] = ..., error_message: _Optional[str] = ..., is_default_branch: _Optional[bool] = ..., default_branch_name: _Optional[str] = ..., commit_hash: _Optional[str] = ..., previous_commit_hash: _Optional[str] = ..., remote_url: _Optional[str] = ...) -> None: ...

class IRange(_message.Message):
    __slots__ = ("start_line_number", "start_column", "end_line_number", "end_column")
    START_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    START_COLUMN_FIELD_NUMBER: _ClassVar[int]
    END_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    END_COLUMN_FIELD_NUMBER: _ClassVar[int]
    start_line_number: int
    start_column: int
    end_line_number: int
    end_column: int
    def __init__(self, start_line_number: _Optional[int] = ..., start_column: _Optional[int] = ..., end_line_number: _Optional[int] = ..., end_column: _Optional[int] = ...) -> None: ...

class ImageProto(_message.Message):
    __slots__ = ("data", "dimension", "uuid", "task_specific_description")
    class Dimension(_message.Message):
        __slots__ = ("width", "height")
        WIDTH_FIELD_NUMBER: _ClassVar[int]
        HEIGHT_FIELD_NUMBER: _ClassVar[int]
        width: int
        height: int
        def __init__(self, width: _Optional[int] = ..., height: _Optional[int] = ...) -> None: ...
    DATA_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    TASK_SPECIFIC_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    dimension: ImageProto.Dimension
    uuid: str
    task_specific_description: str
    def __init__(self, data: _Optional[bytes] = ..., dimension: _Optional[_Union[ImageProto.Dimension, _Mapping]] = ..., uuid: _Optional[str] = ..., task_specific_description: _Optional[str] = ...) -> None: ...

class LineRange(_message.Message):
    __slots__ = ("start_line_number", "end_line_number_inclusive")
    START_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    END_LINE_NUMBER_INCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    start_line_number: int
    end_line_number_inclusive: int
    def __init__(self, start_line_number: _Optional[int] = ..., end_line_number_inclusive: _Optional[int] = ...) -> None: ...

class Lint(_message.Message):
    __slots__ = ("message", "range", "severity")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    message: str
    range: SimpleRange
    severity: LintSeverity
    def __init__(self, message: _Optional[str] = ..., range: _Optional[_Union[SimpleRange, _Mapping]] = ..., severity: _Optional[_Union[LintSeverity, str]] = ...) -> None: ...

class LinterError(_message.Message):
    __slots__ = ("message", "range", "source", "related_information", "severity", "is_stale")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    RELATED_INFORMATION_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    IS_STALE_FIELD_NUMBER: _ClassVar[int]
    message: str
    range: CursorRange
    source: str
    related_information: _containers.RepeatedCompositeFieldContainer[Diagnostic.RelatedInformation]
    severity: Diagnostic.DiagnosticSeverity
    is_stale: bool
    def __init__(self, message: _Optional[str] = ..., range: _Optional[_Union[CursorRange, _Mapping]] = ..., source: _Optional[str] = ..., related_information: _Optional[_Iterable[_Union[Diagnostic.RelatedInformation, _Mapping]]] = ..., severity: _Optional[_Union[Diagnostic.DiagnosticSeverity, str]] = ..., is_stale: _Optional[bool] = ...) -> None: ...

class LinterErrors(_message.Message):
    __slots__ = ("relative_workspace_path", "errors", "file_contents")
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    FILE_CONTENTS_FIELD_NUMBER: _ClassVar[int]
    relative_workspace_path: str
    errors: _containers.RepeatedCompositeFieldContainer[LinterError]
    file_contents: str
    def __init__(self, relative_workspace_path: _Optional[str] = ..., errors: _Optional[_Iterable[_Union[LinterError, _Mapping]]] = ..., file_contents: _Optional[str] = ...) -> None: ...

class LspSubgraphContextItem(_message.Message):
    __slots__ = ("uri", "type", "content", "range")
    URI_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    uri: str
    type: str
    content: str
    range: LspSubgraphRange
    def __init__(self, uri: _Optional[str] = ..., type: _Optional[str] = ..., content: _Optional[str] = ..., range: _Optional[_Union[LspSubgraphRange, _Mapping]] = ...) -> None: ...

class LspSubgraphFullContext(_message.Message):
    __slots__ = ("uri", "symbol_name", "positions", "context_items", "score")
    URI_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_NAME_FIELD_NUMBER: _ClassVar[int]
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    uri: str
    symbol_name: str
    positions: _containers.RepeatedCompositeFieldContainer[LspSubgraphPosition]
    context_items: _containers.RepeatedCompositeFieldContainer[LspSubgraphContextItem]
    score: float
    def __init__(self, uri: _Optional[str] = ..., symbol_name: _Optional[str] = ..., positions: _Optional[_Iterable[_Union[LspSubgraphPosition, _Mapping]]] = ..., context_items: _Optional[_Iterable[_Union[LspSubgraphContextItem, _Mapping]]] = ..., score: _Optional[float] = ...) -> None: ...

class LspSubgraphPosition(_message.Message):
    __slots__ = ("line", "character")
    LINE_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_FIELD_NUMBER: _ClassVar[int]
    line: int
    character: int
    def __init__(self, line: _Optional[int] = ..., character: _Optional[int] = ...) -> None: ...

class LspSubgraphRange(_message.Message):
    __slots__ = ("start_line", "start_character", "end_line", "end_character")
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    START_CHARACTER_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    END_CHARACTER_FIELD_NUMBER: _ClassVar[int]
    start_line: int
    start_character: int
    end_line: int
    end_character: int
    def __init__(self, start_line: _Optional[int] = ..., start_character: _Optional[int] = ..., end_line: _Optional[int] = ..., end_character: _Optional[int] = ...) -> None: ...

class LspSuggestedItems(_message.Message):
    __slots__ = ("suggestions",)
    SUGGESTIONS_FIELD_NUMBER: _ClassVar[int]
    suggestions: _containers.RepeatedCompositeFieldContainer[LspSuggestion]
    def __init__(self, suggestions: _Optional[_Iterable[_Union[LspSuggestion, _Mapping]]] = ...) -> None: ...

class LspSuggestion(_message.Message):
    __slots__ = ("label",)
    LABEL_FIELD_NUMBER: _ClassVar[int]
    label: str
    def __init__(self, label: _Optional[str] = ...) -> None: ...

class LspSuggestionEvent(_message.Message):
    __slots__ = ("suggestions", "request_id", "editor_id", "point_in_time_model")
    SUGGESTIONS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EDITOR_ID_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    suggestions: _containers.RepeatedScalarFieldContainer[str]
    request_id: str
    editor_id: str
    point_in_time_model: PointInTimeModel
    def __init__(self, suggestions: _Optional[_Iterable[str]] = ..., request_id: _Optional[str] = ..., editor_id: _Optional[str] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ...) -> None: ...

class MCPInstructions(_message.Message):
    __slots__ = ("server_name", "server_identifier", "instructions")
    SERVER_NAME_FIELD_NUMBER: _ClassVar[int]
    SERVER_IDENTIFIER_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    server_name: str
    server_identifier: str
    instructions: str
    def __init__(self, server_name: _Optional[str] = ..., server_identifier: _Optional[str] = ..., instructions: _Optional[str] = ...) -> None: ...

class MaybeDefinedPointInTimeModel(_message.Message):
    __slots__ = ("model_uuid", "model_version", "relative_path", "model_id")
    MODEL_UUID_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_PATH_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    model_uuid: str
    model_version: int
    relative_path: str
    model_id: str
    def __init__(self, model_uuid: _Optional[str] = ..., model_version: _Optional[int] = ..., relative_path: _Optional[str] = ..., model_id: _Optional[str] = ...) -> None: ...

class MissingContextItems(_message.Message):
    __slots__ = ("missing_context_item_hashes",)
    MISSING_CONTEXT_ITEM_HASHES_FIELD_NUMBER: _ClassVar[int]
    missing_context_item_hashes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, missing_context_item_hashes: _Optional[_Iterable[str]] = ...) -> None: ...

class ModelAddedEvent(_message.Message):
    __slots__ = ("point_in_time_model", "full_uri", "model_id", "uri_scheme", "is_too_large_for_syncing", "is_too_large_for_tokenization", "is_too_large_for_heap_operation")
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    FULL_URI_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    URI_SCHEME_FIELD_NUMBER: _ClassVar[int]
    IS_TOO_LARGE_FOR_SYNCING_FIELD_NUMBER: _ClassVar[int]
    IS_TOO_LARGE_FOR_TOKENIZATION_FIELD_NUMBER: _ClassVar[int]
    IS_TOO_LARGE_FOR_HEAP_OPERATION_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: MaybeDefinedPointInTimeModel
    full_uri: str
    model_id: str
    uri_scheme: str
    is_too_large_for_syncing: bool
    is_too_large_for_tokenization: bool
    is_too_large_for_heap_operation: bool
    def __init__(self, point_in_time_model: _Optional[_Union[MaybeDefinedPointInTimeModel, _Mapping]] = ..., full_uri: _Optional[str] = ..., model_id: _Optional[str] = ..., uri_scheme: _Optional[str] = ..., is_too_large_for_syncing: _Optional[bool] = ..., is_too_large_for_tokenization: _Optional[bool] = ..., is_too_large_for_heap_operation: _Optional[bool] = ...) -> None: ...

class ModelChange(_message.Message):
    __slots__ = ("text", "range", "final_model_hash", "model_version_immediately_after_this_change", "performance_now_timestamp", "is_undoing", "is_redoing", "model_is_attached_to_editor", "model_is_attached_to_the_active_editor", "cursor_selections", "model_version_at_metadata_retrieval_time", "global_index", "performance_now_flush_time", "change_index", "flush_index", "global_index_v2")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    FINAL_MODEL_HASH_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_IMMEDIATELY_AFTER_THIS_CHANGE_FIELD_NUMBER: _ClassVar[int]
    PERFORMANCE_NOW_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    IS_UNDOING_FIELD_NUMBER: _ClassVar[int]
    IS_REDOING_FIELD_NUMBER: _ClassVar[int]
    MODEL_IS_ATTACHED_TO_EDITOR_FIELD_NUMBER: _ClassVar[int]
    MODEL_IS_ATTACHED_TO_THE_ACTIVE_EDITOR_FIELD_NUMBER: _ClassVar[int]
    CURSOR_SELECTIONS_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_AT_METADATA_RETRIEVAL_TIME_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_INDEX_FIELD_NUMBER: _ClassVar[int]
    PERFORMANCE_NOW_FLUSH_TIME_FIELD_NUMBER: _ClassVar[int]
    CHANGE_INDEX_FIELD_NUMBER: _ClassVar[int]
    FLUSH_INDEX_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_INDEX_V2_FIELD_NUMBER: _ClassVar[int]
    text: str
    range: IRange
    final_model_hash: str
    model_version_immediately_after_this_change: int
    performance_now_timestamp: float
    is_undoing: bool
    is_redoing: bool
    model_is_attached_to_editor: bool
    model_is_attached_to_the_active_editor: bool
    cursor_selections: _containers.RepeatedCompositeFieldContainer[CursorSelection]
    model_version_at_metadata_retrieval_time: int
    global_index: int
    performance_now_flush_time: float
    change_index: int
    flush_index: int
    global_index_v2: int
    def __init__(self, text: _Optional[str] = ..., range: _Optional[_Union[IRange, _Mapping]] = ..., final_model_hash: _Optional[str] = ..., model_version_immediately_after_this_change: _Optional[int] = ..., performance_now_timestamp: _Optional[float] = ..., is_undoing: _Optional[bool] = ..., is_redoing: _Optional[bool] = ..., model_is_attached_to_editor: _Optional[bool] = ..., model_is_attached_to_the_active_editor: _Optional[bool] = ..., cursor_selections: _Optional[_Iterable[_Union[CursorSelection, _Mapping]]] = ..., model_version_at_metadata_retrieval_time: _Optional[int] = ..., global_index: _Optional[int] = ..., performance_now_flush_time: _Optional[float] = ..., change_index: _Optional[int] = ..., flush_index: _Optional[int] = ..., global_index_v2: _Optional[int] = ...) -> None: ...

class ModelInfo(_message.Message):
    __slots__ = ("model_name",)
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    model_name: str
    def __init__(self, model_name: _Optional[str] = ...) -> None: ...

class ModelOpenedEvent(_message.Message):
    __slots__ = ("point_in_time_model", "maybe_defined_point_in_time_model")
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    MAYBE_DEFINED_POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: PointInTimeModel
    maybe_defined_point_in_time_model: MaybeDefinedPointInTimeModel
    def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., maybe_defined_point_in_time_model: _Optional[_Union[MaybeDefinedPointInTimeModel, _Mapping]] = ...) -> None: ...

class NtpEvent(_message.Message):
    __slots__ = ("originate_timestamp", "receive_timestamp", "transmit_timestamp", "destination_timestamp")
    ORIGINATE_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    RECEIVE_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    TRANSMIT_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    originate_timestamp: float
    receive_timestamp: float
    transmit_timestamp: float
    destination_timestamp: float
    def __init__(self, originate_timestamp: _Optional[float] = ..., receive_timestamp: _Optional[float] = ..., transmit_timestamp: _Optional[float] = ..., destination_timestamp: _Optional[float] = ...) -> None: ...

class OneIndexedPosition(_message.Message):
    __slots__ = ("line_number_one_indexed", "column_one_indexed")
    LINE_NUMBER_ONE_INDEXED_FIELD_NUMBER: _ClassVar[int]
    COLUMN_ONE_INDEXED_FIELD_NUMBER: _ClassVar[int]
    line_number_one_indexed: int
    column_one_indexed: int
    def __init__(self, line_number_one_indexed: _Optional[int] = ..., column_one_indexed: _Optional[int] = ...) -> None: ...

class PointInTimeModel(_message.Message):
    __slots__ = ("model_uuid", "model_version", "relative_path", "model_id")
    MODEL_UUID_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_PATH_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    model_uuid: str
    model_version: int
    relative_path: str
    model_id: str
    def __init__(self, model_uuid: _Optional[str] = ..., model_version: _Optional[int] = ..., relative_path: _Optional[str] = ..., model_id: _Optional[str] = ...) -> None: ...

class PotentiallyCachedContextItem(_message.Message):
    __slots__ = ("context_item", "context_item_hash")
    CONTEXT_ITEM_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ITEM_HASH_FIELD_NUMBER: _ClassVar[int]
    context_item: ContextItem
    context_item_hash: str
    def __init__(self, context_item: _Optional[_Union[ContextItem, _Mapping]] = ..., context_item_hash: _Optional[str] = ...) -> None: ...

class Range(_message.Message):
    __slots__ = ("start_line", "start_character", "end_line", "end_character")
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    START_CHARACTER_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    END_CHARACTER_FIELD_NUMBER: _ClassVar[int]
    start_line: int
    start_character: int
    end_line: int
    end_character: int
    def __init__(self, start_line: _Optional[int] = ..., start_character: _Optional[int] = ..., end_line: _Optional[int] = ..., end_character: _Optional[int] = ...) -> None: ...

class RecordCppFateRequest(_message.Message):
    __slots__ = ("request_id", "performance_now_time", "fate", "extension")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PERFORMANCE_NOW_TIME_FIELD_NUMBER: _ClassVar[int]
    FATE_FIELD_NUMBER: _ClassVar[int]
    EXTENSION_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    performance_now_time: float
    fate: CppFate
    extension: str
    def __init__(self, request_id: _Optional[str] = ..., performance_now_time: _Optional[float] = ..., fate: _Optional[_Union[CppFate, str]] = ..., extension: _Optional[str] = ...) -> None: ...

class RecordCppFateResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RecoverableCppData(_message.Message):
    __slots__ = ("request_id", "suggestion_text", "suggestion_range", "position")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_TEXT_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_RANGE_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    suggestion_text: str
    suggestion_range: IRange
    position: OneIndexedPosition
    def __init__(self, request_id: _Optional[str] = ..., suggestion_text: _Optional[str] = ..., suggestion_range: _Optional[_Union[IRange, _Mapping]] = ..., position: _Optional[_Union[OneIndexedPosition, _Mapping]] = ...) -> None: ...

class RefreshTabContextRequest(_message.Message):
    __slots__ = ("current_file", "model_name", "linter_errors", "file_diff_histories", "additional_files", "client_time", "time_since_request_start", "time_at_request_send", "is_debug", "workspace_id", "supports_cpt", "supports_crlf_cpt", "repository_info")
    CURRENT_FILE_FIELD_NUMBER: _ClassVar[int]
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    LINTER_ERRORS_FIELD_NUMBER: _ClassVar[int]
    FILE_DIFF_HISTORIES_FIELD_NUMBER: _ClassVar[int]
    ADDITIONAL_FILES_FIELD_NUMBER: _ClassVar[int]
    CLIENT_TIME_FIELD_NUMBER: _ClassVar[int]
    TIME_SINCE_REQUEST_START_FIELD_NUMBER: _ClassVar[int]
    TIME_AT_REQUEST_SEND_FIELD_NUMBER: _ClassVar[int]
    IS_DEBUG_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    SUPPORTS_CPT_FIELD_NUMBER: _ClassVar[int]
    SUPPORTS_CRLF_CPT_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_INFO_FIELD_NUMBER: _ClassVar[int]
    current_file: CurrentFileInfo
    model_name: str
    linter_errors: LinterErrors
    file_diff_histories: _containers.RepeatedCompositeFieldContainer[CppFileDiffHistory]
    additional_files: _containers.RepeatedCompositeFieldContainer[AdditionalFile]
    client_time: float
    time_since_request_start: float
    time_at_request_send: float
    is_debug: bool
    workspace_id: str
    supports_cpt: bool
    supports_crlf_cpt: bool
    repository_info: RepositoryInfo
    def __init__(self, current_file: _Optional[_Union[CurrentFileInfo, _Mapping]] = ..., model_name: _Optional[str] = ..., linter_errors: _Optional[_Union[LinterErrors, _Mapping]] = ..., file_diff_histories: _Optional[_Iterable[_Union[CppFileDiffHistory, _Mapping]]] = ..., additional_files: _Optional[_Iterable[_Union[AdditionalFile, _Mapping]]] = ..., client_time: _Optional[float] = ..., time_since_request_start: _Optional[float] = ..., time_at_request_send: _Optional[float] = ..., is_debug: _Optional[bool] = ..., workspace_id: _Optional[str] = ..., supports_cpt: _Optional[bool] = ..., supports_crlf_cpt: _Optional[bool] = ..., repository_info: _Optional[_Union[RepositoryInfo, _Mapping]] = ...) -> None: ...

class RefreshTabContextResponse(_message.Message):
    __slots__ = ("code_results",)
    CODE_RESULTS_FIELD_NUMBER: _ClassVar[int]
    code_results: _containers.RepeatedCompositeFieldContainer[CodeResult]
    def __init__(self, code_results: _Optional[_Iterable[_Union[CodeResult, _Mapping]]] = ...) -> None: ...

class RejectCursorPredictionEvent(_message.Message):
    __slots__ = ("cursor_prediction", "point_in_time_model")
    CURSOR_PREDICTION_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    cursor_prediction: CursorPrediction
    point_in_time_model: PointInTimeModel
    def __init__(self, cursor_prediction: _Optional[_Union[CursorPrediction, _Mapping]] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ...) -> None: ...

class RepoEvent(_message.Message):
    __slots__ = ("repo_owner", "repo_name", "event_type")
    class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        TYPE_UNSPECIFIED: _ClassVar[RepoEvent.Type]
        TYPE_SYNCED: _ClassVar[RepoEvent.Type]
        TYPE_LOADING: _ClassVar[RepoEvent.Type]
        TYPE_INDEXING_SETUP: _ClassVar[RepoEvent.Type]
        TYPE_INDEXING_INIT_FROM_SIMILAR_CODEBASE: _ClassVar[RepoEvent.Type]
        TYPE_PAUSED: _ClassVar[RepoEvent.Type]
        TYPE_INDEXING: _ClassVar[RepoEvent.Type]
        TYPE_ERROR: _ClassVar[RepoEvent.Type]
        TYPE_NOT_AUTO_INDEXING: _ClassVar[RepoEvent.Type]
        TYPE_NOT_INDEXED: _ClassVar[RepoEvent.Type]
    TYPE_UNSPECIFIED: RepoEvent.Type
    TYPE_SYNCED: RepoEvent.Type
    TYPE_LOADING: RepoEvent.Type
    TYPE_INDEXING_SETUP: RepoEvent.Type
    TYPE_INDEXING_INIT_FROM_SIMILAR_CODEBASE: RepoEvent.Type
    TYPE_PAUSED: RepoEvent.Type
    TYPE_INDEXING: RepoEvent.Type
    TYPE_ERROR: RepoEvent.Type
    TYPE_NOT_AUTO_INDEXING: RepoEvent.Type
    TYPE_NOT_INDEXED: RepoEvent.Type
    REPO_OWNER_FIELD_NUMBER: _ClassVar[int]
    REPO_NAME_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    repo_owner: str
    repo_name: str
    event_type: RepoEvent.Type
    def __init__(self, repo_owner: _Optional[str] = ..., repo_name: _Optional[str] = ..., event_type: _Optional[_Union[RepoEvent.Type, str]] = ...) -> None: ...

class RepositoryInfo(_message.Message):
    __slots__ = ("relative_workspace_path", "remote_urls", "remote_names", "repo_name", "repo_owner", "is_tracked", "is_local", "num_files", "orthogonal_transform_seed", "preferred_embedding_model", "workspace_uri", "preferred_db_provider")
    RELATIVE_WORKSPACE_PATH_FIELD_NUMBER: _ClassVar[int]
    REMOTE_URLS_FIELD_NUMBER: _ClassVar[int]
    REMOTE_NAMES_FIELD_NUMBER: _ClassVar[int]
    REPO_NAME_FIELD_NUMBER: _ClassVar[int]
    REPO_OWNER_FIELD_NUMBER: _ClassVar[int]
    IS_TRACKED_FIELD_NUMBER: _ClassVar[int]
    IS_LOCAL_FIELD_NUMBER: _ClassVar[int]
    NUM_FILES_FIELD_NUMBER: _ClassVar[int]
    ORTHOGONAL_TRANSFORM_SEED_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_URI_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_DB_PROVIDER_FIELD_NUMBER: _ClassVar[int]
    relative_workspace_path: str
    remote_urls: _containers.RepeatedScalarFieldContainer[str]
    remote_names: _containers.RepeatedScalarFieldContainer[str]
    repo_name: str
    repo_owner: str
    is_tracked: bool
    is_local: bool
    num_files: int
    orthogonal_transform_seed: float
    preferred_embedding_model: EmbeddingModel
    workspace_uri: str
    preferred_db_provider: DatabaseProvider
    def __init__(self, relative_workspace_path: _Optional[str] = ..., remote_urls: _Optional[_Iterable[str]] = ..., remote_names: _Optional[_Iterable[str]] = ..., repo_name: _Optional[str] = ..., repo_owner: _Optional[str] = ..., is_tracked: _Optional[bool] = ..., is_local: _Optional[bool] = ..., num_files: _Optional[int] = ..., orthogonal_transform_seed: _Optional[float] = ..., preferred_embedding_model: _Optional[_Union[EmbeddingModel, str]] = ..., workspace_uri: _Optional[str] = ..., preferred_db_provider: _Optional[_Union[DatabaseProvider, str]] = ...) -> None: ...

class RerankCmdKContextRequest(_message.Message):
    __slots__ = ("context_items", "legacy_context", "cmd_k_options")
    CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    LEGACY_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    CMD_K_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    context_items: _containers.RepeatedCompositeFieldContainer[PotentiallyCachedContextItem]
    legacy_context: CmdKLegacyContext
    cmd_k_options: CmdKOptions
    def __init__(self, context_items: _Optional[_Iterable[_Union[PotentiallyCachedContextItem, _Mapping]]] = ..., legacy_context: _Optional[_Union[CmdKLegacyContext, _Mapping]] = ..., cmd_k_options: _Optional[_Union[CmdKOptions, _Mapping]] = ...) -> None: ...

class RerankCmdKContextResponse(_message.Message):
    __slots__ = ("did_call", "context_status_update", "missing_context_items")
    DID_CALL_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_STATUS_UPDATE_FIELD_NUMBER: _ClassVar[int]
    MISSING_CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    did_call: bool
    context_status_update: ContextStatusUpdate
    missing_context_items: MissingContextItems
    def __init__(self, did_call: _Optional[bool] = ..., context_status_update: _Optional[_Union[ContextStatusUpdate, _Mapping]] = ..., missing_context_items: _Optional[_Union[MissingContextItems, _Mapping]] = ...) -> None: ...

class RerankTerminalCmdKContextRequest(_message.Message):
    __slots__ = ("context_items", "cmd_k_options")
    CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    CMD_K_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    context_items: _containers.RepeatedCompositeFieldContainer[PotentiallyCachedContextItem]
    cmd_k_options: TerminalCmdKOptions
    def __init__(self, context_items: _Optional[_Iterable[_Union[PotentiallyCachedContextItem, _Mapping]]] = ..., cmd_k_options: _Optional[_Union[TerminalCmdKOptions, _Mapping]] = ...) -> None: ...

class RerankTerminalCmdKContextResponse(_message.Message):
    __slots__ = ("context_status_update", "missing_context_items")
    CONTEXT_STATUS_UPDATE_FIELD_NUMBER: _ClassVar[int]
    MISSING_CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    context_status_update: ContextStatusUpdate
    missing_context_items: MissingContextItems
    def __init__(self, context_status_update: _Optional[_Union[ContextStatusUpdate, _Mapping]] = ..., missing_context_items: _Optional[_Union[MissingContextItems, _Mapping]] = ...) -> None: ...

class ReviewChangesOpenedEvent(_message.Message):
    __slots__ = ("composer_id", "best_of_n_group_id")
    COMPOSER_ID_FIELD_NUMBER: _ClassVar[int]
    BEST_OF_N_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    composer_id: str
    best_of_n_group_id: str
    def __init__(self, composer_id: _Optional[str] = ..., best_of_n_group_id: _Optional[str] = ...) -> None: ...

class ScrollEvent(_message.Message):
    __slots__ = ("point_in_time_model", "visible_ranges", "editor_id")
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_RANGES_FIELD_NUMBER: _ClassVar[int]
    EDITOR_ID_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: PointInTimeModel
    visible_ranges: _containers.RepeatedCompositeFieldContainer[IRange]
    editor_id: str
    def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., visible_ranges: _Optional[_Iterable[_Union[IRange, _Mapping]]] = ..., editor_id: _Optional[str] = ...) -> None: ...

class SearchEvent(_message.Message):
    __slots__ = ("query", "result_count", "file_count", "is_regex", "is_case_sensitive", "is_whole_word", "files_to_include", "files_to_exclude", "duration_ms", "results")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RESULT_COUNT_FIELD_NUMBER: _ClassVar[int]
    FILE_COUNT_FIELD_NUMBER: _ClassVar[int]
    IS_REGEX_FIELD_NUMBER: _ClassVar[int]
    IS_CASE_SENSITIVE_FIELD_NUMBER: _ClassVar[int]
    IS_WHOLE_WORD_FIELD_NUMBER: _ClassVar[int]
    FILES_TO_INCLUDE_FIELD_NUMBER: _ClassVar[int]
    FILES_TO_EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    query: str
    result_count: int
    file_count: int
    is_regex: bool
    is_case_sensitive: bool
    is_whole_word: bool
    files_to_include: str
    files_to_exclude: str
    duration_ms: int
    results: _containers.RepeatedCompositeFieldContainer[SearchResultFile]
    def __init__(self, query: _Optional[str] = ..., result_count: _Optional[int] = ..., file_count: _Optional[int] = ..., is_regex: _Optional[bool] = ..., is_case_sensitive: _Optional[bool] = ..., is_whole_word: _Optional[bool] = ..., files_to_include: _Optional[str] = ..., files_to_exclude: _Optional[str] = ..., duration_ms: _Optional[int] = ..., results: _Optional[_Iterable[_Union[SearchResultFile, _Mapping]]] = ...) -> None: ...

class SearchMatch(_message.Message):
    __slots__ = ("line_number", "column", "match_text")
    LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    MATCH_TEXT_FIELD_NUMBER: _ClassVar[int]
    line_number: int
    column: int
    match_text: str
    def __init__(self, line_number: _Optional[int] = ..., column: _Optional[int] = ..., match_text: _Optional[str] = ...) -> None: ...

class SearchResultFile(_message.Message):
    __slots__ = ("file_path", "match_count", "matches")
    FILE_PATH_FIELD_NUMBER: _ClassVar[int]
    MATCH_COUNT_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    file_path: str
    match_count: int
    matches: _containers.RepeatedCompositeFieldContainer[SearchMatch]
    def __init__(self, file_path: _Optional[str] = ..., match_count: _Optional[int] = ..., matches: _Optional[_Iterable[_Union[SearchMatch, _Mapping]]] = ...) -> None: ...

class SelectionWithOrientation(_message.Message):
    __slots__ = ("selection_start_line_number", "selection_start_column", "position_line_number", "position_column")
    SELECTION_START_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SELECTION_START_COLUMN_FIELD_NUMBER: _ClassVar[int]
    POSITION_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    POSITION_COLUMN_FIELD_NUMBER: _ClassVar[int]
    selection_start_line_number: int
    selection_start_column: int
    position_line_number: int
    position_column: int
    def __init__(self, selection_start_line_number: _Optional[int] = ..., selection_start_column: _Optional[int] = ..., position_line_number: _Optional[int] = ..., position_column: _Optional[int] = ...) -> None: ...

class SimpleRange(_message.Message):
    __slots__ = ("start_line_number", "start_column", "end_line_number_inclusive", "end_column")
    START_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    START_COLUMN_FIELD_NUMBER: _ClassVar[int]
    END_LINE_NUMBER_INCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    END_COLUMN_FIELD_NUMBER: _ClassVar[int]
    start_line_number: int
    start_column: int
    end_line_number_inclusive: int
    end_column: int
    def __init__(self, start_line_number: _Optional[int] = ..., start_column: _Optional[int] = ..., end_line_number_inclusive: _Optional[int] = ..., end_column: _Optional[int] = ...) -> None: ...

class SimplestRange(_message.Message):
    __slots__ = ("start_line", "end_line_inclusive")
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_INCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    start_line: int
    end_line_inclusive: int
    def __init__(self, start_line: _Optional[int] = ..., end_line_inclusive: _Optional[int] = ...) -> None: ...

class SingleUpdateRequest(_message.Message):
    __slots__ = ("start_position", "end_position", "change_length", "replaced_string", "range")
    START_POSITION_FIELD_NUMBER: _ClassVar[int]
    END_POSITION_FIELD_NUMBER: _ClassVar[int]
    CHANGE_LENGTH_FIELD_NUMBER: _ClassVar[int]
    REPLACED_STRING_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    start_position: int
    end_position: int
    change_length: int
    replaced_string: str
    range: SimpleRange
    def __init__(self, start_position: _Optional[int] = ..., end_position: _Optional[int] = ..., change_length: _Optional[int] = ..., replaced_string: _Optional[str] = ..., range: _Optional[_Union[SimpleRange, _Mapping]] = ...) -> None: ...

class StatusUpdate(_message.Message):
    __slots__ = ("message", "metadata")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    message: str
    metadata: str
    def __init__(self, message: _Optional[str] = ..., metadata: _Optional[str] = ...) -> None: ...

class StreamCmdKRequest(_message.Message):
    __slots__ = ("context_items", "cmd_k_options", "cmd_k_debug_info", "session_id", "legacy_context", "previous_edit", "previous_edits", "upcoming_edits", "use_big_cmdk_for_multi_file_edit", "images", "links", "diff_history", "diff_to_base_branch", "timing_info", "rules")
    class BranchDiff(_message.Message):
        __slots__ = ("file_diffs", "commits")
        class FileDiff(_message.Message):
            __slots__ = ("file_name", "diff", "too_big")
            FILE_NAME_FIELD_NUMBER: _ClassVar[int]
            DIFF_FIELD_NUMBER: _ClassVar[int]
            TOO_BIG_FIELD_NUMBER: _ClassVar[int]
            file_name: str
            diff: str
            too_big: bool
            def __init__(self, file_name: _Optional[str] = ..., diff: _Optional[str] = ..., too_big: _Optional[bool] = ...) -> None: ...
        FILE_DIFFS_FIELD_NUMBER: _ClassVar[int]
        COMMITS_FIELD_NUMBER: _ClassVar[int]
        file_diffs: _containers.RepeatedCompositeFieldContainer[StreamCmdKRequest.BranchDiff.FileDiff]
        commits: _containers.RepeatedCompositeFieldContainer[Commit]
        def __init__(self, file_diffs: _Optional[_Iterable[_Union[StreamCmdKRequest.BranchDiff.FileDiff, _Mapping]]] = ..., commits: _Optional[_Iterable[_Union[Commit, _Mapping]]] = ...) -> None: ...
    CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    CMD_K_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    CMD_K_DEBUG_INFO_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    LEGACY_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_EDIT_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_EDITS_FIELD_NUMBER: _ClassVar[int]
    UPCOMING_EDITS_FIELD_NUMBER: _ClassVar[int]
    USE_BIG_CMDK_FOR_MULTI_FILE_EDIT_FIELD_NUMBER: _ClassVar[int]
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    LINKS_FIELD_NUMBER: _ClassVar[int]
    DIFF_HISTORY_FIELD_NUMBER: _ClassVar[int]
    DIFF_TO_BASE_BRANCH_FIELD_NUMBER: _ClassVar[int]
    TIMING_INFO_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    context_items: _containers.RepeatedCompositeFieldContainer[PotentiallyCachedContextItem]
    cmd_k_options: CmdKOptions
    cmd_k_debug_info: CmdKDebugInfo
    session_id: str
    legacy_context: CmdKLegacyContext
    previous_edit: CmdKPreviousEdit
    previous_edits: _containers.RepeatedCompositeFieldContainer[CmdKPreviousEdit]
    upcoming_edits: _containers.RepeatedCompositeFieldContainer[CmdKUpcomingEdit]
    use_big_cmdk_for_multi_file_edit: bool
    images: _containers.RepeatedCompositeFieldContainer[ImageProto]
    links: _containers.RepeatedCompositeFieldContainer[CmdKExternalLink]
    diff_history: _containers.RepeatedCompositeFieldContainer[CppFileDiffHistory]
    diff_to_base_branch: StreamCmdKRequest.BranchDiff
    timing_info: TimingInfo
    rules: _containers.RepeatedCompositeFieldContainer[CursorRule]
    def __init__(self, context_items: _Optional[_Iterable[_Union[PotentiallyCachedContextItem, _Mapping]]] = ..., cmd_k_options: _Optional[_Union[CmdKOptions, _Mapping]] = ..., cmd_k_debug_info: _Optional[_Union[CmdKDebugInfo, _Mapping]] = ..., session_id: _Optional[str] = ..., legacy_context: _Optional[_Union[CmdKLegacyContext, _Mapping]] = ..., previous_edit: _Optional[_Union[CmdKPreviousEdit, _Mapping]] = ..., previous_edits: _Optional[_Iterable[_Union[CmdKPreviousEdit, _Mapping]]] = ..., upcoming_edits: _Optional[_Iterable[_Union[CmdKUpcomingEdit, _Mapping]]] = ..., use_big_cmdk_for_multi_file_edit: _Optional[bool] = ..., images: _Optional[_Iterable[_Union[ImageProto, _Mapping]]] = ..., links: _Optional[_Iterable[_Union[CmdKExternalLink, _Mapping]]] = ..., diff_history: _Optional[_Iterable[_Union[CppFileDiffHistory, _Mapping]]] = ..., diff_to_base_branch: _Optional[_Union[StreamCmdKRequest.BranchDiff, _Mapping]] = ..., timing_info: _Optional[_Union[TimingInfo, _Mapping]] = ..., rules: _Optional[_Iterable[_Union[CursorRule, _Mapping]]] = ...) -> None: ...

class StreamCmdKResponse(_message.Message):
    __slots__ = ("edit_start", "edit_stream", "edit_end", "chat", "status_update")
    class Chat(_message.Message):
        __slots__ = ("text",)
        TEXT_FIELD_NUMBER: _ClassVar[int]
        text: str
        def __init__(self, text: _Optional[str] = ...) -> None: ...
    class EditEnd(_message.Message):
        __slots__ = ("end_line_number_exclusive", "edit_id", "file_path")
        END_LINE_NUMBER_EXCLUSIVE_FIELD_NUMBER: _ClassVar[int]
        EDIT_ID_FIELD_NUMBER: _ClassVar[int]
        FILE_PATH_FIELD_NUMBER: _ClassVar[int]
        end_line_number_exclusive: int
        edit_id: int
        file_path: str
        def __init__(self, end_line_number_exclusive: _Optional[int] = ..., edit_id: _Optional[int] = ..., file_path: _Optional[str] = ...) -> None: ...
    class EditStart(_message.Message):
        __slots__ = ("start_line_number", "edit_id", "max_end_line_number_exclusive", "file_path")
        START_LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
        EDIT_ID_FIELD_NUMBER: _ClassVar[int]
        MAX_END_LINE_NUMBER_EXCLUSIVE_FIELD_NUMBER: _ClassVar[int]
        FILE_PATH_FIELD_NUMBER: _ClassVar[int]
        start_line_number: int
        edit_id: int
        max_end_line_number_exclusive: int
        file_path: str
        def __init__(self, start_line_number: _Optional[int] = ..., edit_id: _Optional[int] = ..., max_end_line_number_exclusive: _Optional[int] = ..., file_path: _Optional[str] = ...) -> None: ...
    class EditStream(_message.Message):
        __slots__ = ("text", "edit_id", "file_path")
        TEXT_FIELD_NUMBER: _ClassVar[int]
        EDIT_ID_FIELD_NUMBER: _ClassVar[int]
        FILE_PATH_FIELD_NUMBER: _ClassVar[int]
        text: str
        edit_id: int
        file_path: str
        def __init__(self, text: _Optional[str] = ..., edit_id: _Optional[int] = ..., file_path: _Optional[str] = ...) -> None: ...
    class StatusUpdate(_message.Message):
        __slots__ = ("messages",)
        MESSAGES_FIELD_NUMBER: _ClassVar[int]
        messages: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, messages: _Optional[_Iterable[str]] = ...) -> None: ...
    EDIT_START_FIELD_NUMBER: _ClassVar[int]
    EDIT_STREAM_FIELD_NUMBER: _ClassVar[int]
    EDIT_END_FIELD_NUMBER: _ClassVar[int]
    CHAT_FIELD_NUMBER: _ClassVar[int]
    STATUS_UPDATE_FIELD_NUMBER: _ClassVar[int]
    edit_start: StreamCmdKResponse.EditStart
    edit_stream: StreamCmdKResponse.EditStream
    edit_end: StreamCmdKResponse.EditEnd
    chat: StreamCmdKResponse.Chat
    status_update: StreamCmdKResponse.StatusUpdate
    def __init__(self, edit_start: _Optional[_Union[StreamCmdKResponse.EditStart, _Mapping]] = ..., edit_stream: _Optional[_Union[StreamCmdKResponse.EditStream, _Mapping]] = ..., edit_end: _Optional[_Union[StreamCmdKResponse.EditEnd, _Mapping]] = ..., chat: _Optional[_Union[StreamCmdKResponse.Chat, _Mapping]] = ..., status_update: _Optional[_Union[StreamCmdKResponse.StatusUpdate, _Mapping]] = ...) -> None: ...

class StreamCmdKResponseContextWrapped(_message.Message):
    __slots__ = ("real_response", "context_status_update", "missing_context_items")
    REAL_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_STATUS_UPDATE_FIELD_NUMBER: _ClassVar[int]
    MISSING_CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    real_response: StreamCmdKResponse
    context_status_update: ContextStatusUpdate
    missing_context_items: MissingContextItems
    def __init__(self, real_response: _Optional[_Union[StreamCmdKResponse, _Mapping]] = ..., context_status_update: _Optional[_Union[ContextStatusUpdate, _Mapping]] = ..., missing_context_items: _Optional[_Union[MissingContextItems, _Mapping]] = ...) -> None: ...

class StreamCppRequest(_message.Message):
    __slots__ = ("current_file", "diff_history", "model_name", "linter_errors", "context_items", "diff_history_keys", "give_debug_output", "file_diff_histories", "merged_diff_histories", "block_diff_patches", "is_nightly", "is_debug", "immediately_ack", "enable_more_context", "parameter_hints", "lsp_contexts", "cpp_intent_info", "workspace_id", "additional_files", "control_token", "client_time", "filesync_updates", "time_since_request_start", "time_at_request_send", "client_timezone_offset", "lsp_suggested_items", "supports_cpt", "supports_crlf_cpt", "code_results")
    class ControlToken(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        CONTROL_TOKEN_UNSPECIFIED: _ClassVar[StreamCppRequest.ControlToken]
        CONTROL_TOKEN_QUIET: _ClassVar[StreamCppRequest.ControlToken]
        CONTROL_TOKEN_LOUD: _ClassVar[StreamCppRequest.ControlToken]
        CONTROL_TOKEN_OP: _ClassVar[StreamCppRequest.ControlToken]
    CONTROL_TOKEN_UNSPECIFIED: StreamCppRequest.ControlToken
    CONTROL_TOKEN_QUIET: StreamCppRequest.ControlToken
    CONTROL_TOKEN_LOUD: StreamCppRequest.ControlToken
    CONTROL_TOKEN_OP: StreamCppRequest.ControlToken
    CURRENT_FILE_FIELD_NUMBER: _ClassVar[int]
    DIFF_HISTORY_FIELD_NUMBER: _ClassVar[int]
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    LINTER_ERRORS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    DIFF_HISTORY_KEYS_FIELD_NUMBER: _ClassVar[int]
    GIVE_DEBUG_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    FILE_DIFF_HISTORIES_FIELD_NUMBER: _ClassVar[int]
    MERGED_DIFF_HISTORIES_FIELD_NUMBER: _ClassVar[int]
    BLOCK_DIFF_PATCHES_FIELD_NUMBER: _ClassVar[int]
    IS_NIGHTLY_FIELD_NUMBER: _ClassVar[int]
    IS_DEBUG_FIELD_NUMBER: _ClassVar[int]
    IMMEDIATELY_ACK_FIELD_NUMBER: _ClassVar[int]
    ENABLE_MORE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    PARAMETER_HINTS_FIELD_NUMBER: _ClassVar[int]
    LSP_CONTEXTS_FIELD_NUMBER: _ClassVar[int]
    CPP_INTENT_INFO_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ADDITIONAL_FILES_FIELD_NUMBER: _ClassVar[int]
    CONTROL_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CLIENT_TIME_FIELD_NUMBER: _ClassVar[int]
    FILESYNC_UPDATES_FIELD_NUMBER: _ClassVar[int]
    TIME_SINCE_REQUEST_START_FIELD_NUMBER: _ClassVar[int]
    TIME_AT_REQUEST_SEND_FIELD_NUMBER: _ClassVar[int]
    CLIENT_TIMEZONE_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LSP_SUGGESTED_ITEMS_FIELD_NUMBER: _ClassVar[int]
    SUPPORTS_CPT_FIELD_NUMBER: _ClassVar[int]
    SUPPORTS_CRLF_CPT_FIELD_NUMBER: _ClassVar[int]
    CODE_RESULTS_FIELD_NUMBER: _ClassVar[int]
    current_file: CurrentFileInfo
    diff_history: _containers.RepeatedScalarFieldContainer[str]
    model_name: str
    linter_errors: LinterErrors
    context_items: _containers.RepeatedCompositeFieldContainer[CppContextItem]
    diff_history_keys: _containers.RepeatedScalarFieldContainer[str]
    give_debug_output: bool
    file_diff_histories: _containers.RepeatedCompositeFieldContainer[CppFileDiffHistory]
    merged_diff_histories: _containers.RepeatedCompositeFieldContainer[CppFileDiffHistory]
    block_diff_patches: _containers.RepeatedCompositeFieldContainer[BlockDiffPatch]
    is_nightly: bool
    is_debug: bool
    immediately_ack: bool
    enable_more_context: bool
    parameter_hints: _containers.RepeatedCompositeFieldContainer[CppParameterHint]
    lsp_contexts: _containers.RepeatedCompositeFieldContainer[LspSubgraphFullContext]
    cpp_intent_info: CppIntentInfo
    workspace_id: str
    additional_files: _containers.RepeatedCompositeFieldContainer[AdditionalFile]
    control_token: StreamCppRequest.ControlToken
    client_time: float
    filesync_updates: _containers.RepeatedCompositeFieldContainer[FilesyncUpdateWithModelVersion]
    time_since_request_start: float
    time_at_request_send: float
    client_timezone_offset: float
    lsp_suggested_items: LspSuggestedItems
    supports_cpt: bool
    supports_crlf_cpt: bool
    code_results: _containers.RepeatedCompositeFieldContainer[CodeResult]
    def __init__(self, current_file: _Optional[_Union[CurrentFileInfo, _Mapping]] = ..., diff_history: _Optional[_Iterable[str]] = ..., model_name: _Optional[str] = ..., linter_errors: _Optional[_Union[LinterErrors, _Mapping]] = ..., context_items: _Optional[_Iterable[_Union[CppContextItem, _Mapping]]] = ..., diff_history_keys: _Optional[_Iterable[str]] = ..., give_debug_output: _Optional[bool] = ..., file_diff_histories: _Optional[_Iterable[_Union[CppFileDiffHistory, _Mapping]]] = ..., merged_diff_histories: _Optional[_Iterable[_Union[CppFileDiffHistory, _Mapping]]] = ..., block_diff_patches: _Optional[_Iterable[_Union[BlockDiffPatch, _Mapping]]] = ..., is_nightly: _Optional[bool] = ..., is_debug: _Optional[bool] = ..., immediately_ack: _Optional[bool] = ..., enable_more_context: _Optional[bool] = ..., parameter_hints: _Optional[_Iterable[_Union[CppParameterHint, _Mapping]]] = ..., lsp_contexts: _Optional[_Iterable[_Union[LspSubgraphFullContext, _Mapping]]] = ..., cpp_intent_info: _Optional[_Union[CppIntentInfo, _Mapping]] = ..., workspace_id: _Optional[str] = ..., additional_files: _Optional[_Iterable[_Union[AdditionalFile, _Mapping]]] = ..., control_token: _Optional[_Union[StreamCppRequest.ControlToken, str]] = ..., client_time: _Optional[float] = ..., filesync_updates: _Optional[_Iterable[_Union[FilesyncUpdateWithModelVersion, _Mapping]]] = ..., time_since_request_start: _Optional[float] = ..., time_at_request_send: _Optional[float] = ..., client_timezone_offset: _Optional[float] = ..., lsp_suggested_items: _Optional[_Union[LspSuggestedItems, _Mapping]] = ..., supports_cpt: _Optional[bool] = ..., supports_crlf_cpt: _Optional[bool] = ..., code_results: _Optional[_Iterable[_Union[CodeResult, _Mapping]]] = ...) -> None: ...

class StreamCppResponse(_message.Message):
    __slots__ = ("text", "suggestion_start_line", "suggestion_confidence", "done_stream", "debug_model_output", "debug_model_input", "debug_stream_time", "debug_total_time", "debug_ttft_time", "debug_server_timing", "range_to_replace", "cursor_prediction_target", "done_edit", "model_info", "begin_edit", "should_remove_leading_eol", "binding_id")
    class CursorPredictionTarget(_message.Message):
        __slots__ = ("relative_path", "line_number_one_indexed", "expected_content", "should_retrigger_cpp")
        RELATIVE_PATH_FIELD_NUMBER: _ClassVar[int]
        LINE_NUMBER_ONE_INDEXED_FIELD_NUMBER: _ClassVar[int]
        EXPECTED_CONTENT_FIELD_NUMBER: _ClassVar[int]
        SHOULD_RETRIGGER_CPP_FIELD_NUMBER: _ClassVar[int]
        relative_path: str
        line_number_one_indexed: int
        expected_content: str
        should_retrigger_cpp: bool
        def __init__(self, relative_path: _Optional[str] = ..., line_number_one_indexed: _Optional[int] = ..., expected_content: _Optional[str] = ..., should_retrigger_cpp: _Optional[bool] = ...) -> None: ...
    class ModelInfo(_message.Message):
        __slots__ = ("is_fused_cursor_prediction_model", "is_multidiff_model")
        IS_FUSED_CURSOR_PREDICTION_MODEL_FIELD_NUMBER: _ClassVar[int]
        IS_MULTIDIFF_MODEL_FIELD_NUMBER: _ClassVar[int]
        is_fused_cursor_prediction_model: bool
        is_multidiff_model: bool
        def __init__(self, is_fused_cursor_prediction_model: _Optional[bool] = ..., is_multidiff_model: _Optional[bool] = ...) -> None: ...
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_START_LINE_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    DONE_STREAM_FIELD_NUMBER: _ClassVar[int]
    DEBUG_MODEL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    DEBUG_MODEL_INPUT_FIELD_NUMBER: _ClassVar[int]
    DEBUG_STREAM_TIME_FIELD_NUMBER: _ClassVar[int]
    DEBUG_TOTAL_TIME_FIELD_NUMBER: _ClassVar[int]
    DEBUG_TTFT_TIME_FIELD_NUMBER: _ClassVar[int]
    DEBUG_SERVER_TIMING_FIELD_NUMBER: _ClassVar[int]
    RANGE_TO_REPLACE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_PREDICTION_TARGET_FIELD_NUMBER: _ClassVar[int]
    DONE_EDIT_FIELD_NUMBER: _ClassVar[int]
    MODEL_INFO_FIELD_NUMBER: _ClassVar[int]
    BEGIN_EDIT_FIELD_NUMBER: _ClassVar[int]
    SHOULD_REMOVE_LEADING_EOL_FIELD_NUMBER: _ClassVar[int]
    BINDING_ID_FIELD_NUMBER: _ClassVar[int]
    text: str
    suggestion_start_line: int
    suggestion_confidence: int
    done_stream: bool
    debug_model_output: str
    debug_model_input: str
    debug_stream_time: str
    debug_total_time: str
    debug_ttft_time: str
    debug_server_timing: str
    range_to_replace: LineRange
    cursor_prediction_target: StreamCppResponse.CursorPredictionTarget
    done_edit: bool
    model_info: StreamCppResponse.ModelInfo
    begin_edit: bool
    should_remove_leading_eol: bool
    binding_id: str
    def __init__(self, text: _Optional[str] = ..., suggestion_start_line: _Optional[int] = ..., suggestion_confidence: _Optional[int] = ..., done_stream: _Optional[bool] = ..., debug_model_output: _Optional[str] = ..., debug_model_input: _Optional[str] = ..., debug_stream_time: _Optional[str] = ..., debug_total_time: _Optional[str] = ..., debug_ttft_time: _Optional[str] = ..., debug_server_timing: _Optional[str] = ..., range_to_replace: _Optional[_Union[LineRange, _Mapping]] = ..., cursor_prediction_target: _Optional[_Union[StreamCppResponse.CursorPredictionTarget, _Mapping]] = ..., done_edit: _Optional[bool] = ..., model_info: _Optional[_Union[StreamCppResponse.ModelInfo, _Mapping]] = ..., begin_edit: _Optional[bool] = ..., should_remove_leading_eol: _Optional[bool] = ..., binding_id: _Optional[str] = ...) -> None: ...

class StreamNextCursorPredictionRequest(_message.Message):
    __slots__ = ("current_file", "diff_history", "model_name", "linter_errors", "context_items", "diff_history_keys", "give_debug_output", "file_diff_histories", "merged_diff_histories", "block_diff_patches", "is_nightly", "is_debug", "immediately_ack", "enable_more_context", "parameter_hints", "lsp_contexts", "cpp_intent_info", "workspace_id", "file_sync_updates", "file_visible_ranges")
    class FileVisibleRange(_message.Message):
        __slots__ = ("filename", "visible_ranges")
        FILENAME_FIELD_NUMBER: _ClassVar[int]
        VISIBLE_RANGES_FIELD_NUMBER: _ClassVar[int]
        filename: str
        visible_ranges: _containers.RepeatedCompositeFieldContainer[StreamNextCursorPredictionRequest.VisibleRange]
        def __init__(self, filename: _Optional[str] = ..., visible_ranges: _Optional[_Iterable[_Union[StreamNextCursorPredictionRequest.VisibleRange, _Mapping]]] = ...) -> None: ...
    class VisibleRange(_message.Message):
        __slots__ = ("start_line_number_inclusive", "end_line_number_exclusive")
        START_LINE_NUMBER_INCLUSIVE_FIELD_NUMBER: _ClassVar[int]
        END_LINE_NUMBER_EXCLUSIVE_FIELD_NUMBER: _ClassVar[int]
        start_line_number_inclusive: int
        end_line_number_exclusive: int
        def __init__(self, start_line_number_inclusive: _Optional[int] = ..., end_line_number_exclusive: _Optional[int] = ...) -> None: ...
    CURRENT_FILE_FIELD_NUMBER: _ClassVar[int]
    DIFF_HISTORY_FIELD_NUMBER: _ClassVar[int]
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    LINTER_ERRORS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    DIFF_HISTORY_KEYS_FIELD_NUMBER: _ClassVar[int]
    GIVE_DEBUG_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    FILE_DIFF_HISTORIES_FIELD_NUMBER: _ClassVar[int]
    MERGED_DIFF_HISTORIES_FIELD_NUMBER: _ClassVar[int]
    BLOCK_DIFF_PATCHES_FIELD_NUMBER: _ClassVar[int]
    IS_NIGHTLY_FIELD_NUMBER: _ClassVar[int]
    IS_DEBUG_FIELD_NUMBER: _ClassVar[int]
    IMMEDIATELY_ACK_FIELD_NUMBER: _ClassVar[int]
    ENABLE_MORE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    PARAMETER_HINTS_FIELD_NUMBER: _ClassVar[int]
    LSP_CONTEXTS_FIELD_NUMBER: _ClassVar[int]
    CPP_INTENT_INFO_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    FILE_SYNC_UPDATES_FIELD_NUMBER: _ClassVar[int]
    FILE_VISIBLE_RANGES_FIELD_NUMBER: _ClassVar[int]
    current_file: CurrentFileInfo
    diff_history: _containers.RepeatedScalarFieldContainer[str]
    model_name: str
    linter_errors: LinterErrors
    context_items: _containers.RepeatedCompositeFieldContainer[CppContextItem]
    diff_history_keys: _containers.RepeatedScalarFieldContainer[str]
    give_debug_output: bool
    file_diff_histories: _containers.RepeatedCompositeFieldContainer[CppFileDiffHistory]
    merged_diff_histories: _containers.RepeatedCompositeFieldContainer[CppFileDiffHistory]
    block_diff_patches: _containers.RepeatedCompositeFieldContainer[BlockDiffPatch]
    is_nightly: bool
    is_debug: bool
    immediately_ack: bool
    enable_more_context: bool
    parameter_hints: _containers.RepeatedCompositeFieldContainer[CppParameterHint]
    lsp_contexts: _containers.RepeatedCompositeFieldContainer[LspSubgraphFullContext]
    cpp_intent_info: CppIntentInfo
    workspace_id: str
    file_sync_updates: _containers.RepeatedCompositeFieldContainer[FilesyncUpdateWithModelVersion]
    file_visible_ranges: _containers.RepeatedCompositeFieldContainer[StreamNextCursorPredictionRequest.FileVisibleRange]
    def __init__(self, current_file: _Optional[_Union[CurrentFileInfo, _Mapping]] = ..., diff_history: _Optional[_Iterable[str]] = ..., model_name: _Optional[str] = ..., linter_errors: _Optional[_Union[LinterErrors, _Mapping]] = ..., context_items: _Optional[_Iterable[_Union[CppContextItem, _Mapping]]] = ..., diff_history_keys: _Optional[_Iterable[str]] = ..., give_debug_output: _Optional[bool] = ..., file_diff_histories: _Optional[_Iterable[_Union[CppFileDiffHistory, _Mapping]]] = ..., merged_diff_histories: _Optional[_Iterable[_Union[CppFileDiffHistory, _Mapping]]] = ..., block_diff_patches: _Optional[_Iterable[_Union[BlockDiffPatch, _Mapping]]] = ..., is_nightly: _Optional[bool] = ..., is_debug: _Optional[bool] = ..., immediately_ack: _Optional[bool] = ..., enable_more_context: _Optional[bool] = ..., parameter_hints: _Optional[_Iterable[_Union[CppParameterHint, _Mapping]]] = ..., lsp_contexts: _Optional[_Iterable[_Union[LspSubgraphFullContext, _Mapping]]] = ..., cpp_intent_info: _Optional[_Union[CppIntentInfo, _Mapping]] = ..., workspace_id: _Optional[str] = ..., file_sync_updates: _Optional[_Iterable[_Union[FilesyncUpdateWithModelVersion, _Mapping]]] = ..., file_visible_ranges: _Optional[_Iterable[_Union[StreamNextCursorPredictionRequest.FileVisibleRange, _Mapping]]] = ...) -> None: ...

class StreamNextCursorPredictionResponse(_message.Message):
    __slots__ = ("text", "line_number", "is_not_in_range", "file_name")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    IS_NOT_IN_RANGE_FIELD_NUMBER: _ClassVar[int]
    FILE_NAME_FIELD_NUMBER: _ClassVar[int]
    text: str
    line_number: int
    is_not_in_range: bool
    file_name: str
    def __init__(self, text: _Optional[str] = ..., line_number: _Optional[int] = ..., is_not_in_range: _Optional[bool] = ..., file_name: _Optional[str] = ...) -> None: ...

class StreamTerminalAutocompleteRequest(_message.Message):
    __slots__ = ("current_command", "command_history", "model_name", "file_diff_histories", "git_diff", "commit_history", "past_results")
    CURRENT_COMMAND_FIELD_NUMBER: _ClassVar[int]
    COMMAND_HISTORY_FIELD_NUMBER: _ClassVar[int]
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    FILE_DIFF_HISTORIES_FIELD_NUMBER: _ClassVar[int]
    GIT_DIFF_FIELD_NUMBER: _ClassVar[int]
    COMMIT_HISTORY_FIELD_NUMBER: _ClassVar[int]
    PAST_RESULTS_FIELD_NUMBER: _ClassVar[int]
    current_command: str
    command_history: _containers.RepeatedScalarFieldContainer[str]
    model_name: str
    file_diff_histories: _containers.RepeatedCompositeFieldContainer[CppFileDiffHistory]
    git_diff: str
    commit_history: _containers.RepeatedScalarFieldContainer[str]
    past_results: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, current_command: _Optional[str] = ..., command_history: _Optional[_Iterable[str]] = ..., model_name: _Optional[str] = ..., file_diff_histories: _Optional[_Iterable[_Union[CppFileDiffHistory, _Mapping]]] = ..., git_diff: _Optional[str] = ..., commit_history: _Optional[_Iterable[str]] = ..., past_results: _Optional[_Iterable[str]] = ...) -> None: ...

class StreamTerminalAutocompleteResponse(_message.Message):
    __slots__ = ("text", "done_stream")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    DONE_STREAM_FIELD_NUMBER: _ClassVar[int]
    text: str
    done_stream: bool
    def __init__(self, text: _Optional[str] = ..., done_stream: _Optional[bool] = ...) -> None: ...

class StreamTerminalCmdKRequest(_message.Message):
    __slots__ = ("context_items", "cmd_k_options", "session_id", "legacy_context")
    CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    CMD_K_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    LEGACY_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    context_items: _containers.RepeatedCompositeFieldContainer[PotentiallyCachedContextItem]
    cmd_k_options: TerminalCmdKOptions
    session_id: str
    legacy_context: CmdKLegacyContext
    def __init__(self, context_items: _Optional[_Iterable[_Union[PotentiallyCachedContextItem, _Mapping]]] = ..., cmd_k_options: _Optional[_Union[TerminalCmdKOptions, _Mapping]] = ..., session_id: _Optional[str] = ..., legacy_context: _Optional[_Union[CmdKLegacyContext, _Mapping]] = ...) -> None: ...

class StreamTerminalCmdKResponse(_message.Message):
    __slots__ = ("terminal_command", "chat", "status_update")
    class Chat(_message.Message):
        __slots__ = ("text",)
        TEXT_FIELD_NUMBER: _ClassVar[int]
        text: str
        def __init__(self, text: _Optional[str] = ...) -> None: ...
    class StatusUpdate(_message.Message):
        __slots__ = ("messages",)
        MESSAGES_FIELD_NUMBER: _ClassVar[int]
        messages: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, messages: _Optional[_Iterable[str]] = ...) -> None: ...
    class TerminalCommand(_message.Message):
        __slots__ = ("partial_command",)
        PARTIAL_COMMAND_FIELD_NUMBER: _ClassVar[int]
        partial_command: str
        def __init__(self, partial_command: _Optional[str] = ...) -> None: ...
    TERMINAL_COMMAND_FIELD_NUMBER: _ClassVar[int]
    CHAT_FIELD_NUMBER: _ClassVar[int]
    STATUS_UPDATE_FIELD_NUMBER: _ClassVar[int]
    terminal_command: StreamTerminalCmdKResponse.TerminalCommand
    chat: StreamTerminalCmdKResponse.Chat
    status_update: StreamTerminalCmdKResponse.StatusUpdate
    def __init__(self, terminal_command: _Optional[_Union[StreamTerminalCmdKResponse.TerminalCommand, _Mapping]] = ..., chat: _Optional[_Union[StreamTerminalCmdKResponse.Chat, _Mapping]] = ..., status_update: _Optional[_Union[StreamTerminalCmdKResponse.StatusUpdate, _Mapping]] = ...) -> None: ...

class StreamTerminalCmdKResponseContextWrapped(_message.Message):
    __slots__ = ("real_response", "context_status_update", "missing_context_items")
    REAL_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_STATUS_UPDATE_FIELD_NUMBER: _ClassVar[int]
    MISSING_CONTEXT_ITEMS_FIELD_NUMBER: _ClassVar[int]
    real_response: StreamTerminalCmdKResponse
    context_status_update: ContextStatusUpdate
    missing_context_items: MissingContextItems
    def __init__(self, real_response: _Optional[_Union[StreamTerminalCmdKResponse, _Mapping]] = ..., context_status_update: _Optional[_Union[ContextStatusUpdate, _Mapping]] = ..., missing_context_items: _Optional[_Union[MissingContextItems, _Mapping]] = ...) -> None: ...

class SuggestCursorPredictionEvent(_message.Message):
    __slots__ = ("cursor_prediction", "point_in_time_model")
    CURSOR_PREDICTION_FIELD_NUMBER: _ClassVar[int]
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    cursor_prediction: CursorPrediction
    point_in_time_model: PointInTimeModel
    def __init__(self, cursor_prediction: _Optional[_Union[CursorPrediction, _Mapping]] = ..., point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ...) -> None: ...

class TabCloseEvent(_message.Message):
    __slots__ = ("point_in_time_model",)
    POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
    point_in_time_model: MaybeDefinedPointInTimeModel
    def __init__(self, point_in_time_model: _Optional[_Union[MaybeDefinedPointInTimeModel, _Mapping]] = ...) -> None: ...

class TerminalCmdKOptions(_message.Message):
    __slots__ = ("model_details", "chat_mode", "ada_cmd_k_context", "use_web")
    MODEL_DETAILS_FIELD_NUMBER: _ClassVar[int]
    CHAT_MODE_FIELD_NUMBER: _ClassVar[int]
    ADA_CMD_K_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    USE_WEB_FIELD_NUMBER: _ClassVar[int]
    model_details: _aiserver_v1_pb2.ModelDetails
    chat_mode: bool
    ada_cmd_k_context: bool
    use_web: bool
    def __init__(self, model_details: _Optional[_Union[_aiserver_v1_pb2.ModelDetails, _Mapping]] = ..., chat_mode: _Optional[bool] = ..., ada_cmd_k_context: _Optional[bool] = ..., use_web: _Optional[bool] = ...) -> None: ...

class TerminalEvent(_message.Message):
    __slots__ = ("uri", "create", "exit", "command_start", "command_finish")
    class CommandFinish(_message.Message):
        __slots__ = ("point_in_time_model", "exit_code")
        POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
        EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
        point_in_time_model: PointInTimeModel
        exit_code: int
        def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., exit_code: _Optional[int] = ...) -> None: ...
    class CommandStart(_message.Message):
        __slots__ = ("point_in_time_model", "cwd")
        POINT_IN_TIME_MODEL_FIELD_NUMBER: _ClassVar[int]
        CWD_FIELD_NUMBER: _ClassVar[int]
        point_in_time_model: PointInTimeModel
        cwd: str
        def __init__(self, point_in_time_model: _Optional[_Union[PointInTimeModel, _Mapping]] = ..., cwd: _Optional[str] = ...) -> None: ...
    class Create(_message.Message):
        __slots__ = ("is_remote",)
        IS_REMOTE_FIELD_NUMBER: _ClassVar[int]
        is_remote: bool
        def __init__(self, is_remote: _Optional[bool] = ...) -> None: ...
    class Exit(_message.Message):
        __slots__ = ("exit_code",)
        EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
        exit_code: int
        def __init__(self, exit_code: _Optional[int] = ...) -> None: ...
    URI_FIELD_NUMBER: _ClassVar[int]
    CREATE_FIELD_NUMBER: _ClassVar[int]
    EXIT_FIELD_NUMBER: _ClassVar[int]
    COMMAND_START_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FINISH_FIELD_NUMBER: _ClassVar[int]
    uri: str
    create: TerminalEvent.Create
    exit: TerminalEvent.Exit
    command_start: TerminalEvent.CommandStart
    command_finish: TerminalEvent.CommandFinish
    def __init__(self, uri: _Optional[str] = ..., create: _Optional[_Union[TerminalEvent.Create, _Mapping]] = ..., exit: _Optional[_Union[TerminalEvent.Exit, _Mapping]] = ..., command_start: _Optional[_Union[TerminalEvent.CommandStart, _Mapping]] = ..., command_finish: _Optional[_Union[TerminalEvent.CommandFinish, _Mapping]] = ...) -> None: ...

class TimingInfo(_message.Message):
    __slots__ = ("user_input_time", "stream_cmdk_time")
    USER_INPUT_TIME_FIELD_NUMBER: _ClassVar[int]
    STREAM_CMDK_TIME_FIELD_NUMBER: _ClassVar[int]
    user_input_time: float
    stream_cmdk_time: float
    def __init__(self, user_input_time: _Optional[float] = ..., stream_cmdk_time: _Optional[float] = ...) -> None: ...

class ToolCallEvent(_message.Message):
    __slots__ = ("tool_call_id", "request_id", "tool_name")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    request_id: str
    tool_name: str
    def __init__(self, tool_call_id: _Optional[str] = ..., request_id: _Optional[str] = ..., tool_name: _Optional[str] = ...) -> None: ...

class WorktreeEvent(_message.Message):
    __slots__ = ("event_type", "model_name", "best_of_n_group_id", "all_worktree_paths", "applied_worktree_path", "worktree_composer_mappings", "background_agent_composer_mappings", "applied_composer_id", "viewed_composer_id")
    class EventType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        EVENT_TYPE_UNSPECIFIED: _ClassVar[WorktreeEvent.EventType]
        EVENT_TYPE_APPLY_TO_MAIN: _ClassVar[WorktreeEvent.EventType]
        EVENT_TYPE_UNDO_APPLY: _ClassVar[WorktreeEvent.EventType]
        EVENT_TYPE_VIEW_SUBCOMPOSER: _ClassVar[WorktreeEvent.EventType]
    EVENT_TYPE_UNSPECIFIED: WorktreeEvent.EventType
    EVENT_TYPE_APPLY_TO_MAIN: WorktreeEvent.EventType
    EVENT_TYPE_UNDO_APPLY: WorktreeEvent.EventType
    EVENT_TYPE_VIEW_SUBCOMPOSER: WorktreeEvent.EventType
    class BackgroundAgentComposerMapping(_message.Message):
        __slots__ = ("bc_id", "composer_id")
        BC_ID_FIELD_NUMBER: _ClassVar[int]
        COMPOSER_ID_FIELD_NUMBER: _ClassVar[int]
        bc_id: str
        composer_id: str
        def __init__(self, bc_id: _Optional[str] = ..., composer_id: _Optional[str] = ...) -> None: ...
    class WorktreeComposerMapping(_message.Message):
        __slots__ = ("worktree_path", "composer_id")
        WORKTREE_PATH_FIELD_NUMBER: _ClassVar[int]
        COMPOSER_ID_FIELD_NUMBER: _ClassVar[int]
        worktree_path: str
        composer_id: str
        def __init__(self, worktree_path: _Optional[str] = ..., composer_id: _Optional[str] = ...) -> None: ...
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    BEST_OF_N_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    ALL_WORKTREE_PATHS_FIELD_NUMBER: _ClassVar[int]
    APPLIED_WORKTREE_PATH_FIELD_NUMBER: _ClassVar[int]
    WORKTREE_COMPOSER_MAPPINGS_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_AGENT_COMPOSER_MAPPINGS_FIELD_NUMBER: _ClassVar[int]
    APPLIED_COMPOSER_ID_FIELD_NUMBER: _ClassVar[int]
    VIEWED_COMPOSER_ID_FIELD_NUMBER: _ClassVar[int]
    event_type: WorktreeEvent.EventType
    model_name: str
    best_of_n_group_id: str
    all_worktree_paths: _containers.RepeatedScalarFieldContainer[str]
    applied_worktree_path: str
    worktree_composer_mappings: _containers.RepeatedCompositeFieldContainer[WorktreeEvent.WorktreeComposerMapping]
    background_agent_composer_mappings: _containers.RepeatedCompositeFieldContainer[WorktreeEvent.BackgroundAgentComposerMapping]
    applied_composer_id: str
    viewed_composer_id: str
    def __init__(self, event_type: _Optional[_Union[WorktreeEvent.EventType, str]] = ..., model_name: _Optional[str] = ..., best_of_n_group_id: _Optional[str] = ..., all_worktree_paths: _Optional[_Iterable[str]] = ..., applied_worktree_path: _Optional[str] = ..., worktree_composer_mappings: _Optional[_Iterable[_Union[WorktreeEvent.WorktreeComposerMapping, _Mapping]]] = ..., background_agent_composer_mappings: _Optional[_Iterable[_Union[WorktreeEvent.BackgroundAgentComposerMapping, _Mapping]]] = ..., applied_composer_id: _Optional[str] = ..., viewed_composer_id: _Optional[str] = ...) -> None: ...

class WriteGitCommitMessageRequest(_message.Message):
    __slots__ = ("diffs", "previous_commit_messages", "explicit_context", "api_key_credentials", "azure_credentials", "bedrock_credentials")
    DIFFS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_COMMIT_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    EXPLICIT_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    API_KEY_CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    AZURE_CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    BEDROCK_CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    diffs: _containers.RepeatedScalarFieldContainer[str]
    previous_commit_messages: _containers.RepeatedScalarFieldContainer[str]
    explicit_context: ExplicitContext
    api_key_credentials: ApiKeyCredentials
    azure_credentials: AzureCredentials
    bedrock_credentials: BedrockCredentials
    def __init__(self, diffs: _Optional[_Iterable[str]] = ..., previous_commit_messages: _Optional[_Iterable[str]] = ..., explicit_context: _Optional[_Union[ExplicitContext, _Mapping]] = ..., api_key_credentials: _Optional[_Union[ApiKeyCredentials, _Mapping]] = ..., azure_credentials: _Optional[_Union[AzureCredentials, _Mapping]] = ..., bedrock_credentials: _Optional[_Union[BedrockCredentials, _Mapping]] = ...) -> None: ...

class WriteGitCommitMessageResponse(_message.Message):
    __slots__ = ("commit_message",)
    COMMIT_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    commit_message: str
    def __init__(self, commit_message: _Optional[str] = ...) -> None: ...
