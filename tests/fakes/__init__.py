"""Test doubles shared by the test suites (scripted fake LLM provider, SSE helpers)."""
