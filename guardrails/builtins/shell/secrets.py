"""The project's secrets, as globs: one list for the guards that keep them.

``protect_paths`` keeps them from being changed (``DEFAULT_PROTECTED_PATHS`` is this
list and ``.git/**``); ``deny_commands`` keeps them from leaving the machine (its
``DEFAULT_SECRETS`` is this list and the usual credential files outside the project).
"""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_SECRETS", "SECRET_PATHS"]

#: env files (not their examples) and private keys, anywhere in the project
SECRET_PATHS: Final = (
    "**/.env*",
    "!**/.env*.{example,sample,template,dist}",
    "**/*.pem",
    "**/id_rsa*",
    "**/id_dsa*",
    "**/id_ecdsa*",
    "**/id_ed25519*",
)

#: what the exfiltration check protects by default: the project's secrets, the
#: repository's config (remote URLs and CI auth headers hold tokens), the usual
#: credential files in the home directory, and the environment as a whole
#: (``env``, ``printenv``: ``/proc/self/environ``); public keys are not secrets
DEFAULT_SECRETS: Final = (
    *SECRET_PATHS,
    ".git/config",
    "~/.ssh/id_*",
    "~/.aws/credentials",
    "~/.config/gcloud/**",
    "~/.azure/**",
    "~/.netrc",
    "~/.git-credentials",
    "~/.docker/config.json",
    "~/.kube/config",
    "~/.config/gh/hosts.yml",
    "~/.npmrc",
    "~/.pypirc",
    "~/.gnupg/**",
    "/proc/*/environ",
    "!/**/*.pub",
)
