"""Capture files: their format (`format`), recording turns into them (`recorder`), redacting what
they hold (`redact`), and reading any capture or raw Connect body back (`view`, and
`traffic_view` for mitmweb). Replaying captures through the proxy is `cursor_byok.replay`.
"""
