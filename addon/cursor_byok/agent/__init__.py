"""Agents: what runs inside a turn (the scripted stand-in, and the real provider loop)."""
