#!/usr/bin/env bash
# Install the Debian 12 packages hvswitch needs to build, test and demo, if any
# is missing. Run as root (or through sudo).
set -euo pipefail

packages=(
	meson ninja-build pkg-config gcc clang clang-format libclang-rt-14-dev
	dpdk dpdk-dev libdpdk-dev libcjson-dev check
	python3 python3-pyelftools python3-scapy procps
	qemu-system-x86 linux-image-cloud-amd64 busybox-static xz-utils cpio lz4 binutils
	iperf3 ethtool strace
	libsystemd-dev systemd libvirt-clients
	linux-source-6.1 bc flex bison libelf-dev make acpica-tools groff-base
	libmicrohttpd-dev prometheus curl iproute2 iputils-ping tcpdump tshark frr
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
