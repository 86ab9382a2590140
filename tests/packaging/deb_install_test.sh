#!/usr/bin/env bash
# Builds the .deb from a built tree (cpack), installs it into a fresh folder with dpkg -x and
# checks that what a user gets works: p64 --version, synth -> convert -> verify -> decode-proxy
# on the CPU backend, the man page, and (GUI builds) p64lab --version offscreen, the desktop
# entry, the hicolor icons and the AppStream metainfo. A build with CUDA must still start on
# a machine without the driver and say why the CUDA backend cannot run.
# Usage: deb_install_test.sh <build dir> <project version> gui|nogui "<backends built in>"
set -euo pipefail
BUILD=$(cd "$1" && pwd)
VERSION=$2
GUI=$3
BACKENDS=$4

WORK=$(mktemp -d "${TMPDIR:-/tmp}/p64-deb-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

step "cpack -G DEB"
# gzip instead of the release's xz: what the package holds is under test, not how tightly it is
# packed, and xz on the CUDA-carrying binaries costs half a minute of CI.
cpack --config "$BUILD/CPackConfig.cmake" -G DEB -B "$WORK/pkg" -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip \
  > "$WORK/cpack.log" 2>&1 ||
  { cat "$WORK/cpack.log" >&2; fail "cpack could not build the .deb"; }
shopt -s nullglob
debs=("$WORK"/pkg/*.deb)
[ ${#debs[@]} -eq 1 ] || fail "expected one .deb in $WORK/pkg, found ${#debs[@]}"
DEB=${debs[0]}
echo "$(basename "$DEB"): $(stat -c %s "$DEB") bytes"

step "control fields"
[ "$(dpkg-deb -f "$DEB" Version)" = "$VERSION" ] || fail "Version is not $VERSION"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
echo "Depends: $DEPENDS"
# dpkg-shlibdeps must have run: libc6 always, libsqlite3 for the lab store.
grep -q "libc6" <<<"$DEPENDS" || fail "Depends lacks libc6: dpkg-shlibdeps did not run"
grep -q "libsqlite3" <<<"$DEPENDS" || fail "Depends lacks libsqlite3"
# GPU runtimes are loaded at run time; a dependency on them would stop CPU-only installs.
if grep -Eq "libcuda|nvidia|libvulkan" <<<"$DEPENDS"; then fail "Depends names a GPU runtime: $DEPENDS"; fi

step "dpkg -x into a fresh root"
ROOT="$WORK/root"
dpkg -x "$DEB" "$ROOT"
for f in usr/bin/p64 usr/share/man/man1/p64.1.gz usr/share/doc/p64lab/README.md; do
  [ -e "$ROOT/$f" ] || fail "the package lacks /$f"
done
# Read the whole page first: with pipefail, `gzip -dc | grep -q` fails whenever grep stops
# reading before gzip's last write (SIGPIPE), which a page over 32 KiB makes likely.
man_page=$(gzip -dc "$ROOT/usr/share/man/man1/p64.1.gz")
grep -q '^\.SS decode-proxy' <<<"$man_page" || fail "man page has no decode-proxy section"
# Vulkan shaders are embedded in the binary as SPIR-V arrays; no loose shader files.
loose=$(find "$ROOT" -name '*.spv' -o -name '*.comp' | head -3)
[ -z "$loose" ] || fail "loose shader files in the package: $loose"

P64="$ROOT/usr/bin/p64"
unset LD_LIBRARY_PATH
step "p64 --version"
version_text=$("$P64" --version)
echo "$version_text"
grep -q "^p64 $VERSION (git [0-9a-f]\{7,\}" <<<"$version_text" || grep -q "^p64 $VERSION (git unknown" <<<"$version_text" ||
  fail "p64 --version does not print 'p64 $VERSION (git <rev>'"
grep -qx "backends: $BACKENDS" <<<"$version_text" || fail "p64 --version does not list the backends built in ($BACKENDS)"

if grep -qw cuda <<<"$BACKENDS"; then
  step "p64 passport --backend cuda (the CUDA backend is used only where a driver and a device are)"
  set +e
  cuda_out=$("$P64" passport --backend cuda 2>&1)
  cuda_rc=$?
  set -e
  echo "$cuda_out" | tail -3
  # 0 on a GPU machine; elsewhere a clear refusal (exit 1), never a crash or a missing-library error.
  if [ $cuda_rc -ne 0 ]; then
    [ $cuda_rc -eq 1 ] || fail "p64 passport --backend cuda exited with $cuda_rc"
    grep -q "cannot run here" <<<"$cuda_out" || fail "no reason given why CUDA cannot run: $cuda_out"
  fi
fi

step "p64 synth -> convert -> verify -> decode-proxy (CPU)"
cd "$WORK"
"$P64" synth --preset tiny --quant Q8_0 -o tiny.gguf --quiet
"$P64" convert tiny.gguf tiny.p64
"$P64" verify tiny.p64
"$P64" decode-proxy tiny.p64 --backend cpu --tokens 8 --prompt-tokens 8 --runs 1 --warmup 0 --db "$WORK/lab.db" > proxy.txt
cat proxy.txt
grep -q "^  backend cpu " proxy.txt || fail "decode-proxy did not run on the CPU backend"
tok_s=$(awk '$1 == "decode" && $2 == "tok/s" { print $3; exit }' proxy.txt)
awk -v t="$tok_s" 'BEGIN { exit !(t + 0 > 0) }' || fail "decode-proxy measured no decode speed ('$tok_s')"
echo "decode-proxy: median decode $tok_s tok/s"

if [ "$GUI" = gui ]; then
  step "workbench files"
  for f in usr/bin/p64lab usr/share/applications/p64lab.desktop usr/share/icons/hicolor/scalable/apps/p64lab.svg \
           usr/share/metainfo/org.p64lab.p64lab.metainfo.xml; do
    [ -e "$ROOT/$f" ] || fail "the package lacks /$f"
  done
  for s in 16 22 24 32 48 64 128 256; do
    png="$ROOT/usr/share/icons/hicolor/${s}x${s}/apps/p64lab.png"
    [ -e "$png" ] || fail "the package lacks the ${s}x${s} icon"
    file "$png" | grep -q "PNG image data, $s x $s" || fail "$png is not a ${s}x${s} PNG: $(file -b "$png")"
  done
  desktop="$ROOT/usr/share/applications/p64lab.desktop"
  grep -qx "Categories=Development;Science;" "$desktop" || fail "desktop entry Categories is not Development;Science;"
  grep -q "^Exec=p64lab" "$desktop" || fail "desktop entry does not run p64lab"
  grep -qx "Icon=p64lab" "$desktop" || fail "desktop entry icon is not p64lab"
  mime="$ROOT/usr/share/mime/packages/p64lab.xml"
  [ -e "$mime" ] || fail "the package lacks /usr/share/mime/packages/p64lab.xml"
  for t in application/x-p64 application/x-gguf; do
    grep -q "^MimeType=.*$t;" "$desktop" || fail "desktop entry does not claim $t"
    grep -q "type=\"$t\"" "$mime" || fail "$t is not defined in p64lab.xml"
  done
  appstreamcli validate --no-net "$ROOT/usr/share/metainfo/org.p64lab.p64lab.metainfo.xml" ||
    fail "AppStream metainfo does not validate"

  step "p64lab --version (offscreen)"
  gui_version=$(QT_QPA_PLATFORM=offscreen "$ROOT/usr/bin/p64lab" --version)
  echo "$gui_version"
  grep -q "$VERSION" <<<"$gui_version" || fail "p64lab --version does not print $VERSION"
fi
echo "PASS"
