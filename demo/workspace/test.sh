#!/usr/bin/env bash
# Checks the output of greet.sh.
set -u
cd "$(dirname "$0")"
want='Hello, Temporal'
got="$(./greet.sh Temporal)"
if [ "$got" != "$want" ]; then
  echo "FAIL: greet.sh printed '$got', want '$want'"
  exit 1
fi
echo "PASS: greet.sh printed '$got'"
