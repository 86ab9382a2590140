#!/usr/bin/env bash
# The Windows installer, under wine: cpack builds it with NSIS (Debian's makensis) from the
# cross-built tree; it installs silently (/S) into a fresh folder, the installed p64.exe runs,
# the docs are there, and the uninstaller removes what the installer put down.
# Usage: nsis_install_test.sh <build dir> <project version>
set -euo pipefail
BUILD=$(cd "$1" && pwd)
VERSION=$2
WINE=${WINE:-$(command -v wine || echo /usr/lib/wine/wine64)}
export WINEDEBUG=${WINEDEBUG:--all}
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/p64-nsis-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
windows_path() { echo "Z:${1//\//\\}"; }  # wine's drive Z: is the Linux root

step "cpack -G NSIS"
cpack --config "$BUILD/CPackConfig.cmake" -G NSIS -B "$WORK/pkg" >"$WORK/cpack.log" 2>&1 ||
  { cat "$WORK/cpack.log" >&2; fail "cpack could not build the installer"; }
shopt -s nullglob
installers=("$WORK"/pkg/*.exe)
[ ${#installers[@]} -eq 1 ] || fail "expected one installer in $WORK/pkg, found ${#installers[@]}"
INSTALLER=${installers[0]}
echo "$(basename "$INSTALLER"): $(stat -c %s "$INSTALLER") bytes"

step "silent install (/S) into a fresh folder"
DEST="$WORK/P64 Lab"
# /D= must come last and takes the rest of the line, spaces included.
"$WINE" "$INSTALLER" /S "/D=$(windows_path "$DEST")" || fail "the installer exited with $?"
for f in bin/p64.exe Uninstall.exe share/doc/p64lab/README.md share/doc/p64lab/docs/windows.md; do
  [ -e "$DEST/$f" ] || fail "the installer did not put down $f"
done

step "the installed p64.exe --version"
version_text=$("$WINE" "$DEST/bin/p64.exe" --version | tr -d '\r')
echo "$version_text"
grep -q "^p64 $VERSION (git " <<<"$version_text" || fail "p64 --version does not print 'p64 $VERSION (git <rev>'"
grep -q "^backends: cpu" <<<"$version_text" || fail "p64 --version lists no CPU backend"

step "silent uninstall (/S)"
# The uninstaller copies itself to a temporary folder and returns at once; wineserver -w waits
# until every process of this wine prefix has ended.
"$WINE" "$DEST/Uninstall.exe" /S || fail "the uninstaller exited with $?"
"${WINESERVER:-$(dirname "$WINE")/wineserver}" -w
[ ! -e "$DEST/bin/p64.exe" ] || fail "bin/p64.exe is still there after the uninstall"
[ ! -e "$DEST/Uninstall.exe" ] || fail "Uninstall.exe is still there after the uninstall"
echo "PASS"
