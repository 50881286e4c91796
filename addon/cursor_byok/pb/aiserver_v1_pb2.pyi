from . import agent_v1_pb2 as _agent_v1_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AvailableModelsScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AVAILABLE_MODELS_SCOPE_UNSPECIFIED: _ClassVar[AvailableModelsScope]
    AVAILABLE_MODELS_SCOPE_USER_AVAILABLE: _ClassVar[AvailableModelsScope]
    AVAILABLE_MODELS_SCOPE_AUTOMATIONS: _ClassVar[AvailableModelsScope]
    AVAILABLE_MODELS_SCOPE_ADMIN_SETTINGS_ALL_APPLICATION_MODELS: _ClassVar[AvailableModelsScope]

class CloudAgentEffortMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOUD_AGENT_EFFORT_MODE_UNSPECIFIED: _ClassVar[CloudAgentEffortMode]
    CLOUD_AGENT_EFFORT_MODE_STANDARD: _ClassVar[CloudAgentEffortMode]
    CLOUD_AGENT_EFFORT_MODE_GRIND: _ClassVar[CloudAgentEffortMode]

class Http2Config(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HTTP2_CONFIG_UNSPECIFIED: _ClassVar[Http2Config]
    HTTP2_CONFIG_FORCE_ALL_DISABLED: _ClassVar[Http2Config]
    HTTP2_CONFIG_FORCE_ALL_ENABLED: _ClassVar[Http2Config]
    HTTP2_CONFIG_FORCE_BIDI_DISABLED: _ClassVar[Http2Config]
    HTTP2_CONFIG_FORCE_BIDI_ENABLED: _ClassVar[Http2Config]
AVAILABLE_MODELS_SCOPE_UNSPECIFIED: AvailableModelsScope
AVAILABLE_MODELS_SCOPE_USER_AVAILABLE: AvailableModelsScope
AVAILABLE_MODELS_SCOPE_AUTOMATIONS: AvailableModelsScope
AVAILABLE_MODELS_SCOPE_ADMIN_SETTINGS_ALL_APPLICATION_MODELS: AvailableModelsScope
CLOUD_AGENT_EFFORT_MODE_UNSPECIFIED: CloudAgentEffortMode
CLOUD_AGENT_EFFORT_MODE_STANDARD: CloudAgentEffortMode
CLOUD_AGENT_EFFORT_MODE_GRIND: CloudAgentEffortMode
HTTP2_CONFIG_UNSPECIFIED: Http2Config
HTTP2_CONFIG_FORCE_ALL_DISABLED: Http2Config
HTTP2_CONFIG_FORCE_ALL_ENABLED: Http2Config
HTTP2_CONFIG_FORCE_BIDI_DISABLED: Http2Config
HTTP2_CONFIG_FORCE_BIDI_ENABLED: Http2Config

class BidiRequestId(_message.Message):
    __slots__ = ("request_id",)
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    def __init__(self, request_id: _Optional[str] = ...) -> None: ...

class BidiAppendRequest(_message.Message):
    __slots__ = ("data", "request_id", "append_seqno", "data_binary")
    DATA_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    APPEND_SEQNO_FIELD_NUMBER: _ClassVar[int]
    DATA_BINARY_FIELD_NUMBER: _ClassVar[int]
    data: str
    request_id: BidiRequestId
    append_seqno: int
    data_binary: bytes
    def __init__(self, data: _Optional[str] = ..., request_id: _Optional[_Union[BidiRequestId, _Mapping]] = ..., append_seqno: _Optional[int] = ..., data_binary: _Optional[bytes] = ...) -> None: ...

class BidiAppendResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BidiPollRequest(_message.Message):
    __slots__ = ("request_id", "start_request")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    START_REQUEST_FIELD_NUMBER: _ClassVar[int]
    request_id: BidiRequestId
    start_request: bool
    def __init__(self, request_id: _Optional[_Union[BidiRequestId, _Mapping]] = ..., start_request: _Optional[bool] = ...) -> None: ...

class BidiPollResponse(_message.Message):
    __slots__ = ("seqno", "data", "eof")
    SEQNO_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    EOF_FIELD_NUMBER: _ClassVar[int]
    seqno: int
    data: str
    eof: bool
    def __init__(self, seqno: _Optional[int] = ..., data: _Optional[str] = ..., eof: _Optional[bool] = ...) -> None: ...

class ErrorDetails(_message.Message):
    __slots__ = ("error", "details", "is_expected")
    class Error(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        ERROR_UNSPECIFIED: _ClassVar[ErrorDetails.Error]
        ERROR_BAD_API_KEY: _ClassVar[ErrorDetails.Error]
        ERROR_NOT_LOGGED_IN: _ClassVar[ErrorDetails.Error]
        ERROR_INVALID_AUTH_ID: _ClassVar[ErrorDetails.Error]
        ERROR_NOT_HIGH_ENOUGH_PERMISSIONS: _ClassVar[ErrorDetails.Error]
        ERROR_BAD_MODEL_NAME: _ClassVar[ErrorDetails.Error]
        ERROR_USER_NOT_FOUND: _ClassVar[ErrorDetails.Error]
        ERROR_FREE_USER_RATE_LIMIT_EXCEEDED: _ClassVar[ErrorDetails.Error]
        ERROR_PRO_USER_RATE_LIMIT_EXCEEDED: _ClassVar[ErrorDetails.Error]
        ERROR_FREE_USER_USAGE_LIMIT: _ClassVar[ErrorDetails.Error]
        ERROR_PRO_USER_USAGE_LIMIT: _ClassVar[ErrorDetails.Error]
        ERROR_AUTH_TOKEN_NOT_FOUND: _ClassVar[ErrorDetails.Error]
        ERROR_AUTH_TOKEN_EXPIRED: _ClassVar[ErrorDetails.Error]
        ERROR_OPENAI: _ClassVar[ErrorDetails.Error]
        ERROR_OPENAI_RATE_LIMIT_EXCEEDED: _ClassVar[ErrorDetails.Error]
        ERROR_AGENT_REQUIRES_LOGIN: _ClassVar[ErrorDetails.Error]
        ERROR_MAX_TOKENS: _ClassVar[ErrorDetails.Error]
        ERROR_USER_ABORTED_REQUEST: _ClassVar[ErrorDetails.Error]
        ERROR_GENERIC_RATE_LIMIT_EXCEEDED: _ClassVar[ErrorDetails.Error]
        ERROR_PRO_USER_ONLY: _ClassVar[ErrorDetails.Error]
        ERROR_TIMEOUT: _ClassVar[ErrorDetails.Error]
        ERROR_GPT_4_VISION_PREVIEW_RATE_LIMIT: _ClassVar[ErrorDetails.Error]
        ERROR_CUSTOM_MESSAGE: _ClassVar[ErrorDetails.Error]
        ERROR_OUTDATED_CLIENT: _ClassVar[ErrorDetails.Error]
        ERROR_CLAUDE_IMAGE_TOO_LARGE: _ClassVar[ErrorDetails.Error]
        ERROR_FILE_NOT_FOUND: _ClassVar[ErrorDetails.Error]
        ERROR_API_KEY_RATE_LIMIT: _ClassVar[ErrorDetails.Error]
        ERROR_DEBOUNCED: _ClassVar[ErrorDetails.Error]
        ERROR_BAD_REQUEST: _ClassVar[ErrorDetails.Error]
        ERROR_REPOSITORY_SERVICE_REPOSITORY_IS_NOT_INITIALIZED: _ClassVar[ErrorDetails.Error]
        ERROR_UNAUTHORIZED: _ClassVar[ErrorDetails.Error]
        ERROR_NOT_FOUND: _ClassVar[ErrorDetails.Error]
        ERROR_DEPRECATED: _ClassVar[ErrorDetails.Error]
        ERROR_RESOURCE_EXHAUSTED: _ClassVar[ErrorDetails.Error]
        ERROR_BAD_USER_API_KEY: _ClassVar[ErrorDetails.Error]
        ERROR_CONVERSATION_TOO_LONG: _ClassVar[ErrorDetails.Error]
        ERROR_USAGE_PRICING_REQUIRED: _ClassVar[ErrorDetails.Error]
        ERROR_USAGE_PRICING_REQUIRED_CHANGEABLE: _ClassVar[ErrorDetails.Error]
        ERROR_GITHUB_NO_USER_CREDENTIALS: _ClassVar[ErrorDetails.Error]
        ERROR_GITHUB_USER_NO_ACCESS: _ClassVar[ErrorDetails.Error]
        ERROR_GITHUB_APP_NO_ACCESS: _ClassVar[ErrorDetails.Error]
        ERROR_GITHUB_MULTIPLE_OWNERS: _ClassVar[ErrorDetails.Error]
        ERROR_RATE_LIMITED: _ClassVar[ErrorDetails.Error]
        ERROR_RATE_LIMITED_CHANGEABLE: _ClassVar[ErrorDetails.Error]
        ERROR_CUSTOM: _ClassVar[ErrorDetails.Error]
        ERROR_HOOKS_BLOCKED: _ClassVar[ErrorDetails.Error]
        ERROR_SUSPICIOUS_USAGE_BLOCKED: _ClassVar[ErrorDetails.Error]
        ERROR_EXTENSION_HOST_TIMEOUT: _ClassVar[ErrorDetails.Error]
        ERROR_NETWORK_ERROR: _ClassVar[ErrorDetails.Error]
        ERROR_PROVIDER_ERROR: _ClassVar[ErrorDetails.Error]
        ERROR_MODEL_BLOCKED: _ClassVar[ErrorDetails.Error]
        ERROR_INTERNAL: _ClassVar[ErrorDetails.Error]
        ERROR_MAX_MODE_REQUIRED: _ClassVar[ErrorDetails.Error]
        ERROR_MODEL_NO_LONGER_SUPPORTED: _ClassVar[ErrorDetails.Error]
        ERROR_PRICING_WARNING: _ClassVar[ErrorDetails.Error]
        ERROR_SLOW_POOL: _ClassVar[ErrorDetails.Error]
        ERROR_UNSUPPORTED_REGION: _ClassVar[ErrorDetails.Error]
        ERROR_ACCOUNT_CLOSED: _ClassVar[ErrorDetails.Error]
    ERROR_UNSPECIFIED: ErrorDetails.Error
    ERROR_BAD_API_KEY: ErrorDetails.Error
    ERROR_NOT_LOGGED_IN: ErrorDetails.Error
    ERROR_INVALID_AUTH_ID: ErrorDetails.Error
    ERROR_NOT_HIGH_ENOUGH_PERMISSIONS: ErrorDetails.Error
    ERROR_BAD_MODEL_NAME: ErrorDetails.Error
    ERROR_USER_NOT_FOUND: ErrorDetails.Error
    ERROR_FREE_USER_RATE_LIMIT_EXCEEDED: ErrorDetails.Error
    ERROR_PRO_USER_RATE_LIMIT_EXCEEDED: ErrorDetails.Error
    ERROR_FREE_USER_USAGE_LIMIT: ErrorDetails.Error
    ERROR_PRO_USER_USAGE_LIMIT: ErrorDetails.Error
    ERROR_AUTH_TOKEN_NOT_FOUND: ErrorDetails.Error
    ERROR_AUTH_TOKEN_EXPIRED: ErrorDetails.Error
    ERROR_OPENAI: ErrorDetails.Error
    ERROR_OPENAI_RATE_LIMIT_EXCEEDED: ErrorDetails.Error
    ERROR_AGENT_REQUIRES_LOGIN: ErrorDetails.Error
    ERROR_MAX_TOKENS: ErrorDetails.Error
    ERROR_USER_ABORTED_REQUEST: ErrorDetails.Error
    ERROR_GENERIC_RATE_LIMIT_EXCEEDED: ErrorDetails.Error
    ERROR_PRO_USER_ONLY: ErrorDetails.Error
    ERROR_TIMEOUT: ErrorDetails.Error
    ERROR_GPT_4_VISION_PREVIEW_RATE_LIMIT: ErrorDetails.Error
    ERROR_CUSTOM_MESSAGE: ErrorDetails.Error
    ERROR_OUTDATED_CLIENT: ErrorDetails.Error
    ERROR_CLAUDE_IMAGE_TOO_LARGE: ErrorDetails.Error
    ERROR_FILE_NOT_FOUND: ErrorDetails.Error
    ERROR_API_KEY_RATE_LIMIT: ErrorDetails.Error
    ERROR_DEBOUNCED: ErrorDetails.Error
    ERROR_BAD_REQUEST: ErrorDetails.Error
    ERROR_REPOSITORY_SERVICE_REPOSITORY_IS_NOT_INITIALIZED: ErrorDetails.Error
    ERROR_UNAUTHORIZED: ErrorDetails.Error
    ERROR_NOT_FOUND: ErrorDetails.Error
    ERROR_DEPRECATED: ErrorDetails.Error
    ERROR_RESOURCE_EXHAUSTED: ErrorDetails.Error
    ERROR_BAD_USER_API_KEY: ErrorDetails.Error
    ERROR_CONVERSATION_TOO_LONG: ErrorDetails.Error
    ERROR_USAGE_PRICING_REQUIRED: ErrorDetails.Error
    ERROR_USAGE_PRICING_REQUIRED_CHANGEABLE: ErrorDetails.Error
    ERROR_GITHUB_NO_USER_CREDENTIALS: ErrorDetails.Error
    ERROR_GITHUB_USER_NO_ACCESS: ErrorDetails.Error
    ERROR_GITHUB_APP_NO_ACCESS: ErrorDetails.Error
    ERROR_GITHUB_MULTIPLE_OWNERS: ErrorDetails.Error
    ERROR_RATE_LIMITED: ErrorDetails.Error
    ERROR_RATE_LIMITED_CHANGEABLE: ErrorDetails.Error
    ERROR_CUSTOM: ErrorDetails.Error
    ERROR_HOOKS_BLOCKED: ErrorDetails.Error
    ERROR_SUSPICIOUS_USAGE_BLOCKED: ErrorDetails.Error
    ERROR_EXTENSION_HOST_TIMEOUT: ErrorDetails.Error
    ERROR_NETWORK_ERROR: ErrorDetails.Error
    ERROR_PROVIDER_ERROR: ErrorDetails.Error
    ERROR_MODEL_BLOCKED: ErrorDetails.Error
    ERROR_INTERNAL: ErrorDetails.Error
    ERROR_MAX_MODE_REQUIRED: ErrorDetails.Error
    ERROR_MODEL_NO_LONGER_SUPPORTED: ErrorDetails.Error
    ERROR_PRICING_WARNING: ErrorDetails.Error
    ERROR_SLOW_POOL: ErrorDetails.Error
    ERROR_UNSUPPORTED_REGION: ErrorDetails.Error
    ERROR_ACCOUNT_CLOSED: ErrorDetails.Error
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    IS_EXPECTED_FIELD_NUMBER: _ClassVar[int]
    error: ErrorDetails.Error
    details: CustomErrorDetails
    is_expected: bool
    def __init__(self, error: _Optional[_Union[ErrorDetails.Error, str]] = ..., details: _Optional[_Union[CustomErrorDetails, _Mapping]] = ..., is_expected: _Optional[bool] = ...) -> None: ...

class CustomErrorDetails(_message.Message):
    __slots__ = ("title", "detail", "allow_command_links_potentially_unsafe_please_only_use_for_handwritten_trusted_markdown", "is_retryable", "show_request_id", "should_show_immediate_error", "additional_info", "buttons", "plan_choices", "analytics_metadata")
    class AdditionalInfoEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    ALLOW_COMMAND_LINKS_POTENTIALLY_UNSAFE_PLEASE_ONLY_USE_FOR_HANDWRITTEN_TRUSTED_MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    IS_RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    SHOW_REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SHOULD_SHOW_IMMEDIATE_ERROR_FIELD_NUMBER: _ClassVar[int]
    ADDITIONAL_INFO_FIELD_NUMBER: _ClassVar[int]
    BUTTONS_FIELD_NUMBER: _ClassVar[int]
    PLAN_CHOICES_FIELD_NUMBER: _ClassVar[int]
    ANALYTICS_METADATA_FIELD_NUMBER: _ClassVar[int]
    title: str
    detail: str
    allow_command_links_potentially_unsafe_please_only_use_for_handwritten_trusted_markdown: bool
    is_retryable: bool
    show_request_id: bool
    should_show_immediate_error: bool
    additional_info: _containers.ScalarMap[str, str]
    buttons: _containers.RepeatedCompositeFieldContainer[ErrorButton]
    plan_choices: _containers.RepeatedCompositeFieldContainer[PlanChoice]
    analytics_metadata: ErrorAnalyticsMetadata
    def __init__(self, title: _Optional[str] = ..., detail: _Optional[str] = ..., allow_command_links_potentially_unsafe_please_only_use_for_handwritten_trusted_markdown: _Optional[bool] = ..., is_retryable: _Optional[bool] = ..., show_request_id: _Optional[bool] = ..., should_show_immediate_error: _Optional[bool] = ..., additional_info: _Optional[_Mapping[str, str]] = ..., buttons: _Optional[_Iterable[_Union[ErrorButton, _Mapping]]] = ..., plan_choices: _Optional[_Iterable[_Union[PlanChoice, _Mapping]]] = ..., analytics_metadata: _Optional[_Union[ErrorAnalyticsMetadata, _Mapping]] = ...) -> None: ...

class PlanChoice(_message.Message):
    __slots__ = ("label", "sublabel", "description", "value")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SUBLABEL_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    label: str
    sublabel: str
    description: str
    value: str
    def __init__(self, label: _Optional[str] = ..., sublabel: _Optional[str] = ..., description: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class ErrorAnalyticsMetadata(_message.Message):
    __slots__ = ("action_required",)
    ACTION_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    action_required: str
    def __init__(self, action_required: _Optional[str] = ...) -> None: ...

class ErrorButton(_message.Message):
    __slots__ = ("label", "upgrade", "switch_model", "configure_spend_limit", "url", "upgrade_choice", "dashboard_action", "reload_window", "client_action")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    UPGRADE_FIELD_NUMBER: _ClassVar[int]
    SWITCH_MODEL_FIELD_NUMBER: _ClassVar[int]
    CONFIGURE_SPEND_LIMIT_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    UPGRADE_CHOICE_FIELD_NUMBER: _ClassVar[int]
    DASHBOARD_ACTION_FIELD_NUMBER: _ClassVar[int]
    RELOAD_WINDOW_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ACTION_FIELD_NUMBER: _ClassVar[int]
    label: str
    upgrade: UpgradeAction
    switch_model: SwitchModelAction
    configure_spend_limit: ConfigureSpendLimitAction
    url: UrlAction
    upgrade_choice: UpgradeChoice
    dashboard_action: DashboardAction
    reload_window: ReloadWindowAction
    client_action: ClientAction
    def __init__(self, label: _Optional[str] = ..., upgrade: _Optional[_Union[UpgradeAction, _Mapping]] = ..., switch_model: _Optional[_Union[SwitchModelAction, _Mapping]] = ..., configure_spend_limit: _Optional[_Union[ConfigureSpendLimitAction, _Mapping]] = ..., url: _Optional[_Union[UrlAction, _Mapping]] = ..., upgrade_choice: _Optional[_Union[UpgradeChoice, _Mapping]] = ..., dashboard_action: _Optional[_Union[DashboardAction, _Mapping]] = ..., reload_window: _Optional[_Union[ReloadWindowAction, _Mapping]] = ..., client_action: _Optional[_Union[ClientAction, _Mapping]] = ...) -> None: ...

class UpgradeAction(_message.Message):
    __slots__ = ("membership_to_upgrade_to", "try_immediate_upgrade", "allow_trial")
    MEMBERSHIP_TO_UPGRADE_TO_FIELD_NUMBER: _ClassVar[int]
    TRY_IMMEDIATE_UPGRADE_FIELD_NUMBER: _ClassVar[int]
    ALLOW_TRIAL_FIELD_NUMBER: _ClassVar[int]
    membership_to_upgrade_to: str
    try_immediate_upgrade: bool
    allow_trial: bool
    def __init__(self, membership_to_upgrade_to: _Optional[str] = ..., try_immediate_upgrade: _Optional[bool] = ..., allow_trial: _Optional[bool] = ...) -> None: ...

class SwitchModelAction(_message.Message):
    __slots__ = ("suggested_model",)
    SUGGESTED_MODEL_FIELD_NUMBER: _ClassVar[int]
    suggested_model: str
    def __init__(self, suggested_model: _Optional[str] = ...) -> None: ...

class ConfigureSpendLimitAction(_message.Message):
    __slots__ = ("confirm_label",)
    CONFIRM_LABEL_FIELD_NUMBER: _ClassVar[int]
    confirm_label: str
    def __init__(self, confirm_label: _Optional[str] = ...) -> None: ...

class UrlAction(_message.Message):
    __slots__ = ("url",)
    URL_FIELD_NUMBER: _ClassVar[int]
    url: str
    def __init__(self, url: _Optional[str] = ...) -> None: ...

class UpgradeChoice(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DashboardAction(_message.Message):
    __slots__ = ("action", "args", "success_message")
    class ArgsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    action: str
    args: _containers.ScalarMap[str, str]
    success_message: str
    def __init__(self, action: _Optional[str] = ..., args: _Optional[_Mapping[str, str]] = ..., success_message: _Optional[str] = ...) -> None: ...

class ReloadWindowAction(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ClientAction(_message.Message):
    __slots__ = ("command_id", "args")
    class ArgsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    command_id: str
    args: _containers.ScalarMap[str, str]
    def __init__(self, command_id: _Optional[str] = ..., args: _Optional[_Mapping[str, str]] = ...) -> None: ...

class AvailableModelsRequest(_message.Message):
    __slots__ = ("is_nightly", "include_long_context_models", "exclude_max_named_models", "additional_model_names", "use_model_parameters", "include_hidden_models", "do_not_use_markdown", "variants_will_be_shown_in_exploded_list", "for_automations", "scope", "use_react_model_picker", "use_cloud_agent_effort_modes", "admin_settings_group_public_id", "byok_enabled")
    IS_NIGHTLY_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_LONG_CONTEXT_MODELS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_MAX_NAMED_MODELS_FIELD_NUMBER: _ClassVar[int]
    ADDITIONAL_MODEL_NAMES_FIELD_NUMBER: _ClassVar[int]
    USE_MODEL_PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_HIDDEN_MODELS_FIELD_NUMBER: _ClassVar[int]
    DO_NOT_USE_MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_WILL_BE_SHOWN_IN_EXPLODED_LIST_FIELD_NUMBER: _ClassVar[int]
    FOR_AUTOMATIONS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    USE_REACT_MODEL_PICKER_FIELD_NUMBER: _ClassVar[int]
    USE_CLOUD_AGENT_EFFORT_MODES_FIELD_NUMBER: _ClassVar[int]
    ADMIN_SETTINGS_GROUP_PUBLIC_ID_FIELD_NUMBER: _ClassVar[int]
    BYOK_ENABLED_FIELD_NUMBER: _ClassVar[int]
    is_nightly: bool
    include_long_context_models: bool
    exclude_max_named_models: bool
    additional_model_names: _containers.RepeatedScalarFieldContainer[str]
    use_model_parameters: bool
    include_hidden_models: bool
    do_not_use_markdown: bool
    variants_will_be_shown_in_exploded_list: bool
    for_automations: bool
    scope: AvailableModelsScope
    use_react_model_picker: bool
    use_cloud_agent_effort_modes: bool
    admin_settings_group_public_id: str
    byok_enabled: bool
    def __init__(self, is_nightly: _Optional[bool] = ..., include_long_context_models: _Optional[bool] = ..., exclude_max_named_models: _Optional[bool] = ..., additional_model_names: _Optional[_Iterable[str]] = ..., use_model_parameters: _Optional[bool] = ..., include_hidden_models: _Optional[bool] = ..., do_not_use_markdown: _Optional[bool] = ..., variants_will_be_shown_in_exploded_list: _Optional[bool] = ..., for_automations: _Optional[bool] = ..., scope: _Optional[_Union[AvailableModelsScope, str]] = ..., use_react_model_picker: _Optional[bool] = ..., use_cloud_agent_effort_modes: _Optional[bool] = ..., admin_settings_group_public_id: _Optional[str] = ..., byok_enabled: _Optional[bool] = ...) -> None: ...

class AvailableModelsResponse(_message.Message):
    __slots__ = ("model_names", "models", "composer_model_config", "cmd_k_model_config", "background_composer_model_config", "plan_execution_model_config", "spec_model_config", "deep_search_model_config", "quick_agent_model_config", "use_model_parameters", "disable_unused_models_after_n_hours", "upgrade_unchanged_models_after_n_hours", "display_configuration", "subagent_model_configs", "experimental_model_id", "experimental_model_display_name", "nudge_new_chats_to_auto_optimize_for")
    class DegradationStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        DEGRADATION_STATUS_UNSPECIFIED: _ClassVar[AvailableModelsResponse.DegradationStatus]
        DEGRADATION_STATUS_DEGRADED: _ClassVar[AvailableModelsResponse.DegradationStatus]
        DEGRADATION_STATUS_DISABLED: _ClassVar[AvailableModelsResponse.DegradationStatus]
    DEGRADATION_STATUS_UNSPECIFIED: AvailableModelsResponse.DegradationStatus
    DEGRADATION_STATUS_DEGRADED: AvailableModelsResponse.DegradationStatus
    DEGRADATION_STATUS_DISABLED: AvailableModelsResponse.DegradationStatus
    class ModelVendorId(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        MODEL_VENDOR_ID_UNSPECIFIED: _ClassVar[AvailableModelsResponse.ModelVendorId]
        MODEL_VENDOR_ID_ANTHROPIC: _ClassVar[AvailableModelsResponse.ModelVendorId]
        MODEL_VENDOR_ID_OPENAI: _ClassVar[AvailableModelsResponse.ModelVendorId]
        MODEL_VENDOR_ID_GOOGLE: _ClassVar[AvailableModelsResponse.ModelVendorId]
        MODEL_VENDOR_ID_XAI: _ClassVar[AvailableModelsResponse.ModelVendorId]
        MODEL_VENDOR_ID_MOONSHOT: _ClassVar[AvailableModelsResponse.ModelVendorId]
        MODEL_VENDOR_ID_CURSOR: _ClassVar[AvailableModelsResponse.ModelVendorId]
        MODEL_VENDOR_ID_NVIDIA: _ClassVar[AvailableModelsResponse.ModelVendorId]
        MODEL_VENDOR_ID_ZAI: _ClassVar[AvailableModelsResponse.ModelVendorId]
        MODEL_VENDOR_ID_META: _ClassVar[AvailableModelsResponse.ModelVendorId]
    MODEL_VENDOR_ID_UNSPECIFIED: AvailableModelsResponse.ModelVendorId
    MODEL_VENDOR_ID_ANTHROPIC: AvailableModelsResponse.ModelVendorId
    MODEL_VENDOR_ID_OPENAI: AvailableModelsResponse.ModelVendorId
    MODEL_VENDOR_ID_GOOGLE: AvailableModelsResponse.ModelVendorId
    MODEL_VENDOR_ID_XAI: AvailableModelsResponse.ModelVendorId
    MODEL_VENDOR_ID_MOONSHOT: AvailableModelsResponse.ModelVendorId
    MODEL_VENDOR_ID_CURSOR: AvailableModelsResponse.ModelVendorId
    MODEL_VENDOR_ID_NVIDIA: AvailableModelsResponse.ModelVendorId
    MODEL_VENDOR_ID_ZAI: AvailableModelsResponse.ModelVendorId
    MODEL_VENDOR_ID_META: AvailableModelsResponse.ModelVendorId
    class AvailableModel(_message.Message):
        __slots__ = ("name", "default_on", "is_long_context_only", "is_chat_only", "supports_agent", "degradation_status", "price", "tooltip_data", "supports_thinking", "supports_images", "supports_auto_context", "auto_context_max_tokens", "auto_context_extended_max_tokens", "supports_max_mode", "context_token_limit", "context_token_limit_for_max_mode", "client_display_name", "server_model_name", "supports_non_max_mode", "tooltip_data_for_max_mode", "is_recommended_for_background_composer", "supports_plan_mode", "is_user_added", "inputbox_short_model_name", "supports_sandboxing", "supports_cmd_k", "only_supports_cmd_k", "background_composer_sort_order", "parameter_definitions", "variants", "cloud_agent_effort_mode", "cloud_migrate_to_model", "upgrade_model_id", "is_hidden", "legacy_slugs", "id_aliases", "named_model_section_index", "tagline", "visible_in_routed_model_view", "vendor_name", "vendor", "default_disabled_in_admin_allowlist", "cloud_agent_effort_modes", "supports_smart_mode_classifier", "requires_data_retention", "reason_for_zdr_consent_block", "model_picker_badges")
        NAME_FIELD_NUMBER: _ClassVar[int]
        DEFAULT_ON_FIELD_NUMBER: _ClassVar[int]
        IS_LONG_CONTEXT_ONLY_FIELD_NUMBER: _ClassVar[int]
        IS_CHAT_ONLY_FIELD_NUMBER: _ClassVar[int]
        SUPPORTS_AGENT_FIELD_NUMBER: _ClassVar[int]
        DEGRADATION_STATUS_FIELD_NUMBER: _ClassVar[int]
        PRICE_FIELD_NUMBER: _ClassVar[int]
        TOOLTIP_DATA_FIELD_NUMBER: _ClassVar[int]
        SUPPORTS_THINKING_FIELD_NUMBER: _ClassVar[int]
        SUPPORTS_IMAGES_FIELD_NUMBER: _ClassVar[int]
        SUPPORTS_AUTO_CONTEXT_FIELD_NUMBER: _ClassVar[int]
        AUTO_CONTEXT_MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
        AUTO_CONTEXT_EXTENDED_MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
        SUPPORTS_MAX_MODE_FIELD_NUMBER: _ClassVar[int]
        CONTEXT_TOKEN_LIMIT_FIELD_NUMBER: _ClassVar[int]
        CONTEXT_TOKEN_LIMIT_FOR_MAX_MODE_FIELD_NUMBER: _ClassVar[int]
        CLIENT_DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
        SERVER_MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
        SUPPORTS_NON_MAX_MODE_FIELD_NUMBER: _ClassVar[int]
        TOOLTIP_DATA_FOR_MAX_MODE_FIELD_NUMBER: _ClassVar[int]
        IS_RECOMMENDED_FOR_BACKGROUND_COMPOSER_FIELD_NUMBER: _ClassVar[int]
        SUPPORTS_PLAN_MODE_FIELD_NUMBER: _ClassVar[int]
        IS_USER_ADDED_FIELD_NUMBER: _ClassVar[int]
        INPUTBOX_SHORT_MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
        SUPPORTS_SANDBOXING_FIELD_NUMBER: _ClassVar[int]
        SUPPORTS_CMD_K_FIELD_NUMBER: _ClassVar[int]
        ONLY_SUPPORTS_CMD_K_FIELD_NUMBER: _ClassVar[int]
        BACKGROUND_COMPOSER_SORT_ORDER_FIELD_NUMBER: _ClassVar[int]
        PARAMETER_DEFINITIONS_FIELD_NUMBER: _ClassVar[int]
        VARIANTS_FIELD_NUMBER: _ClassVar[int]
        CLOUD_AGENT_EFFORT_MODE_FIELD_NUMBER: _ClassVar[int]
        CLOUD_MIGRATE_TO_MODEL_FIELD_NUMBER: _ClassVar[int]
        UPGRADE_MODEL_ID_FIELD_NUMBER: _ClassVar[int]
        IS_HIDDEN_FIELD_NUMBER: _ClassVar[int]
        LEGACY_SLUGS_FIELD_NUMBER: _ClassVar[int]
        ID_ALIASES_FIELD_NUMBER: _ClassVar[int]
        NAMED_MODEL_SECTION_INDEX_FIELD_NUMBER: _ClassVar[int]
        TAGLINE_FIELD_NUMBER: _ClassVar[int]
        VISIBLE_IN_ROUTED_MODEL_VIEW_FIELD_NUMBER: _ClassVar[int]
        VENDOR_NAME_FIELD_NUMBER: _ClassVar[int]
        VENDOR_FIELD_NUMBER: _ClassVar[int]
        DEFAULT_DISABLED_IN_ADMIN_ALLOWLIST_FIELD_NUMBER: _ClassVar[int]
        CLOUD_AGENT_EFFORT_MODES_FIELD_NUMBER: _ClassVar[int]
        SUPPORTS_SMART_MODE_CLASSIFIER_FIELD_NUMBER: _ClassVar[int]
        REQUIRES_DATA_RETENTION_FIELD_NUMBER: _ClassVar[int]
        REASON_FOR_ZDR_CONSENT_BLOCK_FIELD_NUMBER: _ClassVar[int]
        MODEL_PICKER_BADGES_FIELD_NUMBER: _ClassVar[int]
        name: str
        default_on: bool
        is_long_context_only: bool
        is_chat_only: bool
        supports_agent: bool
        degradation_status: AvailableModelsResponse.DegradationStatus
        price: float
        tooltip_data: AvailableModelsResponse.TooltipData
        supports_thinking: bool
        supports_images: bool
        supports_auto_context: bool
        auto_context_max_tokens: int
        auto_context_extended_max_tokens: int
        supports_max_mode: bool
        context_token_limit: int
        context_token_limit_for_max_mode: int
        client_display_name: str
        server_model_name: str
        supports_non_max_mode: bool
        tooltip_data_for_max_mode: AvailableModelsResponse.TooltipData
        is_recommended_for_background_composer: bool
        supports_plan_mode: bool
        is_user_added: bool
        inputbox_short_model_name: str
        supports_sandboxing: bool
        supports_cmd_k: bool
        only_supports_cmd_k: bool
        background_composer_sort_order: int
        parameter_definitions: _containers.RepeatedCompositeFieldContainer[ModelParameterDefinition]
        variants: _containers.RepeatedCompositeFieldContainer[AvailableModelsResponse.ModelVariantConfig]
        cloud_agent_effort_mode: CloudAgentEffortMode
        cloud_migrate_to_model: str
        upgrade_model_id: str
        is_hidden: bool
        legacy_slugs: _containers.RepeatedScalarFieldContainer[str]
        id_aliases: _containers.RepeatedScalarFieldContainer[str]
        named_model_section_index: int
        tagline: str
        visible_in_routed_model_view: bool
        vendor_name: str
        vendor: AvailableModelsResponse.ModelVendor
        default_disabled_in_admin_allowlist: bool
        cloud_agent_effort_modes: _containers.RepeatedScalarFieldContainer[CloudAgentEffortMode]
        supports_smart_mode_classifier: bool
        requires_data_retention: bool
        reason_for_zdr_consent_block: str
        model_picker_badges: _containers.RepeatedCompositeFieldContainer[AvailableModelsResponse.ModelPickerBadge]
        def __init__(self, name: _Optional[str] = ..., default_on: _Optional[bool] = ..., is_long_context_only: _Optional[bool] = ..., is_chat_only: _Optional[bool] = ..., supports_agent: _Optional[bool] = ..., degradation_status: _Optional[_Union[AvailableModelsResponse.DegradationStatus, str]] = ..., price: _Optional[float] = ..., tooltip_data: _Optional[_Union[AvailableModelsResponse.TooltipData, _Mapping]] = ..., supports_thinking: _Optional[bool] = ..., supports_images: _Optional[bool] = ..., supports_auto_context: _Optional[bool] = ..., auto_context_max_tokens: _Optional[int] = ..., auto_context_extended_max_tokens: _Optional[int] = ..., supports_max_mode: _Optional[bool] = ..., context_token_limit: _Optional[int] = ..., context_token_limit_for_max_mode: _Optional[int] = ..., client_display_name: _Optional[str] = ..., server_model_name: _Optional[str] = ..., supports_non_max_mode: _Optional[bool] = ..., tooltip_data_for_max_mode: _Optional[_Union[AvailableModelsResponse.TooltipData, _Mapping]] = ..., is_recommended_for_background_composer: _Optional[bool] = ..., supports_plan_mode: _Optional[bool] = ..., is_user_added: _Optional[bool] = ..., inputbox_short_model_name: _Optional[str] = ..., supports_sandboxing: _Optional[bool] = ..., supports_cmd_k: _Optional[bool] = ..., only_supports_cmd_k: _Optional[bool] = ..., background_composer_sort_order: _Optional[int] = ..., parameter_definitions: _Optional[_Iterable[_Union[ModelParameterDefinition, _Mapping]]] = ..., variants: _Optional[_Iterable[_Union[AvailableModelsResponse.ModelVariantConfig, _Mapping]]] = ..., cloud_agent_effort_mode: _Optional[_Union[CloudAgentEffortMode, str]] = ..., cloud_migrate_to_model: _Optional[str] = ..., upgrade_model_id: _Optional[str] = ..., is_hidden: _Optional[bool] = ..., legacy_slugs: _Optional[_Iterable[str]] = ..., id_aliases: _Optional[_Iterable[str]] = ..., named_model_section_index: _Optional[int] = ..., tagline: _Optional[str] = ..., visible_in_routed_model_view: _Optional[bool] = ..., vendor_name: _Optional[str] = ..., vendor: _Optional[_Union[AvailableModelsResponse.ModelVendor, _Mapping]] = ..., default_disabled_in_admin_allowlist: _Optional[bool] = ..., cloud_agent_effort_modes: _Optional[_Iterable[_Union[CloudAgentEffortMode, str]]] = ..., supports_smart_mode_classifier: _Optional[bool] = ..., requires_data_retention: _Optional[bool] = ..., reason_for_zdr_consent_block: _Optional[str] = ..., model_picker_badges: _Optional[_Iterable[_Union[AvailableModelsResponse.ModelPickerBadge, _Mapping]]] = ...) -> None: ...
    class ConfirmationDialogue(_message.Message):
        __slots__ = ("title", "body", "key", "blocks_submission", "presentation")
        class Presentation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
            __slots__ = ()
            PRESENTATION_UNSPECIFIED: _ClassVar[AvailableModelsResponse.ConfirmationDialogue.Presentation]
            PRESENTATION_POST_PICKER_WARNING: _ClassVar[AvailableModelsResponse.ConfirmationDialogue.Presentation]
        PRESENTATION_UNSPECIFIED: AvailableModelsResponse.ConfirmationDialogue.Presentation
        PRESENTATION_POST_PICKER_WARNING: AvailableModelsResponse.ConfirmationDialogue.Presentation
        TITLE_FIELD_NUMBER: _ClassVar[int]
        BODY_FIELD_NUMBER: _ClassVar[int]
        KEY_FIELD_NUMBER: _ClassVar[int]
        BLOCKS_SUBMISSION_FIELD_NUMBER: _ClassVar[int]
        PRESENTATION_FIELD_NUMBER: _ClassVar[int]
        title: str
        body: str
        key: str
        blocks_submission: bool
        presentation: AvailableModelsResponse.ConfirmationDialogue.Presentation
        def __init__(self, title: _Optional[str] = ..., body: _Optional[str] = ..., key: _Optional[str] = ..., blocks_submission: _Optional[bool] = ..., presentation: _Optional[_Union[AvailableModelsResponse.ConfirmationDialogue.Presentation, str]] = ...) -> None: ...
    class FeatureModelConfig(_message.Message):
        __slots__ = ("default_model", "fallback_models", "best_of_n_default_models")
        DEFAULT_MODEL_FIELD_NUMBER: _ClassVar[int]
        FALLBACK_MODELS_FIELD_NUMBER: _ClassVar[int]
        BEST_OF_N_DEFAULT_MODELS_FIELD_NUMBER: _ClassVar[int]
        default_model: str
        fallback_models: _containers.RepeatedScalarFieldContainer[str]
        best_of_n_default_models: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, default_model: _Optional[str] = ..., fallback_models: _Optional[_Iterable[str]] = ..., best_of_n_default_models: _Optional[_Iterable[str]] = ...) -> None: ...
    class ModelPickerBadge(_message.Message):
        __slots__ = ("label", "variant", "dismiss_on_selection")
        class Variant(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
            __slots__ = ()
            VARIANT_UNSPECIFIED: _ClassVar[AvailableModelsResponse.ModelPickerBadge.Variant]
            VARIANT_ACCENT: _ClassVar[AvailableModelsResponse.ModelPickerBadge.Variant]
            VARIANT_NEUTRAL: _ClassVar[AvailableModelsResponse.ModelPickerBadge.Variant]
            VARIANT_SUCCESS: _ClassVar[AvailableModelsResponse.ModelPickerBadge.Variant]
            VARIANT_WARN: _ClassVar[AvailableModelsResponse.ModelPickerBadge.Variant]
            VARIANT_DANGER: _ClassVar[AvailableModelsResponse.ModelPickerBadge.Variant]
        VARIANT_UNSPECIFIED: AvailableModelsResponse.ModelPickerBadge.Variant
        VARIANT_ACCENT: AvailableModelsResponse.ModelPickerBadge.Variant
        VARIANT_NEUTRAL: AvailableModelsResponse.ModelPickerBadge.Variant
        VARIANT_SUCCESS: AvailableModelsResponse.ModelPickerBadge.Variant
        VARIANT_WARN: AvailableModelsResponse.ModelPickerBadge.Variant
        VARIANT_DANGER: AvailableModelsResponse.ModelPickerBadge.Variant
        LABEL_FIELD_NUMBER: _ClassVar[int]
        VARIANT_FIELD_NUMBER: _ClassVar[int]
        DISMISS_ON_SELECTION_FIELD_NUMBER: _ClassVar[int]
        label: str
        variant: AvailableModelsResponse.ModelPickerBadge.Variant
        dismiss_on_selection: bool
        def __init__(self, label: _Optional[str] = ..., variant: _Optional[_Union[AvailableModelsResponse.ModelPickerBadge.Variant, str]] = ..., dismiss_on_selection: _Optional[bool] = ...) -> None: ...
    class ModelPickerDisplayConfiguration(_message.Message):
        __slots__ = ("routed_model_view_config", "named_models_view_config", "hide_search_bar", "hide_add_models", "model_selection_restriction_message")
        class NamedModelsViewConfig(_message.Message):
            __slots__ = ("named_view_to_routed_model_view_toggle", "named_view_to_routed_model_view_no_button", "named_view_to_routed_model_view_button")
            class NamedViewToRoutedModelViewButton(_message.Message):
                __slots__ = ("markdown",)
                MARKDOWN_FIELD_NUMBER: _ClassVar[int]
                markdown: str
                def __init__(self, markdown: _Optional[str] = ...) -> None: ...
            class NamedViewToRoutedModelViewNoButton(_message.Message):
                __slots__ = ()
                def __init__(self) -> None: ...
            class NamedViewToRoutedModelViewToggle(_message.Message):
                __slots__ = ("markdown",)
                MARKDOWN_FIELD_NUMBER: _ClassVar[int]
                markdown: str
                def __init__(self, markdown: _Optional[str] = ...) -> None: ...
            NAMED_VIEW_TO_ROUTED_MODEL_VIEW_TOGGLE_FIELD_NUMBER: _ClassVar[int]
            NAMED_VIEW_TO_ROUTED_MODEL_VIEW_NO_BUTTON_FIELD_NUMBER: _ClassVar[int]
            NAMED_VIEW_TO_ROUTED_MODEL_VIEW_BUTTON_FIELD_NUMBER: _ClassVar[int]
            named_view_to_routed_model_view_toggle: AvailableModelsResponse.ModelPickerDisplayConfiguration.NamedModelsViewConfig.NamedViewToRoutedModelViewToggle
            named_view_to_routed_model_view_no_button: AvailableModelsResponse.ModelPickerDisplayConfiguration.NamedModelsViewConfig.NamedViewToRoutedModelViewNoButton
            named_view_to_routed_model_view_button: AvailableModelsResponse.ModelPickerDisplayConfiguration.NamedModelsViewConfig.NamedViewToRoutedModelViewButton
            def __init__(self, named_view_to_routed_model_view_toggle: _Optional[_Union[AvailableModelsResponse.ModelPickerDisplayConfiguration.NamedModelsViewConfig.NamedViewToRoutedModelViewToggle, _Mapping]] = ..., named_view_to_routed_model_view_no_button: _Optional[_Union[AvailableModelsResponse.ModelPickerDisplayConfiguration.NamedModelsViewConfig.NamedViewToRoutedModelViewNoButton, _Mapping]] = ..., named_view_to_routed_model_view_button: _Optional[_Union[AvailableModelsResponse.ModelPickerDisplayConfiguration.NamedModelsViewConfig.NamedViewToRoutedModelViewButton, _Mapping]] = ...) -> None: ...
        class RoutedModelViewConfig(_message.Message):
            __slots__ = ("title", "routed_model_view_to_named_view_toggle", "routed_model_view_to_named_view_button", "hide_search_bar", "hide_routed_model_view")
            class RoutedModelViewToNamedViewButton(_message.Message):
                __slots__ = ("markdown",)
                MARKDOWN_FIELD_NUMBER: _ClassVar[int]
                markdown: str
                def __init__(self, markdown: _Optional[str] = ...) -> None: ...
            class RoutedModelViewToNamedViewToggle(_message.Message):
                __slots__ = ("title_markdown", "subtitle", "set_to_last_named_model")
                TITLE_MARKDOWN_FIELD_NUMBER: _ClassVar[int]
                SUBTITLE_FIELD_NUMBER: _ClassVar[int]
                SET_TO_LAST_NAMED_MODEL_FIELD_NUMBER: _ClassVar[int]
                title_markdown: str
                subtitle: str
                set_to_last_named_model: bool
                def __init__(self, title_markdown: _Optional[str] = ..., subtitle: _Optional[str] = ..., set_to_last_named_model: _Optional[bool] = ...) -> None: ...
            TITLE_FIELD_NUMBER: _ClassVar[int]
            ROUTED_MODEL_VIEW_TO_NAMED_VIEW_TOGGLE_FIELD_NUMBER: _ClassVar[int]
            ROUTED_MODEL_VIEW_TO_NAMED_VIEW_BUTTON_FIELD_NUMBER: _ClassVar[int]
            HIDE_SEARCH_BAR_FIELD_NUMBER: _ClassVar[int]
            HIDE_ROUTED_MODEL_VIEW_FIELD_NUMBER: _ClassVar[int]
            title: str
            routed_model_view_to_named_view_toggle: AvailableModelsResponse.ModelPickerDisplayConfiguration.RoutedModelViewConfig.RoutedModelViewToNamedViewToggle
            routed_model_view_to_named_view_button: AvailableModelsResponse.ModelPickerDisplayConfiguration.RoutedModelViewConfig.RoutedModelViewToNamedViewButton
            hide_search_bar: bool
            hide_routed_model_view: bool
            def __init__(self, title: _Optional[str] = ..., routed_model_view_to_named_view_toggle: _Optional[_Union[AvailableModelsResponse.ModelPickerDisplayConfiguration.RoutedModelViewConfig.RoutedModelViewToNamedViewToggle, _Mapping]] = ..., routed_model_view_to_named_view_button: _Optional[_Union[AvailableModelsResponse.ModelPickerDisplayConfiguration.RoutedModelViewConfig.RoutedModelViewToNamedViewButton, _Mapping]] = ..., hide_search_bar: _Optional[bool] = ..., hide_routed_model_view: _Optional[bool] = ...) -> None: ...
        ROUTED_MODEL_VIEW_CONFIG_FIELD_NUMBER: _ClassVar[int]
        NAMED_MODELS_VIEW_CONFIG_FIELD_NUMBER: _ClassVar[int]
        HIDE_SEARCH_BAR_FIELD_NUMBER: _ClassVar[int]
        HIDE_ADD_MODELS_FIELD_NUMBER: _ClassVar[int]
        MODEL_SELECTION_RESTRICTION_MESSAGE_FIELD_NUMBER: _ClassVar[int]
        routed_model_view_config: AvailableModelsResponse.ModelPickerDisplayConfiguration.RoutedModelViewConfig
        named_models_view_config: AvailableModelsResponse.ModelPickerDisplayConfiguration.NamedModelsViewConfig
        hide_search_bar: bool
        hide_add_models: bool
        model_selection_restriction_message: str
        def __init__(self, routed_model_view_config: _Optional[_Union[AvailableModelsResponse.ModelPickerDisplayConfiguration.RoutedModelViewConfig, _Mapping]] = ..., named_models_view_config: _Optional[_Union[AvailableModelsResponse.ModelPickerDisplayConfiguration.NamedModelsViewConfig, _Mapping]] = ..., hide_search_bar: _Optional[bool] = ..., hide_add_models: _Optional[bool] = ..., model_selection_restriction_message: _Optional[str] = ...) -> None: ...
    class ModelVariantConfig(_message.Message):
        __slots__ = ("parameter_values", "display_name", "is_max_mode", "is_default_max_config", "is_default_non_max_config", "tooltip_data", "tagline", "display_name_outside_picker", "variant_string_representation", "confirmation_dialogue", "legacy_slug")
        PARAMETER_VALUES_FIELD_NUMBER: _ClassVar[int]
        DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
        IS_MAX_MODE_FIELD_NUMBER: _ClassVar[int]
        IS_DEFAULT_MAX_CONFIG_FIELD_NUMBER: _ClassVar[int]
        IS_DEFAULT_NON_MAX_CONFIG_FIELD_NUMBER: _ClassVar[int]
        TOOLTIP_DATA_FIELD_NUMBER: _ClassVar[int]
        TAGLINE_FIELD_NUMBER: _ClassVar[int]
        DISPLAY_NAME_OUTSIDE_PICKER_FIELD_NUMBER: _ClassVar[int]
        VARIANT_STRING_REPRESENTATION_FIELD_NUMBER: _ClassVar[int]
        CONFIRMATION_DIALOGUE_FIELD_NUMBER: _ClassVar[int]
        LEGACY_SLUG_FIELD_NUMBER: _ClassVar[int]
        parameter_values: _containers.RepeatedCompositeFieldContainer[_agent_v1_pb2.RequestedModel.ModelParameterValue]
        display_name: str
        is_max_mode: bool
        is_default_max_config: bool
        is_default_non_max_config: bool
        tooltip_data: AvailableModelsResponse.TooltipData
        tagline: str
        display_name_outside_picker: str
        variant_string_representation: str
        confirmation_dialogue: AvailableModelsResponse.ConfirmationDialogue
        legacy_slug: str
        def __init__(self, parameter_values: _Optional[_Iterable[_Union[_agent_v1_pb2.RequestedModel.ModelParameterValue, _Mapping]]] = ..., display_name: _Optional[str] = ..., is_max_mode: _Optional[bool] = ..., is_default_max_config: _Optional[bool] = ..., is_default_non_max_config: _Optional[bool] = ..., tooltip_data: _Optional[_Union[AvailableModelsResponse.TooltipData, _Mapping]] = ..., tagline: _Optional[str] = ..., display_name_outside_picker: _Optional[str] = ..., variant_string_representation: _Optional[str] = ..., confirmation_dialogue: _Optional[_Union[AvailableModelsResponse.ConfirmationDialogue, _Mapping]] = ..., legacy_slug: _Optional[str] = ...) -> None: ...
    class ModelVendor(_message.Message):
        __slots__ = ("id", "display_name")
        ID_FIELD_NUMBER: _ClassVar[int]
        DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
        id: AvailableModelsResponse.ModelVendorId
        display_name: str
        def __init__(self, id: _Optional[_Union[AvailableModelsResponse.ModelVendorId, str]] = ..., display_name: _Optional[str] = ...) -> None: ...
    class TooltipData(_message.Message):
        __slots__ = ("primary_text", "secondary_text", "secondary_warning_text", "icon", "tertiary_text", "tertiary_text_url", "markdown_content")
        PRIMARY_TEXT_FIELD_NUMBER: _ClassVar[int]
        SECONDARY_TEXT_FIELD_NUMBER: _ClassVar[int]
        SECONDARY_WARNING_TEXT_FIELD_NUMBER: _ClassVar[int]
        ICON_FIELD_NUMBER: _ClassVar[int]
        TERTIARY_TEXT_FIELD_NUMBER: _ClassVar[int]
        TERTIARY_TEXT_URL_FIELD_NUMBER: _ClassVar[int]
        MARKDOWN_CONTENT_FIELD_NUMBER: _ClassVar[int]
        primary_text: str
        secondary_text: str
        secondary_warning_text: bool
        icon: str
        tertiary_text: str
        tertiary_text_url: str
        markdown_content: str
        def __init__(self, primary_text: _Optional[str] = ..., secondary_text: _Optional[str] = ..., secondary_warning_text: _Optional[bool] = ..., icon: _Optional[str] = ..., tertiary_text: _Optional[str] = ..., tertiary_text_url: _Optional[str] = ..., markdown_content: _Optional[str] = ...) -> None: ...
    class SubagentModelConfigsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: AvailableModelsResponse.FeatureModelConfig
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[AvailableModelsResponse.FeatureModelConfig, _Mapping]] = ...) -> None: ...
    MODEL_NAMES_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    COMPOSER_MODEL_CONFIG_FIELD_NUMBER: _ClassVar[int]
    CMD_K_MODEL_CONFIG_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_COMPOSER_MODEL_CONFIG_FIELD_NUMBER: _ClassVar[int]
    PLAN_EXECUTION_MODEL_CONFIG_FIELD_NUMBER: _ClassVar[int]
    SPEC_MODEL_CONFIG_FIELD_NUMBER: _ClassVar[int]
    DEEP_SEARCH_MODEL_CONFIG_FIELD_NUMBER: _ClassVar[int]
    QUICK_AGENT_MODEL_CONFIG_FIELD_NUMBER: _ClassVar[int]
    USE_MODEL_PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    DISABLE_UNUSED_MODELS_AFTER_N_HOURS_FIELD_NUMBER: _ClassVar[int]
    UPGRADE_UNCHANGED_MODELS_AFTER_N_HOURS_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    SUBAGENT_MODEL_CONFIGS_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENTAL_MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENTAL_MODEL_DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    NUDGE_NEW_CHATS_TO_AUTO_OPTIMIZE_FOR_FIELD_NUMBER: _ClassVar[int]
    model_names: _containers.RepeatedScalarFieldContainer[str]
    models: _containers.RepeatedCompositeFieldContainer[AvailableModelsResponse.AvailableModel]
    composer_model_config: AvailableModelsResponse.FeatureModelConfig
    cmd_k_model_config: AvailableModelsResponse.FeatureModelConfig
    background_composer_model_config: AvailableModelsResponse.FeatureModelConfig
    plan_execution_model_config: AvailableModelsResponse.FeatureModelConfig
    spec_model_config: AvailableModelsResponse.FeatureModelConfig
    deep_search_model_config: AvailableModelsResponse.FeatureModelConfig
    quick_agent_model_config: AvailableModelsResponse.FeatureModelConfig
    use_model_parameters: bool
    disable_unused_models_after_n_hours: int
    upgrade_unchanged_models_after_n_hours: int
    display_configuration: AvailableModelsResponse.ModelPickerDisplayConfiguration
    subagent_model_configs: _containers.MessageMap[str, AvailableModelsResponse.FeatureModelConfig]
    experimental_model_id: str
    experimental_model_display_name: str
    nudge_new_chats_to_auto_optimize_for: str
    def __init__(self, model_names: _Optional[_Iterable[str]] = ..., models: _Optional[_Iterable[_Union[AvailableModelsResponse.AvailableModel, _Mapping]]] = ..., composer_model_config: _Optional[_Union[AvailableModelsResponse.FeatureModelConfig, _Mapping]] = ..., cmd_k_model_config: _Optional[_Union[AvailableModelsResponse.FeatureModelConfig, _Mapping]] = ..., background_composer_model_config: _Optional[_Union[AvailableModelsResponse.FeatureModelConfig, _Mapping]] = ..., plan_execution_model_config: _Optional[_Union[AvailableModelsResponse.FeatureModelConfig, _Mapping]] = ..., spec_model_config: _Optional[_Union[AvailableModelsResponse.FeatureModelConfig, _Mapping]] = ..., deep_search_model_config: _Optional[_Union[AvailableModelsResponse.FeatureModelConfig, _Mapping]] = ..., quick_agent_model_config: _Optional[_Union[AvailableModelsResponse.FeatureModelConfig, _Mapping]] = ..., use_model_parameters: _Optional[bool] = ..., disable_unused_models_after_n_hours: _Optional[int] = ..., upgrade_unchanged_models_after_n_hours: _Optional[int] = ..., display_configuration: _Optional[_Union[AvailableModelsResponse.ModelPickerDisplayConfiguration, _Mapping]] = ..., subagent_model_configs: _Optional[_Mapping[str, AvailableModelsResponse.FeatureModelConfig]] = ..., experimental_model_id: _Optional[str] = ..., experimental_model_display_name: _Optional[str] = ..., nudge_new_chats_to_auto_optimize_for: _Optional[str] = ...) -> None: ...

class ModelParameterDefinition(_message.Message):
    __slots__ = ("id", "name", "markdown_tooltip", "parameter_type", "is_cycleable_by_hotkey")
    class BooleanParameterDefinition(_message.Message):
        __slots__ = ("values",)
        class BooleanParameterValue(_message.Message):
            __slots__ = ("value", "display_name", "increases_model_cost", "default_blocked_in_admin_allowlist", "hide_from_user_picker_when_admin_blocked")
            VALUE_FIELD_NUMBER: _ClassVar[int]
            DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
            INCREASES_MODEL_COST_FIELD_NUMBER: _ClassVar[int]
            DEFAULT_BLOCKED_IN_ADMIN_ALLOWLIST_FIELD_NUMBER: _ClassVar[int]
            HIDE_FROM_USER_PICKER_WHEN_ADMIN_BLOCKED_FIELD_NUMBER: _ClassVar[int]
            value: str
            display_name: str
            increases_model_cost: bool
            default_blocked_in_admin_allowlist: bool
            hide_from_user_picker_when_admin_blocked: bool
            def __init__(self, value: _Optional[str] = ..., display_name: _Optional[str] = ..., increases_model_cost: _Optional[bool] = ..., default_blocked_in_admin_allowlist: _Optional[bool] = ..., hide_from_user_picker_when_admin_blocked: _Optional[bool] = ...) -> None: ...
        VALUES_FIELD_NUMBER: _ClassVar[int]
        values: _containers.RepeatedCompositeFieldContainer[ModelParameterDefinition.BooleanParameterDefinition.BooleanParameterValue]
        def __init__(self, values: _Optional[_Iterable[_Union[ModelParameterDefinition.BooleanParameterDefinition.BooleanParameterValue, _Mapping]]] = ...) -> None: ...
    class EnumParameterDefinition(_message.Message):
        __slots__ = ("values",)
        class EnumParameterValue(_message.Message):
            __slots__ = ("value", "display_name", "increases_model_cost", "blocked_by_admin_allowlist", "markdown_tooltip", "model_picker_badges")
            VALUE_FIELD_NUMBER: _ClassVar[int]
            DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
            INCREASES_MODEL_COST_FIELD_NUMBER: _ClassVar[int]
            BLOCKED_BY_ADMIN_ALLOWLIST_FIELD_NUMBER: _ClassVar[int]
            MARKDOWN_TOOLTIP_FIELD_NUMBER: _ClassVar[int]
            MODEL_PICKER_BADGES_FIELD_NUMBER: _ClassVar[int]
            value: str
            display_name: str
            increases_model_cost: bool
            blocked_by_admin_allowlist: bool
            markdown_tooltip: str
            model_picker_badges: _containers.RepeatedCompositeFieldContainer[AvailableModelsResponse.ModelPickerBadge]
            def __init__(self, value: _Optional[str] = ..., display_name: _Optional[str] = ..., increases_model_cost: _Optional[bool] = ..., blocked_by_admin_allowlist: _Optional[bool] = ..., markdown_tooltip: _Optional[str] = ..., model_picker_badges: _Optional[_Iterable[_Union[AvailableModelsResponse.ModelPickerBadge, _Mapping]]] = ...) -> None: ...
        VALUES_FIELD_NUMBER: _ClassVar[int]
        values: _containers.RepeatedCompositeFieldContainer[ModelParameterDefinition.EnumParameterDefinition.EnumParameterValue]
        def __init__(self, values: _Optional[_Iterable[_Union[ModelParameterDefinition.EnumParameterDefinition.EnumParameterValue, _Mapping]]] = ...) -> None: ...
    class ModelParameterType(_message.Message):
        __slots__ = ("boolean_parameter", "enum_parameter")
        BOOLEAN_PARAMETER_FIELD_NUMBER: _ClassVar[int]
        ENUM_PARAMETER_FIELD_NUMBER: _ClassVar[int]
        boolean_parameter: ModelParameterDefinition.BooleanParameterDefinition
        enum_parameter: ModelParameterDefinition.EnumParameterDefinition
        def __init__(self, boolean_parameter: _Optional[_Union[ModelParameterDefinition.BooleanParameterDefinition, _Mapping]] = ..., enum_parameter: _Optional[_Union[ModelParameterDefinition.EnumParameterDefinition, _Mapping]] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_TOOLTIP_FIELD_NUMBER: _ClassVar[int]
    PARAMETER_TYPE_FIELD_NUMBER: _ClassVar[int]
    IS_CYCLEABLE_BY_HOTKEY_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    markdown_tooltip: str
    parameter_type: ModelParameterDefinition.ModelParameterType
    is_cycleable_by_hotkey: bool
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., markdown_tooltip: _Optional[str] = ..., parameter_type: _Optional[_Union[ModelParameterDefinition.ModelParameterType, _Mapping]] = ..., is_cycleable_by_hotkey: _Optional[bool] = ...) -> None: ...

class GetDefaultModelRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetDefaultModelResponse(_message.Message):
    __slots__ = ("model", "thinking_model", "max_mode", "next_default_set_date")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    THINKING_MODEL_FIELD_NUMBER: _ClassVar[int]
    MAX_MODE_FIELD_NUMBER: _ClassVar[int]
    NEXT_DEFAULT_SET_DATE_FIELD_NUMBER: _ClassVar[int]
    model: str
    thinking_model: str
    max_mode: bool
    next_default_set_date: str
    def __init__(self, model: _Optional[str] = ..., thinking_model: _Optional[str] = ..., max_mode: _Optional[bool] = ..., next_default_set_date: _Optional[str] = ...) -> None: ...

class GetUsableModelsRequest(_message.Message):
    __slots__ = ("custom_model_ids",)
    CUSTOM_MODEL_IDS_FIELD_NUMBER: _ClassVar[int]
    custom_model_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, custom_model_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class GetUsableModelsResponse(_message.Message):
    __slots__ = ("models",)
    MODELS_FIELD_NUMBER: _ClassVar[int]
    models: _containers.RepeatedCompositeFieldContainer[_agent_v1_pb2.ModelDetails]
    def __init__(self, models: _Optional[_Iterable[_Union[_agent_v1_pb2.ModelDetails, _Mapping]]] = ...) -> None: ...

class GetDefaultModelForCliRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetDefaultModelForCliResponse(_message.Message):
    __slots__ = ("model",)
    MODEL_FIELD_NUMBER: _ClassVar[int]
    model: _agent_v1_pb2.ModelDetails
    def __init__(self, model: _Optional[_Union[_agent_v1_pb2.ModelDetails, _Mapping]] = ...) -> None: ...

class TrackEventsRequest(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[AnalyticsEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[AnalyticsEvent, _Mapping]]] = ...) -> None: ...

class AnalyticsEvent(_message.Message):
    __slots__ = ("event_name", "event_data", "timestamp")
    class EventDataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: EventData
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[EventData, _Mapping]] = ...) -> None: ...
    EVENT_NAME_FIELD_NUMBER: _ClassVar[int]
    EVENT_DATA_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    event_name: str
    event_data: _containers.MessageMap[str, EventData]
    timestamp: int
    def __init__(self, event_name: _Optional[str] = ..., event_data: _Optional[_Mapping[str, EventData]] = ..., timestamp: _Optional[int] = ...) -> None: ...

class EventData(_message.Message):
    __slots__ = ("string_value", "int_value", "bool_value", "double_value")
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT_VALUE_FIELD_NUMBER: _ClassVar[int]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    string_value: str
    int_value: int
    bool_value: bool
    double_value: float
    def __init__(self, string_value: _Optional[str] = ..., int_value: _Optional[int] = ..., bool_value: _Optional[bool] = ..., double_value: _Optional[float] = ...) -> None: ...

class TrackEventsResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BatchRequest(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[BatchEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[BatchEvent, _Mapping]]] = ...) -> None: ...

