"""Shell commands before they run: what a Bash command line would do, and the deny list.

``parser`` reads the line into simple commands (records in ``syntax``),
``wrappers`` peels ``sudo``/``env``/``bash -c`` ..., ``programs`` knows what each
program does, ``classify`` puts it together (``BashSideEffects``) and ``deny``
matches rules against it (``DenyCommands``). Nothing is imported here: a hook
process loads only the modules its hooks use.
"""
