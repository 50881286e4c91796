"""Generated protobuf modules. Do not edit: run `just proto`."""
