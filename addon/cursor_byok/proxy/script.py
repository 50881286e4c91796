"""The mitmproxy script that loads cursor-byok: `mitmdump -s <this file>`.

`addon/main.py` (for a checkout) and `cursor-byok run` (for an installed package) both point
mitmproxy here, so there is one list of addons (mitmproxy runs this file as a script, outside
the package's module namespace: everything it defines lives in `compose.py`).
"""

from cursor_byok.proxy.compose import compose

addons = compose().addons
