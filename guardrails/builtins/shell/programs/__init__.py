"""The program tables: which program, subcommand and flag means which kind of effect.

Kinds: ``read_only``, ``file_write``, ``delete``, ``move``, ``git_mutation``,
``network_mutation``, ``package_install`` (also uninstall and upgrade),
``process_control`` and ``unknown``. A command the tables do not know, a script
or interpreter run (``python x.py``, ``make``, ``npm run x``) and a program named
by a variable are ``unknown``, which counts as side-effecting: a guess that
something is harmless would switch off every check fed by these tables. Test
runners, linters and type checkers count as read-only (they are re-run after
every edit), unless a flag makes them rewrite files (``--fix``, ``--write``,
``format``). ``table.classify_argv`` is the entry point; each module holds one
family of programs and its ``HANDLERS``.
"""
