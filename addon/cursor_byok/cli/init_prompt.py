"""`cursor-byok init` in a terminal without `--provider`: ask, instead of failing.

Which service (a preset), the API key with hidden input (`getpass`: never echoed, never in the
shell's history), and whether to keep it in a key file beside the config (0600, named by
`api_key_file`) so `cursor-byok run` finds it without an exported variable. The doctor that
`init` runs next checks the key with one request.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cursor_byok.config.presets import PRESETS
from cursor_byok.store.files import private_dir
from cursor_byok.store.files import write_private


@dataclass(frozen=True)
class Answers:
    provider: str
    key_file: str | None = None  # the key was written there
    key_env: str | None = None  # the key stays in this variable (set for the check only)


def ask(
    config_path: Path,
    *,
    read: Callable[[str], str] = input,
    secret: Callable[[str], str] = getpass.getpass,
    say: Callable[[str], None] = print,
) -> Answers:
    """The provider and where its key lives; may raise EOFError/KeyboardInterrupt (the caller
    stops without writing anything)."""
    names = list(PRESETS)
    provider = ""
    while provider not in PRESETS:
        provider = read(f"Provider ({', '.join(names)}) [anthropic]: ").strip().lower()
        provider = provider or "anthropic"
        if provider not in PRESETS:
            say(f"  not a preset: {provider!r}")
    preset = PRESETS[provider]
    if preset.key_env is None:
        say(f"{preset.display}: a local server, no key needed.")
        return Answers(provider)
    if os.environ.get(preset.key_env):
        say(f"Using the key in ${preset.key_env}.")
        return Answers(provider)
    key = secret(f"{preset.display} API key (input hidden, empty to set it later): ").strip()
    if not key:
        return Answers(provider)
    key_file = config_path.parent / f"{provider}.key"
    keep = read(f"Keep the key in {key_file} (readable by you only)? [Y/n]: ").strip().lower()
    if keep in ("", "y", "yes"):
        private_dir(key_file.parent)
        write_private(key_file, (key + "\n").encode())
        return Answers(provider, key_file=str(key_file))
    os.environ[preset.key_env] = key  # for the check that follows, in this process only
    say(f"Not kept: export {preset.key_env}=... before `cursor-byok run`.")
    return Answers(provider, key_env=preset.key_env)
