#!/usr/bin/env bash
# Render the VHS tapes of vhs/ to GIFs beside them.
#
#   vhs/render.sh                 # every tape
#   vhs/render.sh vhs/approval.tape …   # only these
#
# Builds clawpit into /tmp/clawpit-vhs and puts it first on PATH (the tapes
# run `clawpit`), then records each tape. Needs vhs (go install
# github.com/charmbracelet/vhs@v0.11.0), ttyd, ffmpeg and a Chromium that vhs
# can start (as root: VHS_NO_SANDBOX=1, set here).
#
# GIF encoding: `vhs TAPE` alone writes the tape's GIF with vhs's own encoder
# (256 dithered colours, frames scaled to the padded size), which is much
# larger for a busy console. This script instead records the tape's
# frames (its Output line rewritten to a temporary frames/ directory) and
# encodes them itself: no dithering, one 256-colour palette, frames unscaled and
# centred on the tape's background — crisper, and for the overview 2.5 MB
# where vhs's encoder wrote 4.7 MB.
# Set RENDER_WITH_VHS=1 to keep vhs's encoder.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=/tmp/clawpit-vhs
for cmd in go vhs ttyd ffmpeg; do
  command -v "$cmd" >/dev/null || { echo "render.sh: $cmd not found" >&2; exit 1; }
done
echo "==> go build -tags sqlite_fts5 -o $bin/clawpit ."
mkdir -p "$bin"
go build -tags sqlite_fts5 -o "$bin/clawpit" .
export PATH="$bin:$PATH"
[ "$(id -u)" -ne 0 ] || export VHS_NO_SANDBOX=1

# The background colour of the tapes' VHS theme (Catppuccin Mocha's),
# for the padding around the recorded terminal.
bg="#1e1e2e"
# Palette size of each GIF (ffmpeg palettegen: at most 256).
colors=${GIF_COLORS:-256}

tapes=("$@")
((${#tapes[@]})) || tapes=(vhs/*.tape)

# setting TAPE NAME: the value of `Set NAME …` in TAPE.
setting() { awk -v k="$2" '$1 == "Set" && $2 == k { print $3; exit }' "$1"; }

failed=()
for tape in "${tapes[@]}"; do
  out=$(awk '$1 == "Output" && $2 ~ /\.gif$/ { print $2; exit }' "$tape")
  [ -n "$out" ] || { echo "render.sh: $tape has no GIF Output line" >&2; failed+=("$tape"); continue; }
  echo "==> $tape → $out"
  start=$SECONDS
  if [ "${RENDER_WITH_VHS:-}" = 1 ]; then
    vhs -q "$tape" || { failed+=("$tape"); continue; }
  else
    tmp=$(mktemp -d)
    # The tape with its GIF output replaced by a frames directory (vhs then
    # skips its own encoding). Run from the repository root, as the tape
    # expects, so its relative paths (vhs/…) resolve.
    sed "s#^Output $out\$#Output \"$tmp/frames/\"#" "$tape" >"$tmp/tape.tape"
    if ! vhs -q "$tmp/tape.tape"; then
      failed+=("$tape"); rm -rf "$tmp"; continue
    fi
    w=$(setting "$tape" Width); h=$(setting "$tape" Height); fps=$(setting "$tape" Framerate)
    # Text and cursor layers, overlaid; centred on the padded canvas; one
    # palette for the whole GIF; only the changed rectangle of each frame.
    ffmpeg -v error -y \
      -framerate "$fps" -start_number 1 -i "$tmp/frames/frame-text-%05d.png" \
      -framerate "$fps" -start_number 1 -i "$tmp/frames/frame-cursor-%05d.png" \
      -filter_complex "[0][1]overlay,pad=$w:$h:(ow-iw)/2:(oh-ih)/2:color=$bg,split[a][b];
        [a]palettegen=max_colors=$colors:stats_mode=full[p];
        [b][p]paletteuse=dither=none:diff_mode=rectangle" \
      "$out" || failed+=("$tape")
    rm -rf "$tmp"
  fi
  printf '    %s: %s bytes, %ds\n' "$out" "$(stat -c %s "$out" 2>/dev/null || echo '?')" $((SECONDS - start))
done
if ((${#failed[@]})); then
  printf '==> FAILED: %s\n' "${failed[@]}"
  exit 1
fi
