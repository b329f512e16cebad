"""The study: scenarios, fabric-aware search, compare, sweep and the Lite-GPU study."""
