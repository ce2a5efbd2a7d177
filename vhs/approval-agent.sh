#!/usr/bin/env bash
# A stand-in agent runtime for vhs/approval.tape: it registers a sub-agent run
# and asks for two tool calls with `clawpit approval request`, blocks on
# `clawpit approval wait` (exit 0 approved, 10 denied; it gives up after 2 m
# so a stray agent ends) and acts on the
# answers; once a session grant exists, its next `git push` is approved at
# once. Every clawpit call is echoed with its output, so the log it writes
# reads as the agent's side of the story.
#
# Uses the registry of $CLAWPIT_HOME (or $CLAWPIT_DB); start it in the
# background, then open the console:  vhs/approval-agent.sh >agent.log 2>&1 &
set -u

S=ci-bot
RUN=run-7f3a

# say CMD…: print "$ CMD" (arguments with spaces in quotes) and run it;
# its output, stderr too, follows.
say() {
  local a line='$'
  for a in "$@"; do
    case $a in *" "*) line+=" \"$a\"" ;; *) line+=" $a" ;; esac
  done
  printf '%s\n' "$line"
  "$@" 2>&1
}
# ask CMD RATIONALE CWD: request an approval for a Bash command; prints the id.
ask() {
  printf '$ clawpit approval request --session %s --run-id %s --tool Bash \\\n    --command "%s"\n' "$S" "$RUN" "$1" >&2
  clawpit approval request --session "$S" --run-id "$RUN" --tool Bash --command "$1" --rationale "$2" --cwd "$3"
}

say clawpit session open "$S" --label "CI bot" >/dev/null
say clawpit run register "$RUN" --session "$S:sub:$RUN" --requester "$S" --label "ship the retry fix"
sleep "${AGENT_DELAY:-2}"

TF=$(ask "terraform apply -auto-approve" "apply the queue autoscaling change" "~/src/infra/envs/staging")
sleep 1.5
PUSH=$(ask "git push --force-with-lease origin fix/retry-queue" "push the rebased branch for review" "~/src/api")

# Both decisions arrive in any order; each waiter reports on its own.
(
  if say clawpit approval wait "$TF" --timeout 2m; then
    echo "→ agent: running terraform apply"
  else
    echo "→ agent: terraform apply not run (exit $?); planning without it"
  fi
) &
if say clawpit approval wait "$PUSH" --timeout 2m; then
  echo "→ agent: pushed fix/retry-queue"
  sleep 2
  # Same tool and verb chain (git push) in the same session: the session
  # grant approves it at once, no human needed.
  TAGS=$(ask "git push --tags origin" "push the release tag" "~/src/api")
  say clawpit approval wait "$TAGS" --timeout 2m && echo "→ agent: pushed the tags (approved by the grant)"
else
  echo "→ agent: push not approved (exit $?)"
fi
wait
say clawpit run complete "$RUN" --outcome ok
