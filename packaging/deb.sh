#!/usr/bin/env bash
# Build dist/gpufleet_<version>_<arch>.deb from the PyInstaller bundle (dist/gpufleet/, made
# by `make package`) with dpkg-deb: the bundle under /opt/gpufleet, a `gpufleet` command in
# /usr/bin (a symlink: the bundle finds its _internal/ from /proc/self/exe), the desktop file,
# the icons and the AppStream metadata from resources/. No maintainer scripts: dpkg's own
# triggers (desktop-file-utils, hicolor-icon-theme, appstream) refresh the caches, and
# `dpkg -r gpufleet` removes every file it installed. See packaging/README.md.
# Usage: packaging/deb.sh [PYTHON]   (PYTHON reads the version from pyproject.toml)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-.venv/bin/python}"
BUNDLE=dist/gpufleet
APP_ID=io.github.gpufleet.GpuFleet
if [ ! -x "$BUNDLE/gpufleet" ]; then
  echo "deb.sh: $BUNDLE/gpufleet is missing: run \`make package\` first (or \`make deb\`)" >&2
  exit 2
fi
command -v dpkg-deb >/dev/null || { echo "deb.sh: dpkg-deb is not installed (apt install dpkg)" >&2; exit 2; }
version=$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
arch=$(dpkg --print-architecture)
start=$(date +%s)
root=build/deb/root
rm -rf build/deb
mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin"
cp -a "$BUNDLE" "$root/opt/gpufleet"
ln -s /opt/gpufleet/gpufleet "$root/usr/bin/gpufleet"
install -Dm644 "resources/$APP_ID.desktop" "$root/usr/share/applications/$APP_ID.desktop"
install -Dm644 "resources/$APP_ID.metainfo.xml" "$root/usr/share/metainfo/$APP_ID.metainfo.xml"
for d in resources/icons/hicolor/*x*/; do
  size=$(basename "$d")
  install -Dm644 "$d/apps/$APP_ID.png" "$root/usr/share/icons/hicolor/$size/apps/$APP_ID.png"
done
install -Dm644 resources/icons/gpufleet.svg "$root/usr/share/icons/hicolor/scalable/apps/$APP_ID.svg"
# Files 0644 and folders 0755 whatever the umask of the build; executables keep their x bit.
chmod -R u+rwX,go+rX,go-w "$root"
installed_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
# Qt's own runtime libraries are in the bundle; these are the system ones its xcb platform
# plugin loads (the same list as tools/check_qt_runtime.py and .ci/run). Ubuntu 24.04 renamed
# some with a t64 suffix: either name satisfies the dependency.
cat > "$root/DEBIAN/control" <<CONTROL
Package: gpufleet
Version: $version
Architecture: $arch
Maintainer: gpufleet developers <gpufleet@users.noreply.github.com>
Installed-Size: $installed_kb
Depends: libc6, libegl1, libgl1, libfontconfig1, libxkbcommon0, libxkbcommon-x11-0, libdbus-1-3, libglib2.0-0t64 | libglib2.0-0, libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1, libxcb-shape0, libxcb-xinerama0, libxcb-randr0, libxcb-render-util0, libxcb-image0
Recommends: openssh-client, gnome-keyring | kwalletmanager
Section: utils
Priority: optional
Homepage: https://github.com/gpufleet/gpufleet
Description: watch every GPU you rent, from your laptop
 Live NVML metrics over SSH (clocks, temperatures, power, processes),
 alerts, evidence bundles and rental cost for the GPU instances you rent.
 The app is a self-contained bundle in /opt/gpufleet (its own Python and Qt);
 the instances need only python3 and the NVIDIA driver.
CONTROL
mkdir -p dist
out="dist/gpufleet_${version}_${arch}.deb"
# gzip: every dpkg reads it, and it packs the 250 MB bundle in seconds (xz takes minutes).
dpkg-deb --root-owner-group -Zgzip -z6 --build "$root" "$out" >/dev/null
rm -rf build/deb
echo "built $out in $(( $(date +%s) - start )) s ($(du -h "$out" | cut -f1), installs ${installed_kb} kB)"
