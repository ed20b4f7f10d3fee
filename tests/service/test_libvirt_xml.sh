#!/usr/bin/env bash
# doc/deployment.rst's libvirt domain (between ".. libvirt-domain-begin" and
# ".. libvirt-domain-end") is valid libvirt XML: virt-xml-validate (package
# libvirt-clients) against libvirt's domain schema, and it has what vhost-user
# needs (shared memory, the two vhostuser interfaces the doc describes).
#
#   test_libvirt_xml.sh DOC
set -uo pipefail
doc=${1:?doc/deployment.rst}
command -v virt-xml-validate >/dev/null || { echo "SKIP: virt-xml-validate not installed (apt-get install libvirt-clients)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -n '/^\.\. libvirt-domain-begin$/,/^\.\. libvirt-domain-end$/p' "$doc" |
	sed -n 's/^    //p' >"$tmp/domain.xml"
[ -s "$tmp/domain.xml" ] || { echo "FAIL: no libvirt domain between the markers in $doc"; exit 1; }
failed=0
virt-xml-validate "$tmp/domain.xml" domain || { echo "FAIL: virt-xml-validate"; failed=1; }
for want in "<access mode='shared'/>" "<interface type='vhostuser'>" \
	"path='/run/hvswitch/vm1.sock' mode='client'" "mode='server'/>" "memAccess='shared'"; do
	if grep -qF "$want" "$tmp/domain.xml"; then echo "PASS: has $want"; else echo "FAIL: no $want"; failed=1; fi
done
exit $failed
