# shellcheck shell=bash
# A small harness for the console checks of .ci/run (sourced, not run): a
# private tmux server runs a command in a detached 160×48 window; the check
# types keys with send-keys and reads the screen with capture-pane, polling
# with deadlines, never fixed sleeps, so a loaded 2-core machine only makes it
# slower, not flaky. Every failure names what was missing and dumps the last
# screen captured.
#
# The sourcing script sets CHECK (its name, used in messages) and may define
# check_cleanup (called once on exit, before the tmux server is killed).

set -euo pipefail

: "${CHECK:=check}"
TUI_W=160
TUI_H=48
TUI_SOCK=""   # tmux -L socket name of the private server
TUI_SCREEN="" # the last screen captured by tui_capture
TUI_STATUS="" # the exit status of the command, once tui_dead succeeded
TUI_MISSING=""
TUI_T0=${EPOCHREALTIME/./}

# now_ms prints the wall clock in milliseconds.
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# elapsed prints seconds since the script started, e.g. "12.3s".
elapsed() {
  local t=${EPOCHREALTIME/./}
  local d=$(((t - TUI_T0) / 100000))
  printf '%d.%ds' $((d / 10)) $((d % 10))
}

log() { printf '[%s %7s] %s\n' "$CHECK" "$(elapsed)" "$*"; }
ok() { printf '[%s %7s] ok: %s\n' "$CHECK" "$(elapsed)" "$*"; }

# skip prints why the check does not apply and exits 0.
skip() {
  printf '[%s] SKIP: %s\n' "$CHECK" "$*"
  exit 0
}

# fail names what was missing, dumps the last screen (and any extra file
# named by TUI_DUMP_FILES) and exits 1; the EXIT trap cleans up.
fail() {
  printf '[%s %7s] FAIL: %s\n' "$CHECK" "$(elapsed)" "$*" >&2
  if [ -n "$TUI_SOCK" ] && [ -z "$TUI_SCREEN" ]; then
    TUI_SCREEN=$(tui_tmux capture-pane -p -t ci 2>/dev/null || true)
  fi
  if [ -n "$TUI_SCREEN" ]; then
    printf '[%s] last screen captured (%dx%d):\n' "$CHECK" "$TUI_W" "$TUI_H" >&2
    printf '%s\n' "+$(printf '%*s' "$TUI_W" '' | tr ' ' -)+" >&2
    printf '%s\n' "$TUI_SCREEN" | sed 's/^/|/' >&2
    printf '%s\n' "+$(printf '%*s' "$TUI_W" '' | tr ' ' -)+" >&2
  fi
  local f
  for f in ${TUI_DUMP_FILES:-}; do
    [ -f "$f" ] || continue
    printf '[%s] last lines of %s:\n' "$CHECK" "$f" >&2
    tail -n 30 "$f" | sed 's/^/  /' >&2
  done
  exit 1
}

_tui_cleanup_done=""
_tui_exit() {
  local rc=$?
  [ -n "$_tui_cleanup_done" ] && return
  _tui_cleanup_done=1
  set +e
  if declare -F check_cleanup >/dev/null; then check_cleanup; fi
  if [ -n "$TUI_SOCK" ]; then
    local path
    path=$(tui_tmux display-message -p '#{socket_path}' 2>/dev/null)
    tui_tmux kill-server >/dev/null 2>&1
    [ -n "$path" ] && rm -f "$path" # kill-server may leave the socket file
  fi
  [ -n "${TUI_CONF:-}" ] && rm -f "$TUI_CONF"
  return "$rc"
}
trap _tui_exit EXIT
trap 'exit 130' INT TERM HUP

tui_tmux() { tmux -L "$TUI_SOCK" "$@"; }

# tui_start DIR CMD [ARG…] starts a private tmux server whose one window (the
# target "ci") runs CMD in DIR. A shell around CMD prints a marker line with
# its exit status and then stays, so the pane keeps CMD's last output (tmux
# may stop reading a pane whose process has exited before it has read all of
# it) and tui_dead can read the status.
tui_start() {
  local dir=$1
  shift
  command -v tmux >/dev/null || fail "tmux is not installed (.ci/run installs it)"
  TUI_SOCK="clawpit-ci-${CHECK}-$$"
  TUI_CONF=$(mktemp "${TMPDIR:-/tmp}/clawpit-ci-tmux.XXXXXX")
  # escape-time 0: keys typed by send-keys reach the program unchanged.
  printf '%s\n' 'set -g remain-on-exit on' 'set -g status off' 'set -g escape-time 0' \
    'set -g history-limit 2000' 'set -g default-terminal screen-256color' \
    "set -g default-shell $(command -v bash)" >"$TUI_CONF"
  local cmd
  cmd=$(printf '%q ' "$@")
  TERM=${TERM:-xterm-256color} tmux -L "$TUI_SOCK" -f "$TUI_CONF" \
    new-session -d -s ci -x "$TUI_W" -y "$TUI_H" -c "$dir" \
    "$cmd; echo \"$TUI_MARK \$?\"; exec sleep 86400" ||
    fail "could not start tmux"
}

