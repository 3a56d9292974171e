"""What network clients send (``programs.sends``): which files, their input, their words.

The table answers per program, before any data flow: reading a secret to use it
here (``--cert``, ``ssh -i``, ``--cacert``) is not sending it; secret stores are
not senders; a local copy sends nothing.
"""

from __future__ import annotations

import shlex

import pytest

from guardrails.builtins.shell.programs.sends import curl_config, put_files, sends

#: (command, files sent, its input sent, its words sent)
SENDERS = [
    ("curl -d @a.json https://h", ["a.json"], False, True),
    ("curl --data-binary @- https://h", ["-"], False, True),
    ("curl -d@a https://h", ["a"], False, True),
    ("curl --data=@a https://h", ["a"], False, True),
    ("curl --data-raw @a https://h", [], False, True),  # --data-raw sends "@a" itself
    ("curl --data-urlencode k@a https://h", ["a"], False, True),
    ("curl --data-urlencode k=v@x https://h", [], False, True),
    ("curl -F 'f=@a;type=text/plain' https://h", ["a"], False, True),
    ("curl -F 'f=<a' https://h", ["a"], False, True),
    ("curl --form-string 'f=@a' https://h", [], False, True),
    ("curl -T a https://h", ["a"], False, True),
    ("curl -T . https://h", ["-"], False, True),
    ("curl -T '{a,b}' https://h", ["a", "b"], False, True),
    ("curl -H @headers.txt https://h", ["headers.txt"], False, True),
    ("curl --variable v@a --expand-data '{{v}}' https://h", ["a"], False, True),
    ("curl --cert c.pem --key k.pem --cacert ca.pem https://h", [], False, True),
    ("curl -o out.html https://h", [], False, True),
    ("wget --post-file=a https://h", ["a"], False, True),
    ("wget --body-file a --method=PUT https://h", ["a"], False, True),
    ("wget -i urls.txt", ["urls.txt"], False, True),
    ("wget -O out https://h", [], False, True),
    ("http POST https://h f=@a", ["a"], True, True),
    ("http --ignore-stdin POST https://h", [], False, True),
    ("nc h 1", [], True, True),
    ("ncat -l 1", [], True, True),
    ("telnet h 1", [], True, True),
    ("openssl s_client -connect h:443", [], True, True),
    ("socat - TCP:h:1", [], True, True),
    ("socat -u FILE:a,rdonly TCP:h:1", ["a"], False, True),
    ("ssh h 'cat > x'", [], True, True),
    ("ssh -n h uptime", [], False, True),
    ("ssh -i id_rsa h uptime", [], True, True),
    ("scp a b h:/tmp/", ["a", "b"], False, True),
    ("scp -P 22 -i id_rsa a h:", ["a"], False, True),
    ("scp h:/etc/x .", [], False, True),  # a download
    ("rsync -a src/ h:/dst/", ["src/"], False, True),
    ("rsync -a src/ dst/", [], False, True),  # a local copy
    ("mail -s s -a a x@h", ["a"], True, True),
    ("sendmail x@h", [], True, True),
    ("mutt -s s -a a b -- x@h", ["a", "b"], True, True),
    ("aws s3 cp a s3://b/", ["a"], False, True),
    ("aws s3 cp - s3://b/x", ["-"], False, True),
    ("aws s3 cp s3://b/x .", [], False, True),
    ("aws sqs send-message --message-body file://a", ["a"], False, True),
    ("aws s3api put-object --bucket b --key k --body a", ["a"], False, True),
    ("gsutil cp a gs://b/", ["a"], False, True),
    ("gcloud storage cp a gs://b/", ["a"], False, True),
    ("az storage blob upload -f a -c c -n n", ["a"], False, True),
    ("rclone copy a remote:x", ["a"], False, True),
    ("rclone rcat remote:x", [], True, True),
    ("gh gist create a b", ["a", "b"], False, True),
    ("gh gist create", [], True, True),
    ("gh issue create -t t --body-file a", ["a"], False, True),
    ("gh release upload v1 a b", ["a", "b"], False, True),
    ("gh api -X POST /x -F f=@a --input b", ["a", "b"], False, True),
    ("dig -f names.txt", ["names.txt"], False, True),
    ("nslookup", [], True, True),
    ("dig example.org", [], False, True),
    ("git push origin main", [], False, True),
]


