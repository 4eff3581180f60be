"""Mock PBS client commands; each command module has ``main(argv) -> exit code``
(``common``, ``jobops``, ``qsub_cache`` and the qmgr language ``qmgr_lang`` serve them)."""
