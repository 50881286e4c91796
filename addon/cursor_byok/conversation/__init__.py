"""The neutral conversation format the agent writes and the providers read.

Free of protobuf and I/O: the provider adapters import it and know nothing of Cursor's side.
"""
