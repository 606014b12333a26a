"""Talking to a running firmware: a line-oriented serial link and the protocol client on top."""
