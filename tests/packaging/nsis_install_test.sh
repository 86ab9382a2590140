#!/usr/bin/env bash
# The Windows installer, under wine: cpack builds it with NSIS (Debian's makensis) from the
# cross-built tree (kept in BUILD/installer/); it installs silently (/S) into a fresh folder,
# the installed p64.exe runs, also found on the user's PATH the installer extended,
# the docs are there, and the uninstaller removes what the installer put down, PATH entry included.
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
# The installer is kept in the build tree (BUILD/installer/) for whoever wants to ship it.
PKG=$BUILD/installer
rm -rf "$PKG"
cpack --config "$BUILD/CPackConfig.cmake" -G NSIS -B "$PKG" >"$WORK/cpack.log" 2>&1 ||
  { cat "$WORK/cpack.log" >&2; fail "cpack could not build the installer"; }
shopt -s nullglob
installers=("$PKG"/*.exe)
[ ${#installers[@]} -eq 1 ] || fail "expected one installer in $PKG, found ${#installers[@]}"
INSTALLER=${installers[0]}
echo "$(basename "$INSTALLER"): $(stat -c %s "$INSTALLER") bytes"

step "silent install (/S) into a fresh folder"
# No space in the folder: /D= must reach the installer unquoted, and wine quotes an argument
# that has one (the installer then ignores it and installs into Program Files).
DEST="$WORK/P64Lab"
"$WINE" "$INSTALLER" /S "/D=$(windows_path "$DEST")" || fail "the installer exited with $?"
for f in bin/p64.exe Uninstall.exe share/doc/p64lab/README.md share/doc/p64lab/docs/windows.md; do
  [ -e "$DEST/$f" ] || fail "the installer did not put down $f"
done

step "the installed p64.exe --version"
version_text=$("$WINE" "$DEST/bin/p64.exe" --version | tr -d '\r')
echo "$version_text"
grep -q "^p64 $VERSION (git " <<<"$version_text" || fail "p64 --version does not print 'p64 $VERSION (git <rev>'"
grep -q "^backends: cpu" <<<"$version_text" || fail "p64 --version lists no CPU backend"

step "p64 --version found on PATH (the current user's, which the installer extended)"
user_path() { "$WINE" reg query 'HKCU\Environment' /v PATH 2>/dev/null | tr -d '\r'; }
user_path | grep -qiF "$(windows_path "$DEST")\\bin" || fail "the user's PATH does not name $(windows_path "$DEST")\\bin"
# wine adds HKCU\Environment's PATH to what a new process gets, as Windows does at log-on.
path_text=$("$WINE" cmd /c "p64 --version" | tr -d '\r')
grep -q "^p64 $VERSION (git " <<<"$path_text" || fail "cmd.exe did not find p64 on PATH: $path_text"

step "silent uninstall (/S)"
# The uninstaller copies itself to a temporary folder and returns at once; wineserver -w waits
# until every process of this wine prefix has ended.
"$WINE" "$DEST/Uninstall.exe" /S || fail "the uninstaller exited with $?"
"${WINESERVER:-$(dirname "$WINE")/wineserver}" -w
[ ! -e "$DEST/bin/p64.exe" ] || fail "bin/p64.exe is still there after the uninstall"
[ ! -e "$DEST/Uninstall.exe" ] || fail "Uninstall.exe is still there after the uninstall"
user_path | grep -qiF "$(windows_path "$DEST")" &&
  fail "the uninstaller left $(windows_path "$DEST")\\bin on PATH"
echo "PASS"
