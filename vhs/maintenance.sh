#!/usr/bin/env bash
# Prepares the registry of $CLAWPIT_HOME (or $CLAWPIT_DB) for
# vhs/maintenance.tape with plain clawpit CLI calls, echoing each one: two
# sub-agent runs with their tasks running, and a finished chore. Then it
# leaves a stand-in runtime in the background that waits until maintenance
# has marked run-a1's tasks lost and reports the run's late completion
# (`clawpit run complete run-a1 --outcome ok`), which wins over the inferred
# lost (SPEC R2). The background part logs to late.log and gives up after 2 m.
set -eu

# say CMD…: print "$ CMD" (arguments with spaces in quotes) on stderr, so it
# shows even when the output is captured, and run it.
say() {
  local a line='$'
  for a in "$@"; do
    case $a in *" "*) line+=" \"$a\"" ;; *) line+=" $a" ;; esac
  done
  printf '%s\n' "$line" >&2
  "$@"
}

say clawpit session open main --label "main agent" >/dev/null
say clawpit run register run-a1 --session main:sub:a1 --requester main --label "refactor config loader" --inactivity 10m
T=$(say clawpit task create --runtime subagent --run-id run-a1 --session main --label "refactor config loader" | tail -n1)
say clawpit task start "$T" --summary "editing config.go" >/dev/null
P=$(say clawpit task create --runtime cli --source-id run-a1 --session main --label "go test ./config/..." | tail -n1)
say clawpit task start "$P" >/dev/null
say clawpit run register run-b2 --session main:sub:b2 --requester main --label "summarise PR #412" --inactivity 10m >/dev/null
B=$(say clawpit task create --runtime subagent --run-id run-b2 --session main --label "summarise PR #412" | tail -n1)
say clawpit task start "$B" --summary "reading the diff" >/dev/null
C=$(say clawpit task create --runtime cli --session main --label "go vet ./..." | tail -n1)
say clawpit task finish "$C" --status succeeded >/dev/null

# The late completion, in the background once run-a1's task is lost.
(
  for _ in $(seq 240); do
    if clawpit task show "$T" --json | grep -q '"status": "lost"'; then
      sleep 4
      clawpit run complete run-a1 --outcome ok
      exit 0
    fi
    sleep 0.5
  done
  echo "gave up: task $T never became lost"
) >late.log 2>&1 &
echo "(in the background: once run-a1's tasks are lost, its late result arrives: clawpit run complete run-a1 --outcome ok)"