class BatchEvent(_message.Message):
    __slots__ = ("event", "properties", "timestamp", "user_id", "anonymous_id", "message_id")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    ANONYMOUS_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    event: str
    properties: _struct_pb2.Struct
    timestamp: int
    user_id: str
    anonymous_id: str
    message_id: str
    def __init__(self, event: _Optional[str] = ..., properties: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., timestamp: _Optional[int] = ..., user_id: _Optional[str] = ..., anonymous_id: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class BatchResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class IngestConversationRequest(_message.Message):
    __slots__ = ("conversation_id", "transcript", "transcript_json", "mode", "model", "last_updated_at")
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_JSON_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    LAST_UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    conversation_id: str
    transcript: str
    transcript_json: str
    mode: str
    model: str
    last_updated_at: int
    def __init__(self, conversation_id: _Optional[str] = ..., transcript: _Optional[str] = ..., transcript_json: _Optional[str] = ..., mode: _Optional[str] = ..., model: _Optional[str] = ..., last_updated_at: _Optional[int] = ...) -> None: ...

class IngestConversationResponse(_message.Message):
    __slots__ = ("success", "summary", "detailed_summary", "error_message")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    DETAILED_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    summary: str
    detailed_summary: str
    error_message: str
    def __init__(self, success: _Optional[bool] = ..., summary: _Optional[str] = ..., detailed_summary: _Optional[str] = ..., error_message: _Optional[str] = ...) -> None: ...

class StreamUnifiedChatRequest(_message.Message):
    __slots__ = ("model_details", "conversation_id")
    MODEL_DETAILS_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    model_details: ModelDetails
    conversation_id: str
    def __init__(self, model_details: _Optional[_Union[ModelDetails, _Mapping]] = ..., conversation_id: _Optional[str] = ...) -> None: ...

class ModelDetails(_message.Message):
    __slots__ = ("model_name",)
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    model_name: str
    def __init__(self, model_name: _Optional[str] = ...) -> None: ...

class ShareConversationRequest(_message.Message):
    __slots__ = ("conversation_id", "title")
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    conversation_id: str
    title: str
    def __init__(self, conversation_id: _Optional[str] = ..., title: _Optional[str] = ...) -> None: ...

class GetClientUsageDataRequest(_message.Message):
    __slots__ = ("conversation_id", "timestamp_before_request")
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_BEFORE_REQUEST_FIELD_NUMBER: _ClassVar[int]
    conversation_id: str
    timestamp_before_request: int
    def __init__(self, conversation_id: _Optional[str] = ..., timestamp_before_request: _Optional[int] = ...) -> None: ...

class ReportAgentMessageFeedbackRequest(_message.Message):
    __slots__ = ("request_id", "bubble_id", "composer_id", "selected_text", "comment", "canonical_model_name")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    BUBBLE_ID_FIELD_NUMBER: _ClassVar[int]
    COMPOSER_ID_FIELD_NUMBER: _ClassVar[int]
    SELECTED_TEXT_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    CANONICAL_MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    bubble_id: str
    composer_id: str
    selected_text: str
    comment: str
    canonical_model_name: str
    def __init__(self, request_id: _Optional[str] = ..., bubble_id: _Optional[str] = ..., composer_id: _Optional[str] = ..., selected_text: _Optional[str] = ..., comment: _Optional[str] = ..., canonical_model_name: _Optional[str] = ...) -> None: ...

class GetComposerAutocompleteRequest(_message.Message):
    __slots__ = ("input_text", "composer_id")
    INPUT_TEXT_FIELD_NUMBER: _ClassVar[int]
    COMPOSER_ID_FIELD_NUMBER: _ClassVar[int]
    input_text: str
    composer_id: str
    def __init__(self, input_text: _Optional[str] = ..., composer_id: _Optional[str] = ...) -> None: ...

class SuggestQuickActionsRequest(_message.Message):
    __slots__ = ("last_user_message", "last_assistant_message")
    LAST_USER_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LAST_ASSISTANT_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    last_user_message: str
    last_assistant_message: str
    def __init__(self, last_user_message: _Optional[str] = ..., last_assistant_message: _Optional[str] = ...) -> None: ...

class WriteGitBranchNameRequest(_message.Message):
    __slots__ = ("diffs", "context", "conversation_id")
    DIFFS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    diffs: str
    context: str
    conversation_id: str
    def __init__(self, diffs: _Optional[str] = ..., context: _Optional[str] = ..., conversation_id: _Optional[str] = ...) -> None: ...

class WriteGitBranchNameResponse(_message.Message):
    __slots__ = ("branch_name",)
    BRANCH_NAME_FIELD_NUMBER: _ClassVar[int]
    branch_name: str
    def __init__(self, branch_name: _Optional[str] = ...) -> None: ...

class GetServerConfigResponse(_message.Message):
    __slots__ = ("http2_config",)
    HTTP2_CONFIG_FIELD_NUMBER: _ClassVar[int]
    http2_config: Http2Config
    def __init__(self, http2_config: _Optional[_Union[Http2Config, str]] = ...) -> None: ...
