"""The mock PBS server: state (``models``), errors (``errors``), the wire operation
dispatch (``responses``) over handlers kept by concern on one server context
(``context``: ``qmgr_ops``, ``qmgr_hooks``, ``hooks``, ``jobs``, ``holds``, ``array_jobs``,
``nodes``, ``lifecycle``, ``runloop``), the scheduler, accounting and the daemon entry
point. The qmgr language is the client's (``mockpbs.cli.qmgr_lang``)."""
