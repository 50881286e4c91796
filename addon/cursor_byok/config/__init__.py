"""The user's configuration: providers, models, defaults — one TOML file, validated precisely.

`settings` holds what a config is (frozen dataclasses), `load` how a file becomes one (and is
re-read when it changes); `catalog` is the model list Cursor's picker shows, `presets` the
starting points `cursor-byok init` writes. The names most callers need are here.
"""

from cursor_byok.config.load import ConfigSource
from cursor_byok.config.load import load_config
from cursor_byok.config.load import parse_config
from cursor_byok.config.settings import Config
from cursor_byok.config.settings import ConfigError
from cursor_byok.config.settings import ImageGenerationConfig
from cursor_byok.config.settings import ModelConfig
from cursor_byok.config.settings import ProviderConfig
from cursor_byok.config.settings import SecretRef
from cursor_byok.config.settings import WebSearchConfig
from cursor_byok.config.settings import default_config_path

__all__ = [
    "Config",
    "ConfigError",
    "ConfigSource",
    "ImageGenerationConfig",
    "ModelConfig",
    "ProviderConfig",
    "SecretRef",
    "WebSearchConfig",
    "default_config_path",
    "load_config",
    "parse_config",
]