# TUI_MARK starts the line the wrapper prints when CMD has exited.
TUI_MARK="__ci_exited_with_status__"

# tui_pane_pid prints the pid of the pane's process (the shell around CMD).
tui_pane_pid() { tui_tmux display-message -p -t ci '#{pane_pid}'; }

# tui_dead succeeds when CMD has exited; it sets TUI_STATUS to its status.
tui_dead() {
  local s
  s=$(tui_tmux capture-pane -p -t ci 2>/dev/null | grep -Eo "^$TUI_MARK [0-9]+" | tail -n1) || true
  if [ -n "$s" ]; then
    TUI_STATUS=${s##* }
    return 0
  fi
  s=$(tui_tmux display-message -p -t ci '#{pane_dead} #{pane_dead_status}' 2>/dev/null) || return 1
  [ "${s%% *}" = 1 ] || return 1
  TUI_STATUS=${s#* }
}

# tui_capture stores the visible screen (plain text) in TUI_SCREEN.
tui_capture() {
  TUI_SCREEN=$(tui_tmux capture-pane -p -t ci) || fail "capture-pane failed (did the console die?)"
}

# tui_keys KEY… types keys (tmux key names: Enter, Escape, / …).
tui_keys() { tui_tmux send-keys -t ci "$@"; }

# tui_type TEXT types TEXT literally.
tui_type() { tui_tmux send-keys -t ci -l "$1"; }

# tui_has ERE succeeds when the last screen has a line matching ERE.
tui_has() { grep -Eq -- "$1" <<<"$TUI_SCREEN"; }

# tui_count ERE prints how many lines of the last screen match ERE.
tui_count() { grep -Ec -- "$1" <<<"$TUI_SCREEN" || true; }

# tui_line ERE prints the first line of the last screen matching ERE.
tui_line() { grep -Em1 -- "$1" <<<"$TUI_SCREEN" || true; }

# wait_until SECONDS WHAT PREDICATE [ARG…] captures the screen every 0.2 s
# until PREDICATE ARG… succeeds (it reads TUI_SCREEN), or fails naming WHAT
# when SECONDS have passed. A pane whose command has exited fails at once. A
# predicate may set TUI_MISSING to say which part was missing.
wait_until() {
  local secs=$1 what=$2
  shift 2
  TUI_MISSING=""
  local deadline=$(($(now_ms) + secs * 1000))
  while :; do
    tui_capture
    if "$@"; then return 0; fi
    if tui_dead; then
      tui_capture
      fail "$what: the console exited (status $TUI_STATUS) before it showed up"
    fi
    if (($(now_ms) >= deadline)); then
      fail "$what: not on screen after ${secs}s${TUI_MISSING:+ (missing: $TUI_MISSING)}"
    fi
    sleep 0.2
  done
}

# wait_for SECONDS WHAT ERE waits for a line matching ERE.
wait_for() { wait_until "$1" "$2" tui_has "$3"; }

# poll SECONDS WHAT COMMAND [ARG…] runs COMMAND every 0.2 s until it
# succeeds, or fails naming WHAT (for things that are not on the screen).
poll() {
  local secs=$1 what=$2
  shift 2
  local deadline=$(($(now_ms) + secs * 1000))
  until "$@"; do
    (($(now_ms) < deadline)) || fail "$what (waited ${secs}s)"
    sleep 0.2
  done
}

# free_port prints a loopback TCP port nobody listens on right now.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# short N squeezes runs of spaces and cuts its input to about N bytes
# without splitting a UTF-8 character (for log messages).
short() {
  if command -v iconv >/dev/null; then
    tr -s ' ' | cut -c1-"$1" | { iconv -c -f UTF-8 -t UTF-8 2>/dev/null || true; }
  else
    tr -s ' ' | cut -c1-"$1"
  fi
}
