#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the guest kernel (`ninja -C build guest-kernel`): Debian's
# linux-source-6.1 unpacked under OUT/src with guest/patches/*.patch applied,
# `make tinyconfig`, the fragment guest/kernel.config merged on top, then
# bzImage. Writes OUT/bzImage and
# OUT/vmlinux (the ELF, bootable through its PVH entry). Nothing is cached
# outside OUT; a rebuild reuses OUT/src and the objects there.
#
#   build_kernel.sh OUT FRAGMENT [JOBS]
set -euo pipefail
out=$(mkdir -p "$1" && cd "$1" && pwd)
frag=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
jobs=${3:-$(nproc)}
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -1)
if [ -z "$tarball" ]; then
	echo "build_kernel: /usr/src/linux-source-6.1.tar.* missing (apt-get install linux-source-6.1)" >&2
	exit 1
fi
for t in make gcc flex bison bc; do
	command -v "$t" >/dev/null || { echo "build_kernel: $t missing (tests/deps.sh)" >&2; exit 1; }
done
src=$out/src/$(basename "$tarball" | sed 's/\.tar\..*//')
patches=$(dirname "$frag")/patches
stamp=$( { stat -c '%n %s %Y' "$tarball"; cat "$patches"/*.patch 2>/dev/null; } | sha256sum | cut -c1-64)
if [ "$(cat "$out/src.stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$out/src" "$out/obj"
	mkdir -p "$out/src"
	echo "build_kernel: unpacking $tarball" >&2
	tar -C "$out/src" -xf "$tarball"
	for p in "$patches"/*.patch; do
		[ -f "$p" ] || continue
		echo "build_kernel: applying $(basename "$p")" >&2
		patch -s -d "$src" -p1 <"$p"
	done
	echo "$stamp" >"$out/src.stamp"
fi
obj=$out/obj
mkdir -p "$obj"
# the configuration: tinyconfig + the fragment (only when one of them changed)
if [ ! -f "$obj/.config" ] || [ "$frag" -nt "$obj/.config" ] || [ "$src/Makefile" -nt "$obj/.config" ]; then
	make -s -C "$src" O="$obj" tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" >/dev/null
	make -s -C "$src" O="$obj" olddefconfig
	# every option of the fragment must have stuck (a typo or a missing
	# dependency would silently drop it)
	missing=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) grep -qx "$line" "$obj/.config" || { echo "build_kernel: $line did not stick" >&2; missing=1; } ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			if grep -q "^$opt=" "$obj/.config"; then
				echo "build_kernel: $opt is still set" >&2
				missing=1
			fi ;;
		esac
	done <"$frag"
	[ $missing = 0 ] || { rm -f "$obj/.config"; exit 1; }
fi
nice make -s -C "$src" O="$obj" -j"$jobs" \
	KBUILD_BUILD_USER=hvswitch KBUILD_BUILD_HOST=guest bzImage
cp "$obj/arch/x86/boot/bzImage" "$out/bzImage.tmp" && mv "$out/bzImage.tmp" "$out/bzImage"
cp "$obj/vmlinux" "$out/vmlinux.tmp" && mv "$out/vmlinux.tmp" "$out/vmlinux"
echo "build_kernel: $out/bzImage ($(stat -c %s "$out/bzImage") bytes), $out/vmlinux" >&2
