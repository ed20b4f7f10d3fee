#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# KVM: boot Debian's cloud kernel (package linux-image-cloud-amd64) as an
# uncompressed ELF vmlinux through its PVH entry (the kernel has the PVH ELF
# note) and check its serial console: our command line, the e820 map we
# built (PVH's memory map), and our ACPI tables (the RSDP from the PVH start
# info; the MADT describes the 2 vCPUs, the MCFG and the DSDT). A full
# boot does not finish on hosts without hardware virtualization (CPL0 is
# emulated, doc/vmm.rst): the guest is stopped once the lines are there.
# Skipped (77) without /dev/kvm, a cloud kernel or lz4.
set -uo pipefail
HVSWITCH=${HVSWITCH:-unused}
. "$(dirname "$0")/lib.sh"
skip_without_kvm

kernel=$(ls /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -1)
if [ -z "$kernel" ] || ! command -v lz4 >/dev/null; then
	echo "SKIP: no /boot/vmlinuz-*-cloud-amd64 or no lz4 (tests/deps.sh installs them)"
	exit 77
fi
# the bzImage's payload is LZ4 (legacy frame): extract the ELF vmlinux
off=$(grep -obUaP '\x02\x21\x4c\x18' "$kernel" | head -1 | cut -d: -f1)
[ -n "$off" ] || fail "no LZ4 payload in $kernel"
tail -c +$((off + 1)) "$kernel" | lz4 -dc >"$run/vmlinux" 2>/dev/null
head -c 4 "$run/vmlinux" | grep -q ELF || fail "extracting vmlinux from $kernel"

marker="hvtest=$$"
timeout -s TERM 300 "$HVCTL" guest run linux --kernel "$run/vmlinux" --memory 256M --cpus 2 \
	--cmdline "console=ttyS0 earlyprintk=serial,ttyS0,115200 $marker" >"$run/linux.log" 2>&1 &
pids+=($!)
lp=$!
wait_line "$run/linux.log" "BIOS-e820: \[mem 0x00000000b0000000-0x00000000b00fffff\] reserved" 120 ||
	fail "no e820 map on the console within 120 s"
wait_line "$run/linux.log" "ACPI: Reserving APIC table memory" 120 ||
	fail "the kernel did not take our ACPI MADT within 120 s more"
kill -TERM "$lp"
wait "$lp"
tr -d '\r' <"$run/linux.log" >"$run/console.txt" # the 8250 driver writes CR LF
grep -q "Linux version" "$run/console.txt" || fail "no Linux banner"
grep -q "Command line: console=ttyS0 earlyprintk=serial,ttyS0,115200 $marker\$" "$run/console.txt" ||
	fail "our command line is not on the console"
# exactly the map e820_build() makes for 256 MiB, with the ISA hole
# (0xa0000-0xfffff) that Linux's PVH entry adds and merges
expected="0x0000000000000000-0x000000000009fbff] usable
0x000000000009fc00-0x00000000000fffff] reserved
0x0000000000100000-0x000000000fffffff] usable
0x00000000b0000000-0x00000000b00fffff] reserved"
got=$(sed -n 's/.*BIOS-e820: \[mem //p' "$run/console.txt")
[ "$got" = "$expected" ] || fail "e820 map differs: $got"
grep -q "ACPI: RSDP 0x00000000000F1000" "$run/console.txt" || fail "RSDP not found"
grep -q "ACPI: APIC 0x00000000000F11E0 00004E" "$run/console.txt" || fail "MADT not taken"
grep -q "ACPI: MCFG 0x00000000000F11A0 00003C" "$run/console.txt" || fail "MCFG not taken"
grep -q "ACPI: DSDT 0x00000000000F1230" "$run/console.txt" || fail "DSDT not taken"
grep -q "stopped: stopped (SIGTERM)" "$run/linux.log" || fail "VMM did not stop cleanly"
grep -E "Linux version|Command line|BIOS-e820|ACPI: (RSDP|XSDT|FACP|APIC|MCFG|DSDT) " "$run/console.txt"
echo PASS
