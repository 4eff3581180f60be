"""Helpers that start the mock's daemons inside the test process (the top floor of
mockpbs: they may import every other part of it, and nothing of mockpbs imports them).

- ``server``: an in-process server driven through the real CLI ``main()``s, a fake mom,
  the real OpenPBS transcripts the mock is compared with.
- ``mom``: clusters of real in-process moms with a recording stand-in for the server.
"""
