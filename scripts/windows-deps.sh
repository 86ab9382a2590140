#!/usr/bin/env bash
# Builds the libraries the engine links, for Windows (x86_64-w64-mingw32, static), from Debian's
# own source packages: SQLite (sqlite3) and PCRE2 (pcre2), fetched with `apt-get source`.
# Debian 12 packages neither for mingw-w64 (docs/windows.md). The result is a prefix
# (include/, lib/, lib/pkgconfig/) for -DP64_MINGW_PREFIX; a library already there is not
# built again. Header-only dependencies (nlohmann-json, CLI11, the Vulkan headers) are linked
# into the prefix from the host, so the cross build never sees all of /usr/include.
#   scripts/windows-deps.sh [BUILD_DIR]   (default build-windows; prefix: BUILD_DIR/deps/prefix)
# Needs root (or sudo) for apt: installs what is missing and adds a deb-src entry beside the
# deb one when there is none.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
BUILD=${1:-${BUILD_DIR:-build-windows}}
mkdir -p "$BUILD/deps"
DEPS=$(cd "$BUILD/deps" && pwd)
PREFIX=$DEPS/prefix
SRC=$DEPS/src
HOST=x86_64-w64-mingw32
NICE=${NICE-nice -n 15}
JOBS=${JOBS:-2}

# Installing packages and adding the deb-src entry need root: sudo where this is not root.
as_root() { if (($(id -u) == 0)); then "$@"; else sudo "$@"; fi; }
# apt's download methods run as the user _apt and write their temporary files under $TMPDIR;
# some machines have a /tmp only root may write to.
apt_get() {
  local run=()
  [[ $1 == source ]] || run=(as_root)  # `apt-get source` writes into the current folder only
  if [[ $(stat -c %a /tmp) == 1777 ]]; then "${run[@]}" apt-get "$@"; else "${run[@]}" env TMPDIR=/var/tmp apt-get "$@"; fi
}
need_packages() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]})) || return 0
  # A fresh machine's package lists can be missing or stale: update once and try again.
  export DEBIAN_FRONTEND=noninteractive
  apt_get install -y --no-install-recommends "${missing[@]}" ||
    { apt_get update && apt_get install -y --no-install-recommends "${missing[@]}"; }
}
# gcc, make and tcl make SQLite's amalgamation on the host; the rest builds and runs the
# Windows tree and its installer.
need_packages g++-mingw-w64-x86-64 gcc make dpkg-dev tcl cmake ninja-build pkgconf googletest \
  nlohmann-json3-dev libcli11-dev libvulkan-dev glslc wine64 nsis

# --- the source packages, through apt --------------------------------------------------------
add_deb_src() {
  local list=/etc/apt/sources.list.d/debian.sources
  grep -q '^Types:.*deb-src' "$list" && return 0
  # Each deb stanza again as deb-src: same URIs, suites, components and key.
  { echo; awk 'BEGIN{RS=""; ORS="\n\n"} /(^|\n)Types: deb(\n|$)/ {print}' "$list" \
    | sed 's/^Types: deb$/Types: deb-src/'; } | as_root tee -a "$list" >/dev/null
  apt_get update >&2
}
fetch_source() {  # fetch_source <source package> -> prints the unpacked folder
  local pkg=$1 dir
  mkdir -p "$SRC"
  dir=$(find "$SRC" -maxdepth 1 -type d -name "$pkg-*" | head -n1)
  if [[ -z $dir ]]; then
    add_deb_src
    # The newest version first; where the archive no longer serves it (a security update's
    # sources can be missing from a mirror), the release's own.
    (cd "$SRC" && { apt_get source --download-only "$pkg" >&2 ||
                    apt_get source --download-only "$pkg/$(. /etc/os-release && echo "$VERSION_CODENAME")" >&2; })
    local dsc
    dsc=$(cd "$SRC" && ls -t ${pkg}_*.dsc | head -n1)
    (cd "$SRC" && dpkg-source --no-check -x "$dsc" >&2)
    dir=$(find "$SRC" -maxdepth 1 -type d -name "$pkg-*" | head -n1)
  fi
  echo "$dir"
}

mkdir -p "$PREFIX/include" "$PREFIX/lib/pkgconfig"

