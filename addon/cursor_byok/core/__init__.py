"""The run core: attempts, runs, their outboxes, inboxes, states and deadlines. Sans-IO."""
