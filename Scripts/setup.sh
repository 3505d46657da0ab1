#!/usr/bin/env bash
# Installs what a fresh Debian machine with Swift and Python lacks, saying what it does:
#   bash Scripts/setup.sh demo    what `moments demo` needs: SQLite's, libcurl's and
#                                 libpq's headers, and graphql-core (in .venv) for the
#                                 reference BFF
#   bash Scripts/setup.sh test    the same, and what the tests need besides: PostgreSQL's
#                                 server programs, openssl
# Debian packages come from apt-get (as root, or through sudo); Python packages from PyPI
# into the repository's own virtual environment, .venv, which the tests and `moments demo`
# find by themselves. Nothing is installed that is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
purpose="${1:-test}"

say() { echo "setup: $*"; }

missing=()
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
pkg-config --exists libcurl 2>/dev/null || missing+=(libcurl4-openssl-dev)
pkg-config --exists libpq 2>/dev/null || missing+=(libpq-dev)
command -v python3 >/dev/null || missing+=(python3)
# Debian ships venv's pip bootstrap separately (python3-venv).
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
if [ "$purpose" = test ]; then
    # The PostgreSQL tests start a private server from the `postgresql` package's
    # programs (initdb, pg_ctl; psql from its client package); openssl makes the test
    # certificates.
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
    command -v openssl >/dev/null || missing+=(openssl)
fi
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    say "installing ${missing[*]} with apt-get (about a minute)…"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    say "installed ${missing[*]}"
fi

# The reference BFF (Tools/bff) needs graphql-core; Debian's python3-graphql-core is
# too old, so it comes from PyPI into .venv.
if ! .venv/bin/python3 -c 'import graphql' >/dev/null 2>&1; then
    say "installing graphql-core into .venv…"
    rm -rf .venv
    python3 -m venv .venv
    .venv/bin/python3 -m pip install --quiet --disable-pip-version-check 'graphql-core>=3.2,<3.3'
    say "installed graphql-core $(.venv/bin/python3 -c 'import graphql; print(graphql.__version__)')"
fi
