"""The mock PBS server: state (``models``), the qmgr language (``qmgr_lang``), wire
operation handlers (``responses``), the scheduler, accounting and the daemon entry point."""
