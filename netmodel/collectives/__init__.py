"""The collective engine: routing, algorithms as steps, alpha-beta costs over a fabric graph."""