# --- SQLite: the amalgamation, made by the source tree's own configure (host tclsh), compiled
# for Windows as one static library. -------------------------------------------------------------
if [[ ! -f $PREFIX/lib/libsqlite3.a ]]; then
  dir=$(fetch_source sqlite3)
  version=$(cat "$dir/VERSION")
  amal=$DEPS/sqlite-amalgamation
  if [[ ! -f $amal/sqlite3.c ]]; then
    mkdir -p "$amal"
    (cd "$amal" && $NICE "$dir/configure" --disable-tcl >/dev/null && $NICE make -j"$JOBS" sqlite3.c sqlite3.h >/dev/null)
  fi
  # The options Debian builds its libsqlite3 with that the store relies on (FTS, JSON are in by default).
  $NICE $HOST-gcc -O2 -c "$amal/sqlite3.c" -o "$amal/sqlite3.o" \
    -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_COLUMN_METADATA -DSQLITE_ENABLE_FTS5 -DSQLITE_ENABLE_RTREE \
    -DSQLITE_ENABLE_UNLOCK_NOTIFY -DSQLITE_SECURE_DELETE -DSQLITE_MAX_SCHEMA_RETRY=25
  rm -f "$PREFIX/lib/libsqlite3.a.tmp"
  $HOST-ar rcs "$PREFIX/lib/libsqlite3.a.tmp" "$amal/sqlite3.o"
  cp "$amal/sqlite3.h" "$dir/src/sqlite3ext.h" "$PREFIX/include/" 2>/dev/null || cp "$amal/sqlite3.h" "$PREFIX/include/"
  cat >"$PREFIX/lib/pkgconfig/sqlite3.pc" <<EOF
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: SQLite
Description: SQL database engine (Debian's sqlite3 source, built for $HOST)
Version: $version
Libs: -L\${libdir} -lsqlite3
Cflags: -I\${includedir}
EOF
  mv "$PREFIX/lib/libsqlite3.a.tmp" "$PREFIX/lib/libsqlite3.a"
  echo "windows-deps: SQLite $version built into $PREFIX"
fi

# --- PCRE2: 8-bit, Unicode, static, with its own CMake build. JIT stays off: the pre-tokenizer
# treats it as a speed-up only, and its executable-memory allocator is one more thing wine must
# get right. ----------------------------------------------------------------------------------
if [[ ! -f $PREFIX/lib/libpcre2-8.a ]]; then
  dir=$(fetch_source pcre2)
  $NICE cmake -S "$dir" -B "$DEPS/pcre2-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/mingw-w64-x86_64.cmake" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DPCRE2_BUILD_PCRE2_8=ON -DPCRE2_BUILD_PCRE2_16=OFF \
    -DPCRE2_BUILD_PCRE2_32=OFF -DPCRE2_SUPPORT_UNICODE=ON -DPCRE2_SUPPORT_JIT=OFF \
    -DPCRE2_BUILD_PCRE2GREP=OFF -DPCRE2_BUILD_TESTS=OFF -DPCRE2_SUPPORT_LIBBZ2=OFF \
    -DPCRE2_SUPPORT_LIBZ=OFF -DPCRE2_SUPPORT_LIBEDIT=OFF -DPCRE2_SUPPORT_LIBREADLINE=OFF >/dev/null
  $NICE cmake --build "$DEPS/pcre2-build" -j"$JOBS" --target install >/dev/null
  # A static PCRE2 on Windows needs PCRE2_STATIC in its users (else pcre2.h asks for DLL
  # imports); 10.42's pkg-config file does not say so.
  grep -q PCRE2_STATIC "$PREFIX/lib/pkgconfig/libpcre2-8.pc" ||
    sed -i 's/^Cflags: .*/& -DPCRE2_STATIC/' "$PREFIX/lib/pkgconfig/libpcre2-8.pc"
  echo "windows-deps: PCRE2 built into $PREFIX"
fi

# --- header-only libraries from the host, each folder on its own -------------------------------
for h in nlohmann CLI vulkan vk_video; do
  [[ -e $PREFIX/include/$h ]] || ln -s "/usr/include/$h" "$PREFIX/include/$h"
done
# Their CMake package files too: copied, they find their headers under the prefix (they locate
# them relative to themselves), so the cross build never gets -isystem /usr/include.
mkdir -p "$PREFIX/share/cmake"
for p in nlohmann_json CLI11; do
  [[ -d $PREFIX/share/cmake/$p ]] || cp -r "/usr/share/cmake/$p" "$PREFIX/share/cmake/$p"
done
echo "windows-deps: prefix ready: $PREFIX"
