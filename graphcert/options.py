"""What graphcert takes from the process environment, read once where a run starts (the
command line, the pytest plugin, a script) into one frozen value that is passed down, so no
code below reads or writes os.environ for it (httpie's `Environment`, hatch's `Application`).

Not here, on purpose: $GRAPHCERT_CACHE / $XDG_CACHE_HOME (the kernel cache is a library
default of graphcert.paths, the same for every caller), and NO_COLOR, FORCE_COLOR and COLUMNS
for the consoles, which rich reads itself when a console is made at the command line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from graphcert.jsontypes import JSONObject

if TYPE_CHECKING:  # the key's module loads the hashing and JSON code; --help needs none
    from graphcert.cert.signing import SigningKey

DEVICE_ENV = "GRAPHCERT_DEVICE"
# "uuid": certificate names carry the GPU's short UUID (set by hand for one job per GPU of one
# model writing into one folder; a several-GPU run's workers are told so in their job).
CERT_NAME_ENV = "GRAPHCERT_CERT_NAME"
GIT_COMMIT_ENV = "GRAPHCERT_GIT_COMMIT"
GIT_DIRTY_ENV = "GRAPHCERT_GIT_DIRTY"


@dataclass(frozen=True)
class GitCommit:
    """The commit a copy of the tree without .git was made from (a device machine's copy):
    $GRAPHCERT_GIT_COMMIT, and $GRAPHCERT_GIT_DIRTY=1 when it held uncommitted changes."""

    commit: str
    dirty: bool = False

    def to_json(self) -> JSONObject:
        """The certificate's `environment.git` block, as collect_git_info writes it."""
        return {"commit": self.commit, "dirty": self.dirty}


@dataclass(frozen=True)
class Options:
    """One invocation's settings from the environment. The defaults read nothing: no key
    (certificates unsigned), device text unset, no git override, bars allowed."""

    signing_key: SigningKey | None = None
    device: str = ""  # $GRAPHCERT_DEVICE as given; checked only where a GPU is needed
    git: GitCommit | None = None
    uuid_names: bool = False  # $GRAPHCERT_CERT_NAME=uuid: certificate names carry the GPU's UUID
    ci: bool = False  # $CI set: no progress bars
    dumb_terminal: bool = False  # TERM=dumb: no progress bars
    no_color: bool = False  # NO_COLOR set: workers of a several-GPU run get no colour either
    columns: str = ""  # $COLUMNS as given: workers print as wide as the parent's terminal
    step_summary: str = ""  # $GITHUB_STEP_SUMMARY: where the gate appends its Markdown summary
    warnings: tuple[str, ...] = ()  # one line each, for the caller to print

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], *, key_file: Path | str | None = None,
                     signing: bool = True) -> Options:
        """The options `environ` gives. With `signing`, the signing key is loaded (InputError
        for a bad one): `key_file` (--signing-key-file), else $GRAPHCERT_SIGNING_KEY_FILE,
        else $GRAPHCERT_SIGNING_KEY, and a warning when a key file shadows the variable.
        Without it nothing here can fail: commands that write no certificate never load
        a key, so a bad one cannot stop them."""
        from graphcert.cert.signing import load_key, shadowed_key_note

        key = load_key(key_file, environ=environ) if signing else None
        note = shadowed_key_note(key_file, environ=environ) if signing else None
        commit = environ.get(GIT_COMMIT_ENV)
        return cls(signing_key=key, device=environ.get(DEVICE_ENV, "").strip(),
                   git=GitCommit(commit, environ.get(GIT_DIRTY_ENV, "0") == "1")
                   if commit else None,
                   uuid_names=environ.get(CERT_NAME_ENV) == "uuid",
                   ci=bool(environ.get("CI")), dumb_terminal=environ.get("TERM") == "dumb",
                   no_color="NO_COLOR" in environ, columns=environ.get("COLUMNS", ""),
                   step_summary=environ.get("GITHUB_STEP_SUMMARY", ""),
                   warnings=(note,) if note is not None else ())
