#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The migration itself, for migrate.sh: start `migrate` on the source QEMU
(QMP), then poll, every ~20 ms against one deadline, the source's
query-migrate, the destination's query-status and the switch's FDB (hvctl
fdb show), until the migration has completed (or failed), the destination
runs and the FDB has the guest's MAC on the destination's port. Prints one
JSON object: what happened and when (seconds since the migrate command).

With the PIDs of both QEMUs, and the destination started with -S: once the
migration is in, the guest memories (the memory-backend-memfd) are
compared page by page while neither runs, then the destination resumes.

  migrate_phase.py SRC_QMP DST_QMP URI HVCTL HVSWITCH_SOCK MAC DST_PORT TIMEOUT_S
                   [SRC_PID DST_PID]
"""
import json
import mmap
import os
import socket
import subprocess
import sys
import time


class Qmp:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.f = self.s.makefile("rwb", buffering=0)
        self._read()  # greeting
        self.cmd("qmp_capabilities")

    def _read(self):
        line = self.f.readline()
        if not line:
            raise EOFError("QMP closed")
        return json.loads(line)

    def cmd(self, name, args=None):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.f.write((json.dumps(msg) + "\n").encode())
        while True:
            r = self._read()
            if "return" in r:
                return r["return"]
            if "error" in r:
                raise RuntimeError("%s: %s" % (name, r["error"]))
            # an event: skipped


def fdb_port(hvctl, sock, mac):
    out = subprocess.run([hvctl, "--socket", sock, "--json", "fdb", "show"],
                         capture_output=True, text=True, timeout=5).stdout
    try:
        data = json.loads(out)
    except ValueError:
        return None
    if isinstance(data, dict):
        data = data.get("entries", data.get("fdb", []))
    for e in data:
        if str(e.get("mac", "")).lower() == mac:
            return e.get("port", e.get("port_name"))
    return None


PAGE = 4096


def guest_memory(pid):
    """The guest memory of QEMU @pid (its memory-backend-memfd), mapped read-only."""
    for fd in os.listdir("/proc/%s/fd" % pid):
        path = "/proc/%s/fd/%s" % (pid, fd)
        try:
            if os.readlink(path).startswith("/memfd:memory-backend-memfd"):
                with open(path, "rb") as f:
                    # populated at once: faulting 2 x 64 Ki pages one by one is slower
                    return mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE,
                                     prot=mmap.PROT_READ)
        except OSError:
            continue
    raise RuntimeError("no memory-backend-memfd in QEMU %s" % pid)


def compare_memory(res, src_pid, dst_pid):
    """Record in @res which guest-physical pages differ between the two QEMUs."""
    t = time.monotonic()
    try:
        a, b = guest_memory(src_pid), guest_memory(dst_pid)
    except (OSError, RuntimeError) as e:
        res["mem_error"] = str(e)
        return
    if len(a) != len(b):
        res["mem_error"] = "sizes differ: %d, %d" % (len(a), len(b))
        return
    # memoryviews of the mappings: no copies while the destination waits
    va, vb, chunk, differ = memoryview(a), memoryview(b), 256 * PAGE, []
    for off in range(0, len(a), chunk):
        if va[off:off + chunk] != vb[off:off + chunk]:
            differ += [hex(p) for p in range(off, min(off + chunk, len(a)), PAGE)
                       if va[p:p + PAGE] != vb[p:p + PAGE]]
    va.release()
    vb.release()
    res["mem_pages"] = len(a) // PAGE
    res["mem_pages_differ"] = differ
    a.close()
    b.close()
    res["mem_compare_s"] = round(time.monotonic() - t, 3)


def main():
    src_path, dst_path, uri, hvctl, sock, mac, dst_port, timeout_s = sys.argv[1:9]
    pids = sys.argv[9:11]
    res = {"status": None}
    src, dst = Qmp(src_path), Qmp(dst_path)
    t0 = time.monotonic()
    deadline = t0 + float(timeout_s)
    res["fdb_before"] = fdb_port(hvctl, sock, mac)
    try:
        src.cmd("migrate", {"uri": uri})
    except RuntimeError as e:
        # QEMU refuses (a migration blocker): what it said is the result
        res["status"] = "refused"
        res["error"] = str(e)
        print(json.dumps(res))
        return
    completed_at = None
    while time.monotonic() < deadline:
        now = time.monotonic() - t0
        if completed_at is None:
            m = src.cmd("query-migrate")
            st = m.get("status")
            if st in ("completed", "failed", "cancelled"):
                completed_at = now
                res["status"] = st
                res["t_completed"] = round(now, 3)
                for k in ("downtime", "total-time", "setup-time"):
                    res[k.replace("-", "_")] = m.get(k)
                res["ram"] = m.get("ram", {})
                if st != "completed":
                    break
        if completed_at is not None and "t_dst_in" not in res and \
                dst.cmd("query-status").get("status") == "paused":
            # in, and paused by -S: neither guest runs, so both memories hold still
            res["t_dst_in"] = round(time.monotonic() - t0, 3)
            if len(pids) == 2:
                compare_memory(res, *pids)
            dst.cmd("cont")
            now = time.monotonic() - t0
        if "t_dst_running" not in res and dst.cmd("query-status").get("status") == "running":
            res["t_dst_running"] = round(now, 3)
        if "t_fdb_dst" not in res and fdb_port(hvctl, sock, mac) == dst_port:
            res["t_fdb_dst"] = round(time.monotonic() - t0, 3)
        if completed_at is not None and "t_dst_running" in res and "t_fdb_dst" in res:
            break
        time.sleep(0.02)
    res["fdb_after"] = fdb_port(hvctl, sock, mac)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