@pytest.mark.parametrize("command, files, stdin, args", SENDERS, ids=[c for c, *_ in SENDERS])
def test_a_network_client_sends_its_files_its_input_and_its_words(
    command: str, files: list[str], stdin: bool, args: bool
) -> None:
    what = sends(shlex.split(command))
    assert what is not None
    assert (what.files, what.stdin, what.args) == (files, stdin, args)


@pytest.mark.parametrize(
    "command",
    [
        "cat .env",
        "ls -la",
        "docker run --env-file .env app",
        "kubectl apply -f x.yaml",
        "gh secret set -f .env",  # secret stores: where secrets belong
        "gh variable set X",
        "aws secretsmanager put-secret-value --secret-id s --secret-string file://.env",
        "aws ssm put-parameter --name n --value file://.env",
        "gcloud secrets create s --data-file=.env",
        "az keyvault secret set --vault-name v -n n -f .env",
        "openssl x509 -in cert.pem -noout",
        "git commit -m x",
        "",
    ],
)
def test_a_program_that_sends_nothing_elsewhere_is_not_a_sender(command: str) -> None:
    assert sends(shlex.split(command)) is None


@pytest.mark.parametrize(
    "command, staged, forced",
    [
        ("git add a b", ["a", "b"], False),
        ("git add -A", ["."], False),
        ("git add .", ["."], False),
        ("git add -f .env", [".env"], True),
        ("git add -u", [], False),
        ("git -C sub add x", ["x"], False),
    ],
)
def test_git_add_stages_what_a_later_push_sends(
    command: str, staged: list[str], forced: bool
) -> None:
    what = sends(shlex.split(command))
    assert what is not None
    assert what.stage == staged
    assert what.force is forced
    assert not what.push


def test_git_push_sends_what_was_staged_and_rsync_excludes_are_kept() -> None:
    assert sends(["git", "push"]).push  # type: ignore[union-attr]
    what = sends(shlex.split("rsync -a --exclude .env --exclude=node_modules/ . h:/x"))
    assert what is not None and what.excludes == (".env", "node_modules")


@pytest.mark.parametrize(
    "command, script, from_input",
    [
        ("sftp h", None, True),
        ("ftp -n h", None, True),
        ("lftp -c 'open h; put a'", "open h; put a", False),
        ("smbclient //h/s -N -c 'put a'", "put a", False),
        ("tftp h -c put a", "put a", False),
        ("tftp h", None, True),
    ],
)
def test_interactive_clients_take_their_commands_from_an_option_or_their_input(
    command: str, script: str | None, from_input: bool
) -> None:
    what = sends(shlex.split(command))
    assert what is not None
    assert (what.script, what.script_stdin) == (script, from_input)


@pytest.mark.parametrize(
    "script, files",
    [
        ("put .env", [".env"]),
        ("user a b\nput .env remote.txt\nbye", [".env"]),
        ("open h; mput a b; quit", ["a", "b"]),
        ("cd /tmp\nls\nget x", []),
        ("PUT -p id_rsa", ["id_rsa"]),
    ],
)
def test_put_commands_name_the_files_an_upload_script_sends(script: str, files: list[str]) -> None:
    assert put_files(script) == files


@pytest.mark.parametrize(
    "config, files",
    [
        ('data = "@.env"', [".env"]),
        ("upload-file = a\nurl = https://h", ["a"]),
        ("--data-binary @b", ["b"]),
        ("# data = @x\nheader = X: y", []),
        ("-F f=@c", ["c"]),
    ],
)
def test_a_curl_config_names_the_files_it_sends(config: str, files: list[str]) -> None:
    assert curl_config(config) == files
