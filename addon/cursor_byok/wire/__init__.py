"""The wire: Connect envelopes and compression, the Agent request bodies, blob ids. Sans-IO."""
