"""The mitmproxy script that loads cursor-byok: `mitmdump -s <this file>`.

`addon/main.py` (for a checkout) and `cursor-byok run` (for an installed package) both point
mitmproxy here, so there is one list of addons.
"""

from cursor_byok.proxy.addon import CursorByok
from cursor_byok.proxy.heap import FreezeStartupHeap
from cursor_byok.proxy.model_picker import ModelPicker
from cursor_byok.proxy.status import LiveStatus

# CursorByok first: it declares the options the others read.
addons = [CursorByok(), ModelPicker(), LiveStatus(), FreezeStartupHeap()]
