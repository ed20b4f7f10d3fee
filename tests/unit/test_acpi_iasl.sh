#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The VMM's ACPI tables through ACPICA's disassembler (iasl, Debian package
# acpica-tools): they must disassemble without error and describe what Linux
# enumerates (the PCI root bus and its windows, COM1, the i8042, the GED
# power button, \_S5, the FADT's reset and sleep registers, the MCFG).
# Skipped (77) without iasl.
set -euo pipefail
dump=$1
command -v iasl >/dev/null || { echo "SKIP: no iasl (install acpica-tools)"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$dump" "$dir"
cd "$dir"
for t in dsdt facp mcfg apic; do
	iasl -d "$t.dat" >"$t.log" 2>&1 || { cat "$t.log"; echo "FAIL: iasl -d $t.dat"; exit 1; }
done
check() { # file, extended regex
	grep -qE "$2" "$1" || { echo "FAIL: $1 lacks /$2/"; cat "$1"; exit 1; }
}
check dsdt.dsl 'Device \(PCI0\)'
check dsdt.dsl 'Name \(_HID, EisaId \("PNP0A08"\)'
check dsdt.dsl '0xC0000000, +// Range Minimum'
check dsdt.dsl '0xFEAFFFFF, +// Range Maximum'
check dsdt.dsl 'Device \(COM1\)'
check dsdt.dsl 'Name \(_HID, EisaId \("PNP0501"\)'
check dsdt.dsl 'Name \(_HID, EisaId \("PNP0303"\)'
check dsdt.dsl 'Name \(_HID, "ACPI0013"'
check dsdt.dsl 'Notify \(\\_SB.PWRB, 0x80\)'
check dsdt.dsl 'Name \(\\_S5, Package'
check facp.dsl 'Hardware Reduced \(V5\) : 1'
check facp.dsl 'Reset Register Supported \(V2\) : 1'
check facp.dsl 'Address : 0000000000000602'
check facp.dsl 'Value to cause reset : 01'
check facp.dsl 'Address : 0000000000000600'
check mcfg.dsl 'Base Address : 00000000B0000000'
echo PASS
