"""Cursor's side of a turn: actions, checkpoints, privacy, analytics, content calls, Tab.

Sans-IO, like the run core beside it; neither imports the other.
"""
