#!/bin/sh
# Run an in-process DPDK test with the EAL arguments these machines need:
# no PCI probing (it would take the machine's own NIC), a file prefix of its
# own, two lcores, and hugepages only when HV_TEST_HUGEPAGES=1. Its DPDK
# runtime directory is removed afterwards.
prog=$1
shift
if [ "${HV_TEST_HUGEPAGES:-0}" = 1 ]; then
	mem="-m 512 --single-file-segments"
else
	mem="--no-huge -m 512"
fi
prefix="hvtest$$"
# under ASan: leaks of the DPDK test peers are not ours (see lsan.supp)
export LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
"$prog" -l 0,1 --no-pci $mem --file-prefix "$prefix" --log-level=hvswitch:info "$@"
rc=$?
rm -rf "/var/run/dpdk/$prefix"
exit $rc
