#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""hvctl(1) from hvctl's own help texts: the verbs and sub-verbs are those
its shell completion offers, each section the output of its --help; and
hvswitch(8) from the daemon's option help (hvswitch -- --help, no EAL).

usage: gen_man.py HVCTL VERSION > hvctl.1
       gen_man.py --hvswitch HVSWITCH VERSION > hvswitch.8
"""
import os
import subprocess
import sys

daemon = sys.argv[1] == "--hvswitch"
hvctl, version = sys.argv[1 + daemon], sys.argv[2 + daemon]
env = {k: v for k, v in os.environ.items() if k not in ("COMP_LINE", "COMP_POINT", "HVCTL_SOCKET")}


def run(*args):
    r = subprocess.run([hvctl, *args], env=env, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"gen_man.py: hvctl {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def complete(line):
    e = dict(env, COMP_LINE=line, COMP_POINT=str(len(line)))
    out = subprocess.run([hvctl], env=e, capture_output=True, text=True, check=True).stdout
    return [w for w in out.split() if not w.startswith("-")]


def roff(text):
    """Text as a no-fill block: backslashes escaped, no line taken as a request."""
    lines = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return ".nf\n" + "\n".join(lines) + "\n.fi\n"


def hvswitch_page():
    """hvswitch(8): its own options; EAL's are DPDK's (hvswitch --help)."""
    return [
        f'.TH HVSWITCH 8 "" "hvswitch {version}" "hvswitch"',
        ".SH NAME",
        "hvswitch \\- vhost-user L2 switch for KVM guests (a DPDK primary process)",
        ".SH SYNOPSIS",
        ".B hvswitch",
        "[\\fIEAL options\\fR] \\fB\\-\\-\\fR [\\fIoptions\\fR]",
        ".SH DESCRIPTION",
        "hvswitch polls its guests' vhost-user rings on PMD lcores and switches",
        "their frames (MAC learning, VLANs, offloads). The main lcore is the",
        "control plane; every other lcore is a PMD. \\fBhvctl\\fR(1) configures it",
        "at run time; the EAL options are DPDK's (\\fBhvswitch \\-\\-help\\fR lists",
        "them). Pass \\fB\\-\\-no\\-pci\\fR unless NICs are wanted.",
        ".SH OPTIONS",
        roff(run("--", "--help")).rstrip("\n"),
        ".SH FILES",
        ".TP",
        ".I /etc/hvswitch/hvswitch.json",
        "ports and settings, written back on every change",
        ".TP",
        ".I /run/hvswitch/hvswitch.sock",
        "the control socket",
        ".TP",
        ".I /etc/default/hvswitch",
        "EAL and daemon options of the systemd unit",
        ".SH SEE ALSO",
        "\\fBhvctl\\fR(1); doc/deployment.rst and doc/hvctl.rst of hvswitch",
    ]


if daemon:
    print("\n".join(hvswitch_page()))
    sys.exit(0)

out = [
    f'.TH HVCTL 1 "" "hvswitch {version}" "hvswitch"',
    ".SH NAME",
    "hvctl \\- control hvswitch, its ports and its KVM guests",
    ".SH SYNOPSIS",
    ".B hvctl",
    "[\\fB\\-\\-socket\\fR \\fIPATH\\fR] [\\fB\\-\\-json\\fR] \\fIVERB\\fR [\\fIARGS\\fR...]",
    ".SH DESCRIPTION",
    "hvctl talks to the hvswitch daemon over its control socket, and runs KVM",
    "guests attached to its ports. Each verb and sub-verb prints the help below",
    "with \\fB\\-\\-help\\fR (or \\fBhvctl help\\fR \\fIVERB\\fR [\\fISUB\\fR]).",
    "On an error it prints one line, \\(lqhvctl: reason\\(rq, and exits 1.",
    ".SH OPTIONS",
    roff(run("--help")).rstrip("\n"),
    ".SH COMMANDS",
]
for verb in complete("hvctl "):
    if verb == "help":
        continue
    out.append(f'.SS "hvctl {verb}"')
    out.append(roff(run(verb, "--help")).rstrip("\n"))
    for sub in complete(f"hvctl {verb} "):
        out.append(f'.SS "hvctl {verb} {sub}"')
        out.append(roff(run(verb, sub, "--help")).rstrip("\n"))
out += [
    ".SH ENVIRONMENT",
    ".TP",
    ".B HVCTL_SOCKET",
    "the control socket when \\fB\\-\\-socket\\fR is not given; its directory is",
    "also where \\fBhvctl guest\\fR looks for port sockets",
    ".TP",
    ".B HV_GUEST_RUN_DIR",
    "the guests' run directory (default: \\fIguests\\fR in the switch's run directory)",
    ".SH FILES",
    ".TP",
    ".I /run/hvswitch/hvswitch.sock",
    "the daemon's control socket by default",
    ".SH SEE ALSO",
    "\\fBhvswitch\\fR(8); doc/hvctl.rst and doc/vmm.rst of hvswitch",
]
print("\n".join(out))
